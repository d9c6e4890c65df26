/**
 * The redelivery (src/callbacks/redelivery.ts): a callback answered before its signal, whose
 * gateway died right after the answer, is delivered by another gateway once the lease has passed:
 * once, however many gateways look, with the answer the provider had; handler-form receipts
 * (answered only after their finish) are left to their provider's retry. A payment whose expiry
 * comes first is settled by that result, not expired (activities/payments, the settle step).
 */
import request from 'supertest';
import { createApp, type GatewayApp } from '../../src/app/app';
import { useTestStack } from '../support/servers';
import { cardPayment, fieldSigned, headerSigned, post, receiptsOf, resultOf, signalsOf, waitFor } from './helpers';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';
import { newKey } from '../payments/support';

const stack = useTestStack();

const gateway = (redeliveryMs: number, s: TestStack = stack): GatewayApp =>
  createApp({
    config: { ...s.config, callbacks: { ...s.config.callbacks, redeliveryMs } },
    db: s.db,
    temporal: { client: s.client, taskQueue: s.taskQueue },
    logger: testLogger,
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const age = (id: string, s: TestStack = stack) =>
  s
    .db('callback_receipts')
    .where({ id })
    .update({ created_at: stack.db.raw("now() - interval '1 hour'") });

it('a gateway that died after its answer: another delivers the receipt after the lease, once, with the answer given', async () => {
  const p = await cardPayment(stack, { callback: 'https://shop.example/back' });
  const sent = headerSigned(stack.config, 'CARD', 'form', {
    objectId: p.providerRef,
    token: 'tok_test_visa',
    status: 'true',
    message: 'approved',
    saveCard: 'false',
  });
  // the gateway dies right after its answer: its signal and finish never run
  const dead = gateway(60_000);
  dead.afterAnswer.run = () => undefined;
  const answered = await post(dead, '/callback', sent);
  expect(answered.status).toBe(303);
  const [receipt] = await receiptsOf(stack, p.paymentId);
  expect(receipt).toMatchObject({ outcome: null, reference: p.providerRef, message: 'approved' });

  const gateways = [gateway(100), gateway(100)];
  try {
    await sleep(500); // within the lease: nobody takes it
    expect((await receiptsOf(stack, p.paymentId))[0]).toMatchObject({ outcome: null });
    expect(await signalsOf(stack, p.workflowId)).toBe(0);

    await age(receipt.id);
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
    await waitFor(async () => (await receiptsOf(stack, p.paymentId))[0].outcome === 'signalled');
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
  }
  expect(await receiptsOf(stack, p.paymentId)).toEqual([
    expect.objectContaining({
      id: receipt.id,
      outcome: 'signalled',
      response_status: 303,
      response_location: answered.headers.location,
    }),
  ]);
  expect(await signalsOf(stack, p.workflowId)).toBe(1);
  const retry = await post(stack.app, '/callback', sent);
  expect([retry.status, retry.headers.location, retry.text]).toEqual([
    answered.status,
    answered.headers.location,
    answered.text,
  ]);
});

it('a handler-form receipt left unfinished is not redelivered: its provider was not answered and retries', async () => {
  const p = await cardPayment(stack);
  const id = uniq('evt');
  await stack.db('callback_receipts').insert({
    id,
    provider: 'cardnet',
    payment_id: p.paymentId,
    order_id: p.orderId,
    status: 'success',
    source_ip: '127.0.0.1',
    request: '{}',
    created_at: stack.db.raw("now() - interval '1 hour'"),
  });
  const g = gateway(100);
  try {
    await sleep(500);
  } finally {
    await g.stop();
  }
  expect(await receiptsOf(stack, p.paymentId)).toEqual([expect.objectContaining({ id, outcome: null })]);
  expect(await signalsOf(stack, p.workflowId)).toBe(0);
});

describe('the expiry comes before the signal of a callback already answered', () => {
  let short: TestStack;
  beforeAll(async () => {
    short = await createTestStack({ env: { QR_EXPIRY_S: '2' } });
  });
  afterAll(async () => {
    await short.close();
  });

  it('the result settles the payment, not the expiry; the redelivery then keeps the first answer', async () => {
    const key = await newKey(short.db, { scopes: ['payments:write', 'payments:read'] });
    const orderId = uniq('answered');
    const created = await request(short.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
    expect(created.status).toBe(200);
    const paymentId = created.body.body.paymentId as string;
    const sent = fieldSigned(short.config, 'QR', { paymentId, status: 'success', amount: 12, orderId });
    const dead = gateway(60_000, short);
    dead.afterAnswer.run = () => undefined; // died right after its answer
    const answered = await post(dead, '/qrcallback', sent);
    expect(answered.body.body).toEqual({ message: 'Callback processed', orderId, status: 'success' });

    const row = await short.db('payments').where({ id: paymentId }).first();
    await expect(resultOf(short, row.workflow_id)).resolves.toMatchObject({ status: 'paid' });
    expect(await signalsOf(short, row.workflow_id)).toBe(0);
    const events = await short.db('payment_events').where({ payment_id: paymentId }).orderBy('id');
    expect(events.map((e) => e.to_status)).toEqual(['pending', 'paid']);
    expect(events[1].reason).toMatch(/^qr: success \(its callback was answered before the expiry/);

    const [receipt] = await receiptsOf(short, paymentId);
    await age(receipt.id, short);
    const g = gateway(100, short);
    try {
      await waitFor(async () => (await receiptsOf(short, paymentId))[0].outcome !== null);
    } finally {
      await g.stop();
    }
    expect(await receiptsOf(short, paymentId)).toEqual([
      expect.objectContaining({ outcome: 'payment_closed', response_status: 200 }),
    ]);
    expect((await post(short.app, '/qrcallback', sent)).text).toBe(answered.text);
    expect((await short.db('payments').where({ id: paymentId }).first()).status).toBe('paid');
  });
});
