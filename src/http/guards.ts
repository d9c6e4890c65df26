/**
 * What every payment API route shares: the per-key rate limit (X-RateLimit-* on every response),
 * the Idempotency-Key handling of POSTs, common field schemas and OpenAPI fragments.
 */
import type { Middleware } from 'koa';
import type { AppDeps } from './deps';
import { AppError, ErrorCode } from '../domain/errors';
import type { Mode } from '../domain/mode';
import { thbToSatang } from '../domain/money';
import { idempotency } from './middleware/idempotency';
import { createRateLimiter, rateLimit, type RateLimiter } from './middleware/rate-limit';
import { ApiKeyAuth, PaymentError, z } from './openapi';

/** what the guards take of the app's infrastructure */
type GuardDeps = Pick<AppDeps, 'config' | 'db' | 'clock'>;
const limiters = new WeakMap<GuardDeps, RateLimiter>();

/** One rate limiter per app (state in Postgres; the object holds only settings and the clock). */
export function limiterOf(deps: GuardDeps): RateLimiter {
  let l = limiters.get(deps);
  if (!l) {
    l = createRateLimiter({ db: deps.db, clock: deps.clock, ...deps.config.payments.rateLimit });
    limiters.set(deps, l);
  }
  return l;
}

export function guards(deps: GuardDeps): { limited: Middleware; idempotent: Middleware } {
  return {
    limited: rateLimit(limiterOf(deps), { trustedProxies: deps.config.callbacks.trustedProxies }),
    idempotent: idempotency(deps.db),
  };
}

export const clockOf = (deps: Pick<AppDeps, 'clock'>): (() => number) => deps.clock ?? Date.now;

/**
 * Refuse up front (503, nothing started) when the provider a mode needs is not set up: live mode
 * without CARD_PROVIDER_URL / BANK_API_URL, sandbox mode with the simulators off.
 */
export function requireProvider(deps: Pick<AppDeps, 'config'>, provider: 'card-provider' | 'bank', mode: Mode): void {
  const url = provider === 'bank' ? deps.config.payments.bankApiUrl : deps.config.payments.cardProviderUrl;
  const ok = mode === 'sandbox' ? deps.config.simulators : Boolean(url);
  if (!ok) {
    throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, `The ${provider} is not available in ${mode} mode`, {
      service: provider,
      reason:
        mode === 'sandbox'
          ? 'simulators are off'
          : `${provider === 'bank' ? 'BANK_API_URL' : 'CARD_PROVIDER_URL'} is not configured`,
    });
  }
}

/** THB amount on the wire (number or numeric text, at most 2 decimals) -> integer satang. Absent -> MISSING_FIELD. */
export const Amount = z
  .any()
  .transform((v: unknown, ctx) => {
    if (v === undefined) {
      // reported like any absent field (MISSING_FIELD), which a union would not do
      ctx.addIssue({
        code: z.ZodIssueCode.invalid_type,
        expected: 'number',
        received: 'undefined',
        message: 'Required',
      });
      return z.NEVER;
    }
    const r = thbToSatang(v);
    if (!r.ok) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `amount is invalid (${r.reason}): a positive THB amount with at most 2 decimals, up to 1,000,000`,
      });
      return z.NEVER;
    }
    return r.satang;
  })
  .openapi({ type: 'number', example: 250.5, description: 'THB, at most 2 decimals, > 0, <= 1,000,000' });

export const Id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');

export const HttpUrl = z
  .string()
  .max(2048)
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

// ---- OpenAPI fragments ----

export const security = [{ [ApiKeyAuth.name]: [] as string[] }];

export const rateLimitHeaders = {
  'X-RateLimit-Limit': {
    description:
      'requests allowed in the reported window (100 per second or 1000 per minute: the window closest to running out)',
    schema: { type: 'integer' as const },
  },
  'X-RateLimit-Remaining': { description: 'requests left in that window', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': {
    description: 'unix time (seconds) when that window resets',
    schema: { type: 'integer' as const },
  },
};

export const idempotencyHeader = z.object({
  'Idempotency-Key': z.string().max(255).optional().openapi({
    description:
      'Same key and body within 24 h -> the first response replayed; another body -> 422; still running -> 409',
    example: 'order-ORD-2001-attempt-1',
  }),
});

/** Error responses of the payment API, each with the rate-limit headers. */
export const apiErrors = (codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [
      String(c),
      {
        description: `error (${c})`,
        headers: rateLimitHeaders,
        content: { 'application/json': { schema: PaymentError } },
      },
    ]),
  );
