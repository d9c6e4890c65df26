/**
 * Publishes the storefront's assets to the object store: a gzip JSON file of prices and stock per
 * branch and every group image (webp, png, jpg). Triggered by the data versions of
 * storefront_versions, polled every ASSET_PUBLISH_POLL_MS. Only what changed is uploaded (a price
 * file whose MD5 differs from the store's ETag; an image whose source data or ETag changed), each
 * object in one PUT with Content-MD5, so readers see the old file or the new one, whole. A failed
 * run is retried with back-off (1 s doubling to 60 s, jitter); one publisher at a time per
 * database and buckets (an advisory lock).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { Config } from '../../config';
import type { Db } from '../../db/knex';
import { satangToThb } from '../../domain/money';
import type { Logger } from '../../logger';
import { createImageStore, productSvg } from '../images';
import {
  loadCatalog,
  loadInventory,
  loadPrices,
  type CatalogSnapshot,
  type InventorySnapshot,
  type PriceSnapshot,
} from '../snapshot';
import { readVersions, type Versions } from '../versions';
import { IMAGE_FORMATS, imageIdsOf, type ImageFormat } from '../views';
import { createS3Client } from '../../object-store';
import { branchOfPriceKey, imageKey, isImageKey, priceKey } from './keys';

export const PRICE_FILE_CACHE_CONTROL = 'no-cache';
export const IMAGE_CACHE_CONTROL = 'public, max-age=86400';
const MIME: Record<ImageFormat, string> = { webp: 'image/webp', png: 'image/png', jpg: 'image/jpeg' };

/** The price file of a branch: every product's price (THB) and the branch's stock, keys sorted. */
export function priceFileBody(
  branchId: string,
  s: CatalogSnapshot,
  prices: PriceSnapshot,
  inventory: InventorySnapshot,
) {
  const stock = inventory.byBranch.get(branchId) ?? new Map<string, number>();
  const ids = [...s.products.keys()].sort();
  const times = [prices.updatedAt, inventory.updatedAt.get(branchId)]
    .filter((d): d is Date => !!d)
    .map((d) => d.getTime());
  return {
    branchId,
    currency: 'THB',
    updatedAt: times.length ? new Date(Math.max(...times)).toISOString() : null,
    count: ids.length,
    products: Object.fromEntries(
      ids.map((id) => {
        const satang = prices.satang.get(id);
        return [id, { price: satang === undefined ? null : satangToThb(satang), stock: stock.get(id) ?? 0 }];
      }),
    ),
  };
}

/** gzip of the price file's JSON (deterministic: gzip header without a time). */
export const priceFileBytes = (body: ReturnType<typeof priceFileBody>): Buffer =>
  gzipSync(Buffer.from(JSON.stringify(body), 'utf8'), { level: 9 });

interface Wanted {
  bucket: string;
  key: string;
  /** hash of what the object is made from */
  source: string;
  contentType: string;
  contentEncoding?: string;
  cacheControl: string;
  /** the bytes (price files have them up front; images are drawn on demand) */
  bytes: Buffer | (() => Promise<Buffer>);
}

export interface PublishResult {
  versions: { catalog: number; prices: number; inventory: number };
  /** `<bucket>/<key>` of every object uploaded */
  uploaded: string[];
  unchanged: number;
  deleted: string[];
  ms: number;
  /** another process held the publication lock */
  skipped?: boolean;
}

