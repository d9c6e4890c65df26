/**
 * POST /refund on the real stack: partial and full refunds, over-refund, refund of a pending
 * payment, concurrent refunds of one order (serialised by the order's refunds workflow), a
 * provider failure, an idempotent retry, GET /checkstatus with refunds, and the webhook of each
 * refund verified with the official standardwebhooks library, also during a secret rotation.
 */
import { refundsWorkflowId } from '../../src/refunds';
import { cardPayment } from '../callbacks/helpers';
import { createTestStack, provenResult, uniq, type TestStack } from '../support/stack';
import { registerEndpoint, startReceiver, verifiesWithStandardWebhooks, type Receiver } from '../webhooks/helpers';
import { eventsOf, newKey, paidQr as paidQrWith, paymentError, request, rowOf, waitFor } from '../payments/support';
import { paymentHandle } from '../payments/support';

let stack: TestStack;
let receiver: Receiver;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  receiver = await startReceiver(200);
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] })).key;
});
afterAll(async () => {
  await stack.close();
  await receiver.stop();
});

const api = () => request(stack.app.callback());
const refund = (body: Record<string, unknown>, headers: Record<string, string> = {}, k = key) =>
  api().post('/refund').set('X-API-Key', k).set(headers).send(body);

/** A QR payment of `amount` THB settled paid by the provider's result. */
const paidQr = (amount: number, k = key) => paidQrWith(stack, k, amount, 'rf');

const verifies = verifiesWithStandardWebhooks;
const hookFor = (orderId: string, status: string) =>
  waitFor(
    async () => receiver.log.find((r) => r.body.includes(orderId) && JSON.parse(r.body).data.status === status),
    20_000,
    `${status} webhook`,
  );

