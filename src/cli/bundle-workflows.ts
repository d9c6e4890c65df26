/**
 * `npm run build`'s second step: the workflow bundle (bundleWorkflowCode) written to
 * dist/workflow-bundle.js, which compiled workers load (`workflowBundle: { codePath }`) instead of
 * bundling the workflows at every start. Usage: bundle-workflows [out-file].
 */
import fs from 'node:fs';
import path from 'node:path';
import { BUILT_BUNDLE_NAME, bundleWorkflows } from '../app/worker';

async function main() {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '..', '..', BUILT_BUNDLE_NAME));
  const code = await bundleWorkflows();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  process.stdout.write(`workflow bundle: ${out} (${(code.length / 1024).toFixed(0)} KiB)\n`);
}

main().catch((e) => {
  process.stderr.write(`bundling the workflows failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
