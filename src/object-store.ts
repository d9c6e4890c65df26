/**
 * The storefront's object store from the gateway's side: an S3 client (AWS SDK v3) over the
 * configured endpoint, the object keys of the price files and group images, and presigned GET
 * URLs (SigV4 query parameters, @aws-sdk/s3-request-presigner) for the shop's clients.
 *
 * Presigned URLs are signed at the start of a window of a third of their lifetime, so that every
 * answer built within one window carries the same URLs (cacheable bodies, stable ETags, and the
 * shop's HTTP cache hits the object store's validators), and a URL handed out is valid for at
 * least two thirds of S3_PRESIGN_EXPIRY_S.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { HttpRequest } from '@smithy/protocol-http';
import type { Config } from './config';

// Node 20 is this project's runtime (package.json engines); the SDK's notice about its future releases is not actionable here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export type ObjectStoreConfig = Config['objectStore'];

/** Whether the object store is usable (the embedded one has started, or one is configured). */
export const objectStoreReady = (c: ObjectStoreConfig): c is ObjectStoreConfig & { endpoint: string } => !!c.endpoint;

export function createS3Client(
  c: ObjectStoreConfig,
  opts: { maxAttempts?: number; requestTimeoutMs?: number } = {},
): S3Client {
  if (!c.endpoint) throw new Error('the object store has no endpoint yet');
  return new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: c.forcePathStyle,
    credentials:
      c.accessKeyId && c.secretAccessKey
        ? { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }
        : undefined,
    maxAttempts: opts.maxAttempts ?? 3,
    // uploads carry Content-MD5; the SDK's extra CRC32 trailers are not understood by every S3 implementation
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: 2000, requestTimeout: opts.requestTimeoutMs ?? 30_000 },
  });
}

/** node:crypto behind the Checksum interface the SigV4 signer expects (HMAC when given a secret). */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytesOf = (d: SourceData): string | Uint8Array =>
  typeof d === 'string'
    ? d
    : d instanceof ArrayBuffer
      ? new Uint8Array(d)
      : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
class NodeSha256 {
  private readonly h: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: SourceData): void {
    this.h.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
  reset(): void {
    throw new Error('not resettable');
  }
}

export interface SignedUrl {
  url: string;
  /** when the URL stops working */
  expiresAt: Date;
}

export interface Presigner {
  /** start of the signing window of `now` (answers built in one window carry the same URLs) */
  windowStart(now: Date): Date;
  /** seconds a cache may keep an answer holding URLs signed at `windowStart(now)` */
  windowSeconds: number;
  url(bucket: string, key: string, signedAt: Date, expiresInSeconds?: number): Promise<SignedUrl>;
  /** the unsigned base of a bucket, e.g. http://127.0.0.1:9000/talat-prices */
  bucketUrl(bucket: string): string;
}

export function createPresigner(
  c: ObjectStoreConfig & { endpoint: string },
  credentials?: S3Client['config']['credentials'],
): Presigner {
  const base = new URL(c.publicEndpoint ?? c.endpoint);
  // static keys, else the SDK's default chain (environment, shared files, instance role) as an S3 client resolves it
  const creds =
    c.accessKeyId && c.secretAccessKey
      ? { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }
      : (credentials ?? createS3Client(c).config.credentials);
  const signer = new S3RequestPresigner({ credentials: creds, region: c.region, sha256: NodeSha256 });
  const windowSeconds = Math.max(1, Math.floor(c.presignExpirySeconds / 3));
  const prefix = base.pathname.replace(/\/+$/, '');
  const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');
  const location = (bucket: string, key = '') =>
    c.forcePathStyle
      ? { hostname: base.hostname, path: `${prefix}/${bucket}${key ? `/${encodeKey(key)}` : ''}` }
      : { hostname: `${bucket}.${base.hostname}`, path: `${prefix}/${encodeKey(key)}` };
  const hostHeader = (hostname: string) => (base.port ? `${hostname}:${base.port}` : hostname);

  return {
    windowSeconds,
    windowStart: (now) => new Date(Math.floor(now.getTime() / (windowSeconds * 1000)) * windowSeconds * 1000),
    bucketUrl(bucket) {
      const l = location(bucket);
      return `${base.protocol}//${hostHeader(l.hostname)}${l.path.replace(/\/+$/, '')}`;
    },
    async url(bucket, key, signedAt, expiresInSeconds = c.presignExpirySeconds) {
      const l = location(bucket, key);
      const req = new HttpRequest({
        protocol: base.protocol,
        hostname: l.hostname,
        port: base.port ? Number(base.port) : undefined,
        method: 'GET',
        path: l.path,
        headers: { host: hostHeader(l.hostname) },
      });
      const signed = await signer.presign(req, { expiresIn: expiresInSeconds, signingDate: signedAt });
      const query = Object.entries(signed.query ?? {})
        .flatMap(([k, v]) =>
          (Array.isArray(v) ? v : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(String(x ?? ''))}`),
        )
        .join('&');
      return {
        url: `${base.protocol}//${hostHeader(l.hostname)}${l.path}?${query}`,
        expiresAt: new Date(signedAt.getTime() + expiresInSeconds * 1000),
      };
    },
  };
}
