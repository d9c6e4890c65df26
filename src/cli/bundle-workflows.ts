/**
 * `npm run build`'s second step: the workflow bundle (bundleWorkflowCode) written to
 * dist/workflow-bundle.js, which compiled workers load (`workflowBundle: { codePath }`) instead of
 * bundling the workflows at every start. Usage: bundle-workflows [out-file].
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { BUILT_BUNDLE_NAME, WORKFLOWS_PATH } from '../temporal/worker';

async function main() {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '..', '..', BUILT_BUNDLE_NAME));
  const quiet = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: console.error, log: quiet },
  });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  process.stdout.write(`workflow bundle: ${out} (${(code.length / 1024).toFixed(0)} KiB)\n`);
}

main().catch((e) => {
  process.stderr.write(`bundling the workflows failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
