/**
 * The import graph, checked by a tool (madge): no circle anywhere in src/, workflows/ and
 * activities/, and no import running back up a layer. Type-only imports count too, except where
 * a rule says "at run time".
 */
import path from 'node:path';
import madge from 'madge';

const root = path.resolve(__dirname, '..');
type Graph = Record<string, string[]>;

async function graph(skipTypeImports: boolean): Promise<Graph> {
  const res = await madge(['src', 'workflows', 'activities'], {
    baseDir: root,
    fileExtensions: ['ts'],
    tsConfig: path.join(root, 'tsconfig.json'),
    detectiveOptions: { ts: { skipTypeImports }, es6: { skipTypeImports } },
  });
  return res.obj();
}

/** Every import `from` -> `to` where `from` matches `fromRe` and `to` matches `toRe`. */
const edges = (g: Graph, fromRe: RegExp, toRe: RegExp, except: RegExp): string[] =>
  Object.entries(g).flatMap(([from, tos]) =>
    fromRe.test(from) && !except.test(from) ? tos.filter((to) => toRe.test(to)).map((to) => `${from} -> ${to}`) : [],
  );

let all: Graph;
let runtime: Graph;
beforeAll(async () => {
  process.chdir(root);
  [all, runtime] = await Promise.all([graph(false), graph(true)]);
}, 60_000);

describe('architecture: the import graph', () => {
  it('reads the whole tree (the check can fail)', () => {
    expect(Object.keys(all).length).toBeGreaterThan(80);
    expect(all['src/http/app.ts']).toEqual(
      expect.arrayContaining(['src/payments/routes.ts', 'src/callbacks/routes.ts']),
    );
  });

  it('has no circular import, type-only imports included', async () => {
    const res = await madge(['src', 'workflows', 'activities'], {
      baseDir: root,
      fileExtensions: ['ts'],
      tsConfig: path.join(root, 'tsconfig.json'),
    });
    expect(res.circular()).toEqual([]);
  });

  const NONE = /$^/;
  it.each([
    ['src/domain imports nothing outside src/domain', 'all', /^src\/domain\//, /^(?!src\/domain\/)/, NONE],
    ['activities/ never imports a simulator', 'all', /^activities\//, /^src\/simulators\//, NONE],
    ['activities/ never imports the HTTP layer', 'all', /^activities\//, /^src\/http\//, NONE],
    [
      'workflows/ imports only workflows/ and src/domain at run time',
      'runtime',
      /^workflows\//,
      /^(?!workflows\/|src\/domain\/)/,
      NONE,
    ],
    ['src/ never imports workflows/ at run time', 'runtime', /^src\//, /^workflows\//, NONE],
    [
      'nothing but the entry points (npm start, the gateway role) imports the Koa app',
      'all',
      /./,
      /^src\/http\/app\.ts$/,
      /^src\/(main|roles\/gateway)\.ts$/,
    ],
    [
      'middleware imports no resource module',
      'all',
      /^src\/http\/middleware\//,
      /^src\/(payments|callbacks|webhooks|storefront|bank)\//,
      NONE,
    ],
    [
      'src/temporal imports no resource or HTTP module',
      'all',
      /^src\/temporal\//,
      /^src\/(payments|callbacks|webhooks|storefront|bank|http)\//,
      NONE,
    ],
    [
      'src/db imports no resource or HTTP module',
      'all',
      /^src\/db\//,
      /^src\/(payments|callbacks|webhooks|storefront|bank|http)\//,
      NONE,
    ],
    [
      'src/storefront reaches src/http only from its route modules',
      'all',
      /^src\/storefront\//,
      /^src\/http\//,
      /^src\/storefront\/(routes|openapi|auth\/routes)\.ts$/,
    ],
  ] as const)('%s', (_rule, which, from, to, except) => {
    expect(edges(which === 'runtime' ? runtime : all, from, to, except)).toEqual([]);
  });

  it('the Temporal contract is the one home of workflow names: src/temporal/names.ts and src/domain/callback-workflows.ts are gone', () => {
    expect(Object.keys(all)).not.toEqual(expect.arrayContaining(['src/temporal/names.ts']));
    expect(Object.keys(all)).not.toEqual(expect.arrayContaining(['src/domain/callback-workflows.ts']));
    expect(Object.keys(all)).not.toEqual(expect.arrayContaining(['src/domain/ids.ts']));
  });
});
