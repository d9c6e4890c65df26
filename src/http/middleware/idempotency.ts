/**
 * Idempotency-Key on the payment API's POSTs (IETF draft "The Idempotency-Key HTTP Header Field").
 * With the header (1-255 visible ASCII characters), the key is scoped to the caller's API key and
 * kept 24 hours in Postgres, so every gateway process sees it:
 *  - same key, same request (method, path, parsed body) -> the first response replayed byte for
 *    byte with `Idempotent-Replayed: true`; same key, another request -> 422
 *    IDEMPOTENCY_KEY_REUSED; same key still running -> 409 CONFLICT with Retry-After (a record in
 *    flight over 60 s, from a crashed gateway, is taken over by the same request);
 *  - responses below 500 are kept; a 5xx releases the key, so the same request may be retried.
 */
import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import type { Db } from '../../db/knex';
import { AppError, ErrorCode } from '../../domain/errors';
import { errorEnvelope, toAppError } from '../errors';
import { canonicalJson } from '../../canonical-json';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
export const IN_FLIGHT_TAKEOVER_SECONDS = 60;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

function keyOf(ctx: Context): string | undefined {
  const raw = ctx.get('Idempotency-Key');
  if (!raw) return undefined;
  const key = /^".*"$/.test(raw) ? raw.slice(1, -1) : raw;
  if (!KEY_PATTERN.test(key)) {
    throw new AppError(ErrorCode.INVALID_INPUT, 'Idempotency-Key must be 1 to 255 visible ASCII characters', {
      field: 'Idempotency-Key',
    });
  }
  return key;
}

interface StoredRow {
  fingerprint: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  /** rows written before response_text existed (jsonb: keys reordered) */
  response_body: unknown;
  response_text: string | null;
}

export function idempotency(db: Db): Middleware {
  return async (ctx: Context, next: Next) => {
    const key = keyOf(ctx);
    if (!key) return next();
    const scope = ctx.state.apiKey?.id ?? 'public';
    const fingerprint = createHash('sha256')
      .update(canonicalJson({ method: ctx.method, path: ctx.path, body: ctx.request.body ?? null }))
      .digest('hex');

    for (let attempt = 0; ; attempt++) {
      const claimed = await db.raw<{ rows: unknown[] }>(
        `INSERT INTO idempotency_keys AS ik (scope, key, method, path, fingerprint, state, locked_at, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, 'in_flight', now(), now(), now() + make_interval(secs => ?))
         ON CONFLICT (scope, key) DO UPDATE SET
           method = EXCLUDED.method, path = EXCLUDED.path, fingerprint = EXCLUDED.fingerprint, state = 'in_flight',
           response_status = NULL, response_body = NULL, response_text = NULL, locked_at = now(), created_at = now(), expires_at = EXCLUDED.expires_at
         WHERE ik.expires_at < now()
            OR (ik.state = 'in_flight' AND ik.fingerprint = EXCLUDED.fingerprint AND ik.locked_at < now() - make_interval(secs => ?))
         RETURNING 1`,
        [scope, key, ctx.method, ctx.path, fingerprint, IDEMPOTENCY_TTL_SECONDS, IN_FLIGHT_TAKEOVER_SECONDS],
      );
      if (claimed.rows.length > 0) break;

      const row = await db('idempotency_keys')
        .where({ scope, key })
        .first<StoredRow | undefined>('fingerprint', 'state', 'response_status', 'response_body', 'response_text');
      if (!row) {
        if (attempt < 2) continue; // released between the two statements: claim again
        throw new AppError(
          ErrorCode.CONFLICT,
          'The request with this Idempotency-Key is being retried, try again',
          { idempotencyKey: key },
          { 'Retry-After': '1' },
        );
      }
      if (row.fingerprint !== fingerprint) {
        throw new AppError(ErrorCode.IDEMPOTENCY_KEY_REUSED, 'This Idempotency-Key was used for another request', {
          idempotencyKey: key,
        });
      }
      if (row.state === 'in_flight') {
        throw new AppError(
          ErrorCode.CONFLICT,
          'A request with this Idempotency-Key is still being processed',
          { idempotencyKey: key, reason: 'in_flight' },
          { 'Retry-After': '1' },
        );
      }
      ctx.status = row.response_status ?? 200;
      if (row.response_text !== null) {
        ctx.type = 'json';
        ctx.body = row.response_text;
      } else ctx.body = row.response_body;
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }

    const release = () => db('idempotency_keys').where({ scope, key, state: 'in_flight' }).del();
    // a JSON body is kept as the text Koa sends for it (JSON.stringify, no spacing), which the
    // replay sends again; anything else (a redirect's text) as before
    const keep = (status: number, body: unknown) =>
      db('idempotency_keys')
        .where({ scope, key, state: 'in_flight' })
        .update({
          state: 'done',
          response_status: status,
          ...(body !== null && typeof body === 'object' && !Buffer.isBuffer(body)
            ? { response_text: JSON.stringify(body) }
            : { response_body: JSON.stringify(body ?? null) }),
        });

    try {
      await next();
    } catch (e) {
      const { error } = toAppError(e);
      if (error.status < 500) await keep(error.status, errorEnvelope(ctx.state.area ?? 'payment', error));
      else await release();
      throw e;
    }
    if (ctx.status >= 500) await release();
    else await keep(ctx.status, ctx.body);
  };
}
