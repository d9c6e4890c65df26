/**
 * `npx tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--top N] [--filter TEXT]`
 *
 * Reads a V8 CPU profile (`node --cpu-prof`) and prints where the time went: the top functions by
 * self time, self time by place (package, Node, project file), the top functions by total
 * (inclusive) time, each sample charged to the project's nearest function (with the leaf's place),
 * and each of the top self-time functions' heaviest callers' stacks (bottom-up).
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const argv = process.argv.slice(2);
const file = argv.find((a) => !a.startsWith('--'));
if (!file) throw new Error('usage: cpuprofile-summary <file.cpuprofile> [--top N] [--filter TEXT]');
const top = Number(argv[argv.indexOf('--top') + 1]) || 25;
const filter = argv.includes('--filter') ? argv[argv.indexOf('--filter') + 1] : undefined;
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;

const short = (url: string) => {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const m = /\/(src|bench|activities|workflows)\/.*/.exec(url);
  return m ? m[0].slice(1) : url.replace(/^file:\/\//, '');
};
const nameOf = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url ? `${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}` : ''}`.trim();

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// self time per node from samples and their time deltas (microseconds)
const selfUs = new Map<number, number>();
prof.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idle = [...selfUs].filter(([id]) => /\((idle|program|garbage collector)\)/.test(nameOf(byId.get(id)!)));

const selfByName = new Map<string, number>();
const totalByName = new Map<string, number>();
for (const [id, us] of selfUs) {
  const name = nameOf(byId.get(id)!);
  selfByName.set(name, (selfByName.get(name) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const nm = nameOf(byId.get(cur)!);
    if (seen.has(nm)) continue; // recursion counted once
    seen.add(nm);
    totalByName.set(nm, (totalByName.get(nm) ?? 0) + us);
  }
}
// where a sample's code lives: a project file, a package, or Node itself
const placeOf = (id: number) => {
  const { url, functionName } = byId.get(id)!.callFrame;
  const nm = url.lastIndexOf('node_modules/');
  if (!url) return `(native) ${functionName}`;
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/');
    return rest.slice(0, rest[0].startsWith('@') ? 2 : 1).join('/');
  }
  return url.startsWith('node:') ? url.split('/').slice(0, 2).join('/') : short(url);
};
const selfByPlace = new Map<string, number>();
// each sample also charged to the deepest frame in the project's own code, with its leaf's place
const OWN = /^(?!.*node_modules).*\/(src|activities|workflows|bench)\//;
const byOwner = new Map<string, number>();
for (const [id, us] of selfUs) {
  const place = placeOf(id);
  selfByPlace.set(place, (selfByPlace.get(place) ?? 0) + us);
  let at: number | undefined = id;
  while (at !== undefined && !OWN.test(byId.get(at)!.callFrame.url)) at = parent.get(at);
  const key = `${at === undefined ? '(no project frame)' : nameOf(byId.get(at)!)} <- ${place}`;
  byOwner.set(key, (byOwner.get(key) ?? 0) + us);
}
const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%`;
const show = (m: Map<string, number>) =>
  [...m]
    .filter(([n]) => !filter || n.includes(filter))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([n, us]) => `  ${pct(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${n}`)
    .join('\n');

const out: string[] = [
  `${file}: ${(totalUs / 1e6).toFixed(2)} s sampled; ${idle.map(([id, us]) => `${nameOf(byId.get(id)!)} ${pct(us)}`).join(', ')}`,
  `\nby self time:`,
  show(selfByName),
  `\nby place (self time):`,
  show(selfByPlace),
  `\nby total time (inclusive):`,
  show(totalByName),
  `\nby the project's nearest function <- the leaf's place:`,
  show(byOwner),
  `\nheaviest stacks of the top self-time functions (leaf first):`,
];
const stackOf = (id: number) => {
  const frames: string[] = [];
  for (let cur: number | undefined = id; cur !== undefined && frames.length < 14; cur = parent.get(cur))
    frames.push(nameOf(byId.get(cur)!));
  return frames;
};
for (const [name] of [...selfByName]
  .sort((a, b) => b[1] - a[1])
  .filter(([n]) => !/^\((idle|program|garbage)/.test(n))
  .slice(0, 8)) {
  const nodes = [...selfUs].filter(([id]) => nameOf(byId.get(id)!) === name).sort((a, b) => b[1] - a[1]);
  out.push(`  ${name}  (${pct(nodes.reduce((a, [, us]) => a + us, 0))})`);
  for (const [id, us] of nodes.slice(0, 2)) out.push(`    ${pct(us)}: ${stackOf(id).slice(1).join(' < ')}`);
}
process.stdout.write(out.join('\n') + '\n');
