/**
 * The runnable-docs convention: a fenced block whose info string is `bash runnable` is run by
 * test/docs/runnable.test.ts. What it prints is shown to the reader right after it: a line
 * `The output contains:` then a `text` block, each line of which is a fragment the output must
 * contain. A `bash server` block is the long-running command the others run against.
 */

export type Block = {
  file: string;
  /** 1-based line of the opening fence */
  line: number;
  /** words after the language: `runnable`, `server` */
  kind: string;
  code: string;
  expects: string[];
};

const FENCE = /^(\s*)(`{3,})(.*)$/;
const RUN = /^bash\s+(runnable|server)\s*$/;
const SHOWN = /^\s*The output contains:\s*$/;
const HIDDEN = /<!--\s*expect:/;

/** Every `bash runnable` and `bash server` block of a markdown text, in order (none nested in another block). */
export function blocksOf(file: string, text: string): Block[] {
  const lines = text.split('\n');
  const hidden = lines.findIndex((l) => HIDDEN.test(l));
  if (hidden >= 0)
    throw new Error(`${file}:${hidden + 1}: an expected output in an HTML comment is hidden from the reader`);
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, ticks, info] = open;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !new RegExp(`^\\s*${ticks}\`*\\s*$`).test(lines[i]); i++)
      body.push(lines[i].slice(indent.length));
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: the block is never closed`);
    const run = RUN.exec(info.trim());
    if (!run) continue;
    out.push({ file, line: start + 1, kind: run[1], code: body.join('\n'), expects: shownOutput(file, lines, i + 1) });
  }
  return out;
}

const nextFilled = (lines: string[], from: number): number => {
  while (from < lines.length && lines[from].trim() === '') from++;
  return from;
};

/** The fragments of the `The output contains:` text block starting at `from` (blank lines skipped), if any. */
function shownOutput(file: string, lines: string[], from: number): string[] {
  const label = nextFilled(lines, from);
  if (!SHOWN.test(lines[label] ?? '')) return [];
  const open = nextFilled(lines, label + 1);
  const fence = /^(\s*)(`{3,})text\s*$/.exec(lines[open] ?? '');
  if (!fence) throw new Error(`${file}:${open + 1}: "The output contains:" must be followed by a text block`);
  const fragments: string[] = [];
  for (let k = open + 1; k < lines.length && lines[k].trim() !== fence[2]; k++)
    if (lines[k].trim() !== '') fragments.push(lines[k].slice(fence[1].length).trimEnd());
  return fragments;
}

/**
 * The block as a bash script that first restores what the previous blocks of its file left
 * (variables, functions, working directory) from `state`, and saves it again at the end.
 */
export function scriptOf(code: string, state: string): string {
  const q = `'${state.replace(/'/g, `'\\''`)}'`;
  return [
    'set -eo pipefail',
    '__talat_base=" $(compgen -v | tr "\\n" " ") "',
    `if [ -s ${q} ]; then source ${q}; fi`,
    '__talat_save() {',
    '  { for v in $(compgen -v); do case "$__talat_base" in *" $v "*) ;; *) [[ $v == __talat* ]] || declare -p "$v";; esac; done',
    '    for f in $(compgen -A function); do [[ $f == __talat* ]] || declare -f "$f"; done',
    '    printf "cd %q\\n" "$PWD"; } > ' + q + '.new',
    `  mv ${q}.new ${q}`,
    '}',
    code,
    '__talat_save',
    '',
  ].join('\n');
}
