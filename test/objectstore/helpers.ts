/** The tests' object store (global-setup) with buckets of each test file's own. */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../src/config';
import { createAssetPublisher, type AssetPublisherDeps } from '../../src/storefront/assets/publisher';
import { testConfig, testLogger } from '../support/stack';

/** Settings that point an app at the tests' object store, with fresh buckets. */
export function objectStoreEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const id = randomUUID().slice(0, 8);
  return {
    S3_ENDPOINT: process.env.TALAT_TEST_S3_ENDPOINT!,
    S3_ACCESS_KEY_ID: process.env.TALAT_TEST_S3_ACCESS_KEY_ID!,
    S3_SECRET_ACCESS_KEY: process.env.TALAT_TEST_S3_SECRET_ACCESS_KEY!,
    S3_BUCKET_PRICES: `t-prices-${id}`,
    S3_BUCKET_IMAGES: `t-images-${id}`,
    ...overrides,
  };
}

/** Groups whose images the tests publish (all 473 groups' 2910 images are the benchmark's job). */
export const TEST_GROUPS = ['G872104', 'G195447'];

export function testPublisher(config: Config, deps: Partial<AssetPublisherDeps> = {}) {
  return createAssetPublisher({
    config,
    logger: testLogger,
    imageGroups: (g) => TEST_GROUPS.includes(g),
    ...deps,
    db: deps.db!,
  });
}

export const configFor = (env: Record<string, string>, dataDir: string): Config =>
  testConfig({ ...env, DATA_DIR: dataDir });
