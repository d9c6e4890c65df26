/**
 * The webhook destination policy (src/webhooks/url-policy.ts) at both points where it applies:
 * registration (POST/PATCH /webhooks/endpoints) and the connection (postWebhook and the attempt
 * activity). Host names go through an injected resolver, never the network; the only sockets
 * opened go to 127.0.0.1 (a receiver that counts what reaches it, so a guard that let a request
 * through would be seen).
 */
import net from 'node:net';
import request from 'supertest';
import type Koa from 'koa';
import YAML from 'yaml';
import fs from 'node:fs';
import path from 'node:path';
import { createWebhookActivities } from '../../activities/webhooks';
import { loadConfig } from '../../src/config';
import { createApp } from '../../src/app/app';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { CONNECTION_FAILED, postWebhook, TIMEOUT } from '../../src/webhooks/http';
import { addressAllowed, urlProblem, type UrlPolicy } from '../../src/webhooks/url-policy';
import type { Resolver } from '../../src/resolver';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';
import { apiKey, startReceiver, type Receiver } from './helpers';

const PUBLIC = '93.184.215.14';

/** A resolver from a table: name -> addresses (or a function of the call number, for rebinding). */
function resolverOf(table: Record<string, string[] | ((call: number) => string[])>) {
  const calls: string[] = [];
  const resolve: Resolver = async (hostname) => {
    calls.push(hostname);
    const entry = table[hostname];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const list = typeof entry === 'function' ? entry(calls.filter((c) => c === hostname).length) : entry;
    return list.map((address) => ({ address, family: net.isIP(address) }));
  };
  return { resolve, calls };
}

const production: UrlPolicy = { requireHttps: true, allowLoopback: false };
const development: UrlPolicy = { requireHttps: false, allowLoopback: true };

