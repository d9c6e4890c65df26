/**
 * Callback signatures (docs/callbacks.md): hex HMAC-SHA256 with the provider's shared secret, compared
 * in constant time.
 *  - JSON payloads with a `signature` field (QR, wallet gateway form): HMAC over the canonical
 *    JSON of the payload without `signature`.
 *  - Payloads without one (card form, card network, bank app): header X-Signature = HMAC over
 *    `<X-Timestamp>.<raw body>`, header X-Timestamp = unix seconds.
 * The simulators, the tests and the README's examples sign with these same helpers.
 */
import { hexDigestEquals, hmacSha256Hex } from '../proofs';
import { signedPayloadText } from './canonical-json';

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
