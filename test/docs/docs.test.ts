/**
 * The docs a user reads: README stays short, every link and every repository path a guide names
 * exists, and nothing points to a file the repository does not hold.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../src/domain/errors';

const root = path.resolve(__dirname, '../..');
const docs = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (f: string): string => fs.readFileSync(path.join(root, f), 'utf8');
/** The benchmark docs keep their history (commits measured); every other page is a user guide. */
const BENCHMARK_DOCS = ['docs/engine.md', 'docs/scale.md', 'docs/search-evaluation.md'];
const guides = docs.filter((f) => !BENCHMARK_DOCS.includes(f));

/** Issue numbers, commit hashes and references to a contract document the repository does not hold. */
export function historyIn(text: string): string[] {
  const found: [number, string][] = [];
  const add = (re: RegExp) => {
    for (const m of text.matchAll(re)) found.push([m.index!, m[0]]);
  };
  add(/\bissues? #?\d+/gi);
  add(/(?<![\w#]|restart )#\d+\b/g);
  add(/(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])/g);
  add(/\bSPEC\b/g);
  add(/\bthe contract'?s?(?! (is|between) )\b/gi);
  return found.sort((a, b) => a[0] - b[0]).map(([, t]) => t);
}
const TOP = /^(src|test|workflows|activities|scripts|bench|migrations|ops|docs|data)\//;

/** Repository paths named in backticks, without globs, braces or placeholders. */
export function namedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/`([^`\s]+)`/g)) {
    const p = m[1].replace(/[.,:;)]+$/, '').replace(/:\d+(-\d+)?$/, '');
    if (TOP.test(p) && !/[*{}<>|$]/.test(p)) out.add(p);
  }
  return [...out];
}

describe('docs', () => {
  it('README.md is at most 300 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('reads the guides (the checks below can fail)', () => {
    expect(docs.length).toBeGreaterThan(8);
    expect(namedPaths('see `src/nowhere.ts` and `docs/x.md:3`')).toEqual(['src/nowhere.ts', 'docs/x.md']);
  });

  it.each(docs)('%s: every relative link resolves', (file) => {
    const broken = [...read(file).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1])
      .filter((href) => !/^[a-z]+:/.test(href))
      .filter((href) => !fs.existsSync(path.resolve(root, path.dirname(file), href)));
    expect(broken).toEqual([]);
  });

  it.each(docs)('%s: every repository path it names exists', (file) => {
    const missing = namedPaths(read(file)).filter((p) => !fs.existsSync(path.join(root, p)));
    expect(missing).toEqual([]);
  });

  it('no source, test or script points to a file outside the repository', () => {
    const walk = (dir: string): string[] =>
      fs
        .readdirSync(path.join(root, dir), { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`]));
    const files = ['src', 'workflows', 'activities', 'test', 'scripts', 'bench', 'migrations', 'ops']
      .flatMap(walk)
      .concat(['Dockerfile', 'docker-compose.yml', 'package.json'])
      // a landed migration is never edited, its comments included
      .filter((f) => f !== 'migrations/20261122020000_callbacks.ts');
    expect(files.length).toBeGreaterThan(200);
    expect(files.filter((f) => /\b(SPEC|DESIGN|STYLE)\.md\b|\.\.\/shared\b/.test(read(f)))).toEqual([]);
  });

  it.each(guides)('%s: names no issue, commit or contract the repository does not hold', (file) => {
    expect(historyIn(read(file))).toEqual([]);
  });

  it('the check finds an issue number, a commit hash and an absent contract', () => {
    expect(historyIn("as issue 27 asked, since 5f56a04 (#12), per SPEC and the contract's rule")).toEqual([
      'issue 27',
      '5f56a04',
      '#12',
      'SPEC',
      "the contract's",
    ]);
    expect(historyIn('sha256 3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a, restart #1')).toEqual(
      [],
    );
  });

  it('the go-live checklist names only settings that exist, and every page is in the map', () => {
    const config = read('src/config.ts');
    const codes = new Set<string>(Object.values(ErrorCode));
    const settings = [...read('docs/go-live.md').matchAll(/`([A-Z][A-Z0-9_]{3,})(<NAME>)?(=\w+)?`/g)]
      .map((m) => m[1])
      .filter((v) => !codes.has(v));
    expect(settings.length).toBeGreaterThan(8);
    expect(settings.filter((v) => !config.includes(v))).toEqual([]);
    const map = read('docs/README.md');
    const pages = docs.filter((f) => f.startsWith('docs/') && f !== 'docs/README.md').map((f) => f.slice(5));
    expect(pages.filter((p) => !map.includes(`](${p})`))).toEqual([]);
  });

  it.each(docs)('%s: points to no file outside the repository', (file) => {
    expect(read(file)).not.toMatch(/\b(SPEC|DESIGN|STYLE)\.md\b|\.\.\/shared\b/);
  });
});