describe('the policy (registration-time check, resolver injected)', () => {
  const { resolve } = resolverOf({
    'hooks.example.com': [PUBLIC],
    'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
    'rebind.example.com': [PUBLIC, '10.0.0.1'],
    'loopback.example.com': ['127.0.0.1'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
    'metadata.google.internal': ['169.254.169.254'],
  });
  const prod = { ...production, resolve };

  it.each([
    // allowed
    ['https://hooks.example.com/talat', undefined],
    ['https://hooks.example.com./talat', undefined],
    ['https://v6.example.com/talat', undefined],
    [`https://${PUBLIC}/hook`, undefined],
    [`https://${PUBLIC}:8443/hook`, undefined],
    // scheme and form
    ['http://hooks.example.com/talat', 'url must be https'],
    ['ftp://example.com/x', 'url must be an http(s) URL'],
    ['https://user:pw@hooks.example.com/', 'url must not carry credentials'],
    ['not a url', 'url must be an absolute http(s) URL'],
    // names refused without resolving
    ['https://localhost/hook', 'url must name a public host'],
    ['https://localhost./hook', 'url must name a public host'],
    ['https://LOCALHOST/hook', 'url must name a public host'],
    ['https://api.localhost/hook', 'url must name a public host'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'url must name a public host'],
    ['https://metadata.google.internal./computeMetadata/v1/', 'url must name a public host'],
    ['https://billing.corp.internal/hook', 'url must name a public host'],
    ['https://printer.local/hook', 'url must name a public host'],
    ['https://router.home.arpa/hook', 'url must name a public host'],
    ['https://postgres:5432/', 'url must name a public host'],
    ['https://temporal./', 'url must name a public host'],
    // literal addresses in every form the URL parser takes
    ['https://127.0.0.1/hook', 'url must point to a public address'],
    ['https://2130706433/hook', 'url must point to a public address'],
    ['https://0x7f000001/hook', 'url must point to a public address'],
    ['https://0x7f.1/hook', 'url must point to a public address'],
    ['https://0177.0.0.1/hook', 'url must point to a public address'],
    ['https://127.1/hook', 'url must point to a public address'],
    ['https://[::1]/hook', 'url must point to a public address'],
    ['https://[::ffff:127.0.0.1]/hook', 'url must point to a public address'],
    ['https://[::ffff:a9fe:a9fe]/latest', 'url must point to a public address'],
    ['https://0.0.0.0/hook', 'url must point to a public address'],
    ['https://[::]/hook', 'url must point to a public address'],
    ['https://10.1.2.3/hook', 'url must point to a public address'],
    ['https://172.16.0.1/hook', 'url must point to a public address'],
    ['https://192.168.1.1/hook', 'url must point to a public address'],
    ['https://169.254.169.254/latest', 'url must point to a public address'],
    ['https://100.64.0.1/hook', 'url must point to a public address'],
    ['https://224.0.0.1/hook', 'url must point to a public address'],
    ['https://255.255.255.255/hook', 'url must point to a public address'],
    ['https://[fd00::1]/hook', 'url must point to a public address'],
    ['https://[fe80::1]/hook', 'url must point to a public address'],
    ['https://[2002:7f00:1::]/hook', 'url must point to a public address'], // 6to4 of 127.0.0.1
    ['https://[64:ff9b::7f00:1]/hook', 'url must point to a public address'], // NAT64 of 127.0.0.1
    // names resolved: every address must be public
    ['https://rebind.example.com/hook', 'url host resolves to a non-public address'],
    ['https://loopback.example.com/hook', 'url host resolves to a non-public address'],
    ['https://mapped.example.com/hook', 'url host resolves to a non-public address'],
    ['https://nxdomain.example.com/hook', 'url host does not resolve'],
  ])('production: %s -> %s', async (url, problem) => {
    expect(await urlProblem(url, prod)).toBe(problem);
  });

  it.each([
    ['http://127.0.0.1:4000/hook', undefined],
    ['http://localhost:4000/hook', undefined],
    ['http://[::1]:4000/hook', undefined],
    ['http://loopback.example.com:4000/hook', undefined],
    ['http://hooks.example.com/talat', undefined],
    ['http://10.1.2.3/hook', 'url must point to a public address'],
    ['http://169.254.169.254/latest', 'url must point to a public address'],
    ['http://[::ffff:10.0.0.1]/hook', 'url must point to a public address'],
    ['http://metadata.google.internal/', 'url must name a public host'],
    ['http://rebind.example.com/hook', 'url host resolves to a non-public address'],
  ])('WEBHOOK_ALLOW_LOOPBACK=on (development): %s -> %s', async (url, problem) => {
    expect(await urlProblem(url, { ...development, resolve })).toBe(problem);
  });

  it('loopback is refused when the allowance is off, in development too', async () => {
    const dev = { requireHttps: false, allowLoopback: false, resolve };
    expect(await urlProblem('http://127.0.0.1:4000/hook', dev)).toBe('url must point to a public address');
    expect(await urlProblem('http://localhost:4000/hook', dev)).toBe('url must name a public host');
    expect(addressAllowed('127.0.0.1', dev)).toBe(false);
    expect(addressAllowed('::ffff:7f00:1', { allowLoopback: true })).toBe(true);
  });
});

describe('configuration', () => {
  it('production: https and public addresses only; WEBHOOK_ALLOW_LOOPBACK=on is refused there', () => {
    const secrets = (() => {
      const doc = YAML.parse(fs.readFileSync(path.resolve(__dirname, '../../docker-compose.yml'), 'utf8'), {
        merge: true,
      }) as { services: Record<string, { environment?: Record<string, string> }> };
      return doc.services.gateway.environment!;
    })();
    // docker-compose's gateway environment, its ${VAR:-default} and ${VAR:?...} filled in
    const fill = 'Placeholder0123456789abcdef0123456789';
    const env: Record<string, string> = Object.fromEntries(
      Object.entries(secrets).map(([k, v]) => [
        k,
        String(v).replace(/\$\{[A-Z0-9_]+(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, def?: string) => def ?? fill),
      ]),
    );
    for (const k of Object.keys(env)) if (/^PROVIDER_IPS_/.test(k)) env[k] = '10.0.0.0/8';
    Object.assign(env, {
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      TEMPORAL_CODEC_KEYS: `k1:${'b'.repeat(64)}`,
      TRUSTED_PROXIES: '10.0.0.0/8',
      PUBLIC_BASE_URL: 'https://pay.example.com',
      SHOP_ORIGIN: 'https://shop.example.com',
      S3_PUBLIC_ENDPOINT: 'https://s3.example.com',
    });
    expect(env.NODE_ENV).toBe('production');
    expect(secrets.WEBHOOK_ALLOW_LOOPBACK).toBeUndefined();
    expect(loadConfig(env).webhooks.urlPolicy).toEqual({ requireHttps: true, allowLoopback: false });
    expect(() => loadConfig({ ...env, WEBHOOK_ALLOW_LOOPBACK: 'on' })).toThrow(/WEBHOOK_ALLOW_LOOPBACK/);
  });

  it('development: loopback only when WEBHOOK_ALLOW_LOOPBACK=on; the old switch is refused with a pointer', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).webhooks.urlPolicy).toEqual({
      requireHttps: false,
      allowLoopback: false,
    });
    expect(loadConfig({ NODE_ENV: 'development', WEBHOOK_ALLOW_LOOPBACK: 'on' }).webhooks.urlPolicy).toEqual({
      requireHttps: false,
      allowLoopback: true,
    });
    expect(() => loadConfig({ NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE_URLS: 'on' })).toThrow(
      /WEBHOOK_ALLOW_PRIVATE_URLS: no longer exists/,
    );
  });
});