export interface PublisherStatus {
  running: boolean;
  /** versions key (`catalog:prices:inventory`) of the last complete publication */
  published?: string;
  lastOkAt?: Date;
  lastError?: string;
  failures: number;
  nextAttemptAt?: Date;
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest();
const bareEtag = (e: string | undefined) => (e ?? '').replace(/^W\//, '').replace(/"/g, '').toLowerCase();
const versionsKey = (v: Versions) => `${v.catalog}:${v.prices}:${v.inventory}`;

/** The error of a publication that stop() interrupted (what was uploaded stays recorded). */
export class PublisherStopped extends Error {
  constructor() {
    super('publication interrupted: the publisher was stopped');
    this.name = 'PublisherStopped';
  }
}

async function pool<T>(items: T[], n: number, work: (item: T) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  let failed: unknown;
  const runner = async () => {
    while (failed === undefined && next < items.length) {
      if (signal?.aborted) {
        failed ??= new PublisherStopped();
        break;
      }
      const item = items[next++];
      try {
        await work(item);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, runner));
  if (failed !== undefined) throw failed;
}

export interface AssetPublisherDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** defaults to a client over config.objectStore */
  s3?: S3Client;
  /** only these groups' images (tests); deletion of stale images is limited to them */
  imageGroups?: (groupId: string) => boolean;
  concurrency?: number;
  backoff?: { baseMs: number; maxMs: number };
}

export function createAssetPublisher(deps: AssetPublisherDeps) {
  const { db, config, logger } = deps;
  const { buckets } = config.objectStore;
  const s3 = deps.s3 ?? createS3Client(config.objectStore);
  const images = createImageStore({ cacheDir: path.join(config.dataDir, 'cache', 'images'), logger, memoryEntries: 0 });
  const concurrency = deps.concurrency ?? 8;
  const backoff = deps.backoff ?? { baseMs: 1000, maxMs: 60_000 };
  const lockKey = `talat:storefront-assets:${buckets.prices}:${buckets.images}`;
  let bucketsReady = false;
  // aborted by stop(): a publication in progress takes no further object and cancels its uploads
  let halt = new AbortController();

  async function ensureBuckets() {
    if (bucketsReady) return;
    for (const Bucket of [buckets.prices, buckets.images]) {
      try {
        await s3.send(new HeadBucketCommand({ Bucket }));
      } catch (e) {
        const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status !== 404) throw e;
        await s3.send(new CreateBucketCommand({ Bucket })).catch((err) => {
          if (!/BucketAlready(OwnedByYou|Exists)/.test((err as Error).name)) throw err;
        });
        logger.info({ bucket: Bucket }, 'created object store bucket');
      }
    }
    bucketsReady = true;
  }

  async function listEtags(Bucket: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    let ContinuationToken: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket, ContinuationToken, MaxKeys: 1000 }));
      for (const o of page.Contents ?? []) if (o.Key) out.set(o.Key, bareEtag(o.ETag));
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return out;
  }

  function wanted(s: CatalogSnapshot, p: PriceSnapshot, inv: InventorySnapshot): Wanted[] {
    const out: Wanted[] = [];
    for (const branchId of s.branches.keys()) {
      const bytes = priceFileBytes(priceFileBody(branchId, s, p, inv));
      out.push({
        bucket: buckets.prices,
        key: priceKey(branchId),
        source: md5(bytes).toString('hex'),
        contentType: 'application/json',
        contentEncoding: 'gzip',
        cacheControl: PRICE_FILE_CACHE_CONTROL,
        bytes,
      });
    }
    for (const g of s.groupList) {
      if (deps.imageGroups && !deps.imageGroups(g.groupId)) continue;
      for (const imageId of imageIdsOf(s, g.groupId)) {
        const svg = productSvg(s, g.groupId, imageId);
        if (!svg) continue;
        for (const format of IMAGE_FORMATS) {
          out.push({
            bucket: buckets.images,
            key: imageKey(g.groupId, imageId, format),
            source: createHash('sha256').update(format).update('\n').update(svg).digest('hex').slice(0, 32),
            contentType: MIME[format],
            cacheControl: IMAGE_CACHE_CONTROL,
            bytes: async () => (await images.render(imageId, svg, format)).body,
          });
        }
      }
    }
    return out;
  }

  // the transaction only holds the lock: reads and writes go through the pool (one query at a time per connection)
  async function publishLocked(startedAt: Date): Promise<PublishResult> {
    const t0 = performance.now();
    const v = await readVersions(db);
    const [s, p, inv] = await Promise.all([
      loadCatalog(db, v.catalog),
      loadPrices(db, v.prices),
      loadInventory(db, v.inventory),
    ]);
    await ensureBuckets();
    const [listedPrices, listedImages] = await Promise.all([listEtags(buckets.prices), listEtags(buckets.images)]);
    const listed = (bucket: string) => (bucket === buckets.prices ? listedPrices : listedImages);
    const manifest = new Map<string, { source_hash: string; etag: string }>();
    for (const r of await db('storefront_assets')
      .whereIn('bucket', [buckets.prices, buckets.images])
      .select('bucket', 'key', 'source_hash', 'etag'))
      manifest.set(`${r.bucket}/${r.key}`, r);

    const all = wanted(s, p, inv);
    const uploaded: string[] = [];
    let unchanged = 0;
    const rows: Record<string, unknown>[] = [];
    const flush = async () => {
      const batch = rows.splice(0, rows.length);
      if (batch.length) await db('storefront_assets').insert(batch).onConflict(['bucket', 'key']).merge();
    };
    const record = (w: Wanted, etag: string, bytes: number) =>
      rows.push({
        bucket: w.bucket,
        key: w.key,
        source_hash: w.source,
        etag,
        bytes,
        content_type: w.contentType,
        published_at: new Date(),
      });

    try {
      // price files first: they are small, and what the shop's clients wait for
      await pool(
        all,
        concurrency,
        async (w) => {
          const id = `${w.bucket}/${w.key}`;
          const have = listed(w.bucket).get(w.key);
          const m = manifest.get(id);
          if (typeof w.bytes !== 'function' && have === w.source) {
            unchanged++;
            if (!m || m.etag !== have || m.source_hash !== w.source) record(w, have, w.bytes.length);
            return;
          }
          if (
            typeof w.bytes === 'function' &&
            m &&
            m.source_hash === w.source &&
            have !== undefined &&
            have === m.etag
          ) {
            unchanged++;
            return;
          }
          const bytes = typeof w.bytes === 'function' ? await w.bytes() : w.bytes;
          const digest = md5(bytes);
          if (have === digest.toString('hex')) {
            unchanged++;
            record(w, have, bytes.length);
            return;
          }
          const put = await s3.send(
            new PutObjectCommand({
              Bucket: w.bucket,
              Key: w.key,
              Body: bytes,
              ContentLength: bytes.length,
              ContentMD5: digest.toString('base64'),
              ContentType: w.contentType,
              ContentEncoding: w.contentEncoding,
              CacheControl: w.cacheControl,
              Metadata: { 'talat-source': w.source },
            }),
            { abortSignal: halt.signal },
          );
          uploaded.push(id);
          record(w, bareEtag(put.ETag) || digest.toString('hex'), bytes.length);
          if (rows.length >= 200) await flush();
        },
        halt.signal,
      );
    } finally {
      await flush();
    }

    // objects of ours that the catalog no longer has (never when the catalog reads as empty)
    const deleted: string[] = [];
    if (s.branches.size && s.products.size) {
      const want = new Set(all.map((w) => `${w.bucket}/${w.key}`));
      const stale = [
        ...[...listedPrices.keys()]
          .filter((k) => branchOfPriceKey(k) && !want.has(`${buckets.prices}/${k}`))
          .map((k) => [buckets.prices, k] as const),
        ...[...listedImages.keys()]
          .filter(
            (k) =>
              isImageKey(k) &&
              !want.has(`${buckets.images}/${k}`) &&
              (!deps.imageGroups || deps.imageGroups(k.slice(0, k.indexOf('/')))),
          )
          .map((k) => [buckets.images, k] as const),
      ];
      for (const Bucket of [buckets.prices, buckets.images]) {
        const keys = stale.filter(([b]) => b === Bucket).map(([, k]) => k);
        for (let i = 0; i < keys.length; i += 1000) {
          const chunk = keys.slice(i, i + 1000);
          await s3.send(
            new DeleteObjectsCommand({ Bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } }),
          );
          await db('storefront_assets').where({ bucket: Bucket }).whereIn('key', chunk).delete();
          deleted.push(...chunk.map((k) => `${Bucket}/${k}`));
        }
      }
    }
    const result: PublishResult = {
      versions: { catalog: v.catalog, prices: v.prices, inventory: v.inventory },
      uploaded,
      unchanged,
      deleted,
      ms: Math.round(performance.now() - t0),
    };
    await logRun(startedAt, result, null);
    return result;
  }

  async function logRun(
    startedAt: Date,
    r: Omit<PublishResult, 'skipped'> | null,
    error: string | null,
    versions?: Versions,
  ) {
    await db('storefront_asset_runs').insert({
      started_at: startedAt,
      versions: JSON.stringify(
        r?.versions ??
          (versions ? { catalog: versions.catalog, prices: versions.prices, inventory: versions.inventory } : {}),
      ),
      ok: !error,
      uploaded: r?.uploaded.length ?? 0,
      unchanged: r?.unchanged ?? 0,
      deleted: r?.deleted.length ?? 0,
      uploaded_keys: (r?.uploaded ?? []).slice(0, 100),
      error,
      duration_ms: r?.ms ?? Date.now() - startedAt.getTime(),
    });
    await db.raw('DELETE FROM storefront_asset_runs WHERE id <= (SELECT max(id) - 200 FROM storefront_asset_runs)');
  }

  /** One publication of the current data; throws when the store fails (nothing is left half-written). */
  async function publishOnce(): Promise<PublishResult> {
    const startedAt = new Date();
    try {
      return await db.transaction(async (trx) => {
        const { rows } = await trx.raw('SELECT pg_try_advisory_xact_lock(hashtext(?)) AS locked', [lockKey]);
        if (!rows[0].locked) {
          const v = await readVersions(trx);
          return {
            versions: { catalog: v.catalog, prices: v.prices, inventory: v.inventory },
            uploaded: [],
            unchanged: 0,
            deleted: [],
            ms: 0,
            skipped: true,
          };
        }
        return publishLocked(startedAt);
      });
    } catch (e) {
      bucketsReady = false;
      const err = halt.signal.aborted ? new PublisherStopped() : e;
      await logRun(
        startedAt,
        null,
        (err as Error).message?.slice(0, 500) || String(err),
        await readVersions(db).catch(() => undefined),
      ).catch(() => undefined);
      throw err;
    }
  }

  // the job: publish when the data versions move on; back off after a failure
  const status: PublisherStatus = { running: false, failures: 0 };
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let stopped = true;
  let wake: (() => void) | undefined;

  async function tick(): Promise<void> {
    const v = await readVersions(db);
    const key = versionsKey(v);
    if (key === status.published) return;
    if (status.nextAttemptAt && Date.now() < status.nextAttemptAt.getTime()) return;
    try {
      const r = await publishOnce();
      if (r.skipped) return; // another process publishes; look again at the next tick
      status.published = versionsKey({ ...v, ...r.versions });
      status.lastOkAt = new Date();
      status.lastError = undefined;
      status.failures = 0;
      status.nextAttemptAt = undefined;
      logger.info(
        {
          versions: r.versions,
          uploaded: r.uploaded.length,
          unchanged: r.unchanged,
          deleted: r.deleted.length,
          ms: r.ms,
        },
        'published storefront assets',
      );
    } catch (e) {
      if (e instanceof PublisherStopped) {
        logger.info('storefront asset publication interrupted by stop; the next start publishes the rest');
        return;
      }
      status.failures++;
      const delay =
        Math.min(backoff.maxMs, backoff.baseMs * 2 ** (status.failures - 1)) * (0.75 + Math.random() * 0.25);
      status.nextAttemptAt = new Date(Date.now() + delay);
      status.lastError = (e as Error).message || String(e);
      logger.warn(
        { err: e, failures: status.failures, retryInMs: Math.round(delay) },
        'publishing storefront assets failed; will retry',
      );
    }
  }

  function schedule(ms: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      current = tick()
        .catch((e) => logger.warn({ err: e }, 'storefront asset publisher: could not read the data versions'))
        .finally(() => {
          current = undefined;
          schedule(config.objectStore.publishPollMs);
        });
    }, ms);
    timer.unref?.();
    wake = () => {
      if (timer && !current) {
        clearTimeout(timer);
        schedule(0);
      }
    };
  }

  return {
    publishOnce,
    status: (): PublisherStatus => ({ ...status, running: !stopped }),
    /** start the job (first look at once) */
    start() {
      if (!stopped) return;
      stopped = false;
      halt = new AbortController();
      schedule(0);
    },
    /** look now, and retry at once if a failed run is waiting for its back-off */
    kick() {
      status.nextAttemptAt = undefined;
      wake?.();
    },
    /** stop the job: a publication in progress is interrupted (no new upload starts, uploads under way are cancelled) */
    async stop() {
      stopped = true;
      halt.abort();
      if (timer) clearTimeout(timer);
      await current;
    },
    s3,
  };
}

export type AssetPublisher = ReturnType<typeof createAssetPublisher>;
