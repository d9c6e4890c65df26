/**
 * Endpoint secrets at rest: AES-256-GCM under WEBHOOK_SECRET_KEY. A secret must be read back to
 * sign each delivery, so it is encrypted rather than hashed; the ciphertext alone is useless
 * without the key, which lives only in the configuration.
 * Format: `v1.<iv base64url>.<tag base64url>.<ciphertext base64url>`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export function sealSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(
    '.',
  );
}

export function openSecret(key: Buffer, sealed: string): string {
  const [version, iv, tag, ct] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
