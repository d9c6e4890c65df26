/**
 * Answering a request with a cacheable representation (src/representation.ts): ETag,
 * If-None-Match revalidation and the gzip twin.
 *
 * Contract of sendRepresentation:
 *  - ETag and Cache-Control on every answer, 200 or 304;
 *  - If-None-Match (a list, `*`, weak or strong tags) that matches -> 304 with no body;
 *  - the gzip twin goes to clients whose Accept-Encoding allows gzip (Vary: Accept-Encoding);
 *    its ETag carries a `-gz` suffix, and either tag revalidates the resource.
 */
import type { Context } from 'koa';
import type { Representation } from '../../representation';

const gzipTag = (etag: string) => `${etag.slice(0, -1)}-gz"`;

/** RFC 9110 If-None-Match: weak comparison, `*` matches any current representation. */
export function ifNoneMatch(header: string | undefined, etags: string[]): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const given = header.split(',').map((t) => t.trim().replace(/^W\//, ''));
  return given.some((t) => etags.includes(t));
}

/** Whether Accept-Encoding admits gzip; `absent` is the answer when there is no header. */
export function acceptsGzip(header: string | undefined, absent: boolean): boolean {
  if (header === undefined || header.trim() === '') return absent;
  let gzip: number | undefined;
  let star: number | undefined;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (name === 'gzip' || name === 'x-gzip') gzip = q;
    else if (name === '*') star = q;
  }
  const q = gzip ?? star ?? 0;
  return Number.isFinite(q) && q > 0;
}

export interface SendOptions {
  cacheControl: string;
  /** gzip when Accept-Encoding is absent too (the price file, whose clients expect gzip) */
  gzipByDefault?: boolean;
}

export function sendRepresentation(ctx: Context, rep: Representation, opts: SendOptions): void {
  const gzip =
    rep.gzip !== undefined && acceptsGzip(ctx.get('Accept-Encoding') || undefined, opts.gzipByDefault ?? false);
  const etag = gzip ? gzipTag(rep.etag) : rep.etag;
  if (rep.gzip) ctx.vary('Accept-Encoding');
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', opts.cacheControl);
  if (ifNoneMatch(ctx.get('If-None-Match') || undefined, [rep.etag, gzipTag(rep.etag)])) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  ctx.status = 200;
  ctx.type = rep.contentType;
  if (gzip) {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = rep.gzip;
  } else {
    ctx.body = rep.body;
  }
}
