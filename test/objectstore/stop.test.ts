/**
 * Stopping the asset publisher in the middle of a cold publication (Ctrl-C during the first
 * `npm start`): stop() interrupts it instead of waiting for every image (a minute on 2 cores),
 * keeps what was uploaded recorded and logs the run as interrupted (the next start publishes the rest:
 * it compares against what the store holds).
 */
import { waitFor } from '../support/stack';
import { storefrontApp, type StorefrontTestApp } from '../storefront/helpers';
import { configFor, objectStoreEnv, testPublisher } from './helpers';

let t: StorefrontTestApp;
beforeAll(async () => {
  t = await storefrontApp();
});
afterAll(async () => {
  await t.close();
});

it('stop() during a cold publication of every image interrupts it, keeps what was uploaded, and is no failure', async () => {
  const env = objectStoreEnv({ ASSET_PUBLISH_POLL_MS: '100' });
  // every group's images (about 2,900): far more than can be uploaded before the stop below
  const publisher = testPublisher(configFor(env, t.dataDir), { db: t.stack.db, imageGroups: () => true });
  try {
    publisher.start();
    await waitFor(async () => {
      const [{ n }] = await t.stack.db('storefront_assets').where({ bucket: env.S3_BUCKET_PRICES }).count({ n: '*' });
      return Number(n) > 0;
    }, 60_000);
    await publisher.stop();
    expect(publisher.status().running).toBe(false);
    const [run] = await t.stack.db('storefront_asset_runs').orderBy('id', 'desc').limit(1);
    expect(run).toMatchObject({ ok: false, error: 'publication interrupted: the publisher was stopped' });
    const [{ n: recorded }] = await t.stack
      .db('storefront_assets')
      .where({ bucket: env.S3_BUCKET_IMAGES })
      .count({ n: '*' });
    const [{ n: products }] = await t.stack.db('products').count({ n: '*' });
    expect(Number(recorded)).toBeLessThan(Number(products) * 3);
    expect(publisher.status().failures).toBe(0); // an interruption is not a failure to back off from
  } finally {
    await publisher.stop();
    await publisher.s3.destroy();
  }
}, 120_000);
