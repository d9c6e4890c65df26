/**
 * An object store that goes down: the storefront keeps answering (503 only on the routes that need
 * the store), publication fails and backs off, and catches up once the store is back.
 * This file runs an object store of its own (same binary as global-setup's) so it can stop it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { AssetPublisher } from '../../src/storefront/assets/publisher';
import { startEmbeddedObjectStore, type EmbeddedObjectStore } from '../../src/stack/objectstore';
import { freePort } from '../../src/stack/temporal';
import { storefrontApp, storefrontError, type StorefrontTestApp } from '../storefront/helpers';
import { waitFor } from '../support/stack';
import { configFor, objectStoreEnv, testPublisher } from './helpers';

const bin = process.env.TALAT_TEST_OBJECT_STORE_BIN;
const maybe = bin ? describe : describe.skip; // S3_ENDPOINT given: no binary of ours to stop

maybe('a down object store', () => {
  let t: StorefrontTestApp;
  let store: EmbeddedObjectStore;
  let publisher: AssetPublisher;
  let storeDir: string;
  let port: number;
  const creds = { accessKeyId: 'talat-down-test', secretAccessKey: 'talat-down-test-secret' };
  const start = () => startEmbeddedObjectStore({ dataDir: storeDir, port, bin, ...creds });

  beforeAll(async () => {
    storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-store-'));
    port = await freePort();
    store = await start();
    const env = objectStoreEnv({
      S3_ENDPOINT: store.endpoint,
      S3_ACCESS_KEY_ID: creds.accessKeyId,
      S3_SECRET_ACCESS_KEY: creds.secretAccessKey,
      ASSET_PUBLISH_POLL_MS: '100',
    });
    t = await storefrontApp(env);
    t.at(new Date().toISOString());
    publisher = testPublisher(configFor(env, t.dataDir), {
      db: t.stack.db,
      imageGroups: (g) => g === 'G872104',
      backoff: { baseMs: 200, maxMs: 800 },
    });
  });
  afterAll(async () => {
    await publisher?.stop();
    publisher?.s3.destroy();
    await store?.stop(2000);
    await t?.close();
    fs.rmSync(storeDir, { recursive: true, force: true });
  });

  const get = (p: string) => request(t.app.callback()).get(p);

  it('the job publishes on start, keeps the API answering while the store is down, backs off, and catches up', async () => {
    publisher.start();
    await waitFor(async () => publisher.status().published, 30_000, 'first publication');
    expect((await get('/api/price/url/B004')).status).toBe(200);
    const published = publisher.status().published;

    await store.stop(0); // the store dies
    const row = await t.stack.db('inventory').where({ branch_id: 'B004', product_id: 'G872104-2' }).first();
    await t.stack
      .db('inventory')
      .where({ branch_id: 'B004', product_id: 'G872104-2' })
      .update({ quantity: row.quantity + 5 });
    try {
      // everything that reads Postgres answers as before
      for (const p of [
        '/api/v2/catalog-tree/catalog-tree',
        '/api/product/productlist/onlineData',
        '/api/group/read/G872104',
        '/api/inventory2/B004',
        '/app-first-page.json',
      ]) {
        expect([p, (await get(p)).status]).toEqual([p, 200]);
      }
      expect(
        (await request(t.app.callback()).post('/api/price/getallgz').set('Content-Type', 'application/json').send({}))
          .status,
      ).toBe(200);
      expect((await get('/api/group/image/G872104/G872104-1.png')).status).toBe(200); // the gateway's own image path
      // the routes that need the store say so
      const url = await get('/api/price/url/B004');
      expect(url.status).toBe(503);
      expect(url.body).toEqual(storefrontError('SERVICE_UNAVAILABLE', 503));
      expect(url.headers['retry-after']).toBe('5');
      expect((await get('/cdn/G872104-1')).status).toBe(503);

      // the job tries, fails, and backs off
      await waitFor(async () => publisher.status().failures >= 2, 30_000, 'failed attempts');
      expect(publisher.status()).toMatchObject({
        published,
        lastError: expect.any(String),
        nextAttemptAt: expect.any(Date),
      });
      const failed = await t.stack.db('storefront_asset_runs').where({ ok: false }).orderBy('id', 'desc').first();
      expect(failed.error).toBeTruthy();

      store = await start(); // back, same data and port
      await waitFor(
        async () => publisher.status().failures === 0 && publisher.status().published !== published,
        30_000,
        'publication catching up',
      );
      const res = await get('/api/price/url/B004');
      expect(res.status).toBe(200);
      const file = (await (await fetch(res.body.url)).json()) as { products: Record<string, { stock: number }> };
      expect(file.products['G872104-2'].stock).toBe(row.quantity + 5);
      expect((await get('/cdn/G872104-1')).status).toBe(200); // what was published before the outage survived it
    } finally {
      await t.stack
        .db('inventory')
        .where({ branch_id: 'B004', product_id: 'G872104-2' })
        .update({ quantity: row.quantity });
    }
  });
});
