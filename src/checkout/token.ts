/**
 * The hosted checkout link's token: `<payment id>.<expiry, unix seconds in base 36>.<HMAC>`.
 * Unguessable (a 128-bit HMAC-SHA256 tag under a key derived from IDENTITY_SECRET), expiring,
 * and naming exactly one payment: changing the id or the expiry breaks the tag. Nothing is stored.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long after the payment's own expiry its link still shows the outcome (then 410). */
export const LINK_GRACE_SECONDS = 3600;

const TOKEN = /^(pay_[0-9a-f]{32})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})$/;

const keyOf = (secret: string): Buffer => createHmac('sha256', secret).update('talat-checkout-token-v1').digest();

const tagOf = (key: Buffer, paymentId: string, exp: string): string =>
  createHmac('sha256', key).update(`${paymentId}.${exp}`).digest().subarray(0, 16).toString('base64url');

export function signCheckoutToken(secret: string, paymentId: string, expiresAtMs: number): string {
  const exp = Math.ceil(expiresAtMs / 1000 + LINK_GRACE_SECONDS).toString(36);
  return `${paymentId}.${exp}.${tagOf(keyOf(secret), paymentId, exp)}`;
}

export type TokenCheck = { ok: true; paymentId: string } | { ok: false; reason: 'invalid' | 'expired' };

/** The payment a token names, if its tag is right and it has not expired at `nowMs`. */
export function verifyCheckoutToken(secret: string, token: string, nowMs: number): TokenCheck {
  const m = TOKEN.exec(token);
  if (!m) return { ok: false, reason: 'invalid' };
  const [, paymentId, exp, tag] = m;
  const want = Buffer.from(tagOf(keyOf(secret), paymentId, exp));
  if (!timingSafeEqual(want, Buffer.from(tag))) return { ok: false, reason: 'invalid' };
  if (parseInt(exp, 36) * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, paymentId };
}
