/**
 * The settlement files in the object store: bucket S3_BUCKET_SETTLEMENTS (talat-settlements),
 * one key per provider and day (`<provider>/<YYYY-MM-DD>.csv`), dropped there by whatever fetches
 * them from the provider (the sandbox providers' own files in development: ./sandbox.ts).
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import type { Config } from '../config';
import { createS3Client } from '../object-store';

export interface SettlementStore {
  /** the file's text and its sha256, or undefined when there is none (yet) */
  get(key: string): Promise<{ text: string; sha256: string } | undefined>;
  /** whether the file is there (without reading it) */
  exists(key: string): Promise<boolean>;
  put(key: string, text: string): Promise<void>;
  /** creates the bucket when missing */
  ensureBucket(): Promise<void>;
}

const MAX_FILE_BYTES = 64 * 1024 * 1024;
const missing = (e: unknown) => ['NoSuchKey', 'NotFound', 'NoSuchBucket'].includes((e as Error).name);

export function createSettlementStore(config: Config): SettlementStore {
  const Bucket = config.reconciliation.bucket;
  let s3: ReturnType<typeof createS3Client> | undefined;
  // a worker role beside `npm start` reaches its embedded store on loopback
  const c = config.objectStore;
  const endpoint = c.endpoint ?? (c.embedded ? `http://127.0.0.1:${c.embedded.port}` : undefined);
  const client = () => (s3 ??= createS3Client({ ...c, endpoint }));
  let ready = false;
  const ensureBucket = async () => {
    if (ready) return;
    try {
      await client().send(new HeadBucketCommand({ Bucket }));
    } catch {
      await client()
        .send(new CreateBucketCommand({ Bucket }))
        .catch((err: Error) => {
          if (!/BucketAlready(OwnedByYou|Exists)/.test(err.name)) throw err;
        });
    }
    ready = true;
  };
  return {
    ensureBucket,
    async get(key) {
      try {
        const res = await client().send(new GetObjectCommand({ Bucket, Key: key }));
        if ((res.ContentLength ?? 0) > MAX_FILE_BYTES) throw new Error(`${key} is larger than ${MAX_FILE_BYTES} bytes`);
        const bytes = Buffer.from(await res.Body!.transformToByteArray());
        return { text: bytes.toString('utf8'), sha256: createHash('sha256').update(bytes).digest('hex') };
      } catch (e) {
        if (missing(e)) return undefined;
        throw e;
      }
    },
    async exists(key) {
      try {
        await client().send(new HeadObjectCommand({ Bucket, Key: key }));
        return true;
      } catch (e) {
        if (missing(e)) return false;
        throw e;
      }
    },
    async put(key, text) {
      await ensureBucket();
      await client().send(
        new PutObjectCommand({ Bucket, Key: key, Body: text, ContentType: 'text/csv; charset=utf-8' }),
      );
    },
  };
}
