/**
 * Postgres or Temporal really unreachable (nothing listens on their port, or a port that accepts
 * and never answers): every API answers 503 SERVICE_UNAVAILABLE in its own envelope, never a 500,
 * and /readyz answers (with a timeout on each check) instead of hanging.
 */
import net from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type Koa from 'koa';
import request from 'supertest';
import { createDb, type Db } from '../../src/db/knex';
import { claimBankObject } from '../../src/bank/owners';
import { createApp } from '../../src/app/app';
import { isDatabaseUnavailable, toAppError } from '../../src/http/errors';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';
import { fieldSigned, post } from '../callbacks/helpers';
import { newKey } from '../payments/support';

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** A port that accepts connections and never answers (a hung dependency). */
async function blackHole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const s = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return {
    port: (s.address() as net.AddressInfo).port,
    close: async () => {
      sockets.forEach((x) => x.destroy());
      await new Promise((resolve) => s.close(resolve));
    },
  };
}

const paymentEnvelope = {
  statusCode: 503,
  body: { error: expect.any(String), code: 'SERVICE_UNAVAILABLE', details: expect.any(Object) },
};
const callbackEnvelope = { statusCode: 503, body: { error: 'SERVICE_UNAVAILABLE', message: expect.any(String) } };

let stack: TestStack;
let key: string;
const bankUser = uniq('u');
/**
 * Temporal clients of dead ports. They are not closed: the SDK's gRPC retry timers outlive the
 * calls the gateway gave up on, and a retry on a closed channel throws outside any test.
 */
const connections: Connection[] = [];
/** and what they talked to, after them */
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  const created = await newKey(stack.db);
  key = created.key;
  // the key's own bank user: another key's (or nobody's) is 404 before Temporal is asked
  await claimBankObject(stack.db, 'user', 'sandbox', bankUser, created.id);
});
afterAll(async () => {
  // /readyz does not wait for a client's own connect attempt (up to connectTimeout): let it end
  await Promise.all(connections.map((c) => c.ensureConnected().catch(() => undefined)));
  for (const c of cleanups) await c();
  await stack.close();
});

/** One request of each API: payment, bank, webhook endpoints, storefront, callback. */
const eachApi = (key: () => string, config: () => TestStack['config']) =>
  [
    [
      'payment API: POST /qrpayment',
      (app: Koa) =>
        request(app.callback())
          .post('/qrpayment')
          .set('X-API-Key', key())
          .send({ orderId: uniq('o'), userId: 'u', amount: 1, customerId: 'c' }),
      paymentEnvelope,
    ],
    [
      'bank API: GET /bank/user/{id}',
      (app: Koa) => request(app.callback()).get(`/bank/user/${bankUser}`).set('X-API-Key', key()),
      paymentEnvelope,
    ],
    [
      'webhook-endpoint API: POST /webhooks/endpoints',
      (app: Koa) =>
        request(app.callback())
          .post('/webhooks/endpoints')
          .set('X-API-Key', key())
          .send({ url: 'http://127.0.0.1:9/hook' }),
      paymentEnvelope,
    ],
    [
      'storefront: GET /api/inventory2/{branchId}',
      (app: Koa) => request(app.callback()).get('/api/inventory2/B001?timestamp=1795334634576'),
      paymentEnvelope,
    ],
    [
      'callback API: POST /qrcallback (signed)',
      (app: Koa) =>
        post(
          app,
          '/qrcallback',
          fieldSigned(config(), 'QR', {
            paymentId: 'pay_0123456789abcdef0123456789abcdef',
            orderId: uniq('o'),
            status: 'success',
            amount: 1,
          }),
        ),
      callbackEnvelope,
    ],
  ] as const;

