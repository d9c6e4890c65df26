import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config';
import { temporalTlsOptions } from '../src/temporal/client';

describe('config', () => {
  it('has documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.temporal).toMatchObject({
      namespace: 'default',
      uiPort: 8233,
      taskQueue: 'talat-payments',
      address: undefined,
    });
    expect(c.database.url).toBeUndefined();
    expect(c.payments.qrExpirySeconds).toBe(900);
    expect(c.callbacks.maxAgeSeconds).toBe(300);
    expect(c.callbacks.providers.QR.ips).toEqual(['127.0.0.0/8', '::1/128']);
    expect(c.simulators).toBe(true);
    expect(c.payments).toMatchObject({ merchantName: 'SALA MARKET', merchantCity: undefined, billerId: undefined });
    expect(loadConfig({ PROMPTPAY_BILLER_ID: '010552300935002', MERCHANT_CITY: 'BANGKOK' }).payments).toMatchObject({
      billerId: '010552300935002',
      merchantCity: 'BANGKOK',
    });
  });

  it('uses given values', () => {
    const c = loadConfig({
      PORT: '8080',
      TEMPORAL_ADDRESS: 'temporal:7233',
      DATABASE_URL: 'postgres://u@db:5432/talat',
    });
    expect(c.port).toBe(8080);
    expect(c.temporal.address).toBe('temporal:7233');
    expect(c.database.url).toBe('postgres://u@db:5432/talat');
  });

  it('WORKER_QUEUES: all three queues unless told which', () => {
    expect(loadConfig({}).roles.workerQueues).toEqual(['payments', 'webhooks', 'background']);
    expect(loadConfig({ WORKER_QUEUES: 'webhooks, background,webhooks' }).roles.workerQueues).toEqual([
      'webhooks',
      'background',
    ]);
    expect(loadConfig({}).webhooks.inlinePerEndpoint).toBe(32);
    expect(loadConfig({ WEBHOOK_INLINE_PER_ENDPOINT: '0' }).webhooks.inlinePerEndpoint).toBe(0);
  });

  it.each([
    ['PORT', 'eighty', /PORT/],
    ['PORT', '70000', /PORT/],
    ['NODE_ENV', 'staging', /NODE_ENV/],
    ['DATABASE_URL', 'not a url', /DATABASE_URL/],
    ['QR_EXPIRY_S', '-5', /QR_EXPIRY_S/],
    ['PROVIDER_IPS_QR', '10.0.0.1', /PROVIDER_IPS_QR/],
    ['PROVIDER_SECRET_CARD', 'short', /PROVIDER_SECRET_CARD/],
    ['TRUSTED_PROXIES', 'nonsense', /TRUSTED_PROXIES/],
    ['PROMPTPAY_BILLER_ID', '12345', /PROMPTPAY_BILLER_ID/],
    ['MERCHANT_CITY', 'A CITY NAME LONGER THAN FIFTEEN', /MERCHANT_CITY/],
    // ipaddr.js parses them: what a regex let through
    ['PROVIDER_IPS_CARD', 'foo:bar/64', /PROVIDER_IPS_CARD/],
    ['PROVIDER_IPS_CARD', '10.0.0.0/33', /PROVIDER_IPS_CARD/],
    ['PROVIDER_IPS_CARD', '10.1/8', /PROVIDER_IPS_CARD/],
    ['TRUSTED_PROXIES', '::1/129', /TRUSTED_PROXIES/],
    ['WALLET_RATE_ALLOW', '1.2.3.4', /WALLET_RATE_ALLOW/],
    ['WORKER_QUEUES', 'payments,emails', /WORKER_QUEUES/],
    ['WEBHOOK_INLINE_PER_ENDPOINT', '-1', /WEBHOOK_INLINE_PER_ENDPOINT/],
    ['CALLBACK_DUPLICATE_WAIT_MS', '-1', /CALLBACK_DUPLICATE_WAIT_MS/],
    ['CALLBACK_DELIVERY_LEASE_S', '5', /CALLBACK_DELIVERY_LEASE_S/],
    ['CALLBACK_REDELIVERY_S', '0', /CALLBACK_REDELIVERY_S/],
  ])('rejects %s=%s with a message naming the variable', (name, value, pattern) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(pattern);
  });

  it('the callback receipts: duplicate wait, delivery lease and redelivery, the wait shorter than the lease', () => {
    expect(loadConfig({}).callbacks).toMatchObject({
      duplicateWaitMs: 2000,
      deliveryLeaseMs: 30_000,
      redeliveryMs: 10_000,
    });
    expect(loadConfig({ CALLBACK_REDELIVERY_S: '2' }).callbacks.redeliveryMs).toBe(2000);
    expect(loadConfig({ CALLBACK_DUPLICATE_WAIT_MS: '500', CALLBACK_DELIVERY_LEASE_S: '60' }).callbacks).toMatchObject({
      duplicateWaitMs: 500,
      deliveryLeaseMs: 60_000,
    });
    expect(() => loadConfig({ CALLBACK_DUPLICATE_WAIT_MS: '10000', CALLBACK_DELIVERY_LEASE_S: '10' })).toThrow(
      /CALLBACK_DUPLICATE_WAIT_MS: must be shorter than CALLBACK_DELIVERY_LEASE_S/,
    );
  });

  it('refuses production without provider secrets and IP ranges', () => {
    try {
      loadConfig({ NODE_ENV: 'production' });
      throw new Error('expected ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const issues = (e as ConfigError).issues.join('\n');
      for (const p of ['CARD', 'CARDNET', 'BANKAPP', 'QR', 'WALLET']) {
        expect(issues).toContain(`PROVIDER_SECRET_${p}`);
        expect(issues).toContain(`PROVIDER_IPS_${p}`);
      }
    }
  });

  it('refuses production without RESULT_SIGNING_KEY (no development key exists: security/published-keys)', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/RESULT_SIGNING_KEY: required in production/);
    expect(() => loadConfig({ RESULT_SIGNING_KEY: 'short' })).toThrow(/RESULT_SIGNING_KEY: at least 32 characters/);
    expect(loadConfig({ RESULT_SIGNING_KEY: 'k'.repeat(32) }).results).toEqual({
      signingKey: 'k'.repeat(32),
      latePaymentPolicy: 'refund',
    });
    expect(loadConfig({ LATE_PAYMENT_POLICY: 'review' }).results.latePaymentPolicy).toBe('review');
    expect(() => loadConfig({ LATE_PAYMENT_POLICY: 'ignore' })).toThrow(/LATE_PAYMENT_POLICY/);
  });

  describe('Temporal mTLS (TEMPORAL_TLS_*)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-tls-'));
    const file = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const cert = file('client.pem', '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n');
    const key = file('client.key', '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n');
    const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('none set: no TLS (plain TCP, the embedded dev server)', () => {
      expect(loadConfig({}).temporal.tls).toBeUndefined();
      expect(temporalTlsOptions(loadConfig({}).temporal.tls)).toBeUndefined();
    });

    it('maps the files to the connection options of the client and the worker', () => {
      const c = loadConfig({
        TEMPORAL_TLS_CERT: cert,
        TEMPORAL_TLS_KEY: key,
        TEMPORAL_TLS_CA: ca,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal.example',
      });
      expect(temporalTlsOptions(c.temporal.tls)).toEqual({
        clientCertPair: { crt: fs.readFileSync(cert), key: fs.readFileSync(key) },
        serverRootCACertificate: fs.readFileSync(ca),
        serverNameOverride: 'temporal.internal.example',
      });
      // server TLS only (a CA, no client certificate)
      expect(temporalTlsOptions(loadConfig({ TEMPORAL_TLS_CA: ca }).temporal.tls)).toEqual({
        serverRootCACertificate: fs.readFileSync(ca),
      });
    });

    it.each([
      [{ TEMPORAL_TLS_CERT: cert }, /TEMPORAL_TLS_KEY: required with TEMPORAL_TLS_CERT/],
      [{ TEMPORAL_TLS_KEY: key }, /TEMPORAL_TLS_CERT: required with TEMPORAL_TLS_KEY/],
      [
        { TEMPORAL_TLS_CERT: cert, TEMPORAL_TLS_KEY: '/nonexistent/client.key' },
        /TEMPORAL_TLS_KEY: \/nonexistent\/client.key does not exist/,
      ],
      [{ TEMPORAL_TLS_CA: '/nonexistent/ca.pem' }, /TEMPORAL_TLS_CA: \/nonexistent\/ca.pem does not exist/],
    ])('refuses %j at start-up with a clear message', (env, message) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    });
  });

  it('stops the process with the variable named when started with a bad value', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'abc' },
      encoding: 'utf8',
      timeout: 30000,
    });
    expect(r.status).toBe(78);
    expect(r.stderr).toMatch(/PORT/);
  });
});
