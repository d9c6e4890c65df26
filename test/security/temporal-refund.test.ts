/**
 * Forged Temporal calls on the refund path, as an outsider who reaches the frontend (port 7233)
 * would make them: a plain client (no codec, no key), the `refund` update with and without
 * update-with-start, under the real workflow id and another one. None may move money.
 */
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { refundsWorkflowId } from '../../src/refunds';
import { createTestStack, outsiderTemporalClient, uniq, type TestStack } from '../support/stack';
import { newKey, paidQr, request } from '../payments/support';

let stack: TestStack;
let raw: Client;
let ownerKey: { key: string; id: string };
beforeAll(async () => {
  stack = await createTestStack();
  raw = await outsiderTemporalClient();
  ownerKey = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
});
afterAll(async () => {
  await raw.connection.close();
  await stack.close();
});

/** The money refunded on the payment, by the payments row and by the refunds rows. */
async function refundedOf(paymentId: string) {
  const p = await stack.db('payments').where({ id: paymentId }).first();
  const rows = await stack.db('refunds').where({ payment_id: paymentId }).whereIn('status', ['pending', 'succeeded']);
  return { refunded: Number(p.refunded_satang), rows: rows.length };
}

/** A forged `refund` update (update-with-start) on workflow `workflowId`; its outcome, or the error's message. */
async function forgedRefund(workflowId: string, orderId: string, request: Record<string, unknown>) {
  const startWorkflowOperation = new WithStartWorkflowOperation('orderRefundsWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [{ orderId, idleSeconds: 5 }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  try {
    return await raw.workflow.executeUpdateWithStart('refund', {
      args: [request],
      updateId: String(request.refundId),
      startWorkflowOperation,
    });
  } catch (e) {
    return { error: (e as Error).message };
  }
}

describe('forged refund updates (a plain Temporal client, no key, no proof)', () => {
  it('update-with-start on refunds-<orderId> with only a refund id refunds nothing', async () => {
    const { orderId, paymentId } = await paidQr(stack, ownerKey.key, 100.03, 'sec-rf');
    const out = await forgedRefund(refundsWorkflowId(orderId), orderId, { refundId: 're_forged1' });
    expect(out).not.toMatchObject({ ok: true });
    expect(await refundedOf(paymentId)).toEqual({ refunded: 0, rows: 0 });
  });

  it('the same with an amount and the owner key id, under any workflow id, refunds nothing', async () => {
    const { orderId, paymentId } = await paidQr(stack, ownerKey.key, 50, 'sec-rf');
    for (const workflowId of [refundsWorkflowId(orderId), uniq('any-id')]) {
      const out = await forgedRefund(workflowId, orderId, {
        refundId: `re_${uniq('forged')}`,
        amountSatang: 1000,
        apiKeyId: ownerKey.id,
        proof: '0'.repeat(64),
      });
      expect(out).not.toMatchObject({ ok: true });
    }
    expect(await refundedOf(paymentId)).toEqual({ refunded: 0, rows: 0 });
  });

  it('a forged update on a refunds workflow that a genuine refund started refunds nothing more', async () => {
    const { orderId, paymentId } = await paidQr(stack, ownerKey.key, 80, 'sec-rf');
    const genuine = await request(stack.app.callback())
      .post('/refund')
      .set('X-API-Key', ownerKey.key)
      .send({ orderId, amount: 10 });
    expect(genuine.body.body).toMatchObject({ status: 'succeeded', payment: { refundedAmount: 10 } });
    const out = await forgedRefund(refundsWorkflowId(orderId), orderId, {
      refundId: `re_${uniq('forged')}`,
      apiKeyId: ownerKey.id,
    });
    expect(out).not.toMatchObject({ ok: true });
    expect(await refundedOf(paymentId)).toEqual({ refunded: 1000, rows: 1 });
  });
});
