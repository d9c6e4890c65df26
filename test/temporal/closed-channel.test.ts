/**
 * Closing a client connection while a call waits for a retry (Temporal unreachable) ends that
 * call with CANCELLED; without the guard (src/temporal/closed-channel.ts) the retry's timer threw
 * "Channel has been shut down" and the process crashed (CI saw it end test suites).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const run = (...args: string[]) =>
  spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(__dirname, 'closed-channel-process.ts'),
      process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
      ...args,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );

it("Talat's client ends a call waiting for its retry with CANCELLED when the connection closes", () => {
  const r = run();
  expect(r.stderr).not.toContain('Channel has been shut down');
  expect(r.stdout).toContain('closed; the call failed: code 1, Channel has been shut down');
  expect(r.status).toBe(0);
});

it("without Talat's interceptors the same close crashes the process (the guard is what holds)", () => {
  const r = run('bare');
  expect(r.stdout).not.toContain('closed;');
  expect(r.stderr).toContain('Channel has been shut down');
  expect(r.status).not.toBe(0);
});
