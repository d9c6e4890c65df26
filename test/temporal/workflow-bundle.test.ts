/**
 * The workflow bundle preloads the workflow code (src/app/worker.ts WORKFLOW_BUNDLER_OPTIONS): its
 * modules run once per worker, shared by every workflow, not once per new workflow. The bundle the
 * suite runs on is bundleWorkflows()' (test/support/global-setup.ts), so every workflow test
 * runs on the shared, frozen modules.
 */
import fs from 'node:fs';

it('the bundle preloads the workflows entry (and so every module it imports)', () => {
  const code = fs.readFileSync(process.env.TALAT_TEST_WORKFLOW_BUNDLE!, 'utf8');
  const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code);
  expect(preload?.[1]).toContain('"./workflows/index.ts"');
});
