/**
 * `npm run bench:assets`: how long publishing the storefront's assets takes (every branch's price
 * file and all group images in webp, png and jpg), and the latency of fetches through presigned
 * URLs, on this machine.
 *
 * Self-contained and loopback only: its own Postgres cluster and object store (the embedded engine
 * of `npm start`) on free ports under .data/bench-assets-<pid>, removed afterwards. Bounded: the
 * fetch loops run BENCH_FETCHES (default 500, at most 5000) sequential requests each, and a
 * 10-minute guard stops everything.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createDb, migrateLatest } from '../src/db/knex';
import { seedCatalog } from '../src/db/seed';
import { createPresigner } from '../src/object-store';
import { imageKey, priceKey } from '../src/storefront/assets/keys';
import { createAssetPublisher } from '../src/storefront/assets/publisher';
import { startEmbeddedObjectStore } from '../src/stack/objectstore';
import { startEmbeddedPostgres } from '../src/stack/postgres';
import { freePort } from '../src/stack/temporal';
import { headerLine, loadAverage, say } from './support';

const fetches = (() => {
  const v = Number(process.env.BENCH_FETCHES ?? 500);
  if (!Number.isInteger(v) || v < 1 || v > 5000) throw new Error('BENCH_FETCHES must be a whole number from 1 to 5000');
  return v;
})();

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const line = (name: string, xs: number[]) =>
  `${name.padEnd(44)} p50 ${pct(xs, 50).toFixed(2).padStart(7)} ms  p99 ${pct(xs, 99).toFixed(2).padStart(7)} ms  (${xs.length} sequential)`;

async function main() {
  const load = loadAverage();
  const root = path.resolve(__dirname, '..');
  const dir = path.join(root, '.data', `bench-assets-${process.pid}`);
  fs.mkdirSync(dir, { recursive: true });
  const stops: (() => Promise<void>)[] = [async () => fs.rmSync(dir, { recursive: true, force: true })];
  const guard = setTimeout(() => {
    say('10-minute guard reached: stopping');
    void Promise.all(stops.reverse().map((s) => s().catch(() => undefined))).then(() => process.exit(2));
  }, 600_000);
  guard.unref();
  try {
    say('starting Postgres and the object store');
    const pg = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'pg'),
      port: await freePort(),
      database: 'talat',
    });
    stops.push(() => pg.stop());
    const store = await startEmbeddedObjectStore({
      dataDir: path.join(dir, 'objectstore'),
      port: await freePort(),
      accessKeyId: 'talat-bench',
      secretAccessKey: 'talat-bench-secret',
    });
    stops.push(() => store.stop(3000));
    const db = createDb(pg.url);
    stops.push(() => db.destroy());
    await migrateLatest(db);
    await seedCatalog(db);
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATA_DIR: dir,
      S3_ENDPOINT: store.endpoint,
      S3_ACCESS_KEY_ID: store.accessKeyId,
      S3_SECRET_ACCESS_KEY: store.secretAccessKey,
    });
    const logger = pino({ level: 'silent' });
    const publisher = createAssetPublisher({ db, config, logger });
    stops.push(async () => publisher.s3.destroy());

    const out: string[] = [
      headerLine('storefront assets', 1, load),
      `object store: ${store.engine} (${path.basename(store.binary)}), loopback`,
    ];
    const run = async (name: string) => {
      const r = await publisher.publishOnce();
      out.push(
        `${name.padEnd(44)} ${(r.ms / 1000).toFixed(1).padStart(6)} s  (${r.uploaded.length} uploaded, ${r.unchanged} unchanged)`,
      );
      say(out[out.length - 1]);
      return r;
    };
    await run('publish all, cold (images drawn, buckets empty)');
    await run('publish again, nothing changed');
    await db('inventory').where({ branch_id: 'B003', product_id: 'G872104-1' }).increment('quantity', 1);
    await run('publish after one stock change');
    // the same into empty buckets, the images already drawn (DATA_DIR/cache/images): the upload alone
    const fresh = {
      ...config,
      objectStore: { ...config.objectStore, buckets: { prices: 'bench-prices-2', images: 'bench-images-2' } },
    };
    const second = createAssetPublisher({ db, config: fresh, logger });
    stops.push(async () => second.s3.destroy());
    const r2 = await second.publishOnce();
    out.push(
      `${'publish all, images drawn, buckets empty'.padEnd(44)} ${(r2.ms / 1000).toFixed(1).padStart(6)} s  (${r2.uploaded.length} uploaded, ${r2.unchanged} unchanged)`,
    );
    say(out[out.length - 1]);

    const presigner = createPresigner(config.objectStore as typeof config.objectStore & { endpoint: string });
    const signMs: number[] = [];
    const priceMs: number[] = [];
    const imageMs: number[] = [];
    for (let i = 0; i < fetches; i++) {
      const t0 = performance.now();
      const u = await presigner.url(config.objectStore.buckets.prices, priceKey(`B00${(i % 9) + 1}`), new Date());
      const t1 = performance.now();
      const r = await fetch(u.url);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`price file fetch: ${r.status}`);
      signMs.push(t1 - t0);
      priceMs.push(performance.now() - t1);
    }
    for (let i = 0; i < fetches; i++) {
      const u = await presigner.url(
        config.objectStore.buckets.images,
        imageKey('G872104', `G872104-${(i % 3) + 1}`, 'webp'),
        new Date(),
      );
      const t1 = performance.now();
      const r = await fetch(u.url);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`image fetch: ${r.status}`);
      imageMs.push(performance.now() - t1);
    }
    out.push(
      line('presign one GET URL', signMs),
      line('presigned fetch of a price file (~6 KB gzip)', priceMs),
      line('presigned fetch of a webp image', imageMs),
    );
    const size = (
      await (
        await publisher.s3.send(new GetObjectCommand({ Bucket: config.objectStore.buckets.prices, Key: 'B001.gz' }))
      ).Body!.transformToByteArray()
    ).length;
    out.push(`price file B001.gz: ${size} bytes gzip`);
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    clearTimeout(guard);
    for (const s of stops.reverse()) await s().catch((e) => say(`cleanup: ${(e as Error).message}`));
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
