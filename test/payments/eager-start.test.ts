/**
 * Eager workflow start (TemporalDeps.eagerStartClient, as `npm start` wires it): the gateway's
 * start asks the server to hand the first workflow task to the worker in this process. The
 * server does so, and the payment behaves as any other: one workflow per order, the same
 * payment for a repeated request, paid by its callback.
 */
import type { Client } from '@temporalio/client';
import { fieldSigned, post as postCallback } from '../callbacks/helpers';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { newKey, request, rowOf } from './support';
import { paymentHandle } from './support';

let stack: TestStack;
let key: string;
const eagerly: boolean[] = [];
beforeAll(async () => {
  stack = await createTestStack({ eagerStart: true });
  ({ key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
  // note what the server answered to each start the gateway made
  const c = stack.eagerStartClient as Client;
  const start = c.workflow.start.bind(c.workflow);
  c.workflow.start = (async (...a: Parameters<typeof start>) => {
    const h = await start(...a);
    eagerly.push(h.eagerlyStarted);
    return h;
  }) as typeof start;
});
afterAll(() => stack.close());

const create = (orderId: string) =>
  request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount: 10.5, customerId: 'c-1' });

it('starts the payment workflow eagerly on the local worker; the payment is the same as ever', async () => {
  const orderId = uniq('EAGER');
  const first = await create(orderId);
  expect(first.status).toBe(200);
  expect(eagerly).toEqual([true]);
  const again = await create(orderId);
  expect(again.status).toBe(200);
  expect(again.body.body.paymentId).toBe(first.body.body.paymentId);

  const row = await rowOf(stack.db, orderId);
  const cb = await postCallback(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId: row.id, status: 'success', amount: 10.5, orderId }),
  );
  expect(cb.status).toBe(200);
  await expect((await paymentHandle(stack, orderId)).result()).resolves.toEqual({
    paymentId: row.id,
    orderId,
    status: 'paid',
  });
  const { events } = await (await paymentHandle(stack, orderId)).fetchHistory();
  expect(events?.filter((e) => e.eventType === 1 /* WorkflowExecutionStarted */)).toHaveLength(1);
});
