/**
 * A verified callback for a pending payment whose workflow was closed (processor.ts `closed`):
 * the paid order confirms, the re-drive survives a worker that is down when the callback comes,
 * an order payment's result waits unfinished for the redelivery, and a raw
 * paymentRedriveWorkflow start without the gateway's result proof changes nothing.
 */
import request from 'supertest';
import type { Client } from '@temporalio/client';
import { paidPaymentWorkflowId, type PaidOrderOutcome } from '../../src/callbacks';
import { paymentRedriveWorkflowId, paymentWorkflowIdOf } from '../../src/payments';
import { orderWorkflowOf } from '../orders/support';
import { createQueueWorkers } from '../../src/app/worker';
import { createTestStack, outsiderTemporalClient, provenResult, uniq, type TestStack } from '../support/stack';
import { newKey } from '../payments/support';
import { cardPayment, fieldSigned, post, receiptsOf, waitFor } from './helpers';

let stack: TestStack;
let raw: Client;
beforeAll(async () => {
  stack = await createTestStack({ env: { PAID_ORDER_CONFIRM_WINDOW_S: '30' } });
  raw = await outsiderTemporalClient();
});
afterAll(async () => {
  await raw.connection.close();
  await stack.close();
});

const statusOf = async (s: TestStack, paymentId: string) =>
  (await s.db('payments').where({ id: paymentId }).first())?.status as string | undefined;

it("the wallet handler's paid order confirms though the payment's workflow was terminated", async () => {
  const p = await cardPayment(stack, { amount: 40 });
  await raw.workflow.getHandle(p.workflowId).terminate('closed by hand');
  const handler = await request(stack.app.callback())
    .post('/wallet/callback')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify({ orderId: p.orderId, paymentId: p.paymentId, success: true, userId: 'u-1', amount: 40 }));
  expect(handler.status).toBe(200);
  const cb = await post(
    stack.app,
    '/walletcallback',
    fieldSigned(stack.config, 'WALLET', { walletId: 'wal_1', status: 'success', amount: 40, orderId: p.orderId }),
  );
  expect(cb.status).toBe(200);
  expect(await receiptsOf(stack, p.paymentId)).toEqual([expect.objectContaining({ outcome: 'redriven' })]);
  const outcome = (await stack.client.workflow
    .getHandle(paidPaymentWorkflowId(p.paymentId))
    .result()) as PaidOrderOutcome;
  expect(outcome).toMatchObject({ status: 'confirmed', paymentId: p.paymentId });
  expect(await statusOf(stack, p.paymentId)).toBe('paid');
});

it('the re-drive survives a worker down at the callback: it settles the payment when the worker starts', async () => {
  // a database of its own: its close() ends its pool, not the file's
  const gateway = await createTestStack({ worker: false, database: 'closed_workflow_down' });
  let workers: Awaited<ReturnType<typeof createQueueWorkers>> | undefined;
  try {
    const key = await newKey(gateway.db, { scopes: ['payments:write', 'payments:read'] });
    const orderId = uniq('closed-down');
    const created = await request(gateway.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
    expect(created.status).toBe(200);
    const paymentId = created.body.body.paymentId as string;
    await raw.workflow.getHandle(paymentWorkflowIdOf(paymentId)).terminate('closed by hand');
    const sent = fieldSigned(gateway.config, 'QR', { paymentId, status: 'success', amount: 12, orderId });
    const res = await post(gateway.app, '/qrcallback', sent);
    expect(res.status).toBe(200);
    expect(await statusOf(gateway, paymentId)).toBe('pending');

    workers = await createQueueWorkers({
      address: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
      namespace: 'default',
      paymentsQueue: gateway.taskQueue,
      queues: ['payments', 'webhooks', 'background'],
      activities: gateway.activities,
      workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
      shutdownGraceTime: '1 second',
      codecKeys: gateway.config.temporal.codecKeys,
    });
    const run = workers.run();
    run.catch(() => undefined);
    await waitFor(async () => (await statusOf(gateway, paymentId)) === 'paid', 20_000, 'paid after the worker started');
    // the provider's retry after the worker came back: the first answer, nothing again
    const again = await post(gateway.app, '/qrcallback', sent);
    expect(again.body).toEqual(res.body);
    expect(await receiptsOf(gateway, paymentId)).toHaveLength(1);
    await workers.stop();
    await run;
  } finally {
    await gateway.close();
  }
});

it("an order's pending payment whose order workflow was terminated: answered, its receipt kept unfinished for the redelivery", async () => {
  const key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
  const orderId = uniq('closed-order');
  const res = await request(stack.app.callback())
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u', amount: '30', token: 'tok_test_visa', capture: 'false' });
  expect(res.status).toBe(200);
  const paymentId = res.body.body.paymentId as string;
  const row = await waitFor(() => stack.db('payments').where({ id: paymentId }).whereNotNull('provider_ref').first());
  await raw.workflow.getHandle(await orderWorkflowOf(stack.db, orderId)).terminate('closed by hand');
  const amount = Number(row.amount_satang) / 100;
  const cb = await post(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount, orderId }),
  );
  // answered once the receipt was committed; the signal then found the order's workflow closed,
  // which cannot be re-driven from here: the receipt stays unfinished (tried again after each
  // lease) and the administrator is alerted
  expect(cb.status).toBe(200);
  expect(await receiptsOf(stack, paymentId)).toEqual([expect.objectContaining({ outcome: null })]);
  expect(await statusOf(stack, paymentId)).toBe('pending');
});

describe('a raw paymentRedriveWorkflow start (the door)', () => {
  const pendingQr = async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const orderId = uniq('redrive-forged');
    const res = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
    expect(res.status).toBe(200);
    return { orderId, paymentId: res.body.body.paymentId as string };
  };

  it('without a result proof, or with one made for another payment, settles nothing', async () => {
    const p = await pendingQr();
    const other = await pendingQr();
    await raw.workflow.getHandle(paymentWorkflowIdOf(p.paymentId)).terminate('closed by hand');
    const forged = [
      { status: 'success', provider: 'qr', receiptId: 'evt_forged' },
      provenResult(stack.config, other.paymentId, { status: 'success', provider: 'qr' }),
    ];
    for (const [i, result] of forged.entries()) {
      const handle = await raw.workflow.start('paymentRedriveWorkflow', {
        taskQueue: stack.taskQueue,
        workflowId: `${paymentRedriveWorkflowId(p.paymentId, 'success')}-${i}`,
        args: [{ paymentId: p.paymentId, orderId: p.orderId, result }],
      });
      await expect(stack.client.workflow.getHandle(handle.workflowId).result()).resolves.toEqual({
        status: null,
        settled: false,
      });
    }
    expect(await statusOf(stack, p.paymentId)).toBe('pending');
    await raw.workflow
      .getHandle(paymentWorkflowIdOf(other.paymentId))
      .terminate('test over')
      .catch(() => undefined);
  });
});
