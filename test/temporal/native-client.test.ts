/**
 * The process's Temporal client is on a NativeConnection (connectClient: Core's gRPC client). It
 * differs from grpc-js where Temporal goes away: the SDK does not cancel a native call on an
 * AbortSignal, and Core retries a refused call for about 10 s. Here the gateway's own client goes
 * through a TCP relay to the test server, which is then made to hang (connections accepted, nothing
 * answered) or to refuse, and comes back: every call that needs Temporal is a 503 in its envelope
 * within the gateway's bounds (never a hang, never a 500), nothing is left half-written, and once
 * Temporal answers again the same client works without a restart.
 */
import net from 'node:net';
import { NativeConnection } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import { createApp } from '../../src/http/app';
import { connectClient, CONNECT_TIMEOUT_MS } from '../../src/temporal/client';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';
import { fieldSigned, post, receiptsOf } from '../callbacks/helpers';
import { newKey, paymentError, request, rowOf } from '../payments/support';

/** A TCP relay to `target` that can be told to hang (accept, never answer) or to refuse. */
async function relay(target: number) {
  const sockets = new Set<net.Socket>();
  let mode: 'forward' | 'hang' = 'forward';
  let server: net.Server | undefined;
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  };
  const cut = () => sockets.forEach((s) => s.destroy());
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = net.createServer((c) => {
        track(c);
        if (mode === 'hang') return;
        const up = net.connect(target, '127.0.0.1');
        track(up);
        c.pipe(up).pipe(c);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server!.address() as net.AddressInfo).port));
    });
  const port = await listen(0);
  return {
    port,
    hang() {
      mode = 'hang';
      cut(); // the client's connection is gone; its reconnection is accepted and never answered
    },
    async refuse() {
      const closed = new Promise((r) => server!.close(r));
      cut();
      await closed;
    },
    async restore() {
      mode = 'forward';
      cut();
      if (!server!.listening) await listen(port);
    },
    async close() {
      const closed = server!.listening ? new Promise((r) => server!.close(r)) : Promise.resolve();
      cut();
      await closed;
    },
  };
}

let stack: TestStack;
let app: Koa;
let client: Client;
let link: Awaited<ReturnType<typeof relay>>;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  const [, port] = process.env.TALAT_TEST_TEMPORAL_ADDRESS!.split(':');
  link = await relay(Number(port));
  client = await connectClient(`127.0.0.1:${link.port}`, 'default', { codecKeys: stack.config.temporal.codecKeys });
  // the stack's worker runs the payments; only the gateway's client goes through the relay
  app = createApp({
    config: stack.config,
    db: stack.db,
    temporal: { client, taskQueue: stack.taskQueue },
    logger: testLogger,
  });
  key = (await newKey(stack.db)).key;
});
afterAll(async () => {
  await client?.connection.close().catch(() => undefined);
  await link?.close();
  await stack?.close();
});

const createQr = (orderId: string) =>
  request(app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount: 3, customerId: 'c' });

/** a payment created while Temporal answered, and its signed QR callback */
async function pendingPayment() {
  const orderId = uniq('native');
  const created = await createQr(orderId);
  expect(created.status).toBe(200);
  const paymentId = created.body.body.paymentId as string;
  return {
    orderId,
    paymentId,
    callback: () =>
      post(app, '/qrcallback', fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 3, orderId })),
  };
}

/** The gateway's bounds: its probe decides within PROBE_AFTER_MS + 2 s; the signal's own deadline is 5 s. */
const BOUND_MS = 6_500;

it('connectClient makes a NativeConnection', () => {
  expect(client.connection).toBeInstanceOf(NativeConnection);
});

describe.each([
  ['hangs (connections accepted, never answered)', () => link.hang()],
  ['refuses connections', () => link.refuse()],
])('Temporal %s', (_name, goDown) => {
  let pending: Awaited<ReturnType<typeof pendingPayment>>;
  beforeAll(async () => {
    await link.restore();
    pending = await pendingPayment();
    await goDown();
  });
  afterAll(() => link.restore());

  it('POST /qrpayment -> 503 in its envelope, within bounds, and no row left', async () => {
    const orderId = uniq('native-down');
    const started = Date.now();
    const res = await createQr(orderId);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(paymentError('SERVICE_UNAVAILABLE', { service: 'temporal' }));
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(await rowOf(stack.db, orderId)).toBeUndefined();
  });

  it('GET /checkstatus of a payment -> an answer, never a hang', async () => {
    const started = Date.now();
    const res = await request(app.callback()).get(`/checkstatus/${pending.orderId}`).set('X-API-Key', key);
    expect([200, 503]).toContain(res.status); // Postgres alone may answer it
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  });

  it('a signed callback of an existing payment -> 503, and its receipt undone for the retry', async () => {
    const started = Date.now();
    const res = await pending.callback();
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(await receiptsOf(stack, pending.paymentId)).toEqual([]);
    expect((await rowOf(stack.db, pending.orderId)).status).toBe('pending');
  });

  it('Temporal back: the same client works again, and the retried callback pays', async () => {
    await link.restore();
    const deadline = Date.now() + 30_000;
    let res = await pending.callback();
    while (res.status === 503 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      res = await pending.callback();
    }
    expect(res.status).toBe(200);
    expect((await createQr(uniq('native-back'))).status).toBe(200);
  });
});

it('connectClient tries again a frontend that resets its first connections (one still starting), and fails at once on a refused port', async () => {
  const [, port] = process.env.TALAT_TEST_TEMPORAL_ADDRESS!.split(':');
  let resets = 3;
  const starting = net.createServer((c) => {
    c.on('error', () => undefined);
    if (resets-- > 0) return c.resetAndDestroy();
    const up = net.connect(Number(port), '127.0.0.1');
    up.on('error', () => undefined);
    c.pipe(up).pipe(c);
  });
  await new Promise<void>((r) => starting.listen(0, '127.0.0.1', r));
  const address = `127.0.0.1:${(starting.address() as net.AddressInfo).port}`;
  const late = await connectClient(address, 'default');
  try {
    expect(resets).toBeLessThan(0);
    await expect(late.workflowService.getSystemInfo({})).resolves.toBeDefined();
  } finally {
    await late.connection.close();
  }
  await new Promise((r) => starting.close(r));
  const started = Date.now();
  await expect(connectClient(address, 'default')).rejects.toThrow(/refused/i);
  expect(Date.now() - started).toBeLessThan(2_000);
});

it('connectClient gives up on a frontend that accepts and never answers', async () => {
  const held = new Set<net.Socket>();
  const hole = net.createServer((s) => held.add(s));
  await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
  try {
    const started = Date.now();
    await expect(connectClient(`127.0.0.1:${(hole.address() as net.AddressInfo).port}`, 'default')).rejects.toThrow(
      /no connection within/,
    );
    expect(Date.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS + 2_000);
  } finally {
    // the connection attempt still pending in Core then fails, and is not left to hold the process
    held.forEach((s) => s.destroy());
    await new Promise((r) => hole.close(r));
  }
}, 20_000);
