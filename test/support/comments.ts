/** The comment blocks of a TypeScript source, for test/lint.test.ts's length and benchmark checks. */
import fs from 'node:fs';
import path from 'node:path';

export interface CommentBlock {
  file: string;
  /** 1-based line of the block's first line */
  line: number;
  lines: string[];
}

/**
 * Each `/* ... *\/` comment, and each run of consecutive lines that hold only a `//` comment. A
 * rough scanner (strings and regular expressions are skipped when they start a comment marker
 * inside quotes on the same line), good enough for this code base's comments.
 */
export function commentBlocks(file: string, text: string): CommentBlock[] {
  const blocks: CommentBlock[] = [];
  const lines = text.split('\n');
  let run: CommentBlock | undefined;
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (trimmed.startsWith('//')) {
      if (!run) blocks.push((run = { file, line: i + 1, lines: [] }));
      run.lines.push(trimmed);
      continue;
    }
    run = undefined;
    const start = blockStart(lines[i]);
    if (start < 0) continue;
    const block: CommentBlock = { file, line: i + 1, lines: [] };
    let j = i;
    let from = start;
    for (; j < lines.length; j++, from = 0) {
      block.lines.push(lines[j].trim());
      if (lines[j].indexOf('*/', j === i ? start + 2 : from) >= 0) break;
    }
    blocks.push(block);
    i = j;
  }
  return blocks;
}

/** Where a block comment opens on this line outside a string, or -1. */
function blockStart(line: string): number {
  let quote: string | undefined;
  for (let k = 0; k < line.length; k++) {
    const c = line[k];
    if (quote) {
      if (c === '\\') k++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '/' && line[k + 1] === '/') return -1;
    else if (c === '/' && line[k + 1] === '*') return k;
  }
  return -1;
}

/** Every .ts file under `dirs` (relative to `root`). */
export function sourceFiles(root: string, dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(root, d), { withFileTypes: true })) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) out.push(p);
    }
  };
  dirs.forEach(walk);
  return out.sort();
}

/** A comment that cites a benchmark run or a measured figure: those belong in the benchmark docs. */
export const BENCHMARK_FIGURE =
  /\bbench:[a-z]|\bbenchmark|\bmeasured\b|\bp(50|95|99)\b|\d ?(us|µs)\b|\d\.\d+ ?ms\b|\bms (a|per) (call|request|line|key)\b|\babout \d+ times\b|\d ?(calls|payments|callbacks|requests)\/s\b|\bin \d+ (runs|pairs|trials)\b|README "Engine"/i;
