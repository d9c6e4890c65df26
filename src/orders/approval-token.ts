/**
 * The approval link's token: `<approval id>.<expiry, unix seconds in base 36>.<HMAC>` under a key
 * derived from IDENTITY_SECRET (as the checkout token, src/checkout/token.ts, with its own
 * derivation): unguessable, expiring, naming exactly one approval. Nothing is stored.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long after the approval's own deadline its link still shows the outcome (then 410). */
export const APPROVAL_LINK_GRACE_SECONDS = 86_400;

const TOKEN = /^(apr_[0-9a-f]{32})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})$/;

const keyOf = (secret: string): Buffer => createHmac('sha256', secret).update('talat-approval-token-v1').digest();
const tagOf = (key: Buffer, id: string, exp: string): string =>
  createHmac('sha256', key).update(`${id}.${exp}`).digest().subarray(0, 16).toString('base64url');

export function signApprovalToken(secret: string, approvalId: string, expiresAtMs: number): string {
  const exp = Math.ceil(expiresAtMs / 1000 + APPROVAL_LINK_GRACE_SECONDS).toString(36);
  return `${approvalId}.${exp}.${tagOf(keyOf(secret), approvalId, exp)}`;
}

/** The signed link of an approval's page under `baseUrl`. */
export const approvalLinkOf = (baseUrl: string, secret: string, approvalId: string, expiresAtMs: number): string =>
  `${baseUrl.replace(/\/+$/, '')}/approvals/${signApprovalToken(secret, approvalId, expiresAtMs)}`;

export type ApprovalTokenCheck = { ok: true; approvalId: string } | { ok: false; reason: 'invalid' | 'expired' };

/** The approval a token names, if its tag is right and it has not expired at `nowMs`. */
export function verifyApprovalToken(secret: string, token: string, nowMs: number): ApprovalTokenCheck {
  const m = TOKEN.exec(token);
  if (!m) return { ok: false, reason: 'invalid' };
  const [, approvalId, exp, tag] = m;
  if (!timingSafeEqual(Buffer.from(tagOf(keyOf(secret), approvalId, exp)), Buffer.from(tag)))
    return { ok: false, reason: 'invalid' };
  if (parseInt(exp, 36) * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, approvalId };
}
