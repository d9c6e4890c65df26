/**
 * The docs a user reads: README stays short, every link and every repository path a guide names
 * exists, and nothing points to a file the repository does not hold.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const docs = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (f: string): string => fs.readFileSync(path.join(root, f), 'utf8');
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

  it.each(docs)('%s: points to no file outside the repository', (file) => {
    expect(read(file)).not.toMatch(/\b(SPEC|DESIGN|STYLE)\.md\b|\.\.\/shared\b/);
  });
});