describe('the one classification of the error handler', () => {
  const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  it.each([
    ['a refused connection', refused(), 'postgres'],
    [
      'an AggregateError of refused connections (IPv4 and IPv6)',
      new AggregateError([refused(), refused()]),
      'postgres',
    ],
    ['a wrapped termination (57P01)', new Error('query failed', { cause: { code: '57P01' } }), 'postgres'],
    [
      "knex's pool timeout",
      Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' }),
      'postgres',
    ],
    [
      'a gRPC UNAVAILABLE',
      Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }),
      'temporal',
    ],
    ['a gRPC DEADLINE_EXCEEDED, wrapped', new Error('call failed', { cause: { code: 4 } }), 'temporal'],
    [
      'a gRPC CANCELLED (the server ended a call past its deadline), in a ServiceError',
      Object.assign(new Error('Failed to signal Workflow'), {
        name: 'ServiceError',
        cause: Object.assign(new Error('1 CANCELLED: Call cancelled'), { code: 1, details: 'Call cancelled' }),
      }),
      'temporal',
    ],
  ])('%s -> 503 with details.service', (_name, e, service) => {
    const { error } = toAppError(e);
    expect(error.status).toBe(503);
    expect(error.details).toEqual({ service });
    expect(error.headers).toEqual({ 'Retry-After': '5' });
  });

  it('anything else stays a 500', () => {
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(toAppError(Object.assign(new Error('exit'), { code: 1 })).error.status).toBe(500); // not a gRPC status
    expect(toAppError(new TypeError('x is undefined')).error.status).toBe(500);
  });
});

describe.each([
  ['nothing listens on its port', 'closed'],
  ['its port accepts and never answers', 'hung'],
] as const)('Postgres down: %s', (_what, kind) => {
  let db: Db;
  let app: Koa;
  let hole: { port: number; close(): Promise<void> } | undefined;
  beforeAll(async () => {
    let port: number;
    if (kind === 'closed') port = await closedPort();
    else {
      hole = await blackHole();
      port = hole.port;
    }
    db = createDb(`postgres://talat:x@127.0.0.1:${port}/talat`, { acquireTimeoutMs: 1_000 });
    app = createApp({
      config: stack.config,
      db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
    });
  });
  afterAll(async () => {
    await db.destroy();
    await hole?.close();
  });

  it.each(
    eachApi(
      () => key,
      () => stack.config,
    ),
  )('%s -> 503 in its envelope', async (_name, send, envelope) => {
    const res = await send(app);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(envelope);
  });

  it('GET /readyz -> 503 naming postgres unreachable', async () => {
    const res = await request(app.callback()).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.body.details.checks).toEqual({ postgres: 'unreachable', temporal: 'ok' });
  });
});

describe('Temporal down: nothing listens on its port', () => {
  let app: Koa;
  let connection: Connection;
  beforeAll(async () => {
    connection = Connection.lazy({ address: `127.0.0.1:${await closedPort()}`, connectTimeout: '1s' });
    connections.push(connection);
    app = createApp({
      config: stack.config,
      db: stack.db,
      temporal: { client: new Client({ connection }), taskQueue: 'x' },
      logger: testLogger,
    });
  });

  it.each(
    eachApi(
      () => key,
      () => stack.config,
    ).filter(([name]) => !name.startsWith('storefront')),
  )('%s -> 503 in its envelope, or an answer that needs no Temporal', async (name, send, envelope) => {
    const res = await send(app);
    if (name.startsWith('webhook-endpoint')) {
      expect(res.status).toBe(201); // registering an endpoint needs only Postgres
      return;
    }
    if (name.startsWith('callback')) {
      // no such order: answered from Postgres alone, before Temporal is asked
      expect(res.status).toBe(404);
      return;
    }
    expect(res.status).toBe(503);
    expect(res.body).toEqual(envelope);
  });

  it('GET /readyz -> 503 naming temporal unreachable', async () => {
    const res = await request(app.callback()).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.body.details.checks).toEqual({ postgres: 'ok', temporal: 'unreachable' });
  });
});

describe('/readyz with both dependencies hung', () => {
  it('answers 503 (each check has its own timeout) instead of waiting for them', async () => {
    const pg = await blackHole();
    const temporal = await blackHole();
    const db = createDb(`postgres://talat:x@127.0.0.1:${pg.port}/talat`, { acquireTimeoutMs: 2_000 });
    // connect timeout longer than this test may take (a hang, not a speed figure): /readyz must not wait for it
    const connection = Connection.lazy({ address: `127.0.0.1:${temporal.port}`, connectTimeout: '12s' });
    connections.push(connection);
    cleanups.push(
      () => db.destroy(),
      () => pg.close(),
      () => temporal.close(),
    );
    const app = createApp({
      config: stack.config,
      db,
      temporal: { client: new Client({ connection }), taskQueue: 'x' },
      logger: testLogger,
    });
    const res = await request(app.callback()).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.body.details.checks).toEqual({ postgres: 'unreachable', temporal: 'unreachable' });
  }, 8_000);
});