describe('at the connection (postWebhook)', () => {
  let receiver: Receiver;
  let port: number;
  beforeAll(async () => {
    receiver = await startReceiver();
    port = Number(new URL(receiver.url).port);
  });
  afterAll(() => receiver.stop());
  const post = (url: string, policy: UrlPolicy, timeoutMs = 2_000) =>
    postWebhook(url, { 'content-type': 'application/json' }, '{}', { timeoutMs, policy });

  it('connects to the address the injected resolver gave (the control: the guard is what the socket uses)', async () => {
    const { resolve, calls } = resolverOf({ 'hooks.test.example': ['127.0.0.1'] });
    const before = receiver.log.length;
    const r = await post(`http://hooks.test.example:${port}/hooks`, { ...development, resolve });
    expect(r.statusCode).toBe(200);
    expect(receiver.log.length).toBe(before + 1);
    expect(calls).toEqual(['hooks.test.example']);
  });

  it('DNS rebinding: public at registration, loopback at connect -> refused, nothing sent', async () => {
    const { resolve, calls } = resolverOf({ 'rebind.test.example': (n) => (n === 1 ? [PUBLIC] : ['127.0.0.1']) });
    const policy = { requireHttps: false, allowLoopback: false, resolve };
    const url = `http://rebind.test.example:${port}/hooks`;
    expect(await urlProblem(url, policy)).toBeUndefined(); // registration: resolves public
    const before = receiver.log.length;
    const r = await post(url, policy);
    expect(r).toMatchObject({ error: CONNECTION_FAILED, detail: 'url host resolves to a non-public address' });
    expect(r.statusCode).toBeUndefined();
    expect(receiver.log.length).toBe(before);
    expect(calls).toEqual(['rebind.test.example', 'rebind.test.example']);
  });

  it.each([
    'http://127.0.0.1:PORT/hooks',
    'http://2130706433:PORT/hooks',
    'http://0x7f.1:PORT/hooks',
    'http://[::ffff:127.0.0.1]:PORT/hooks',
    'http://localhost:PORT/hooks',
    'http://localhost.:PORT/hooks',
  ])('%s, registered before the policy tightened, is refused at connect', async (u) => {
    const { resolve, calls } = resolverOf({ localhost: ['127.0.0.1'] });
    const before = receiver.log.length;
    const r = await post(u.replace('PORT', String(port)), { requireHttps: false, allowLoopback: false, resolve });
    expect(r.error).toBe(CONNECTION_FAILED);
    expect(receiver.log.length).toBe(before);
    expect(calls).toEqual([]); // refused before any resolution
  });

  it('http is refused at connect when https is required', async () => {
    const r = await post(`http://hooks.example.com/hook`, production);
    expect(r).toMatchObject({ error: CONNECTION_FAILED, detail: 'url must be https' });
  });

  it('one neutral category for every failure before an HTTP answer: closed port, non-HTTP service, refused', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const notHttp = net.createServer((sock) => sock.end('SSH-2.0-OpenSSH_9.6\r\n'));
    await new Promise<void>((resolve) => notHttp.listen(0, '127.0.0.1', resolve));
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const results = [
        await post(`http://127.0.0.1:${closed}/`, development),
        await post(`http://127.0.0.1:${(notHttp.address() as net.AddressInfo).port}/`, development),
        await post(`http://10.0.0.1/`, development),
      ];
      expect(results.map((r) => r.error)).toEqual([CONNECTION_FAILED, CONNECTION_FAILED, CONNECTION_FAILED]);
      expect(new Set(results.map((r) => r.detail)).size).toBe(3); // the causes differ, in the log only
      const slow = await post(`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/`, development, 300);
      expect(slow.error).toBe(TIMEOUT);
    } finally {
      notHttp.close();
      silent.close();
    }
  });
});

