/**
 * End to end on the real stack: a QR payment made with a sandbox key, paid by the sandbox QR
 * provider (the simulator posts a signed /qrcallback from loopback), the workflow settles paid,
 * and the webhook reaches a receiver that checks its signature. A receiver that is down gets the
 * first attempt and three retries 1 s, 2 s and 4 s apart (measured from its own log), then the
 * delivery is a dead letter, which an operator lists and replays.
 */
import request from 'supertest';
import { startCallbackSimulator, type CallbackSimulator } from '../../src/simulators/callbacks';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';
import { serveApp } from '../support/servers';
import { waitFor } from '../callbacks/helpers';
import { apiKey, deliveriesSettled, registerEndpoint, startReceiver, type Receiver } from './helpers';

let stack: TestStack;
let gateway: Awaited<ReturnType<typeof serveApp>>;
let simulator: CallbackSimulator;
const receivers: Receiver[] = [];
beforeAll(async () => {
  stack = await createTestStack();
  gateway = await serveApp(stack.app);
  const gatewayUrl = gateway.url;
  simulator = startCallbackSimulator({
    db: stack.db,
    config: stack.config,
    logger: testLogger,
    gatewayUrl,
    since: new Date(),
    pollMs: 100,
    quickDelayMs: 200,
  });
});
afterAll(async () => {
  await simulator.stop();
  await gateway.close();
  await stack.close();
  for (const r of receivers) await r.stop();
});

async function qrPayment(key: string, amount: number) {
  const orderId = uniq('ord');
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount, customerId: 'c-1' });
  expect(res.status).toBe(200);
  return { orderId, paymentId: res.body.body.paymentId as string };
}

it('QR payment -> simulator pays -> /qrcallback -> paid -> signed webhook received', async () => {
  const receiver = await startReceiver(200);
  receivers.push(receiver);
  const key = await apiKey(stack);
  const endpoint = await registerEndpoint(stack, key.key, { url: receiver.url });

  const { orderId, paymentId } = await qrPayment(key.key, 55);
  const hook = await waitFor(async () => receiver.log.find((r) => r.body.includes(orderId)), 20_000, 'webhook');

  expect(receiver.verified(hook, endpoint.secret)).toBe(true);
  expect(hook.headers['webhook-id']).toMatch(/^msg_/);
  const body = JSON.parse(hook.body);
  expect(body).toEqual({
    event: 'payment.status.updated',
    type: 'payment.paid',
    data: { orderId, status: 'paid', amount: 55, timestamp: expect.any(String), paymentId, mode: 'sandbox' },
  });
  expect(new Date(body.data.timestamp).toISOString()).toBe(body.data.timestamp);
  expect(await stack.db('payments').where({ id: paymentId }).first()).toMatchObject({ status: 'paid' });
  await stack.app.idle(); // the receipt is finished after the callback's answer
  expect(await stack.db('callback_receipts').where({ payment_id: paymentId })).toEqual([
    expect.objectContaining({ provider: 'qr', status: 'success', outcome: 'signalled', source_ip: '127.0.0.1' }),
  ]);
  // the receiver answered; the attempt is recorded once the delivery workflow has seen the answer
  expect(await deliveriesSettled(stack, paymentId, 'paid')).toEqual([
    expect.objectContaining({ state: 'delivered', attempts: 1 }),
  ]);
  expect(await stack.db('webhook_deliveries').where({ payment_id: paymentId }).first()).toMatchObject({
    id: hook.headers['webhook-id'],
    state: 'delivered',
    attempts: 1,
  });
});

