/**
 * Cacheable representations: bytes computed once, a strong ETag over them, an optional gzip
 * twin. src/http/middleware/etag.ts answers a request with one.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

export interface Representation {
  body: Buffer;
  contentType: string;
  /** strong tag of the identity bytes, quoted */
  etag: string;
  gzip?: Buffer;
}

export function representation(
  body: Buffer | string,
  contentType: string,
  opts: { gzip?: boolean } = {},
): Representation {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const etag = `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;
  return { body: bytes, contentType, etag, gzip: opts.gzip ? gzipSync(bytes, { level: 9 }) : undefined };
}

export const jsonRepresentation = (value: unknown, opts: { gzip?: boolean } = {}): Representation =>
  representation(JSON.stringify(value), 'application/json; charset=utf-8', opts);
