/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): headers webhook-id,
 * webhook-timestamp (unix seconds) and webhook-signature `v1,<base64 HMAC-SHA256>` over
 * `<id>.<timestamp>.<body>`, keyed with the base64-decoded part of a `whsec_<base64>` secret.
 * verifyWebhook is what an integrator runs; the tests' receivers use it too.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

export const generateWebhookSecret = (): string => `${PREFIX}${randomBytes(24).toString('base64')}`;

const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`;
}

/** The headers of one message; several secrets (during a rotation) give space-separated signatures. */
export function webhookHeaders(
  secret: string | string[],
  id: string,
  body: string,
  timestampSeconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const secrets = Array.isArray(secret) ? secret : [secret];
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signWebhook(s, id, timestampSeconds, body)).join(' '),
  };
}

/**
 * True when one of the space-separated `v1,` signatures matches and the timestamp is within
 * `toleranceSeconds` of now (replay protection), compared in constant time.
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  opts: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  const one = (h: string) => {
    const v = headers[h];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = one('webhook-id');
  const ts = one('webhook-timestamp');
  const sigs = one('webhook-signature');
  if (!id || !ts || !sigs || !/^\d{1,12}$/.test(ts)) return false;
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(ts)) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(secret, id, Number(ts), body).slice(3), 'base64');
  return sigs.split(' ').some((s) => {
    if (!s.startsWith('v1,')) return false;
    const given = Buffer.from(s.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
