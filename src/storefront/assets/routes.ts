/**
 * Routes that need the object store itself (the only storefront routes that answer 503 when it
 * is down; everything else keeps answering from Postgres):
 *  - GET /api/price/url/{branchId}: a presigned GET URL of the branch's price file, handed out only
 *    once the file is in the store (a HEAD with a short timeout says so);
 *  - GET /cdn/{productId}[-{variant}]: the CDN path of product images, served from the image
 *    bucket (in development the CDN base is this gateway; in production a CDN in front of it).
 */
import { Readable } from 'node:stream';
import Router from '@koa/router';
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { AppDeps } from '../../http/deps';
import { AppError, ErrorCode } from '../../domain/errors';
import { validate } from '../../http/validate';
import { registry, z } from '../../http/openapi';
import { createPresigner, createS3Client, objectStoreReady } from '../../object-store';
import { imageKey, priceKey } from './keys';
import { parseCdnFile } from './presigned';

const BranchId = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and - (at most 40)');
const PriceUrlParams = z
  .object({
    timestamp: z
      .string()
      .regex(/^\d{1,16}(\.\d{1,6})?$/, 'a number (e.g. unix milliseconds)')
      .optional(),
  })
  .strict();

const statusOf = (e: unknown) => (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const unavailable = (what: string, e?: unknown) =>
  new AppError(
    ErrorCode.SERVICE_UNAVAILABLE,
    `${what}: the object store is not reachable`,
    e ? { reason: (e as Error).name || 'error' } : {},
    { 'Retry-After': '5' },
  );

export function objectStoreRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db'>): Router {
  const r = new Router();
  const c = deps.config.objectStore;
  if (!objectStoreReady(c)) return r;
  const clock = () => new Date((deps.clock ?? Date.now)());
  // fail fast: a reader waits at most ~2 s for a store that does not answer
  const s3: S3Client = createS3Client(c, { maxAttempts: 1, requestTimeoutMs: 2000 });
  const presigner = createPresigner(c);

  r.get('/api/price/url/:branchId', async (ctx) => {
    const branchId = validate(BranchId, ctx.params.branchId);
    validate(PriceUrlParams, ctx.query);
    const branch = await deps.db('branches').where({ branch_id: branchId }).first('branch_id');
    if (!branch) throw new AppError(ErrorCode.NOT_FOUND, 'Branch not found', { branchId });
    const key = priceKey(branchId);
    let head;
    try {
      head = await s3.send(new HeadObjectCommand({ Bucket: c.buckets.prices, Key: key }));
    } catch (e) {
      if (statusOf(e) === 404)
        throw new AppError(
          ErrorCode.SERVICE_UNAVAILABLE,
          'The price file of this branch is not published yet',
          { branchId },
          { 'Retry-After': '5' },
        );
      throw unavailable('Price file URL', e);
    }
    const signed = await presigner.url(c.buckets.prices, key, presigner.windowStart(clock()));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      branchId,
      url: signed.url,
      expiresAt: signed.expiresAt.toISOString(),
      etag: head.ETag ?? null,
      lastModified: head.LastModified?.toISOString() ?? null,
      bytes: head.ContentLength ?? null,
      contentEncoding: head.ContentEncoding ?? null,
    };
  });

  r.get('/cdn/:file', async (ctx) => {
    const f = parseCdnFile(ctx.params.file);
    if (!f) throw new AppError(ErrorCode.NOT_FOUND, 'Image not found', { file: ctx.params.file });
    let obj;
    try {
      obj = await s3.send(
        new GetObjectCommand({
          Bucket: c.buckets.images,
          Key: imageKey(f.groupId, f.productId, f.format),
          IfNoneMatch: ctx.get('If-None-Match') || undefined,
        }),
      );
    } catch (e) {
      const status = statusOf(e);
      if (status === 304) {
        ctx.status = 304;
        ctx.set('Cache-Control', 'public, max-age=86400');
        return;
      }
      if (status === 404) throw new AppError(ErrorCode.NOT_FOUND, 'Image not found', { file: ctx.params.file });
      throw unavailable('Image', e);
    }
    ctx.set('Cache-Control', obj.CacheControl ?? 'public, max-age=86400');
    if (obj.ETag) ctx.set('ETag', obj.ETag);
    if (obj.LastModified) ctx.set('Last-Modified', obj.LastModified.toUTCString());
    ctx.type = obj.ContentType ?? 'application/octet-stream';
    if (obj.ContentLength !== undefined) ctx.length = obj.ContentLength;
    ctx.body = obj.Body instanceof Readable ? obj.Body : Buffer.from(await obj.Body!.transformToByteArray());
  });

  return r;
}

const tags = ['storefront'];
const ErrorBody = z.object({
  statusCode: z.number().int(),
  body: z.object({ error: z.string(), code: z.string(), details: z.record(z.unknown()) }),
});
const errorResponses = (codes: number[]) =>
  Object.fromEntries(
    codes.map((code) => [
      String(code),
      { description: `error (${code})`, content: { 'application/json': { schema: ErrorBody } } },
    ]),
  );
registry.registerPath({
  method: 'get',
  path: '/api/price/url/{branchId}',
  summary: "A presigned URL of the branch's price file",
  description:
    "SigV4-presigned GET URL (X-Amz-* query parameters) of `<branchId>.gz` in the price bucket: gzip JSON of every product's price (THB) and the branch's stock, Content-Encoding gzip. Valid until expiresAt (at least two thirds of S3_PRESIGN_EXPIRY_S). 503 with Retry-After while the object store is down or the file is not published yet.",
  tags,
  request: {
    params: z.object({ branchId: z.string().openapi({ example: 'B001' }) }),
    query: z.object({ timestamp: z.string().optional() }),
  },
  responses: {
    200: {
      description: 'the URL',
      content: {
        'application/json': {
          schema: z.object({
            branchId: z.string(),
            url: z.string(),
            expiresAt: z.string(),
            etag: z.string().nullable(),
            lastModified: z.string().nullable(),
            bytes: z.number().int().nullable(),
            contentEncoding: z.string().nullable(),
          }),
          example: {
            branchId: 'B001',
            url: 'http://127.0.0.1:9000/talat-prices/B001.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261122%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261122T080000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=6f1c0e3b2a9d8c7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a39',
            expiresAt: '2026-11-22T08:15:00.000Z',
            etag: '"9b2cf535f27731c974343645a3985328"',
            lastModified: '2026-11-22T00:00:01.000Z',
            bytes: 18422,
            contentEncoding: 'gzip',
          },
        },
      },
    },
    ...errorResponses([400, 404, 503]),
  },
});
registry.registerPath({
  method: 'get',
  path: '/cdn/{file}',
  summary: 'Product image through the CDN path',
  description:
    'CDN_BASE_URL/{productId} (webp) or CDN_BASE_URL/{productId}-{variant} (variant webp, png or jpg), served from the image bucket; in production a CDN fronts this path. 503 while the object store is down.',
  tags,
  request: { params: z.object({ file: z.string().openapi({ example: 'G872104-1-png' }) }) },
  responses: {
    200: {
      description: 'the image (image/webp, image/png or image/jpeg)',
      content: Object.fromEntries(
        ['image/webp', 'image/png', 'image/jpeg'].map((type) => [
          type,
          { schema: { type: 'string', format: 'binary' } },
        ]),
      ),
    },
    304: { description: 'not modified' },
    ...errorResponses([404, 503]),
  },
});