it('receiver down: first attempt, retries after 1 s, 2 s, 4 s, a dead letter; replay delivers it', async () => {
  const receiver = await startReceiver(503);
  receivers.push(receiver);
  const key = await apiKey(stack);
  const endpoint = await registerEndpoint(stack, key.key, { url: receiver.url });

  const { orderId, paymentId } = await qrPayment(key.key, 66);
  await waitFor(
    async () => (receiver.log.filter((r) => r.body.includes(orderId)).length >= 4 ? true : undefined),
    30_000,
    'four attempts',
  );
  const dead = await waitFor<{ id: string; delivery_id: string }>(
    () =>
      stack
        .db('webhook_dead_letters as l')
        .join('webhook_deliveries as d', 'd.id', 'l.delivery_id')
        .where('d.payment_id', paymentId)
        .first('l.*'),
    10_000,
    'dead letter',
  );

  const attempts = receiver.log.filter((r) => r.body.includes(orderId));
  expect(attempts).toHaveLength(4);
  expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1); // one message, four tries
  expect(attempts.every((a) => receiver.verified(a, endpoint.secret))).toBe(true);
  const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i].at);
  gaps.forEach((gap, i) => {
    const planned = [1000, 2000, 4000][i];
    expect(gap).toBeGreaterThanOrEqual(planned - 20);
    expect(gap).toBeLessThan(planned + 1000);
  });
  testLogger.info({ gaps }, 'retry spacing');

  const api = () => request(stack.app.callback());
  const listed = await api().get('/webhooks/dead-letters').set('X-API-Key', key.key);
  expect(listed.status).toBe(200);
  expect(listed.body.body.deadLetters).toEqual([
    expect.objectContaining({
      id: dead.id,
      messageId: attempts[0].headers['webhook-id'],
      endpointId: endpoint.id,
      paymentId,
      orderId,
      status: 'dead',
      state: 'retrying',
      nextAttemptAt: expect.any(String),
      attempts: 4,
      lastStatusCode: 503,
      event: {
        event: 'payment.status.updated',
        type: 'payment.paid',
        data: { orderId, status: 'paid', amount: 66, timestamp: expect.any(String), paymentId, mode: 'sandbox' },
      },
    }),
  ]);
  const stranger = await apiKey(stack);
  expect((await api().post(`/webhooks/dead-letters/${dead.id}/replay`).set('X-API-Key', stranger.key)).status).toBe(
    404,
  );

  // still down: the replay is one more failed attempt, the letter stays dead
  const failed = await api().post(`/webhooks/dead-letters/${dead.id}/replay`).set('X-API-Key', key.key);
  expect(failed.status).toBe(200);
  expect(failed.body.body).toMatchObject({
    attempt: { ok: false, statusCode: 503 },
    deadLetter: { status: 'dead', replays: 1 },
  });

  receiver.status = 200;
  const replayed = await api().post(`/webhooks/dead-letters/${dead.id}/replay`).set('X-API-Key', key.key);
  expect(replayed.status).toBe(200);
  expect(replayed.body.body).toMatchObject({
    attempt: { ok: true, statusCode: 200 },
    deadLetter: {
      id: dead.id,
      status: 'delivered',
      state: 'delivered',
      nextAttemptAt: null,
      replays: 2,
      deliveredAt: expect.any(String),
    },
  });
  const last = receiver.log.filter((r) => r.body.includes(orderId)).at(-1)!;
  expect(last.status).toBe(200);
  expect(last.headers['webhook-id']).toBe(attempts[0].headers['webhook-id']);
  expect(receiver.verified(last, endpoint.secret)).toBe(true);
  expect(await stack.db('webhook_deliveries').where({ id: dead.delivery_id }).first()).toMatchObject({
    state: 'delivered',
    attempts: 6,
  });

  const again = await api().post(`/webhooks/dead-letters/${dead.id}/replay`).set('X-API-Key', key.key);
  expect(again.status).toBe(409);
  expect(again.body.body.code).toBe('CONFLICT');
  expect((await api().get('/webhooks/dead-letters').set('X-API-Key', key.key)).body.body.deadLetters).toEqual([]);
  expect(
    (await api().get('/webhooks/dead-letters?status=delivered').set('X-API-Key', key.key)).body.body.deadLetters,
  ).toEqual([expect.objectContaining({ id: dead.id })]);
});
