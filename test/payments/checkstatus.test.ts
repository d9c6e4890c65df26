/**
 * GET /checkstatus/{orderId}: the record the payment's workflow keeps (row + events), agreeing
 * with the workflow's own view; who may see which payment; errors.
 */
import type { PaymentView } from '../../src/payments';
import { createTestStack, provenResult, uniq, type TestStack } from '../support/stack';
import { gatewayWith, newKey, paymentError, request, rowOf, waitFor } from './support';
import { paymentHandle } from './support';

let stack: TestStack;
let key: { id: string; key: string };
beforeAll(async () => {
  stack = await createTestStack();
  key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
});
afterAll(() => stack.close());

const check = (orderId: string, k = key.key) =>
  request(stack.app.callback())
    .get(`/checkstatus/${encodeURIComponent(orderId)}`)
    .set('X-API-Key', k);

describe('GET /checkstatus/{orderId}', () => {
  it('follows a QR payment from pending to paid, consistent with the workflow', async () => {
    const orderId = uniq('st');
    const created = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 77.7, customerId: 'c' });
    await waitFor(() => rowOf(stack.db, orderId));
    const pending = await check(orderId);
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({
      statusCode: 200,
      body: {
        paymentId: created.body.body.paymentId,
        orderId,
        method: 'qr',
        status: 'pending',
        amount: 77.7,
        currency: 'THB',
        mode: 'sandbox',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        expiresAt: created.body.body.expiresAt,
        providerRef: null,
        history: [{ status: 'pending', at: expect.any(String), reason: 'created' }],
        refundedAmount: 0,
        refunds: [],
      },
    });
    expect(pending.headers['x-ratelimit-limit']).toBeDefined();

    const handle = await paymentHandle(stack, orderId);
    await handle.signal(
      'paymentResult',
      provenResult(stack.config, created.body.body.paymentId, {
        status: 'success',
        provider: 'qr',
        message: 'bank app',
      }),
    );
    await handle.result();
    const paid = await check(orderId);
    expect(paid.body.body.status).toBe('paid');
    expect(paid.body.body.history).toEqual([
      { status: 'pending', at: expect.any(String), reason: 'created' },
      { status: 'paid', at: expect.any(String), reason: 'qr: success (bank app)' },
    ]);
    const view = await handle.query<PaymentView>('payment');
    expect(view.status).toBe(paid.body.body.status);
    expect(view.history.map((h) => [h.status, h.reason])).toEqual(
      paid.body.body.history.map((h: { status: string; reason: string }) => [h.status, h.reason]),
    );
  });

  it('shows a card payment with its charge id; public card payments are visible to keys of their mode', async () => {
    const orderId = uniq('st');
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId, userId: 'u', amount: '3', token: 'tok_visa' });
    const st = await check(orderId);
    expect(st.body.body).toMatchObject({
      method: 'card',
      status: 'pending',
      providerRef: res.body.body.chargeId,
      mode: 'sandbox',
    });
    const live = await newKey(stack.db, { scopes: ['payments:read'], mode: 'live' });
    expect((await check(orderId, live.key)).status).toBe(404);
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });

  it("another key does not see a key's payments (404, not 403)", async () => {
    const orderId = uniq('st');
    await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 1, customerId: 'c' });
    await waitFor(() => rowOf(stack.db, orderId));
    const other = await newKey(stack.db, { scopes: ['payments:read'] });
    const res = await check(orderId, other.key);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(paymentError('NOT_FOUND', { orderId }));
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });

  it('404 NOT_FOUND for an unknown order, 400 INVALID_INPUT for a malformed id', async () => {
    const unknown = await check(uniq('none'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(paymentError('NOT_FOUND'));
    expect(unknown.body.statusCode).toBe(404);
    const bad = await check('a b');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(paymentError('INVALID_INPUT', { field: 'orderId' }));
  });
});

describe('before the workflow has run at all', () => {
  it('answers pending from the record the gateway wrote before it answered', async () => {
    // a gateway whose task queue no worker polls: the workflow cannot run its first task
    const idle = gatewayWith(stack, {}, { taskQueue: uniq('no-worker') });
    const orderId = uniq('st');
    const created = await request(idle.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 2, customerId: 'c' });
    expect(created.status).toBe(200);
    expect(await rowOf(stack.db, orderId)).toMatchObject({ id: created.body.body.paymentId, status: 'pending' });
    const res = await request(idle.callback()).get(`/checkstatus/${orderId}`).set('X-API-Key', key.key);
    expect(res.status).toBe(200);
    expect(res.body.body).toMatchObject({
      paymentId: created.body.body.paymentId,
      status: 'pending',
      method: 'qr',
      amount: 2,
      history: [{ status: 'pending', reason: 'created' }],
    });
    const stranger = await newKey(stack.db, { scopes: ['payments:read'] });
    expect((await request(idle.callback()).get(`/checkstatus/${orderId}`).set('X-API-Key', stranger.key)).status).toBe(
      404,
    );
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });
});
