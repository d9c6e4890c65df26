/**
 * The codec endpoint of Temporal Web (its "remote codec" protocol): POST /codec/encode and
 * /codec/decode with {payloads: [{metadata: {k: base64}, data: base64}]}, answered in the same
 * shape, through the same AES-256-GCM codec as the client and the worker. Temporal Web calls it
 * from the browser: CORS for TEMPORAL_WEB_ORIGIN (default the embedded UI's origin).
 * Authentication: an API key with the scope `codec` in X-API-Key or `Authorization: Bearer`.
 * Outside production, Temporal Web in the browser needs none (the dev server's UI has no way to
 * send one; `npm start` wires it with --ui-codec-endpoint): a request from a loopback address,
 * with an Origin of TEMPORAL_WEB_ORIGIN and a Host on the allow-list (loopback names and
 * PUBLIC_BASE_URL's host; a DNS-rebinding page sends its own origin, or a foreign Host).
 * Nobody else (docs/security.md).
 */
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Payload } from '@temporalio/common';
import type { AppDeps } from '../../http/deps';
import { AppError, ErrorCode } from '../../domain/errors';
import { AesGcmCodec } from '../../temporal/codec';
import { presentedKey, requireOperatorKey } from '../../http/middleware/api-key';
import { ApiKeyAuth, errorResponses, registry, z } from '../../http/openapi';

const WirePayloads = registry.register(
  'CodecPayloads',
  z
    .object({
      payloads: z.array(z.object({ metadata: z.record(z.string()).optional(), data: z.string().optional() })).max(1000),
    })
    .openapi({
      example: { payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'eyJvcmRlcklkIjoiT1JELTIwMDEifQ==' }] },
    }),
);
for (const op of ['encode', 'decode'] as const)
  registry.registerPath({
    method: 'post',
    path: `/codec/${op}`,
    operationId: `codec${op[0].toUpperCase()}${op.slice(1)}`,
    summary: `Temporal Web's remote codec: ${op} payloads (AES-256-GCM, TEMPORAL_CODEC_KEYS)`,
    tags: ['system'],
    security: [{ [ApiKeyAuth.name]: [] }],
    request: { body: { required: true, content: { 'application/json': { schema: WirePayloads } } } },
    responses: {
      200: {
        description: 'the payloads, encoded or decoded',
        content: { 'application/json': { schema: WirePayloads } },
      },
      ...errorResponses([400, 401, 403]),
    },
  });

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;
const hostNameOf = (host: string): string => (URL.canParse(`http://${host}`) ? new URL(`http://${host}`).hostname : '');
const toPayload = (p: { metadata?: Record<string, string>; data?: string }): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]),
  ),
  data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')),
});
const fromPayload = (p: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

export function codecRoutes(deps: Pick<AppDeps, 'config' | 'db'>): Router {
  const r = new Router();
  const codec = new AesGcmCodec(deps.config.temporal.codecKeys);
  const origins = new Set(deps.config.temporal.webOrigins);
  /** the Host names Temporal Web reaches a development gateway by: loopback, PUBLIC_BASE_URL's */
  const hosts = new Set(['127.0.0.1', 'localhost', '[::1]', hostNameOf(new URL(deps.config.publicBaseUrl).host)]);

  const corsAndAuth = async (ctx: Context, next: Next) => {
    const origin = ctx.get('Origin');
    ctx.vary('Origin');
    if (origin && origins.has(origin)) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
    }
    if (ctx.method === 'OPTIONS') {
      if (!origins.has(origin))
        throw new AppError(ErrorCode.FORBIDDEN, 'Origin not allowed', { origin: origin || null });
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-API-Key, X-Namespace');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    const temporalWeb =
      !deps.config.production &&
      origins.has(origin) &&
      hosts.has(hostNameOf(ctx.get('Host'))) &&
      LOOPBACK.test(ctx.req.socket.remoteAddress ?? '');
    if (!presentedKey(ctx) && temporalWeb) return next();
    await requireOperatorKey(deps.db, ctx, 'codec', ', or Temporal Web on loopback');
    return next();
  };

  for (const op of ['encode', 'decode'] as const) {
    r.options(`/codec/${op}`, corsAndAuth);
    r.post(`/codec/${op}`, corsAndAuth, async (ctx) => {
      const parsed = WirePayloads.safeParse(ctx.request.body);
      if (!parsed.success)
        throw new AppError(ErrorCode.INVALID_INPUT, 'Body must be {payloads: [{metadata, data}]} with base64 values', {
          field: 'payloads',
        });
      try {
        const payloads = parsed.data.payloads.map(toPayload);
        ctx.body = {
          payloads: (op === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads)).map(fromPayload),
        };
      } catch (e) {
        throw new AppError(ErrorCode.INVALID_INPUT, `The payloads cannot be ${op}d: ${(e as Error).message}`, {
          field: 'payloads',
        });
      }
    });
  }
  return r;
}
