/**
 * The IP-restricted callback endpoints on the real stack (Temporal dev server, Postgres, the
 * card payment workflow): accepted, every error name, duplicates, signatures, timestamps,
 * allow-lists, X-Forwarded-For, content types, body limits. A rejected callback records nothing.
 */
import { Client, Connection } from '@temporalio/client';
import type Koa from 'koa';
import type { ProviderName } from '../../src/config';
import { handlerRecordFrom } from '../../src/callbacks/records';
import { createApp } from '../../src/app/app';
import { testConfig, testLogger, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';
import {
  callbackError,
  cardPayment,
  fieldSigned,
  headerSigned,
  post,
  receiptsOf,
  resultOf,
  signalsOf,
  waitFor,
  type Sent,
  type TestPayment,
} from './helpers';

const stack = useTestStack();

/** The same services with other settings (allow-lists, proxies, limits). */
const appWith = (env: Record<string, string>): Koa =>
  createApp({
    config: testConfig(env),
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger: testLogger,
  });

interface Endpoint {
  path: string;
  provider: ProviderName;
  /** the handler-form record store, when the endpoint has one */
  store?: string;
  valid(p: TestPayment, opts?: { success?: boolean; offsetSeconds?: number }): Sent;
  /** validly signed, without one required field */
  missing(p: TestPayment): { sent: Sent; field: string };
  unknownOrder(p: TestPayment): Sent;
  /** signed, then a value in the body changed */
  tampered(p: TestPayment): Sent;
}

const cfg = () => stack.config;
const handlerForm = (path: string, provider: ProviderName, store: string): Endpoint => {
  const body = (p: TestPayment, success = true) => ({
    orderId: p.orderId,
    paymentId: p.paymentId,
    success,
    userId: 'u-1',
    amount: p.amount,
    message: '',
  });
  return {
    path,
    provider,
    store,
    valid: (p, o = {}) => headerSigned(cfg(), provider, 'json', body(p, o.success ?? true), o.offsetSeconds),
    missing: (p) => {
      const { userId: _u, ...rest } = body(p);
      return { sent: headerSigned(cfg(), provider, 'json', rest), field: 'userId is required in body' };
    },
    unknownOrder: (p) => headerSigned(cfg(), provider, 'json', { ...body(p), orderId: 'ord-unknown' }),
    tampered: (p) => {
      const s = headerSigned(cfg(), provider, 'json', body(p));
      return { ...s, raw: s.raw.replace('"success":true', '"success":false') };
    },
  };
};
const fieldForm = (path: string, provider: ProviderName, idField: 'paymentId' | 'walletId'): Endpoint => {
  const payload = (p: TestPayment, success = true) => ({
    [idField]: idField === 'paymentId' ? p.paymentId : 'wal_123',
    status: success ? 'success' : 'failed',
    amount: p.amount,
    orderId: p.orderId,
  });
  return {
    path,
    provider,
    valid: (p, o = {}) => fieldSigned(cfg(), provider, payload(p, o.success ?? true), o.offsetSeconds),
    missing: (p) => {
      const { orderId: _o, ...rest } = payload(p);
      return { sent: fieldSigned(cfg(), provider, rest), field: 'orderId is required' };
    },
    unknownOrder: (p) => fieldSigned(cfg(), provider, { ...payload(p), orderId: 'ord-unknown' }),
    tampered: (p) => {
      const s = fieldSigned(cfg(), provider, payload(p));
      return { ...s, raw: JSON.stringify({ ...JSON.parse(s.raw), amount: p.amount + 1 }) };
    },
  };
};
const card: Endpoint = {
  path: '/callback',
  provider: 'CARD',
  valid: (p, o = {}) =>
    headerSigned(
      cfg(),
      'CARD',
      'form',
      {
        objectId: p.providerRef,
        token: 'tok_test_visa',
        status: String(o.success ?? true),
        message: '',
        saveCard: 'false',
      },
      o.offsetSeconds,
    ),
  missing: (p) => ({
    sent: headerSigned(cfg(), 'CARD', 'form', { objectId: p.providerRef, status: 'true' }),
    field: 'token is required',
  }),
  unknownOrder: () =>
    headerSigned(cfg(), 'CARD', 'form', { objectId: 'chrg_test_unknown', token: 't', status: 'true' }),
  tampered: (p) => {
    const s = card.valid(p);
    return { ...s, raw: s.raw.replace('status=true', 'status=false') };
  },
};

const ENDPOINTS: Endpoint[] = [
  card,
  handlerForm('/cardnetcallback', 'CARDNET', 'cardnet_callbacks'),
  handlerForm('/bankappcallback', 'BANKAPP', 'bankapp_callbacks'),
  fieldForm('/qrcallback', 'QR', 'paymentId'),
  fieldForm('/walletcallback', 'WALLET', 'walletId'),
];

async function expectNothingRecorded(e: Endpoint, p: TestPayment) {
  expect(await receiptsOf(stack, p.paymentId)).toHaveLength(0);
  if (e.store) expect(await stack.db(e.store).where({ order_id: p.orderId })).toHaveLength(0);
  expect(await signalsOf(stack, p.workflowId)).toBe(0);
}

describe.each(ENDPOINTS)('POST $path', (e) => {
  let shared: TestPayment; // for the rejections, which must leave it untouched
  beforeAll(async () => {
    shared = await cardPayment(stack);
  });

  it('accepts a verified callback: one receipt, the signal, the payment paid', async () => {
    const p = await cardPayment(stack);
    const res = await post(stack.app, e.path, e.valid(p));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      statusCode: 200,
      body: { message: 'Callback processed', orderId: p.orderId, status: 'success' },
    });
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
    expect(await receiptsOf(stack, p.paymentId)).toEqual([
      expect.objectContaining({
        provider: e.provider.toLowerCase(),
        status: 'success',
        outcome: 'signalled',
        source_ip: '127.0.0.1',
        response_status: 200,
      }),
    ]);
    expect((await stack.db('payments').where({ id: p.paymentId }).first()).status).toBe('paid');
    if (e.store)
      expect(await stack.db(e.store).where({ order_id: p.orderId }).first()).toMatchObject({
        payment_id: p.paymentId,
        success: true,
        user_id: 'u-1',
      });
    // a card token is a credential: the receipt keeps only its last four characters
    expect(JSON.stringify((await receiptsOf(stack, p.paymentId))[0].request)).not.toContain('tok_test_visa');
  });

  it('a failure result fails the payment', async () => {
    const p = await cardPayment(stack);
    const res = await post(stack.app, e.path, e.valid(p, { success: false }));
    expect(res.status).toBe(200);
    expect(res.body.body.status).toBe('failed');
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'failed' });
  });

  it('a duplicate gets the first response and changes nothing', async () => {
    const p = await cardPayment(stack);
    const sent = e.valid(p);
    const first = await post(stack.app, e.path, sent);
    const again = await post(stack.app, e.path, e.valid(p)); // same callback, re-signed later
    expect(again.status).toBe(first.status);
    expect(again.body).toEqual(first.body);
    expect(await receiptsOf(stack, p.paymentId)).toHaveLength(1);
    expect(await signalsOf(stack, p.workflowId)).toBe(1);
  });

  it('401 INVALID_SIGNATURE when the body was changed after signing', async () => {
    const res = await post(stack.app, e.path, e.tampered(shared));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(callbackError('INVALID_SIGNATURE', 401));
    await expectNothingRecorded(e, shared);
  });

  it('401 INVALID_SIGNATURE when signed with another secret', async () => {
    const config = cfg();
    const other = {
      ...config,
      callbacks: {
        ...config.callbacks,
        providers: { ...config.callbacks.providers, [e.provider]: { secret: 'another-secret-of-16+chars', ips: [] } },
      },
    };
    stack.config = other as typeof config;
    const sent = e.valid(shared);
    stack.config = config;
    const res = await post(stack.app, e.path, sent);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(callbackError('INVALID_SIGNATURE', 401));
    await expectNothingRecorded(e, shared);
  });

  it('400 INVALID_TIMESTAMP for a stale timestamp (older than CALLBACK_MAX_AGE_S)', async () => {
    const res = await post(
      stack.app,
      e.path,
      e.valid(shared, { offsetSeconds: -(cfg().callbacks.maxAgeSeconds + 30) }),
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual(callbackError('INVALID_TIMESTAMP', 400));
    await expectNothingRecorded(e, shared);
  });

  it('400 INVALID_TIMESTAMP for a timestamp more than 60 s in the future', async () => {
    const res = await post(stack.app, e.path, e.valid(shared, { offsetSeconds: 120 }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(callbackError('INVALID_TIMESTAMP', 400));
    await expectNothingRecorded(e, shared);
  });

  it('400 MISSING_FIELD for a verified callback without a required field', async () => {
    const { sent, field } = e.missing(shared);
    const res = await post(stack.app, e.path, sent);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, body: { error: 'MISSING_FIELD', message: field } });
    await expectNothingRecorded(e, shared);
  });

  it('404 ORDER_NOT_FOUND for a payment we do not have', async () => {
    const res = await post(stack.app, e.path, e.unknownOrder(shared));
    expect(res.status).toBe(404);
    expect(res.body).toEqual(callbackError('ORDER_NOT_FOUND', 404));
    await expectNothingRecorded(e, shared);
  });

  it('403 INVALID_IP from an address outside the allow-list, before anything else is looked at', async () => {
    const app = appWith({ [`PROVIDER_IPS_${e.provider}`]: '192.0.2.0/24,2001:db8::/32' });
    const res = await post(app, e.path, e.valid(shared));
    expect(res.status).toBe(403);
    expect(res.body).toEqual(callbackError('INVALID_IP', 403));
    await expectNothingRecorded(e, shared);
  });

  it('403 INVALID_IP for a spoofed X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const app = appWith({ [`PROVIDER_IPS_${e.provider}`]: '192.0.2.0/24' });
    const res = await post(app, e.path, e.valid(shared), { 'X-Forwarded-For': '192.0.2.10' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(callbackError('INVALID_IP', 403));
    await expectNothingRecorded(e, shared);
  });

  it('believes X-Forwarded-For from a trusted proxy, but only its right-most untrusted hop', async () => {
    const app = appWith({ [`PROVIDER_IPS_${e.provider}`]: '192.0.2.0/24', TRUSTED_PROXIES: '127.0.0.0/8' });
    const spoofed = await post(app, e.path, e.tampered(shared), { 'X-Forwarded-For': '192.0.2.10, 198.51.100.7' });
    expect(spoofed.body).toEqual(callbackError('INVALID_IP', 403));
    // through the proxy from an allowed address: past the allow-list, stopped by the signature
    const proxied = await post(app, e.path, e.tampered(shared), { 'X-Forwarded-For': '192.0.2.10' });
    expect(proxied.body).toEqual(callbackError('INVALID_SIGNATURE', 401));
    await expectNothingRecorded(e, shared);
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for another content type', async () => {
    const sent = e.valid(shared);
    const res = await post(stack.app, e.path, sent, {
      'Content-Type': sent.type === 'json' ? 'application/x-www-form-urlencoded' : 'application/json',
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const text = await post(stack.app, e.path, sent, { 'Content-Type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(text.body).toEqual(callbackError('UNSUPPORTED_MEDIA_TYPE', 415));
    await expectNothingRecorded(e, shared);
  });

  it('413 PAYLOAD_TOO_LARGE over BODY_LIMIT_KB', async () => {
    const app = appWith({ BODY_LIMIT_KB: '1' });
    const sent = e.valid(shared);
    const big =
      sent.type === 'json'
        ? { ...sent, raw: sent.raw.replace(/}$/, `,"pad":"${'x'.repeat(2048)}"}`) }
        : { ...sent, raw: `${sent.raw}&pad=${'x'.repeat(2048)}` };
    const res = await post(app, e.path, big);
    expect(res.status).toBe(413);
    expect(res.body).toEqual(callbackError('PAYLOAD_TOO_LARGE', 413));
    await expectNothingRecorded(e, shared);
  });

  it('400 INVALID_INPUT for a malformed body', async () => {
    const sent = e.valid(shared);
    // JSON that does not parse never reaches the signature check; a form parser is lenient, so
    // the form is a correctly signed one whose fields are garbage
    const broken =
      sent.type === 'json'
        ? { ...sent, raw: sent.raw.slice(0, -5) }
        : headerSigned(cfg(), e.provider, 'form', 'objectId[a]=%E0%A4%A&status=%%%&token=');
    const res = await post(stack.app, e.path, broken);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      body: {
        error: sent.type === 'json' ? 'INVALID_INPUT' : expect.stringMatching(/^(INVALID_INPUT|MISSING_FIELD)$/),
        message: expect.any(String),
      },
    });
    await expectNothingRecorded(e, shared);
  });
});

describe('endpoint-specific rules', () => {
  it('/callback sends the user on to the payment callback URL (303) with the order and status', async () => {
    const p = await cardPayment(stack, { callback: 'https://shop.example/thanks?from=card' });
    const res = await post(stack.app, '/callback', card.valid(p));
    expect(res.status).toBe(303);
    const to = new URL(res.headers.location);
    expect(`${to.origin}${to.pathname}`).toBe('https://shop.example/thanks');
    expect(Object.fromEntries(to.searchParams)).toEqual({ from: 'card', orderId: p.orderId, status: 'success' });
    const again = await post(stack.app, '/callback', card.valid(p));
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe(res.headers.location);
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  });

  it('/callback accepts the development test form (status, orderId, amount, transactionId)', async () => {
    const p = await cardPayment(stack);
    const sent = headerSigned(stack.config, 'CARD', 'form', {
      status: 'success',
      orderId: p.orderId,
      amount: String(p.amount),
      transactionId: 'txn-1',
    });
    const res = await post(stack.app, '/callback', sent);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      statusCode: 200,
      body: { message: 'Callback processed', orderId: p.orderId, status: 'success' },
    });
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  });

  it('/callback refuses the development test form in production (the card form is required)', async () => {
    const env: Record<string, string> = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://talat@db:5432/talat',
      TEMPORAL_ADDRESS: 'temporal:7233',
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      STOREFRONT_KEY_SECRET: 's'.repeat(32),
      IDENTITY_SECRET: 'i'.repeat(32),
      RESULT_SIGNING_KEY: 'r'.repeat(32),
      TEMPORAL_CODEC_KEYS: `k1:${'c'.repeat(64)}`,
    };
    for (const n of ['CARD', 'CARDNET', 'BANKAPP', 'QR', 'WALLET']) {
      env[`PROVIDER_SECRET_${n}`] = stack.config.callbacks.providers[n as ProviderName].secret;
      env[`PROVIDER_IPS_${n}`] = '127.0.0.0/8';
    }
    const production = appWith(env);
    const p = await cardPayment(stack);
    const sent = headerSigned(stack.config, 'CARD', 'form', {
      status: 'success',
      orderId: p.orderId,
      amount: String(p.amount),
      transactionId: 'txn-1',
    });
    const res = await post(production, '/callback', sent);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, body: { error: 'MISSING_FIELD', message: 'objectId is required' } });
    expect(await receiptsOf(stack, p.paymentId)).toHaveLength(0);
  });

  it.each(['/qrcallback', '/walletcallback', '/cardnetcallback'])(
    '%s refuses an amount that is not the payment amount',
    async (path) => {
      const p = await cardPayment(stack);
      const e = ENDPOINTS.find((x) => x.path === path)!;
      const right = JSON.parse(e.valid(p).raw);
      const sent = e.store
        ? headerSigned(stack.config, e.provider, 'json', { ...right, amount: p.amount + 0.01 })
        : fieldSigned(stack.config, e.provider, {
            ...right,
            signature: undefined,
            timestamp: undefined,
            amount: p.amount + 0.01,
          });
      const res = await post(stack.app, path, sent);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        body: { error: 'INVALID_INPUT', message: 'amount does not match the payment amount' },
      });
      expect(await receiptsOf(stack, p.paymentId)).toHaveLength(0);
    },
  );

  it("/qrcallback refuses a payment id that is not the order's payment (ORDER_NOT_FOUND)", async () => {
    const p = await cardPayment(stack);
    const res = await post(
      stack.app,
      '/qrcallback',
      fieldSigned(stack.config, 'QR', {
        paymentId: 'pay_other',
        status: 'success',
        amount: p.amount,
        orderId: p.orderId,
      }),
    );
    expect(res.status).toBe(404);
    expect(res.body).toEqual(callbackError('ORDER_NOT_FOUND', 404));
  });

  it('/qrcallback without a signature is MISSING_FIELD and never accepted', async () => {
    const p = await cardPayment(stack);
    const { signature: _s, ...unsigned } = JSON.parse(
      fieldSigned(stack.config, 'QR', {
        paymentId: p.paymentId,
        status: 'success',
        amount: p.amount,
        orderId: p.orderId,
      }).raw,
    );
    const res = await post(stack.app, '/qrcallback', { type: 'json', raw: JSON.stringify(unsigned), headers: {} });
    expect(res.body).toEqual({ statusCode: 400, body: { error: 'MISSING_FIELD', message: 'signature is required' } });
    expect(await receiptsOf(stack, p.paymentId)).toHaveLength(0);
  });

  it('header-signed endpoints without X-Signature or X-Timestamp are refused', async () => {
    const p = await cardPayment(stack);
    const sent = card.valid(p);
    const noSig = await post(stack.app, '/callback', {
      ...sent,
      headers: { 'X-Timestamp': sent.headers['X-Timestamp'] },
    });
    expect(noSig.body).toEqual(callbackError('INVALID_SIGNATURE', 401));
    const noTs = await post(stack.app, '/callback', {
      ...sent,
      headers: { 'X-Signature': sent.headers['X-Signature'] },
    });
    expect(noTs.body).toEqual(callbackError('INVALID_TIMESTAMP', 400));
    expect(await receiptsOf(stack, p.paymentId)).toHaveLength(0);
  });

  it('card network: a success that is the string "true" is recorded but processes nothing', async () => {
    const p = await cardPayment(stack);
    const sent = headerSigned(stack.config, 'CARDNET', 'json', {
      orderId: p.orderId,
      paymentId: p.paymentId,
      success: 'true',
      userId: 'u-1',
    });
    const res = await post(stack.app, '/cardnetcallback', sent);
    expect(res.status).toBe(200);
    expect(res.body.body).toMatchObject({ orderId: p.orderId, status: 'unprocessed' });
    expect(await stack.db('cardnet_callbacks').where({ order_id: p.orderId }).first()).toMatchObject({
      success: false,
      amount_satang: '0',
      message: '',
    });
    expect(await receiptsOf(stack, p.paymentId)).toEqual([
      expect.objectContaining({ status: 'unprocessed', outcome: 'recorded' }),
    ]);
    expect(await signalsOf(stack, p.workflowId)).toBe(0);
    expect((await stack.db('payments').where({ id: p.paymentId }).first()).status).toBe('pending');
  });

  it('card network: the receipt and the record are finished by one statement (2 round trips, no transaction)', async () => {
    const p = await cardPayment(stack);
    const queries: { sql: string; inTransaction: boolean }[] = [];
    const onQuery = (q: { sql: string; __knexTxId?: string }) =>
      queries.push({ sql: q.sql, inTransaction: q.__knexTxId !== undefined });
    stack.db.on('query', onQuery);
    try {
      const body = JSON.stringify({ order_id: p.orderId, payment_id: p.paymentId, success: true, user_id: 'u-9' });
      const res = await post(stack.app, '/cardnetcallback', headerSigned(stack.config, 'CARDNET', 'json', body));
      expect(res.status).toBe(200);
    } finally {
      stack.db.off('query', onQuery);
    }
    // the lookup that claims the receipt, then the finish with its record: nothing else, no BEGIN
    // (the worker's activities share this pool, so their statements are left out)
    const own = queries.filter((q) => /callback_receipts|cardnet_callbacks/.test(q.sql));
    expect(own).toHaveLength(2);
    expect(own.some((q) => q.inTransaction)).toBe(false);
    expect(own.at(-1)!.sql).toMatch(
      /^WITH finished AS \(UPDATE callback_receipts[\s\S]*insert into "cardnet_callbacks"/,
    );
    expect(await stack.db('cardnet_callbacks').where({ order_id: p.orderId }).first()).toMatchObject({
      payment_id: p.paymentId,
      user_id: 'u-9',
      success: true,
    });
    expect(await receiptsOf(stack, p.paymentId)).toEqual([expect.objectContaining({ outcome: 'signalled' })]);
  });

  it('a record joined to a finish is written only when the receipt is (none finished: nothing written)', async () => {
    const orderId = uniq('ORD');
    const e = {
      orderId,
      paymentId: 'pay_x',
      success: true,
      succeeded: true,
      userId: 'u-1',
      amountSatang: 500,
      amount: 5,
      message: 'm',
    };
    const run = (finished: string) => {
      const r = handlerRecordFrom('finished', 'bankapp_callbacks', e, { a: 1 }, { b: 2 });
      return stack.db.raw(`WITH finished AS (${finished}), recorded AS (${r.sql}) SELECT 1`, r.bindings);
    };
    await run('SELECT 1 WHERE false');
    expect(await stack.db('bankapp_callbacks').where({ order_id: orderId })).toHaveLength(0);
    await run('SELECT 1');
    expect(await stack.db('bankapp_callbacks').where({ order_id: orderId }).first()).toMatchObject({
      payment_id: 'pay_x',
      success: true,
      user_id: 'u-1',
      message: 'm',
      amount_satang: '500',
      event: { a: 1 },
      body: { b: 2 },
    });
    expect(() => handlerRecordFrom('x; drop table payments', 'bankapp_callbacks', e, null, null)).toThrow(/CTE name/);
  });

  it('bank app: the handler form as a JSON string, wrapped under body, with aliases', async () => {
    const p = await cardPayment(stack);
    const event = {
      body: JSON.stringify({ order_id: p.orderId, payment_id: p.paymentId, success: true, user_id: 'u-7' }),
    };
    const res = await post(
      stack.app,
      '/bankappcallback',
      headerSigned(stack.config, 'BANKAPP', 'json', JSON.stringify(JSON.stringify(event))),
    );
    expect(res.status).toBe(200);
    const row = await stack.db('bankapp_callbacks').where({ order_id: p.orderId }).first();
    expect(row).toMatchObject({
      payment_id: p.paymentId,
      user_id: 'u-7',
      success: true,
      event,
      body: JSON.parse(event.body),
    });
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  });

  it('a callback for a payment that has ended is recorded and answered, and changes nothing', async () => {
    const p = await cardPayment(stack);
    expect((await post(stack.app, '/qrcallback', ENDPOINTS[3].valid(p))).status).toBe(200);
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
    const res = await post(stack.app, '/walletcallback', ENDPOINTS[4].valid(p));
    expect(res.status).toBe(200);
    expect(res.body.body).toEqual({
      message: 'Callback recorded; the payment had already ended',
      orderId: p.orderId,
      status: 'success',
    });
    expect(await receiptsOf(stack, p.paymentId)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ provider: 'qr', outcome: 'signalled' }),
        expect.objectContaining({ provider: 'wallet', outcome: 'payment_closed' }),
      ]),
    );
  });

  it("a pending payment whose workflow was terminated: the callback is re-driven, not 'ended'", async () => {
    const p = await cardPayment(stack);
    await stack.client.workflow.getHandle(p.workflowId).terminate('test: closed by hand');
    const res = await post(stack.app, '/qrcallback', ENDPOINTS[3].valid(p));
    expect(res.status).toBe(200);
    expect(res.body.body).toEqual({ message: 'Callback processed', orderId: p.orderId, status: 'success' });
    expect(await receiptsOf(stack, p.paymentId)).toEqual([expect.objectContaining({ outcome: 'redriven' })]);
    await waitFor(async () => (await stack.db('payments').where({ id: p.paymentId }).first()).status === 'paid');
  });

  it('Temporal cannot take the signal: answered once the receipt is committed, and a gateway delivers it again after the lease', async () => {
    const p = await cardPayment(stack);
    const connection = Connection.lazy({ address: '127.0.0.1:1' });
    const down = createApp({
      config: stack.config,
      db: stack.db,
      temporal: { client: new Client({ connection }), taskQueue: stack.taskQueue },
      logger: testLogger,
    });
    let first;
    try {
      first = await post(down, '/qrcallback', ENDPOINTS[3].valid(p));
      expect(first.status).toBe(200);
      expect(first.body.body).toEqual({ message: 'Callback processed', orderId: p.orderId, status: 'success' });
      await down.stop(); // its signal failed after the answer
    } finally {
      await connection.close().catch(() => undefined);
    }
    const [receipt] = await receiptsOf(stack, p.paymentId);
    expect(receipt).toMatchObject({ outcome: null });
    expect(await signalsOf(stack, p.workflowId)).toBe(0);
    expect((await stack.db('payments').where({ id: p.paymentId }).first()).status).toBe('pending');

    // the lease passes; a gateway's redelivery sends the signal from the receipt alone
    await stack
      .db('callback_receipts')
      .where({ id: receipt.id })
      .update({ created_at: stack.db.raw("now() - interval '1 hour'") });
    const up = createApp({
      config: { ...stack.config, callbacks: { ...stack.config.callbacks, redeliveryMs: 100 } },
      db: stack.db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
    });
    try {
      await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
      await waitFor(async () => (await receiptsOf(stack, p.paymentId))[0].outcome === 'signalled');
    } finally {
      await up.stop();
    }
    expect(await receiptsOf(stack, p.paymentId)).toEqual([
      expect.objectContaining({ id: receipt.id, outcome: 'signalled', response_status: 200 }),
    ]);
    expect(await signalsOf(stack, p.workflowId)).toBe(1);
    // the provider's retry now gets the answer it already had
    expect((await post(stack.app, '/qrcallback', ENDPOINTS[3].valid(p))).text).toBe(first.text);
  });

  it('50 identical callbacks at once: one receipt, one signal, fifty identical first responses', async () => {
    const p = await cardPayment(stack);
    const sent = ENDPOINTS[3].valid(p);
    const responses = await Promise.all(Array.from({ length: 50 }, () => post(stack.app, '/qrcallback', sent)));
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1); // byte for byte
    expect(await receiptsOf(stack, p.paymentId)).toHaveLength(1);
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
    expect(await signalsOf(stack, p.workflowId)).toBe(1);
  });

  it('a payment settled the other way while the signal was on its way: answered processed (Temporal took it), the receipt a conflict, which a retry gets', async () => {
    const p = await cardPayment(stack);
    // Temporal takes the signal, but the workflow had decided `expired` meanwhile (its row says so)
    const workflow = Object.create(stack.client.workflow) as Client['workflow'];
    workflow.getHandle = ((...a: Parameters<Client['workflow']['getHandle']>) =>
      Object.assign(Object.create(stack.client.workflow.getHandle(...a)) as object, {
        signal: async () => {
          await stack.db('payments').where({ id: p.paymentId }).update({ status: 'expired' });
        },
      })) as unknown as Client['workflow']['getHandle'];
    const app = createApp({
      config: stack.config,
      db: stack.db,
      temporal: {
        client: Object.assign(Object.create(stack.client) as Client, { workflow }),
        taskQueue: stack.taskQueue,
      },
      logger: testLogger,
    });
    const res = await post(app, '/qrcallback', ENDPOINTS[3].valid(p));
    expect(res.status).toBe(200);
    // answered once Temporal took the signal; the receipt's finish, after the answer, finds the row expired
    expect(res.body.body.message).toBe('Callback processed');
    await app.idle();
    expect(await receiptsOf(stack, p.paymentId)).toEqual([expect.objectContaining({ outcome: 'conflict' })]);
    const retry = await post(app, '/qrcallback', ENDPOINTS[3].valid(p));
    expect(retry.body.body.message).toMatch(/^Callback recorded as a conflict: the payment had already ended expired/);
  });

  /** A receipt claimed by a delivery that has not finished (no outcome yet), as the processor writes it. */
  const unfinishedReceipt = (p: TestPayment, id: string, ageSeconds: number) =>
    stack.db('callback_receipts').insert({
      id,
      provider: 'qr',
      payment_id: p.paymentId,
      order_id: p.orderId,
      status: 'success',
      source_ip: '127.0.0.1',
      request: '{}',
      created_at: stack.db.raw(`now() - ? * interval '1 second'`, [ageSeconds]),
    });

  it('a duplicate that finds the first delivery still under way waits for it and gets its response, signalling nothing', async () => {
    const p = await cardPayment(stack);
    const id = uniq('evt');
    await unfinishedReceipt(p, id, 0);
    const first = { statusCode: 200, body: { message: 'the first delivery answered this', orderId: p.orderId } };
    // sent now (supertest sends on then()), answered only once that delivery finished
    const pending = post(stack.app, '/qrcallback', ENDPOINTS[3].valid(p)).then((r) => r);
    await new Promise((r) => setTimeout(r, 300));
    await stack
      .db('callback_receipts')
      .where({ id })
      .update({ outcome: 'signalled', response_status: 200, response_body: JSON.stringify(first) });
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.text).toBe(JSON.stringify(first));
    expect(await receiptsOf(stack, p.paymentId)).toEqual([expect.objectContaining({ id })]);
    expect(await signalsOf(stack, p.workflowId)).toBe(0);
  });

  it('a delivery left unfinished longer than the lease (its gateway died) is taken over by the retry, with the same receipt', async () => {
    const p = await cardPayment(stack);
    const id = uniq('evt');
    await unfinishedReceipt(p, id, 3600);
    const res = await post(stack.app, '/qrcallback', ENDPOINTS[3].valid(p));
    expect(res.status).toBe(200);
    expect(res.body.body).toEqual({ message: 'Callback processed', orderId: p.orderId, status: 'success' });
    expect(await receiptsOf(stack, p.paymentId)).toEqual([
      expect.objectContaining({ id, outcome: 'signalled', response_status: 200 }),
    ]);
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
    expect(await signalsOf(stack, p.workflowId)).toBe(1);
    // and its duplicate now gets that response
    const again = await post(stack.app, '/qrcallback', ENDPOINTS[3].valid(p));
    expect(again.text).toBe(res.text);
  });
});
