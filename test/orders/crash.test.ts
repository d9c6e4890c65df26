/**
 * kill -9 of the worker during finalize: the worker process is SIGKILLed as soon as the
 * finalisation's amount is fixed (the capture may or may not have reached the provider by then);
 * a new worker takes the workflow over and the order settles with exactly one capture. Also a
 * card final above the authorisation, killed once the new authorisation's row is written.
 */
import type { ChildProcess } from 'node:child_process';
import { orderWorkflowOf } from './support';
import { startCrashWorker } from '../support/roles';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, request } from '../payments/support';

jest.setTimeout(180_000);

let stack: TestStack;
const children: ChildProcess[] = [];
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await stack.close();
});

/** A worker in its own process on this test's task queue; resolves once it polls. */
async function startWorkerProcess(): Promise<ChildProcess> {
  const child = await startCrashWorker(stack.taskQueue);
  children.push(child);
  return child;
}

it('a worker killed during finalize: after restart the order settles, captured once', async () => {
  const first = await startWorkerProcess();
  const { key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
  const api = () => request(stack.app.callback());
  const orderId = uniq('ok');
  const auth = await api()
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount: '300', token: 'tok_test_visa', capture: 'false' });
  expect(auth.status).toBe(200);
  await stack.client.workflow
    .getHandle(await orderWorkflowOf(stack.db, orderId))
    .signal(
      'paymentResult',
      provenResult(stack.config, auth.body.body.paymentId, { status: 'success', provider: 'card' }),
    );
  await waitFor(() => stack.db('orders').where({ order_id: orderId, status: 'open' }).first(), 30_000, 'authorised');
  await api()
    .post(`/orders/${orderId}/adjustments`)
    .set('X-API-Key', key)
    .send({ lines: [{ description: 'Prawns: out of stock', amount: -80, reason: 'out_of_stock' }] });

  const finalizing = api()
    .post(`/orders/${orderId}/finalize`)
    .set('X-API-Key', key)
    .then((r) => r);
  await waitFor(
    () => stack.db('order_finalizations').where({ order_id: orderId }).whereNotNull('final_satang').first(),
    30_000,
    'the final amount fixed',
  );
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  await startWorkerProcess();

  const answer = await finalizing;
  const settled =
    answer.status === 200 && answer.body.body.status === 'settled'
      ? answer.body.body
      : (await api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key)).body.body;
  expect(settled).toMatchObject({ status: 'settled', capturedAmount: 220, finalAmount: 220 });
  const chargeId = auth.body.body.chargeId as string;
  const captures = await stack.db('sim_card_captures').where({ charge_id: chargeId });
  expect(captures.map((c) => [c.kind, Number(c.amount_satang)])).toEqual([['capture', 22000]]);
  await stack.client.workflow.getHandle(await orderWorkflowOf(stack.db, orderId)).result();
});

it('a worker killed while re-authorising above the authorisation: one new authorisation, each captured once', async () => {
  const first = await startWorkerProcess();
  const { key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
  const api = () => request(stack.app.callback());
  const orderId = uniq('oku');
  const auth = await api()
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount: '200', token: 'tok_test_visa', capture: 'false' });
  expect(auth.status).toBe(200);
  await stack.client.workflow
    .getHandle(await orderWorkflowOf(stack.db, orderId))
    .signal(
      'paymentResult',
      provenResult(stack.config, auth.body.body.paymentId, { status: 'success', provider: 'card' }),
    );
  await waitFor(() => stack.db('orders').where({ order_id: orderId, status: 'open' }).first(), 30_000, 'authorised');
  await api()
    .post(`/orders/${orderId}/adjustments`)
    .set('X-API-Key', key)
    .send({ lines: [{ description: 'Durian instead of mango', amount: 40, reason: 'substitution' }] });

  const finalizing = api()
    .post(`/orders/${orderId}/finalize`)
    .set('X-API-Key', key)
    .then((r) => r);
  await waitFor(
    () => stack.db('order_card_holds').where({ order_id: orderId }).first(),
    30_000,
    'the new hold recorded',
  );
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  await startWorkerProcess();

  const answer = await finalizing;
  const settled =
    answer.status === 200 && answer.body.body.status === 'settled'
      ? answer.body.body
      : (await api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key)).body.body;
  expect(settled).toMatchObject({ status: 'settled', capturedAmount: 240, finalAmount: 240 });
  const chargeId = auth.body.body.chargeId as string;
  const charges = await stack
    .db('sim_card_charges')
    .where({ id: chargeId })
    .orWhereRaw("metadata->>'sourceCharge' = ?", [chargeId])
    .orderBy('created_at');
  expect(charges.map((c) => Number(c.amount_satang))).toEqual([22000, 2000]);
  const ops = await stack.db('sim_card_captures').whereIn(
    'charge_id',
    charges.map((c) => c.id),
  );
  expect(ops.map((o) => [o.kind, Number(o.amount_satang)]).sort()).toEqual([
    ['capture', 2000],
    ['capture', 22000],
  ]);
  await stack.client.workflow.getHandle(await orderWorkflowOf(stack.db, orderId)).result();
});
