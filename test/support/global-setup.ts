/**
 * Starts the real services once for the whole run: a Postgres cluster of the tests' own
 * (DATA_DIR/test-pg) unless DATABASE_URL is set, the Temporal CLI dev server (in memory,
 * headless) unless TEMPORAL_ADDRESS is set, the object store (DATA_DIR/test-objectstore, free
 * port) unless S3_ENDPOINT is set, and bundles the workflow code once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startEmbeddedObjectStore } from '../../src/stack/objectstore';
import { startEmbeddedPostgres } from '../../src/stack/postgres';
import { freePort, startEmbeddedTemporal } from '../../src/stack/temporal';
import { bundleWorkflows } from '../../src/app/worker';

export default async function globalSetup(): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  // a directory per run, so two test runs on one machine never share a cluster
  const dataDir = path.join(root, '.data', `test-run-${process.pid}`);
  fs.mkdirSync(dataDir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  try {
    await startAll(dataDir, stops);
  } catch (e) {
    // a failed set-up (say, no Temporal CLI) must not leave the services it did start running:
    // jest runs no teardown then
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  stops.unshift(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  (globalThis as { __talatStops?: (() => Promise<void>)[] }).__talatStops = stops;
}

async function startAll(dataDir: string, stops: (() => Promise<void>)[]): Promise<void> {
  if (!process.env.DATABASE_URL) {
    const port = process.env.TEST_PG_PORT ? Number(process.env.TEST_PG_PORT) : await freePort();
    const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'test-pg'), port, database: 'talat_test' });
    process.env.TALAT_TEST_PG_ADMIN_URL = pg.adminUrl;
    stops.push(() => pg.stop());
  } else {
    process.env.TALAT_TEST_PG_ADMIN_URL = process.env.DATABASE_URL;
  }

  if (!process.env.TEMPORAL_ADDRESS) {
    const t = await startEmbeddedTemporal({
      port: await freePort(),
      namespace: 'default',
      cliPath: process.env.TEMPORAL_CLI_PATH,
    });
    process.env.TALAT_TEST_TEMPORAL_ADDRESS = t.address;
    stops.push(() => t.stop());
  } else {
    process.env.TALAT_TEST_TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS;
  }

  if (!process.env.S3_ENDPOINT) {
    const store = await startEmbeddedObjectStore({
      dataDir: path.join(dataDir, 'test-objectstore'),
      port: await freePort(),
      accessKeyId: 'talat-test',
      secretAccessKey: 'talat-test-object-store-secret',
      bin: process.env.OBJECT_STORE_BIN,
    });
    Object.assign(process.env, {
      TALAT_TEST_S3_ENDPOINT: store.endpoint,
      TALAT_TEST_S3_ACCESS_KEY_ID: store.accessKeyId,
      TALAT_TEST_S3_SECRET_ACCESS_KEY: store.secretAccessKey,
      TALAT_TEST_OBJECT_STORE_BIN: store.binary,
    });
    stops.push(() => store.stop(3000)); // its data goes with the run's directory
  } else {
    Object.assign(process.env, {
      TALAT_TEST_S3_ENDPOINT: process.env.S3_ENDPOINT,
      TALAT_TEST_S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? '',
      TALAT_TEST_S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? '',
    });
  }

  const bundlePath = path.join(dataDir, 'test-workflow-bundle.js');
  fs.writeFileSync(bundlePath, await bundleWorkflows());
  process.env.TALAT_TEST_WORKFLOW_BUNDLE = bundlePath;
}
