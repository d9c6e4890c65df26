/**
 * How a callback is signed and verified (docs/callbacks.md): the IP-restricted endpoints are
 * checked in this order: source address (before the body is even read), content type,
 * signature, timestamp. Anything that does not verify is refused with the callback error names
 * (src/domain/errors.ts); nothing is recorded before all pass. Signatures: hex HMAC-SHA256 with
 * the provider's shared secret, compared in constant time: over the canonical JSON (RFC 8785
 * for JSON.parse values) of a payload without its `signature` field (QR, wallet gateway form),
 * or over `<X-Timestamp>.<raw body>` in X-Signature (card form, card network, bank app).
 * Timestamps: ISO 8601 UTC in JSON payloads, unix seconds in X-Timestamp, refused older than
 * CALLBACK_MAX_AGE_S or more than 60 s ahead. The simulators and the tests sign with these.
 */
import type { Context } from 'koa';
import { hexDigestEquals, hmacSha256Hex } from '../proofs';
import { canonicalJson } from '../canonical-json';
import { PROVIDERS, type Config, type ProviderName } from '../config';
import { CALLBACK_ENDPOINTS } from './index';
import { AppError, ErrorCode } from '../domain/errors';
import { providerNameOf } from '../domain/providers';
import type { Logger } from '../logger';
import { clientAddress, compileCidrs, formatAddress, inCidrs } from '../http/ip';

// ---- canonical JSON ----

/** The payload that a `signature` field signs: the canonical JSON of the object without that field. */
export function signedPayloadText(payload: Record<string, unknown>): string {
  const { signature: _omit, ...rest } = payload;
  return canonicalJson(rest);
}

// ---- signatures ----

export { hexDigestEquals, hmacSha256Hex };

export const verifyFieldSignature = (secret: string, payload: Record<string, unknown>): boolean =>
  hexDigestEquals(hmacSha256Hex(secret, signedPayloadText(payload)), payload.signature);

export const verifyHeaderSignature = (
  secret: string,
  timestamp: string,
  rawBody: string,
  signature: unknown,
): boolean => hexDigestEquals(hmacSha256Hex(secret, `${timestamp}.${rawBody}`), signature);

/** Adds the `signature` field to a JSON payload (QR and wallet gateway forms). */
export function signPayload<T extends Record<string, unknown>>(secret: string, payload: T): T & { signature: string } {
  return { ...payload, signature: hmacSha256Hex(secret, signedPayloadText(payload)) };
}

/** The X-Timestamp and X-Signature headers for a raw body (card, card network, bank app). */
export function signatureHeaders(
  secret: string,
  rawBody: string,
  unixSeconds = Math.floor(Date.now() / 1000),
): Record<'X-Timestamp' | 'X-Signature', string> {
  const ts = String(unixSeconds);
  return { 'X-Timestamp': ts, 'X-Signature': hmacSha256Hex(secret, `${ts}.${rawBody}`) };
}

// ---- timestamps ----

const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]00:?00)$/;
const UNIX_SECONDS = /^\d{1,12}$/;

