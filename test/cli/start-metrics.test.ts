/**
 * `npm start` as typed (its own DATA_DIR and free ports): the gateway's /metrics carries the
 * worker's temporal_* metrics with no setting (TEMPORAL_METRICS_PORT unset), and SIGTERM stops
 * everything with exit 0.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/stack/temporal';
import { start, waitForOutput } from './support';

jest.setTimeout(300_000);

it('npm start: /metrics has talat_* and temporal_* metrics by default', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-start-'));
  const port = await freePort();
  const ports: Record<string, string> = {};
  for (const v of [
    'PG_PORT',
    'TEMPORAL_PORT',
    'TEMPORAL_UI_PORT',
    'OBJECT_STORE_PORT',
    'SMTP_SINK_PORT',
    'WORKER_HTTP_PORT',
  ])
    ports[v] = String(await freePort());
  const run = start('npm', ['start'], {
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    PORT: String(port),
    RECONCILIATION_SCHEDULES: 'off',
    ...ports,
  });
  try {
    await waitForOutput(run.stdout, /Talat is running/, 240_000);
    let metrics = '';
    for (const until = Date.now() + 30_000; Date.now() < until && !/^temporal_/m.test(metrics);) {
      metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(metrics).toMatch(/^talat_process_cpu_user_seconds_total/m);
    expect(metrics).toMatch(/^temporal_\w+/m);
  } finally {
    run.child.kill('SIGTERM');
    const r = await run.done;
    fs.rmSync(dataDir, { recursive: true, force: true });
    expect(r.code).toBe(0);
  }
});
