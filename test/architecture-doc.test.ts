/**
 * docs/architecture.md stays true: every file it names exists, and its QR callback path is at
 * most 8 files, each once, each reached by the import it claims (madge's graph, type-only
 * imports included).
 */
import fs from 'node:fs';
import path from 'node:path';
import madge from 'madge';

const root = path.resolve(__dirname, '..');
const doc = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
type Graph = Record<string, string[]>;

/** The numbered steps of a section: `N. \`file\` (imported by M | imports M)`. */
function stepsOf(markdown: string, heading: string) {
  const section = markdown.split(/^## /m).find((s) => s.startsWith(heading)) ?? '';
  return [...section.matchAll(/^(\d+)\. `([^`]+)`(?: \((imported by|imports) (\d+)\))?/gm)].map((m) => ({
    n: Number(m[1]),
    file: m[2],
    link: m[3] as 'imported by' | 'imports' | undefined,
    to: m[4] ? Number(m[4]) : undefined,
  }));
}

/** What is wrong with a path: too long, a file twice, a step with no link, or a link the graph lacks. */
function pathProblems(steps: ReturnType<typeof stepsOf>, g: Graph): string[] {
  const problems: string[] = [];
  if (steps.length === 0) problems.push('no steps');
  if (steps.length > 8) problems.push(`${steps.length} files, more than 8`);
  const files = steps.map((s) => s.file);
  for (const f of files.filter((f, i) => files.indexOf(f) !== i)) problems.push(`${f} visited twice`);
  for (const s of steps.slice(1)) {
    const other = steps.find((o) => o.n === s.to);
    if (!s.link || !other || other.n >= s.n) {
      problems.push(`step ${s.n} (${s.file}) is not reached from an earlier step`);
      continue;
    }
    const [from, to] = s.link === 'imported by' ? [other.file, s.file] : [s.file, other.file];
    if (!(g[from] ?? []).includes(to)) problems.push(`${from} does not import ${to}`);
  }
  return problems;
}

let graph: Graph;
beforeAll(async () => {
  const res = await madge(['src', 'workflows', 'activities'], {
    baseDir: root,
    fileExtensions: ['ts'],
    tsConfig: path.join(root, 'tsconfig.json'),
  });
  graph = res.obj();
}, 60_000);

describe('docs/architecture.md', () => {
  it('names only files that exist', () => {
    const named = [...doc.matchAll(/`((?:src|workflows|activities|test)\/[^`\s]+\.ts)`/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((f) => !fs.existsSync(path.join(root, f)))).toEqual([]);
  });

  it('the QR callback path is at most 8 files, each once, each import real', () => {
    const steps = stepsOf(doc, 'One QR callback');
    expect(steps.map((s) => s.n)).toEqual(steps.map((_, i) => i + 1));
    expect(pathProblems(steps, graph)).toEqual([]);
  });

  it('the path check fails on a false import, a file twice and a path too long', () => {
    const steps = stepsOf(doc, 'One QR callback');
    const reversed = steps.map((s) => (s.n === 8 ? { ...s, link: 'imports' as const } : s));
    expect(pathProblems(reversed, graph)).toEqual([`${steps[7].file} does not import ${steps[6].file}`]);
    const twice = [...steps.slice(0, 7), { ...steps[7], file: steps[1].file, to: 1 }];
    expect(pathProblems(twice, graph)).toContain(`${steps[1].file} visited twice`);
    const long = [...steps, { n: 9, file: 'src/payments/service.ts', link: 'imported by' as const, to: 1 }];
    expect(pathProblems(long, graph)).toContain('9 files, more than 8');
  });
});