describe('through the API and the attempt activity', () => {
  let stack: TestStack;
  let key: string;
  let app: Koa;
  const { resolve, calls } = resolverOf({
    'hooks.example.com': [PUBLIC],
    'rebind.example.com': [PUBLIC, '10.0.0.1'],
  });
  beforeAll(async () => {
    stack = await createTestStack({ worker: false });
    key = (await apiKey(stack)).key;
    app = createApp({
      config: { ...stack.config, webhooks: { ...stack.config.webhooks, urlPolicy: production } },
      db: stack.db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
      resolve,
    });
  });
  afterAll(() => stack.close());

  it.each([
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://localhost./hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://2130706433/hook',
    'https://0x7f.1/hook',
    'https://100.64.0.1/hook',
    'https://rebind.example.com/hook',
    'http://hooks.example.com/hook',
  ])('POST /webhooks/endpoints %s -> 400 INVALID_INPUT on url', async (url) => {
    const res = await request(app.callback()).post('/webhooks/endpoints').set('X-API-Key', key).send({ url });
    expect(res.status).toBe(400);
    expect(res.body.body).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'url' } });
  });

  it('a public name is resolved at registration and accepted; PATCH to a private url is refused and changes nothing', async () => {
    calls.length = 0;
    const created = await request(app.callback())
      .post('/webhooks/endpoints')
      .set('X-API-Key', key)
      .send({ url: 'https://hooks.example.com/talat' });
    expect(created.status).toBe(201);
    expect(calls).toEqual(['hooks.example.com']);
    const id = created.body.body.id as string;
    for (const url of ['https://169.254.169.254/latest', 'https://rebind.example.com/x', 'https://localhost./x']) {
      const res = await request(app.callback()).patch(`/webhooks/endpoints/${id}`).set('X-API-Key', key).send({ url });
      expect(res.status).toBe(400);
      expect(res.body.body.details).toMatchObject({ field: 'url' });
    }
    const row = await stack.db('webhook_endpoints').where({ id }).first('url');
    expect(row.url).toBe('https://hooks.example.com/talat');
  });

  it('attempts to a closed port, to Postgres and to a refused destination all read `connection failed`', async () => {
    const owner = await apiKey(stack);
    const pgPort = new URL(process.env.TALAT_TEST_PG_ADMIN_URL!).port;
    const closed = await new Promise<number>((r) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => r(p));
      });
    });
    const activities = createWebhookActivities({
      db: stack.db,
      config: stack.config,
      logger: testLogger,
      resolve,
      records: {
        payment: async () => undefined,
        reached: async () => false,
        refunded: async () => undefined,
        orderEvent: async () => undefined,
      },
    });
    const errors: (string | undefined)[] = [];
    for (const url of [`http://127.0.0.1:${closed}/`, `http://127.0.0.1:${pgPort}/`, 'http://10.0.0.1/']) {
      const ep = await createEndpoint(stack.db, stack.config, { id: owner.id, mode: 'sandbox' }, { url });
      const id = `msg_${uniq('t').replace(/-/g, '')}`;
      await stack.db('webhook_deliveries').insert({
        id,
        endpoint_id: ep.id,
        payment_id: uniq('pay'),
        order_id: uniq('o'),
        event_status: 'paid',
        payload: '{}',
      });
      const r = await activities.attemptWebhookDelivery({ deliveryId: id, attempt: 1, kind: 'automatic' });
      expect(r.ok).toBe(false);
      errors.push(r.error);
      const attempt = await stack.db('webhook_attempts').where({ delivery_id: id }).first('error');
      expect(attempt.error).toBe(r.error);
    }
    expect(errors).toEqual([CONNECTION_FAILED, CONNECTION_FAILED, CONNECTION_FAILED]);
  });
});
