/**
 * The runnable-docs convention: a fenced block whose info string is `bash runnable` is run by
 * test/docs/runnable.test.ts; `<!-- expect: text -->` lines right after it name fragments its
 * output must contain. A `bash server` block is the long-running command the others run against.
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
const EXPECT = /^\s*<!--\s*expect:\s?([\s\S]*?)\s*-->\s*$/;

/** Every `bash runnable` and `bash server` block of a markdown text, in order (none nested in another block). */
export function blocksOf(file: string, text: string): Block[] {
  const lines = text.split('\n');
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
    const expects: string[] = [];
    let j = i + 1;
    while (j < lines.length && lines[j].trim() === '') j++;
    for (let m; j < lines.length && (m = EXPECT.exec(lines[j])); j++) expects.push(m[1]);
    out.push({ file, line: start + 1, kind: run[1], code: body.join('\n'), expects });
  }
  return out;
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
