/**
 * `npx tsx bench/reconciliation.ts [-- --lines N --runs R]`
 *
 * Lines reconciled per second: a generated day of about N lines (default 20000) of each
 * provider (test/reconciliation/generate.ts: every outcome), put in an object store of its own,
 * reconciled R times (default 3: the first run and re-runs of the same day) by the activity's
 * body (src/reconciliation/service.ts: download, parse, classify, write in one transaction).
 * Prints lines per second per run. Self-contained and loopback only (bench/support.ts).
 */
import path from 'node:path';
import { loadConfig } from '../src/config';
import { SETTLEMENT_PROVIDERS, settlementKey } from '../src/reconciliation';
import { createSettlementStore } from '../src/reconciliation/files';
import { reconcileDay } from '../src/reconciliation/service';
import { startEmbeddedObjectStore } from '../src/stack/objectstore';
import { freePort } from '../src/stack/temporal';
import { generateDay } from '../test/reconciliation/generate';
import { intArg, loadAverage, runBench, say } from './support';

const opts = { lines: intArg('--lines', 20_000, 200_000), runs: intArg('--runs', 3, 10) };

runBench(
  `bench-reconciliation-${process.pid}`,
  { taskQueue: 'bench-reconciliation', scopes: ['reconciliation:read'], worker: false },
  () => opts,
  async (o, stack) => {
    const objects = await startEmbeddedObjectStore({
      dataDir: path.join(stack.dataDir, 'objectstore'),
      port: await freePort(),
      accessKeyId: 'talat-bench',
      secretAccessKey: 'talat-bench-object-store-secret',
      toolsDataDir: path.resolve(__dirname, '..', '.data'),
    });
    try {
      const config = loadConfig({
        NODE_ENV: 'test',
        S3_ENDPOINT: objects.endpoint,
        S3_ACCESS_KEY_ID: 'talat-bench',
        S3_SECRET_ACCESS_KEY: 'talat-bench-object-store-secret',
      });
      const store = createSettlementStore(config);
      say(`load average before ${loadAverage()}`);
      for (const provider of SETTLEMENT_PROVIDERS) {
        const date = '2025-06-10';
        // about 1.15 lines per item for card (refunds, duplicates), 0.95 otherwise
        const day = await generateDay(
          stack.db,
          provider,
          date,
          Math.round(o.lines / (provider === 'card' ? 1.15 : 0.95)),
          `b${provider}`,
        );
        await store.put(settlementKey(provider, date), day.text);
        for (let i = 0; i < o.runs; i++) {
          const t0 = process.hrtime.bigint();
          const r = await reconcileDay({ db: stack.db, store }, { provider, mode: 'sandbox', date });
          const s = Number(process.hrtime.bigint() - t0) / 1e9;
          if (r.status !== 'completed') throw new Error(`${provider}: ${r.status}`);
          process.stdout.write(
            `${provider.padEnd(10)} run ${i + 1}  ${String(r.lines).padStart(7)} lines  ${s.toFixed(2).padStart(6)} s  ${Math.round(
              r.lines / s,
            )
              .toString()
              .padStart(7)} lines/s\n`,
          );
        }
      }
      say(`load average after ${loadAverage()}`);
    } finally {
      await objects.stop();
    }
  },
);
