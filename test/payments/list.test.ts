/** GET /payments on the real stack: the key's own payments, newest first, filters, cursor pagination. */
import { provenResult, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';
import { newKey, request, rowOf, waitFor } from './support';
import { paymentHandle } from './support';

const stack = useTestStack();

const api = () => request(stack.app.callback());

it("lists the key's own payments newest first, filtered by status, method and created range, page by page", async () => {
  const key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
  const orders: string[] = [];
  for (let i = 0; i < 3; i++) {
    const orderId = uniq('list');
    expect(
      (
        await api()
          .post('/qrpayment')
          .set('X-API-Key', key)
          .send({ orderId, userId: 'u', amount: 10 + i, customerId: 'c' })
      ).status,
    ).toBe(200);
    await waitFor(() => rowOf(stack.db, orderId));
    orders.push(orderId);
  }
  const handle = await paymentHandle(stack, orders[1]);
  const { id: paid } = await rowOf(stack.db, orders[1]);
  await handle.signal('paymentResult', provenResult(stack.config, paid, { status: 'success', provider: 'qr' }));
  await handle.result();

  const list = (q = '') => api().get(`/payments${q}`).set('X-API-Key', key);
  const all = await list();
  expect(all.status).toBe(200);
  expect(all.body.body.payments.map((p: { orderId: string }) => p.orderId)).toEqual([...orders].reverse());
  expect(all.body.body).toMatchObject({ hasMore: false, nextCursor: null });
  expect(all.body.body.payments[0]).toEqual({
    paymentId: expect.stringMatching(/^pay_/),
    orderId: orders[2],
    method: 'qr',
    status: 'pending',
    amount: 12,
    refundedAmount: 0,
    currency: 'THB',
    mode: 'sandbox',
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });

  const p1 = await list('?limit=2');
  expect(p1.body.body.payments).toHaveLength(2);
  expect(p1.body.body.hasMore).toBe(true);
  const p2 = await list(`?limit=2&starting_after=${p1.body.body.nextCursor}`);
  expect(p2.body.body).toMatchObject({
    payments: [expect.objectContaining({ orderId: orders[0] })],
    hasMore: false,
    nextCursor: null,
  });

  expect((await list('?status=paid')).body.body.payments.map((p: { orderId: string }) => p.orderId)).toEqual([
    orders[1],
  ]);
  expect((await list('?method=card')).body.body.payments).toEqual([]);
  const createdOf = (i: number) => all.body.body.payments[2 - i].createdAt as string;
  const ranged = await list(
    `?created_gte=${encodeURIComponent(createdOf(1))}&created_lt=${encodeURIComponent(createdOf(2))}`,
  );
  expect(ranged.body.body.payments.map((p: { orderId: string }) => p.orderId)).toEqual([orders[1]]);

  const other = (await newKey(stack.db, { scopes: ['payments:read'] })).key;
  expect((await api().get('/payments').set('X-API-Key', other)).body.body.payments).toEqual([]);
  expect((await list('?status=nope')).status).toBe(400);
  expect((await list('?limit=0')).status).toBe(400);
  for (const o of [orders[0], orders[2]]) await (await paymentHandle(stack, o)).terminate('test cleanup');
});
