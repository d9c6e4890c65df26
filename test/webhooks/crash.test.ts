/**
 * Crash safety: the worker process is killed (SIGKILL) right after a callback got its 200, before
 * the payment was settled and its webhook sent. A new worker picks the workflow up: the payment
 * completes and exactly one webhook message is delivered.
 */
import type { ChildProcess } from 'node:child_process';
import request from 'supertest';
import { applyTransition } from '../../src/payments/repository';
import { startCrashWorker } from '../support/roles';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { fieldSigned, post, resultOf, waitFor } from '../callbacks/helpers';
import { apiKey, deliveriesSettled, registerEndpoint, startReceiver, type Receiver } from './helpers';

jest.setTimeout(180_000);

let stack: TestStack;
let receiver: Receiver;
const children: ChildProcess[] = [];
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  receiver = await startReceiver(200);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await stack.close();
  await receiver.stop();
});

/** A worker in its own process on this test's task queue; resolves once it polls. */
async function startWorkerProcess(): Promise<ChildProcess> {
  const child = await startCrashWorker(stack.taskQueue);
  children.push(child);
  return child;
}

it('kill the worker after the 200: the payment still completes, with exactly one webhook', async () => {
  const first = await startWorkerProcess();
  const key = await apiKey(stack);
  const endpoint = await registerEndpoint(stack, key.key, { url: receiver.url });
  const orderId = uniq('ord');
  const created = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u-1', amount: 77, customerId: 'c-1' });
  expect(created.status).toBe(200);
  const paymentId: string = created.body.body.paymentId;
  const row = await waitFor(() => stack.db('payments').where({ id: paymentId }).first(), 20_000, 'payment recorded');

  const res = await post(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 77, orderId }),
  );
  first.kill('SIGKILL');
  expect(res.status).toBe(200);
  await new Promise<void>((r) =>
    first.exitCode !== null || first.signalCode !== null ? r() : first.once('exit', () => r()),
  );

  // the kill came before processing ended: no webhook has gone out
  const forOrder = () => receiver.log.filter((r) => r.body.includes(orderId));
  expect(forOrder()).toHaveLength(0);
  expect(await stack.db('callback_receipts').where({ payment_id: paymentId })).toHaveLength(1);

  await startWorkerProcess();
  await expect(resultOf(stack, row.workflow_id)).resolves.toMatchObject({ status: 'paid' });
  await deliveriesSettled(stack, paymentId, 'paid');

  const hooks = forOrder();
  expect(hooks).toHaveLength(1);
  expect(receiver.verified(hooks[0], endpoint.secret)).toBe(true);
  expect(JSON.parse(hooks[0].body).data).toMatchObject({ orderId, status: 'paid', amount: 77 });
  expect(await stack.db('webhook_deliveries').where({ payment_id: paymentId })).toEqual([
    expect.objectContaining({ state: 'delivered', attempts: 1 }),
  ]);
  const events = await stack.db('payment_events').where({ payment_id: paymentId }).orderBy('id');
  expect(events.map((e: { to_status: string }) => e.to_status)).toEqual(['pending', 'paid']);
});

it('kill -9 of a worker while another runs, before the result: the payment is paid within 10 s of it', async () => {
  const first = await startWorkerProcess();
  const key = await apiKey(stack);
  const orderId = uniq('ord');
  const created = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u-1', amount: 78, customerId: 'c-1' });
  expect(created.status).toBe(200);
  const paymentId: string = created.body.body.paymentId;
  const row = await waitFor(() => stack.db('payments').where({ id: paymentId }).first(), 20_000, 'payment recorded');
  // a delayed-start QR payment runs no task before its result: no worker holds it yet, so the
  // kill leaves nothing on the dead worker's sticky queue; the result's task goes to the living one
  expect(row.workflow_id).toBeTruthy();
  await startWorkerProcess();

  first.kill('SIGKILL');
  await new Promise<void>((r) =>
    first.exitCode !== null || first.signalCode !== null ? r() : first.once('exit', () => r()),
  );
  const res = await post(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 78, orderId }),
  );
  expect(res.status).toBe(200);
  const accepted = Date.now();
  // the task waits on the dead worker's sticky queue at most 3 s, then the other worker settles it
  // (Temporal's default of 10 s alone would take longer): the bound is 10 s
  await waitFor(
    async () => (await stack.db('payments').where({ id: paymentId }).first())?.status === 'paid',
    10_000,
    'paid within 10 s of the kill',
  );
  expect(Date.now() - accepted).toBeLessThan(10_000);
});

it('a settle step retried after a lost one that committed another status sends the committed status only', async () => {
  // found by `npm run chaos`: the step of a lost workflow task committed `expired` (and its
  // webhook); the retried task, with the provider's signal arrived meanwhile, decided `paid`
  const key = await apiKey(stack);
  await registerEndpoint(stack, key.key, { url: receiver.url });
  const orderId = uniq('ord');
  const created = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u-1', amount: 79, customerId: 'c-1' });
  expect(created.status).toBe(200);
  const row = await stack.db('payments').where({ order_id: orderId }).first();
  await stack.client.workflow.getHandle(row.workflow_id).terminate('the test plays the workflow');
  await applyTransition(stack.db, { paymentId: row.id, from: 'pending', to: 'expired', reason: 'the lost step' });

  const result = await stack.activities.settlePayment({
    change: { paymentId: row.id, from: 'pending', to: 'paid', reason: 'qr: success' },
    payment: {
      paymentId: row.id,
      orderId,
      userId: 'u-1',
      method: 'qr',
      amountSatang: 7900,
      mode: 'sandbox',
      workflowId: row.workflow_id,
      apiKeyId: key.id,
    },
    event: {
      paymentId: row.id,
      orderId,
      status: 'paid',
      amountSatang: 7900,
      timestamp: new Date().toISOString(),
      mode: 'sandbox',
      apiKeyId: key.id,
    },
  });
  expect(result.current).toBe('expired');
  expect((await stack.db('payments').where({ id: row.id }).first()).status).toBe('expired');
  const statuses = receiver.log.filter((r) => r.body.includes(orderId)).map((r) => JSON.parse(r.body).data.status);
  expect(statuses).toEqual(['expired']);
  expect(
    (await stack.db('payment_events').where({ payment_id: row.id }).orderBy('id')).map(
      (e: { to_status: string }) => e.to_status,
    ),
  ).toEqual(['pending', 'expired']);
});