describe('POST /refund', () => {
  it('partial then full: paid with refundedAmount, then refunded; a webhook per refund, verified also during a secret rotation', async () => {
    const ep = await registerEndpoint(stack, key, {
      url: `${receiver.url}/refunds`,
      eventTypes: ['payment.refunded', 'payment.partially_refunded'],
    });
    const { orderId, paymentId } = await paidQr(100);

    const part = await refund({ orderId, amount: 30, reason: 'one item missing' });
    expect(part.status).toBe(200);
    expect(part.body).toEqual({
      statusCode: 200,
      body: {
        refundId: expect.stringMatching(/^re_/),
        orderId,
        paymentId,
        status: 'succeeded',
        amount: 30,
        currency: 'THB',
        reason: 'one item missing',
        payment: { status: 'paid', amount: 100, refundedAmount: 30 },
      },
    });
    const partHook = await hookFor(orderId, 'partially_refunded');
    expect(JSON.parse(partHook.body)).toEqual({
      event: 'payment.status.updated',
      type: 'payment.partially_refunded',
      data: {
        orderId,
        status: 'partially_refunded',
        amount: 30,
        timestamp: expect.any(String),
        refundId: part.body.body.refundId,
        paymentId,
        mode: expect.stringMatching(/^(live|sandbox)$/),
      },
    });
    expect(verifies(partHook, ep.secret)).toBe(true);

    // rotate: the next refund's webhook carries both signatures
    const rotated = (await api().post(`/webhooks/endpoints/${ep.id}/rotate-secret`).set('X-API-Key', key)).body.body;
    const rest = await refund({ orderId });
    expect(rest.body.body).toMatchObject({
      status: 'succeeded',
      amount: 70,
      payment: { status: 'refunded', amount: 100, refundedAmount: 100 },
    });
    const fullHook = await hookFor(orderId, 'refunded');
    expect(JSON.parse(fullHook.body).data).toMatchObject({
      status: 'refunded',
      amount: 70,
      refundId: rest.body.body.refundId,
    });
    expect(verifies(fullHook, rotated.secret)).toBe(true);
    expect(verifies(fullHook, ep.secret)).toBe(true);

    expect(await eventsOf(stack.db, paymentId)).toEqual(['pending', 'paid', 'refunded']);
    const st = await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key);
    expect(st.body.body).toMatchObject({
      status: 'refunded',
      refundedAmount: 100,
      refunds: [
        { refundId: part.body.body.refundId, amount: 30, status: 'succeeded', reason: 'one item missing' },
        { refundId: rest.body.body.refundId, amount: 70, status: 'succeeded' },
      ],
    });
    // nothing left: a refunded payment is no longer paid
    const again = await refund({ orderId, amount: 1 });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(paymentError('CONFLICT'));
    const desc = await stack.client.workflow.getHandle(refundsWorkflowId(orderId)).describe();
    expect(desc.type).toBe('orderRefundsWorkflow');
    expect(desc.searchAttributes).toMatchObject({ OrderId: [orderId] });
  });

  it('over-refund is 400 INVALID_INPUT and counts nothing; a pending payment is 409 CONFLICT; an unknown or foreign order 404', async () => {
    const { orderId } = await paidQr(50);
    const over = await refund({ orderId, amount: 50.01 });
    expect(over.status).toBe(400);
    expect(over.body).toEqual(paymentError('INVALID_INPUT', { field: 'amount' }));
    expect((await refund({ orderId, amount: 40 })).body.body.payment.refundedAmount).toBe(40);
    expect((await refund({ orderId, amount: 10.01 })).body).toEqual(paymentError('INVALID_INPUT', { field: 'amount' }));
    expect(Number((await rowOf(stack.db, orderId)).refunded_satang)).toBe(4000);

    const pendingOrder = uniq('rf-pending');
    await api()
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send({ orderId: pendingOrder, userId: 'u', amount: 20, customerId: 'c' });
    await waitFor(() => rowOf(stack.db, pendingOrder));
    const pending = await refund({ orderId: pendingOrder });
    expect(pending.status).toBe(409);
    expect(pending.body).toEqual(paymentError('CONFLICT', { status: 'pending' }));
    expect(await stack.db('refunds').where({ order_id: pendingOrder })).toEqual([]);
    await (await paymentHandle(stack, pendingOrder)).terminate('test cleanup');

    expect((await refund({ orderId: uniq('none') })).status).toBe(404);
    const other = (await newKey(stack.db, { scopes: ['payments:write'] })).key;
    expect((await refund({ orderId }, {}, other)).status).toBe(404);
    const readOnly = (await newKey(stack.db, { scopes: ['payments:read'] })).key;
    expect((await refund({ orderId }, {}, readOnly)).status).toBe(403);
    expect((await refund({ orderId, amount: -1 })).status).toBe(400);
  });

  it('concurrent refunds of one order are serialised: the total never exceeds the amount', async () => {
    const { orderId, paymentId } = await paidQr(100);
    const results = await Promise.all(Array.from({ length: 5 }, () => refund({ orderId, amount: 30 })));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 400);
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(2);
    for (const r of refused) expect(r.body.body.code).toBe('INVALID_INPUT');
    expect(ok.map((r) => r.body.body.payment.refundedAmount).sort((a, b) => a - b)).toEqual([30, 60, 90]);
    const row = await rowOf(stack.db, orderId);
    expect(row).toMatchObject({ status: 'paid', refunded_satang: '9000' });
    expect(await stack.db('refunds').where({ payment_id: paymentId, status: 'succeeded' })).toHaveLength(3);
  });

  it('a provider failure leaves a failed refund and counts no money', async () => {
    const { orderId } = await paidQr(20);
    const failed = await refund({ orderId, amount: 10.99 }); // the sandbox declines refunds ending in .99
    expect(failed.status).toBe(200);
    expect(failed.body.body).toMatchObject({
      status: 'failed',
      amount: 10.99,
      failureReason: expect.stringContaining('declined'),
      payment: { status: 'paid', refundedAmount: 0 },
    });
    const st = (await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body;
    expect(st).toMatchObject({
      status: 'paid',
      refundedAmount: 0,
      refunds: [{ refundId: failed.body.body.refundId, status: 'failed', amount: 10.99 }],
    });
    expect((await refund({ orderId })).body.body).toMatchObject({
      status: 'succeeded',
      amount: 20,
      payment: { status: 'refunded', refundedAmount: 20 },
    });
  });

  it("a card payment is refunded at the card provider (its charge): the refund carries the provider's refund id", async () => {
    const p = await cardPayment(stack, { amount: 80, apiKey: key });
    const handle = stack.client.workflow.getHandle(p.workflowId);
    await handle.signal(
      'paymentResult',
      provenResult(stack.config, p.paymentId, { status: 'success', provider: 'card', reference: p.providerRef }),
    );
    await handle.result();
    const res = await refund({ orderId: p.orderId, amount: 25.5 });
    expect(res.body.body).toMatchObject({
      status: 'succeeded',
      amount: 25.5,
      payment: { status: 'paid', refundedAmount: 25.5 },
    });
    const row = await stack.db('refunds').where({ id: res.body.body.refundId }).first();
    expect(row).toMatchObject({
      status: 'succeeded',
      amount_satang: '2550',
      provider_ref: expect.stringMatching(/^rfnd_test_/),
    });
  });

  it('the same Idempotency-Key again returns the same refund and refunds once', async () => {
    const { orderId, paymentId } = await paidQr(40);
    const idem = { 'Idempotency-Key': uniq('idem') };
    const first = await refund({ orderId, amount: 15 }, idem);
    const second = await refund({ orderId, amount: 15 }, idem);
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await stack.db('refunds').where({ payment_id: paymentId })).toHaveLength(1);
    expect(Number((await rowOf(stack.db, orderId)).refunded_satang)).toBe(1500);
  });
});

it('POST /refund and GET /payments are described in /openapi.json', async () => {
  const doc = (await api().get('/openapi.json')).body;
  expect(doc.paths['/refund'].post).toBeDefined();
  expect(doc.paths['/payments'].get).toBeDefined();
  expect(doc.components.schemas.PaymentStatus.properties).toHaveProperty('refunds');
});