/** Milliseconds since the epoch of an ISO 8601 UTC timestamp, or undefined when it is not one. */
export function parseIsoUtc(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = ISO_UTC.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${(m[7] ?? '').slice(0, 4)}Z`);
  if (Number.isNaN(ms)) return undefined;
  // reject dates that Date.parse rolls over (2026-02-30)
  const d = new Date(ms);
  if (d.getUTCDate() !== Number(m[3]) || d.getUTCMonth() + 1 !== Number(m[2])) return undefined;
  return ms;
}

export function parseUnixSeconds(text: unknown): number | undefined {
  return typeof text === 'string' && UNIX_SECONDS.test(text) ? Number(text) * 1000 : undefined;
}

export interface TimestampWindow {
  maxAgeSeconds: number;
  maxFutureSeconds: number;
}

/** Throws INVALID_TIMESTAMP unless `ms` lies in [now - maxAge, now + maxFuture]. */
export function assertFresh(ms: number | undefined, window: TimestampWindow, nowMs = Date.now()): void {
  if (ms === undefined) throw new AppError(ErrorCode.INVALID_TIMESTAMP, 'timestamp is not a valid timestamp');
  if (ms < nowMs - window.maxAgeSeconds * 1000)
    throw new AppError(ErrorCode.INVALID_TIMESTAMP, `timestamp is older than ${window.maxAgeSeconds} seconds`);
  if (ms > nowMs + window.maxFutureSeconds * 1000)
    throw new AppError(
      ErrorCode.INVALID_TIMESTAMP,
      `timestamp is more than ${window.maxFutureSeconds} seconds in the future`,
    );
}

// ---- the endpoints' checks ----

/** The IP-restricted paths and whose allow-list and secret apply (/wallet/callback is public). */
export const RESTRICTED_PATHS: Readonly<Record<string, ProviderName>> = Object.fromEntries(
  CALLBACK_ENDPOINTS.map((e) => [e.path, providerNameOf(e.provider)]),
);

declare module 'koa' {
  interface DefaultState {
    /** the verified source address of a callback */
    clientIp?: string;
  }
}

/**
 * The callback API's address check, a step of the front middleware (src/http/middleware/request.ts),
 * before any body is read: a call to an IP-restricted path from outside its provider's allow-list
 * throws 403 INVALID_IP; an allowed one sets ctx.state.clientIp. Other paths pass untouched.
 */
export function callbackIpGuard(config: Config, logger: Logger): (ctx: Context) => void {
  const trusted = compileCidrs(config.callbacks.trustedProxies);
  const allowed = Object.fromEntries(
    PROVIDERS.map((p) => [p, compileCidrs(config.callbacks.providers[p].ips)]),
  ) as Record<ProviderName, ReturnType<typeof compileCidrs>>;
  // the verdict is a pure function of the provider, the peer, X-Forwarded-For and the (fixed)
  // allow-lists and trusted proxies: worked out once per triple, not parsed again on every
  // callback (bounded: the oldest go first), as the rate limiter does for its address buckets
  const verdicts = new Map<string, { address: string; allowed: boolean }>();
  const verdictOf = (provider: ProviderName, peer: string | undefined, forwardedFor: string) => {
    const triple = `${provider}|${peer}|${forwardedFor}`;
    let v = verdicts.get(triple);
    if (v === undefined) {
      const address = clientAddress(peer, forwardedFor || undefined, trusted);
      v = { address: formatAddress(address), allowed: inCidrs(address, allowed[provider]) };
      verdicts.set(triple, v);
      if (verdicts.size > 10_000) verdicts.delete(verdicts.keys().next().value!);
    }
    return v;
  };
  return (ctx: Context): void => {
    const provider = RESTRICTED_PATHS[ctx.path.replace(/\/+$/, '').toLowerCase()];
    if (!provider) return;
    const peer = ctx.req.socket.remoteAddress;
    const v = verdictOf(provider, peer, ctx.get('X-Forwarded-For'));
    if (!v.allowed) {
      logger.warn(
        { requestId: ctx.state.requestId, provider, address: v.address, peer },
        'callback from a disallowed address',
      );
      throw new AppError(ErrorCode.INVALID_IP, 'Request from an unauthorised IP address');
    }
    ctx.state.clientIp = v.address;
  };
}

export function requireBodyType(ctx: Context, kind: 'json' | 'form'): void {
  // a JSON body's raw text is kept only when the body reader read it as JSON (the same test):
  // no second look at the Content-Type for the JSON callbacks
  const ok =
    kind === 'json' ? ctx.state.rawBody !== undefined || ctx.request.is('json', '+json') : ctx.request.is('urlencoded');
  if (!ok)
    throw new AppError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `Content-Type must be ${kind === 'json' ? 'application/json' : 'application/x-www-form-urlencoded'}`,
    );
}

const windowOf = (config: Config) => ({
  maxAgeSeconds: config.callbacks.maxAgeSeconds,
  maxFutureSeconds: config.callbacks.maxFutureSeconds,
});

/** X-Signature over `<X-Timestamp>.<raw body>` (card form, card network, bank app). */
export function verifySignatureHeaders(ctx: Context, config: Config, provider: ProviderName, rawBody: string): void {
  const signature = ctx.get('X-Signature');
  const timestamp = ctx.get('X-Timestamp');
  if (!signature) throw new AppError(ErrorCode.INVALID_SIGNATURE, 'X-Signature header is missing');
  if (!timestamp) throw new AppError(ErrorCode.INVALID_TIMESTAMP, 'X-Timestamp header is missing');
  if (!verifyHeaderSignature(config.callbacks.providers[provider].secret, timestamp, rawBody, signature))
    throw new AppError(ErrorCode.INVALID_SIGNATURE, 'HMAC signature invalid');
  assertFresh(parseUnixSeconds(timestamp), windowOf(config));
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `signature` field over the canonical JSON of the rest, `timestamp` field ISO 8601 UTC (QR, wallet gateway form). */
export function verifySignedPayload(body: unknown, config: Config, provider: ProviderName): Record<string, unknown> {
  if (!isPlainObject(body)) throw new AppError(ErrorCode.INVALID_INPUT, 'Request body must be a JSON object');
  if (body.signature === undefined || body.signature === null || body.signature === '')
    throw new AppError(ErrorCode.MISSING_FIELD, 'signature is required');
  if (!verifyFieldSignature(config.callbacks.providers[provider].secret, body))
    throw new AppError(ErrorCode.INVALID_SIGNATURE, 'HMAC signature invalid');
  if (body.timestamp === undefined || body.timestamp === null || body.timestamp === '')
    throw new AppError(ErrorCode.MISSING_FIELD, 'timestamp is required');
  assertFresh(parseIsoUtc(body.timestamp), windowOf(config));
  return body;
}
