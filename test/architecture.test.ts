/**
 * The import graph, checked by a tool (madge) plus our own scan of require() and import() calls
 * (madge sees neither): no circle, no import running back up LAYERS (docs/architecture.md), no
 * computed import outside COMPUTED_IMPORTS, no feature importing another's inner files, and every
 * feature's files in its places. Type-only imports count, except where a rule says "at run time".
 */
import fs from 'node:fs';
import path from 'node:path';
import madge from 'madge';
import {
  callImports,
  featuresIn,
  filesUnder,
  reachIns,
  ROOTS,
  spread,
  withCallImports,
  type CallImport,
} from './support/slices';
import { FACE, INNER, LAYERS } from './support/layers';

const root = path.resolve(__dirname, '..');
type Graph = Record<string, string[]>;

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

/** The computed require()/import() calls allowed, by file, each with its reason. */
const COMPUTED_IMPORTS: Record<string, string> = {
  'src/db/knex.ts': 'the migration source loads each file of migrations/ by name',
  'src/temporal/history.ts': "protobufjs's JSON reader, resolved from @temporalio/proto's own copy",
};
/** The computed calls of `calls` whose file is not in `allowed`. */
const unallowed = (calls: readonly CallImport[], allowed: Record<string, string>) =>
  calls.filter((c) => !c.literal && !allowed[c.file]).map((c) => `${c.file}: ${c.kind}(${c.arg}`);

/**
 * Imports from one feature into another's inner files: none (16 at be387ba). A new one fails.
 * activities/<f>.ts is no face: activities reach another slice through src/<f>/index.ts.
 */
const KNOWN_REACH_INS: string[] = [];

/** What a measured list has beyond its known list (new), and what the known list holds in vain (gone). */
export const againstKnown = (measured: readonly string[], known: readonly string[]) => ({
  new: measured.filter((x) => !known.includes(x)),
  gone: known.filter((x) => !measured.includes(x)),
});

let all: Graph;
let runtime: Graph;
let calls: CallImport[];
let files: string[];
let features: string[];
beforeAll(async () => {
  process.chdir(root);
  files = filesUnder(root, ROOTS);
  features = featuresIn(root);
  calls = files.flatMap((f) => callImports(f, fs.readFileSync(path.join(root, f), 'utf8')));
  const [a, r] = await Promise.all([graph(false), graph(true)]);
  [all, runtime] = [withCallImports(root, a, calls), withCallImports(root, r, calls)];
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

describe('architecture: what madge misses, and the feature slices', () => {
  it('sees require() and import() calls, literal and computed, and adds the literal ones to the graph', () => {
    expect(calls).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: 'src/main.ts', kind: 'import', literal: './simulators/smtp-sink' }),
        expect.objectContaining({ file: 'src/db/knex.ts', kind: 'require', literal: undefined }),
      ]),
    );
    expect(all['src/main.ts']).toContain('src/simulators/smtp-sink.ts');
  });

  it('has no computed require() or import() but the allowed ones, each with its reason', () => {
    expect(unallowed(calls, COMPUTED_IMPORTS)).toEqual([]);
    const allowedInUse = Object.keys(COMPUTED_IMPORTS).filter((f) => calls.some((c) => c.file === f && !c.literal));
    expect(allowedInUse).toEqual(Object.keys(COMPUTED_IMPORTS));
  });

  it('the call scan fails on a computed import, and a literal one joins the layer check', () => {
    const text = "const m = await import(`./${name}`);\nconst r = require(dir + '/x');\n// import(notCode)\n";
    expect(unallowed(callImports('src/payments/x.ts', text), COMPUTED_IMPORTS)).toEqual([
      'src/payments/x.ts: import(`./${name}`',
      "src/payments/x.ts: require(dir + '/x'",
    ]);
    const back = withCallImports(root, { 'src/http/errors.ts': [] }, [
      { file: 'src/http/errors.ts', kind: 'require', literal: '../payments/service', arg: '' },
    ]);
    expect(backUp(back)).toEqual(['src/http/errors.ts (toolkit) -> src/payments/service.ts (features)']);
  });

  it('derives the features from the tree: the eight of issue 36 at least', () => {
    expect(features).toEqual(
      expect.arrayContaining([
        'payments',
        'refunds',
        'callbacks',
        'webhooks',
        'checkout',
        'reconciliation',
        'bank',
        'storefront',
      ]),
    );
  });

  it('a feature imports another only through its face: no reach-in beyond KNOWN_REACH_INS', () => {
    const measured = reachIns(all, features);
    console.log(`reach-ins: ${measured.length}\n${measured.join('\n')}`);
    expect(againstKnown(measured, KNOWN_REACH_INS)).toEqual({ new: [], gone: [] });
  });

  it('the reach-in check fails on an inner import, and lets a face through', () => {
    const g: Graph = {
      'src/refunds/service.ts': ['src/payments/index.ts', 'src/payments/service.ts', 'src/domain/money.ts'],
      'workflows/refunds.ts': ['workflows/payments/index.ts', 'workflows/payments/machine.ts'],
      'activities/refunds.ts': ['workflows/payments/index.ts'],
      'src/app/app.ts': ['src/payments/service.ts'],
    };
    expect(reachIns(g, features)).toEqual([
      'src/refunds/service.ts -> src/payments/service.ts',
      'workflows/refunds.ts -> workflows/payments/machine.ts',
      'activities/refunds.ts -> workflows/payments/index.ts',
    ]);
    expect(againstKnown(['a', 'c'], ['a', 'b'])).toEqual({ new: ['c'], gone: ['b'] });
  });

  it("every feature's files live in its places only (src/<f>/, workflows/<f>, activities/<f>, test/<f>/)", () => {
    expect(files.length).toBeGreaterThan(80);
    expect(spread(files, features)).toEqual([]);
  });

  it('the spread check fails on a file named for a feature outside its places', () => {
    const list = ['src/payments/refunds-repository.ts', 'workflows/webhook-recovery.ts', 'src/refunds/service.ts'];
    expect(spread(list, features)).toEqual([
      'refunds: src/payments/refunds-repository.ts',
      'webhooks: workflows/webhook-recovery.ts',
    ]);
    expect(spread(['src/orders/index.ts', 'workflows/order.ts'], [...features, 'orders'])).toEqual([]);
  });
});
