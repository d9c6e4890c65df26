/**
 * The end-to-end slice on the real Temporal dev server and real Postgres:
 * HTTP -> workflow -> activity writes the payment row -> signal -> row and result agree.
 */
import request from 'supertest';
import { paymentWorkflowId } from '../../src/payments';
import { provenResult, uniq, waitFor } from '../support/stack';
import { useTestStack } from '../support/servers';
import { paymentHandle } from '../payments/support';

const stack = useTestStack();

describe('POST /cardpayment starts a payment workflow', () => {
  it('writes the row, and the signalled result completes the workflow', async () => {
    const orderId = uniq('ord');
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId, userId: 'u-1', amount: '250.50', token: 'tok_visa', callback: 'https://shop.example/thanks' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      statusCode: 200,
      body: {
        paymentId: expect.stringMatching(/^pay_/),
        orderId,
        method: 'card',
        status: 'pending',
        amount: 250.5,
        currency: 'THB',
        chargeId: expect.stringMatching(/^chrg_test_/),
        authorizeUri: null,
      },
    });

    const row = await waitFor(() => stack.db('payments').where({ order_id: orderId }).first());
    expect(row).toMatchObject({
      id: res.body.body.paymentId,
      amount_satang: '25050',
      status: 'pending',
      method: 'card',
      callback_url: 'https://shop.example/thanks',
      workflow_id: paymentWorkflowId(orderId),
    });

    const handle = await paymentHandle(stack, orderId);
    const desc = await handle.describe();
    expect(desc.searchAttributes).toMatchObject({ OrderId: [orderId], PaymentMethod: ['card'] });

    await handle.signal('paymentResult', provenResult(stack.config, row.id, { status: 'success', provider: 'card' }));
    await expect(handle.result()).resolves.toEqual({ paymentId: row.id, orderId, status: 'paid' });
    const paid = await stack.db('payments').where({ order_id: orderId }).first();
    expect(paid.status).toBe('paid');
    const events = await stack.db('payment_events').where({ payment_id: row.id }).orderBy('id');
    expect(events.map((e: { to_status: string }) => e.to_status)).toEqual(['pending', 'paid']);
    expect((await handle.describe()).searchAttributes).toMatchObject({ PaymentStatus: ['paid'] });
  });

  it('the same order and amount again returns the same payment; another amount is 409 CONFLICT', async () => {
    const orderId = uniq('ord');
    const body = { orderId, userId: 'u-2', amount: '10', token: 'tok' };
    const first = await request(stack.app.callback()).post('/cardpayment').type('form').send(body);
    const again = await request(stack.app.callback()).post('/cardpayment').type('form').send(body);
    expect(again.status).toBe(200);
    expect(again.body.body.paymentId).toBe(first.body.body.paymentId);

    const other = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ ...body, amount: '11' });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      statusCode: 409,
      body: { error: expect.any(String), code: 'CONFLICT', details: expect.objectContaining({ orderId }) },
    });
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });

  it.each([
    [{ amount: '1.234' }, 'amount'],
    [{ amount: '-1' }, 'amount'],
    [{ amount: '0' }, 'amount'],
    [{ callback: 'javascript:alert(1)' }, 'callback'],
    [{ extra: 'x' }, 'extra'],
  ])('rejects %p with INVALID_INPUT naming %s and starts nothing', async (patch, field) => {
    const orderId = uniq('ord');
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId, userId: 'u', amount: '5', token: 't', ...patch });
    expect(res.status).toBe(400);
    expect(res.body.body).toMatchObject({ code: 'INVALID_INPUT', details: { field } });
    expect(await stack.db('payments').where({ order_id: orderId }).first()).toBeUndefined();
  });
});
