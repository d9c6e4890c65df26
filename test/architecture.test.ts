/**
 * The import graph, checked by a tool (madge): no circle anywhere in src/, workflows/ and
 * activities/ (between files or between folders), and no import running back up the layer order
 * of docs/architecture.md (LAYERS). Type-only imports count too, except where a rule says "at run time".
 */
import path from 'node:path';
import madge from 'madge';

const root = path.resolve(__dirname, '..');
type Graph = Record<string, string[]>;

const FEATURES = '(payments|refunds|callbacks|webhooks|checkout|bank|storefront|reconciliation|orders)';
/** a feature's face (src/<feature>/index.ts) and the pure files it re-exports: its contract */
export const FACE = new RegExp(`^src/${FEATURES}/(index|contract|states|paths|model|events)\\.ts$`);
/** a feature's inner files: everything of src/<feature>/ but its face */
const INNER = new RegExp(`^(?!src/${FEATURES}/(index|contract|states|paths|model|events)\\.ts$)src/${FEATURES}/`);

/** The layers, top first: a file may import its own layer or one below, never one above. */
export const LAYERS: ReadonlyArray<readonly [string, RegExp]> = [
  ['entry points', /^src\/(main\.ts$|roles\/|cli\/)/],
  ['composition root', /^src\/app\//],
  ['sandbox providers', /^src\/simulators\//],
  ['Temporal side', /^(workflows|activities)\//],
  ['features', INNER],
  ['toolkit', /^src\/(http|temporal)\//],
  ['infrastructure', /^src\/(db|stack|types)\/|^src\/[^/]+\.ts$/],
  ['feature faces', FACE],
  ['domain', /^src\/domain\//],
];
const layerOf = (file: string): number => LAYERS.findIndex(([, re]) => re.test(file));

/** Every import from a lower layer to a higher one, and every file no layer claims. */
function backUp(g: Graph): string[] {
  return Object.entries(g).flatMap(([from, tos]) => [
    ...(layerOf(from) < 0 ? [`${from}: in no layer`] : []),
    ...tos
      .filter((to) => layerOf(to) >= 0 && layerOf(to) < layerOf(from))
      .map((to) => `${from} (${LAYERS[layerOf(from)][0]}) -> ${to} (${LAYERS[layerOf(to)][0]})`),
  ]);
}

/** A folder (src/<dir>, workflows, activities) or a top-level src file: the unit of a drawn graph. */
const unitOf = (file: string): string =>
  (FACE.test(file) ? `${path.dirname(file)} (face)` : undefined) ??
  /^src\/[^/]+(?=\/)/.exec(file)?.[0] ??
  /^(workflows|activities)(?=\/)/.exec(file)?.[0] ??
  file;

/** The circles between folders: each strongly connected set of two or more units (Tarjan). */
function folderCircles(g: Graph): string[][] {
  const next = new Map<string, Set<string>>();
  for (const [from, tos] of Object.entries(g))
    for (const to of tos)
      if (unitOf(from) !== unitOf(to)) next.set(unitOf(from), (next.get(unitOf(from)) ?? new Set()).add(unitOf(to)));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) visit(w);
      if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, low.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const circle = stack.splice(stack.indexOf(v));
      if (circle.length > 1) circles.push(circle.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return circles;
}

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
    expect(all['src/app/app.ts']).toEqual(
      expect.arrayContaining(['src/payments/routes.ts', 'src/callbacks/routes.ts']),
    );
  });

  it('has no import from a lower layer to a higher one, type-only imports included', () => {
    expect(backUp(all)).toEqual([]);
  });

  it('the layer check fails on an import running back up, and on a file in no layer', () => {
    const g: Graph = { ...all, 'src/http/errors.ts': [...all['src/http/errors.ts'], 'src/payments/service.ts'] };
    expect(backUp(g)).toEqual(['src/http/errors.ts (toolkit) -> src/payments/service.ts (features)']);
    expect(backUp({ 'lib/x.ts': [] })).toEqual(['lib/x.ts: in no layer']);
  });

  it('has no circle between folders (src/<folder>, workflows, activities)', () => {
    expect(folderCircles(all)).toEqual([]);
    // the check can fail: storefront and its assets' old folder importing each other
    const g: Graph = {
      'src/storefront/a.ts': ['src/objectstore/b.ts'],
      'src/objectstore/b.ts': ['src/storefront/c.ts'],
    };
    expect(folderCircles(g)).toEqual([['src/objectstore', 'src/storefront']]);
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
      'workflows/ imports only workflows/, src/domain and feature faces at run time',
      'runtime',
      /^workflows\//,
      new RegExp(`^(?!workflows/|src/domain/|${FACE.source.slice(1)})`),
      NONE,
    ],
    ['src/ never imports workflows/ at run time', 'runtime', /^src\//, /^workflows\//, NONE],
    [
      'nothing but the entry points (npm start, the gateway role) imports the Koa app',
      'all',
      /./,
      /^src\/app\/app\.ts$/,
      /^src\/(main|roles\/gateway)\.ts$/,
    ],
    ['middleware imports no resource module', 'all', /^src\/http\/middleware\//, INNER, NONE],
    [
      'src/temporal imports no resource or HTTP module',
      'all',
      /^src\/temporal\//,
      new RegExp(`${INNER.source}|^src/http/`),
      NONE,
    ],
    ['src/db imports no resource or HTTP module', 'all', /^src\/db\//, new RegExp(`${INNER.source}|^src/http/`), NONE],
    [
      'src/storefront reaches src/http only from its route modules',
      'all',
      /^src\/storefront\//,
      /^src\/http\//,
      /^src\/storefront\/(routes|openapi|auth\/routes|assets\/routes)\.ts$/,
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
