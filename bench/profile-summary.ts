/**
 * `npx tsx bench/profile-summary.ts FILE.cpuprofile [--top N]`: where a profiled round's CPU went.
 * Two tables: self time by package (node_modules/<pkg>, node's internals, the project's own files,
 * GC, idle), and inclusive time by the project's nearest function (each sample charged to the
 * deepest frame in src/, activities/, workflows/ or bench/, with the library under it).
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const OWN = /^(?!.*node_modules).*\/(src|activities|workflows|bench)\//;

function packageOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : `(native) ${fn}`;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const own = /\/(src|activities|workflows|bench)\//.exec(url);
  if (own && OWN.test(url))
    return `talat ${url
      .slice(own.index + 1)
      .split('/')
      .slice(0, 2)
      .join('/')}`;
  return url.split('/').slice(-1)[0];
}

export function summarise(p: Profile, top = 25): string[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const owner = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const us = p.timeDeltas[i] ?? 0;
    const leaf = byId.get(id)!;
    total += us;
    const pkg = packageOf(leaf.callFrame.url, leaf.callFrame.functionName);
    self.set(pkg, (self.get(pkg) ?? 0) + us);
    let at: number | undefined = id;
    let mine: Node | undefined;
    while (at !== undefined) {
      const n = byId.get(at)!;
      if (OWN.test(n.callFrame.url)) {
        mine = n;
        break;
      }
      at = parent.get(at);
    }
    const key = mine
      ? `${mine.callFrame.functionName || '(anonymous)'} ${mine.callFrame.url.replace(/^.*\/(src|activities|workflows|bench)\//, '$1/')} <- ${pkg}`
      : `(no project frame) <- ${pkg}`;
    owner.set(key, (owner.get(key) ?? 0) + us);
  });
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          `  ${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`,
      );
  return [
    `${(total / 1000).toFixed(0)} ms sampled`,
    'self time by package:',
    ...rows(self),
    "by the project's nearest function <- the leaf's package:",
    ...rows(owner),
  ];
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: npx tsx bench/profile-summary.ts FILE.cpuprofile [--top N]\n');
    process.exit(2);
  }
  const i = process.argv.indexOf('--top');
  const top = i > 0 ? Number(process.argv[i + 1]) : 25;
  process.stdout.write(`${summarise(JSON.parse(fs.readFileSync(file, 'utf8')) as Profile, top).join('\n')}\n`);
}
