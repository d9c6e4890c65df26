/** Standard Webhooks signing and the sealed endpoint secrets. */
import { randomBytes } from 'node:crypto';
import vectors from '../fixtures/vectors/standard-webhooks.json';
import { openSecret, sealSecret } from '../../src/webhooks/secret-box';
import { generateWebhookSecret, signWebhook, verifyWebhook, webhookHeaders } from '../../src/webhooks/signing';
import { loadConfig } from '../../src/config';

describe('Standard Webhooks signatures', () => {
  it.each(vectors.cases)('reproduces the published example %#', (c) => {
    expect(signWebhook(c.secret, c.id, c.timestamp, c.body)).toBe(c.signature);
    expect(
      verifyWebhook(
        c.secret,
        { 'webhook-id': c.id, 'webhook-timestamp': String(c.timestamp), 'webhook-signature': c.signature },
        c.body,
        { nowSeconds: c.timestamp },
      ),
    ).toBe(true);
  });

  it('headers verify; a changed body, id, timestamp or secret does not', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({
      event: 'payment.status.updated',
      data: { orderId: 'o', status: 'paid', amount: 1, timestamp: 't' },
    });
    const h = webhookHeaders(secret, 'msg_1', body);
    expect(h['content-type']).toBe('application/json');
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyWebhook(secret, h, body)).toBe(true);
    expect(verifyWebhook(secret, h, `${body} `)).toBe(false);
    expect(verifyWebhook(secret, { ...h, 'webhook-id': 'msg_2' }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...h, 'webhook-timestamp': String(Number(h['webhook-timestamp']) + 1) }, body)).toBe(
      false,
    );
    expect(verifyWebhook(generateWebhookSecret(), h, body)).toBe(false);
    // several signatures (secret rotation): any one that matches
    expect(verifyWebhook(secret, { ...h, 'webhook-signature': `v1,AAAA ${h['webhook-signature']}` }, body)).toBe(true);
  });

  it('refuses a timestamp outside the tolerance (replays)', () => {
    const secret = generateWebhookSecret();
    const h = webhookHeaders(secret, 'msg_1', '{}', 1_000_000);
    expect(verifyWebhook(secret, h, '{}', { nowSeconds: 1_000_300 })).toBe(true);
    expect(verifyWebhook(secret, h, '{}', { nowSeconds: 1_000_301 })).toBe(false);
  });

  it('secrets are whsec_ and 24 random bytes', () => {
    const s = generateWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(24);
    expect(generateWebhookSecret()).not.toBe(s);
  });
});

describe('sealed secrets (AES-256-GCM)', () => {
  const key = randomBytes(32);

  it('round-trips, and the sealed text reveals nothing of the secret', () => {
    const secret = generateWebhookSecret();
    const sealed = sealSecret(key, secret);
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(sealSecret(key, secret)).not.toBe(sealed); // fresh IV each time
    expect(openSecret(key, sealed)).toBe(secret);
  });

  it('fails with another key or a changed ciphertext', () => {
    const sealed = sealSecret(key, generateWebhookSecret());
    expect(() => openSecret(randomBytes(32), sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = (parts[3][0] === 'A' ? 'B' : 'A') + parts[3].slice(1);
    expect(() => openSecret(key, parts.join('.'))).toThrow();
  });
});

describe('WEBHOOK_SECRET_KEY', () => {
  const base = { NODE_ENV: 'development' };

  it('has a development default of 32 bytes and accepts 64 hex digits or 44 base64 characters', () => {
    expect(loadConfig(base).webhooks.secretKey).toHaveLength(32);
    const hex = randomBytes(32).toString('hex');
    expect(loadConfig({ ...base, WEBHOOK_SECRET_KEY: hex }).webhooks.secretKey.toString('hex')).toBe(hex);
    const b64 = randomBytes(32).toString('base64');
    expect(loadConfig({ ...base, WEBHOOK_SECRET_KEY: b64 }).webhooks.secretKey.toString('base64')).toBe(b64);
  });

  it('refuses a key of another length, and production without one', () => {
    expect(() => loadConfig({ ...base, WEBHOOK_SECRET_KEY: 'abcd' })).toThrow(/WEBHOOK_SECRET_KEY/);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/WEBHOOK_SECRET_KEY: required in production/);
  });
});
