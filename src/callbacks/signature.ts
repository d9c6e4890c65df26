/**
 * Callback signatures (docs/callbacks.md): hex HMAC-SHA256 with the provider's shared secret, compared
 * in constant time.
 *  - JSON payloads with a `signature` field (QR, wallet gateway form): HMAC over the canonical
 *    JSON of the payload without `signature`.
 *  - Payloads without one (card form, card network, bank app): header X-Signature = HMAC over
 *    `<X-Timestamp>.<raw body>`, header X-Timestamp = unix seconds.
 * The simulators, the tests and the README's examples sign with these same helpers.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { signedPayloadText } from './canonical-json';

export const hmacSha256Hex = (secret: string, message: string): string =>
  createHmac('sha256', secret).update(message, 'utf8').digest('hex');

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** Constant-time comparison of a hex digest with the expected one; malformed input is simply false. */
export function hexDigestEquals(expectedHex: string, givenHex: unknown): boolean {
  if (typeof givenHex !== 'string' || !HEX_SHA256.test(givenHex)) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(givenHex, 'hex'));
}

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
