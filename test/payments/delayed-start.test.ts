/**
 * The QR payment's delayed start (qrPaymentWorkflowV3, issue 41): the gateway starts it with a
 * start delay that ends at the QR's expiry, so no workflow task runs until its result comes by
 * signal-with-start (the callback API) or the expiry passes. A raw signal (no start) does not end
 * the delay; a result for a payment whose workflow never started starts it as the gateway would.
 */
import { temporal as proto } from '@temporalio/proto';
import { fieldSigned, post as postCallback } from '../callbacks/helpers';
import { PaymentWorkflowType } from '../../src/payments';
import { createTestStack, provenResult, uniq, type TestStack } from '../support/stack';
import { gatewayWith, newKey, paymentHandle, request, rowOf } from './support';

const E = proto.api.enums.v1.EventType;
let stack: TestStack;
let key: string;
beforeAll(async () => {
  stack = await createTestStack({ env: { QR_EXPIRY_S: '900' } });
  ({ key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
});
afterAll(() => stack.close());

const create = (orderId: string, app = stack.app) =>
  request(app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount: 10.5, customerId: 'c-1' });
const typesOf = async (orderId: string) =>
  ((await (await paymentHandle(stack, orderId)).fetchHistory()).events ?? []).map((e) => E[e.eventType!]);

it('runs no workflow task before its result; the callback ends the delay: 8 events, 1 task, no timer', async () => {
  const orderId = uniq('DELAY');
  const first = await create(orderId);
  expect(first.status).toBe(200);
  const handle = await paymentHandle(stack, orderId);
  const d = await handle.describe();
  expect(d.type).toBe(PaymentWorkflowType.qrDelayed);
  const started = (await handle.fetchHistory()).events![0].workflowExecutionStartedEventAttributes!;
  // the delay ends at the expiry (900 s), give or take the request's own time
  expect(Number(started.firstWorkflowTaskBackoff!.seconds)).toBeGreaterThan(890);
  await new Promise((r) => setTimeout(r, 500));
  expect(await typesOf(orderId)).toEqual(['EVENT_TYPE_WORKFLOW_EXECUTION_STARTED']);
  // the same request again is the same payment
  expect((await create(orderId)).body.body.paymentId).toBe(first.body.body.paymentId);

  const row = await rowOf(stack.db, orderId);
  const cb = await postCallback(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId: row.id, status: 'success', amount: 10.5, orderId }),
  );
  expect(cb.status).toBe(200);
  await expect(handle.result()).resolves.toEqual({ paymentId: row.id, orderId, status: 'paid' });
  const types = await typesOf(orderId);
  expect(types).toHaveLength(8);
  expect(types.filter((t) => t === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED')).toHaveLength(1);
  expect(types).not.toContain('EVENT_TYPE_TIMER_STARTED');
});

it('a raw signal (a plain Temporal client, no start) does not end the delay: the payment stays pending', async () => {
  const orderId = uniq('DELAY-RAW');
  expect((await create(orderId)).status).toBe(200);
  const row = await rowOf(stack.db, orderId);
  const raw = stack.client.workflow.getHandle(row.workflow_id);
  await raw.signal('paymentResult', provenResult(stack.config, row.id, { status: 'success', provider: 'qr' }));
  await new Promise((r) => setTimeout(r, 1500));
  expect(await typesOf(orderId)).toEqual([
    'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
    'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
  ]);
  expect((await rowOf(stack.db, orderId)).status).toBe('pending');
});

it('expires at the expiry with one workflow task and no timer', async () => {
  const short = gatewayWith(stack, { QR_EXPIRY_S: '1' });
  const orderId = uniq('DELAY-EXP');
  expect((await create(orderId, short)).status).toBe(200);
  await expect((await paymentHandle(stack, orderId)).result()).resolves.toMatchObject({ status: 'expired' });
  expect((await rowOf(stack.db, orderId)).status).toBe('expired');
  const types = await typesOf(orderId);
  expect(types.filter((t) => t === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED')).toHaveLength(1);
  expect(types).not.toContain('EVENT_TYPE_TIMER_STARTED');
});

it("a result for a payment whose workflow never started starts it, as the gateway's own, and it settles", async () => {
  const made = uniq('DELAY-MADE');
  expect((await create(made)).status).toBe(200);
  // a row committed whose start never happened (the gateway died between the two): a copy of a
  // real row under ids of its own
  const orderId = uniq('DELAY-LOST');
  const paymentId = `pay_${uniq('lost').replace(/-/g, '')}`;
  const { id: _id, order_id: _o, workflow_id: _w, ...rest } = await rowOf(stack.db, made);
  await stack.db('payments').insert({ ...rest, id: paymentId, order_id: orderId, workflow_id: `payment-${paymentId}` });
  await expect(stack.client.workflow.getHandle(`payment-${paymentId}`).describe()).rejects.toThrow();
  const cb = await postCallback(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 10.5, orderId }),
  );
  expect(cb.status).toBe(200);
  await stack.app.idle(); // the signal that starts it runs after the callback's answer
  const handle = stack.client.workflow.getHandle(`payment-${paymentId}`);
  expect((await handle.describe()).type).toBe(PaymentWorkflowType.qrDelayed);
  await expect(handle.result()).resolves.toMatchObject({ paymentId, status: 'paid' });
  expect((await rowOf(stack.db, orderId)).status).toBe('paid');
});
