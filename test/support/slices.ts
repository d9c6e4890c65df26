/**
 * Feature slices, read from the tree: which src/ folders are features, where a feature's files may
 * live, the imports madge cannot see (require() and import() calls), and which files name each
 * table in SQL or knex. The rules follow /work/shared/tools/slices.js; the project never reads it.
 */
import fs from 'node:fs';
import path from 'node:path';

export type Graph = Record<string, string[]>;
export const ROOTS = ['src', 'workflows', 'activities'] as const;
/** src/ folders owned by no feature: the shared infrastructure, the composition root, the entry points */
export const NOT_FEATURES = new Set([
  'app',
  'cli',
  'db',
  'domain',
  'http',
  'roles',
  'simulators',
  'stack',
  'temporal',
  'types',
]);

/** Every .ts/.js/.cjs/.mjs file under `dirs` (no .d.ts), relative to `root`, `/`-separated. */
export function filesUnder(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(p);
      } else if (/\.(ts|js|cjs|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
    }
  };
  for (const d of dirs) if (fs.existsSync(path.join(root, d))) walk(d);
  return out.sort();
}

/** The features: every folder of src/ that is not shared infrastructure, read from the tree. */
export const featuresIn = (root: string): string[] =>
  fs
    .readdirSync(path.join(root, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory() && !NOT_FEATURES.has(e.name))
    .map((e) => e.name)
    .sort();

const bare = (seg: string) => seg.replace(/\.(ts|js|cjs|mjs)$/, '').replace(/s$/, '');

/** The feature whose place holds `file`: src/<f>/, workflows/<f>(.ts|/), activities/<f>(.ts|/), test/<f>/. */
export function featureOf(file: string, features: readonly string[]): string | undefined {
  const [top, second, ...rest] = file.split('/');
  if (!second) return undefined;
  if (top === 'src' || top === 'test') return rest.length > 0 && features.includes(second) ? second : undefined;
  if (top === 'workflows' || top === 'activities') return features.find((f) => bare(second) === bare(f));
  return undefined;
}

/** May `from` import `to`? Across features only through the face: src/B/index.ts, or for a workflow file workflows/B(/index).ts. */
export function crossesFeature(from: string, to: string, features: readonly string[]): boolean {
  const a = featureOf(from, features);
  const b = featureOf(to, features);
  if (!a || !b || a === b) return false;
  if (to === `src/${b}/index.ts`) return false;
  const workflowFace = /^workflows\/[^/]+(\/index)?\.ts$/.test(to);
  return !(from.startsWith('workflows/') && workflowFace);
}

/** Every import from one feature's file into another feature's file that is not its face. */
export const reachIns = (g: Graph, features: readonly string[]): string[] =>
  Object.entries(g).flatMap(([from, tos]) =>
    tos.filter((to) => crossesFeature(from, to, features)).map((to) => `${from} -> ${to}`),
  );

/** Files that name a feature but live outside its places (the shared entry files and the simulators aside). */
export function spread(files: readonly string[], features: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    if (/^(workflows|activities)\/index\.ts$/.test(f) || /^src\/(cli|simulators)\//.test(f)) continue;
    const own = featureOf(f, features);
    const words = f.replace(/\.(ts|js|cjs|mjs)$/, '').split(/[/_.-]/);
    for (const feat of features)
      if (feat !== own && words.some((w) => bare(w) === bare(feat))) out.push(`${feat}: ${f}`);
  }
  return out;
}

/** Source text with its comments blanked (a rough scanner: enough to skip `import(` in prose). */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

export interface CallImport {
  file: string;
  kind: 'require' | 'import';
  /** the literal specifier, or undefined when the argument is computed */
  literal?: string;
  /** the argument's source text (first line) */
  arg: string;
}

/** Every require(...) and import(...) call of a source text: literal or computed. */
export function callImports(file: string, text: string): CallImport[] {
  const out: CallImport[] = [];
  for (const m of withoutComments(text).matchAll(/(?<![.\w$])(require|import)\s*\(\s*([^)\n]*)/g)) {
    const lit = /^(['"`])([^'"`$]+)\1\s*$/.exec(m[2].replace(/,\s*$/, '').trim()) ?? /^(['"])([^'"]+)\1/.exec(m[2]);
    out.push({ file, kind: m[1] as 'require' | 'import', literal: lit?.[2], arg: m[2].trim() });
  }
  return out;
}

/** A relative specifier of `from` as a project file, or undefined (a package, or not found). */
export function resolveLocal(root: string, from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  return [base, `${base}.ts`, `${base}.js`, `${base}/index.ts`, `${base}/index.js`].find(
    (c) => fs.existsSync(path.join(root, c)) && fs.statSync(path.join(root, c)).isFile(),
  );
}

/** `g` with the edges of literal require()/import() calls added (madge sees neither). */
export function withCallImports(root: string, g: Graph, calls: readonly CallImport[]): Graph {
  const out: Graph = Object.fromEntries(Object.entries(g).map(([k, v]) => [k, [...v]]));
  for (const c of calls) {
    const to = c.literal ? resolveLocal(root, c.file, c.literal) : undefined;
    if (to && !(out[c.file] ??= []).includes(to)) out[c.file].push(to);
  }
  return out;
}

/** The tables the migrations create. */
export function tablesOf(migrations: ReadonlyArray<readonly [string, string]>): string[] {
  const tables = new Set<string>();
  for (const [, t] of migrations) {
    for (const x of t.matchAll(/createTable(?:IfNotExists)?\(\s*['"]([a-z_0-9]+)['"]/g)) tables.add(x[1]);
    for (const x of t.matchAll(/create\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?"?([a-z_0-9]+)"?/gi))
      tables.add(x[1].toLowerCase());
  }
  return [...tables].sort();
}

/** Does `text` name `table` in SQL or knex? (the regex of slices.js) */
export function namesTable(text: string, table: string): boolean {
  const t = table;
  return new RegExp(
    `(\\b\\w+\\s*\\(\\s*['"\`]${t}['"\`]\\s*\\))|(\\.(from|into|table|join|leftJoin|innerJoin|withSchema)\\(\\s*['"\`]${t}\\b)` +
      `|\\b(FROM|INTO|UPDATE|JOIN|from|into|update|join)\\s+"?${t}"?\\s+(AS\\s+)?\\w|\\b(FROM|INTO|UPDATE|JOIN)\\s+"?${t}"?\\b`,
  ).test(text);
}

/** The slice of a file for table ownership: its feature, else its folder (src/app, src/simulators...) or itself. */
export const unitOf = (file: string, features: readonly string[]): string =>
  featureOf(file, features) ?? file.split('/').slice(0, 2).join('/');

/** Each table with the slices whose files name it, for the files given as [path, text]. */
export function tableUsers(
  files: ReadonlyArray<readonly [string, string]>,
  tables: readonly string[],
  features: readonly string[],
): Record<string, string[]> {
  const users: Record<string, Set<string>> = {};
  for (const [f, text] of files)
    for (const t of tables) if (namesTable(text, t)) (users[t] ??= new Set()).add(unitOf(f, features));
  return Object.fromEntries(Object.entries(users).map(([t, s]) => [t, [...s].sort()]));
}

/** `table: slice, slice` for every table named by more than one slice. */
export const sharedTables = (users: Record<string, string[]>): string[] =>
  Object.entries(users)
    .filter(([, s]) => s.length > 1)
    .map(([t, s]) => `${t}: ${s.join(', ')}`)
    .sort();
