#!/usr/bin/env node
/**
 * `npm run gateway | worker | cluster` and bin/talat: runs the compiled entry point of
 * `npm run build` (dist/src/<entry>.js) when there is one, else (development) the TypeScript
 * source through tsx, saying so. Usage: node scripts/run.cjs roles/gateway [args...]
 * In-process (no child), so SIGTERM reaches the role itself.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const entry = process.argv[2];
if (!entry || !/^[a-z]+\/[a-z-]+$/.test(entry)) {
  process.stderr.write('usage: node scripts/run.cjs <roles/gateway|roles/worker|cli/talat|...> [args]\n');
  process.exit(2);
}
process.argv.splice(2, 1);
const built = path.join(root, 'dist', 'src', `${entry}.js`);
const source = path.join(root, 'src', `${entry}.ts`);
// the command modules run their main only as the entry (src/cli/entry.ts): this is it
if (fs.existsSync(built)) {
  globalThis.talatEntry = built;
  require(built);
} else {
  let register;
  try {
    register = require('tsx/cjs/api').register;
  } catch {
    process.stderr.write(
      `talat: no build (${path.relative(root, built)} is missing) and no tsx to run the sources: run \`npm run build\` first\n`,
    );
    process.exit(1);
  }
  // the `talat` command line stays quiet: its stderr is for its own messages
  if (entry !== 'cli/talat')
    process.stderr.write(
      `talat: no build in dist/: running ${path.relative(root, source)} with tsx (\`npm run build\` for the compiled one)\n`,
    );
  register();
  globalThis.talatEntry = source;
  require(source);
}
