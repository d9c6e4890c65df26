/**
 * A provider may call back the instant the gateway answered: the payment must be found then.
 * Before lean-payment-v1 the payments row was written by the workflow's first activity, so a
 * callback 87-351 ms after the 200 got 404 ORDER_NOT_FOUND; the gateway now writes the row
 * before it starts the workflow and answers.
 */
import request from 'supertest';
import { uniq } from '../support/stack';
import { useTestStack } from '../support/servers';
import { paymentWorkflowIdOfOrder } from '../payments/support';
import { apiKey } from '../webhooks/helpers';
import { fieldSigned, headerSigned, post, resultOf } from './helpers';

jest.setTimeout(360_000);

const stack = useTestStack({ env: { SIMULATORS: 'on' } });

it('a signed QR callback sent the moment /qrpayment answered 200 finds its payment, 100 times out of 100', async () => {
  const { key } = await apiKey(stack, ['payments:write']);
  const statuses: number[] = [];
  const orders: string[] = [];
  // four callers side by side, 25 payments each: create, and the moment the 200 is read, call back
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 25; i++) {
        const orderId = uniq('race');
        const created = await request(stack.app.callback())
          .post('/qrpayment')
          .set('X-API-Key', key)
          .send({ orderId, userId: 'u-1', amount: 12.5, customerId: 'c-1' });
        expect(created.status).toBe(200);
        const res = await post(
          stack.app,
          '/qrcallback',
          fieldSigned(stack.config, 'QR', {
            paymentId: created.body.body.paymentId,
            status: 'success',
            amount: 12.5,
            orderId,
          }),
        );
        statuses.push(res.status);
        orders.push(orderId);
      }
    }),
  );
  expect(statuses).toHaveLength(100);
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  // and each of them is paid, once
  for (const orderId of orders.slice(0, 10))
    await expect(resultOf(stack, await paymentWorkflowIdOfOrder(stack, orderId))).resolves.toMatchObject({
      status: 'paid',
    });
});

it('a signed card callback sent the moment /cardpayment answered 200 finds its charge, 20 times out of 20', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) {
    const orderId = uniq('race-card');
    const created = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId, userId: 'u-1', amount: '30', token: 'tok_visa' });
    expect(created.status).toBe(200);
    // the gateway waits up to 10 s for the charge; on a starved machine it may answer without one
    const chargeId: string | null = created.body.body.chargeId;
    if (!chargeId) continue;
    const form = new URLSearchParams({
      objectId: chargeId,
      token: 'tok_visa',
      status: 'true',
      message: '',
      saveCard: 'false',
    }).toString();
    const res = await post(stack.app, '/callback', headerSigned(stack.config, 'CARD', 'form', form));
    statuses.push(res.status);
  }
  expect(statuses.length).toBeGreaterThan(0);
  expect(statuses.filter((s) => s >= 400)).toEqual([]);
});
