#!/usr/bin/env node
/**
 * `npm run gateway | worker | migrate | seed | apikey`: runs the compiled entry point of
 * `npm run build` (dist/src/<entry>.js) when there is one, else (development) the TypeScript
 * source through tsx, saying so. Usage: node scripts/run.cjs roles/gateway [args...]
 * In-process (no child), so SIGTERM reaches the role itself.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
// the entry is loaded as the process's main module, so its `require.main === module` guard runs it
const runAsMain = (file) => Module._load(file, null, true);

const root = path.resolve(__dirname, '..');
const entry = process.argv[2];
if (!entry || !/^[a-z]+\/[a-z-]+$/.test(entry)) {
  process.stderr.write('usage: node scripts/run.cjs <roles/gateway|roles/worker|cli/migrate|...> [args]\n');
  process.exit(2);
}
process.argv.splice(2, 1);
const built = path.join(root, 'dist', 'src', `${entry}.js`);
const source = path.join(root, 'src', `${entry}.ts`);
if (fs.existsSync(built)) {
  runAsMain(built);
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
  process.stderr.write(
    `talat: no build in dist/: running ${path.relative(root, source)} with tsx (\`npm run build\` for the compiled one)\n`,
  );
  register();
  runAsMain(source);
}
