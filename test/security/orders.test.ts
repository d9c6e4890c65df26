/**
 * The orders' doors: each route with another merchant's key (404, nothing of the order), with
 * none (401), and the order workflow's updates sent by an outsider's plain Temporal client (no
 * codec, no proof; made-up, copied or other-kind proofs, update-with-start under another id):
 * nothing is applied, captured or refunded.
 */
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { orderWorkflowIdOf } from '../../src/orders';
import { orderWorkflowOf } from '../orders/support';
import { signOrderStep } from '../../src/proofs';
import { createTestStack, outsiderTemporalClient, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paidQr, paymentError, request } from '../payments/support';

let stack: TestStack;
let raw: Client;
let owner: { key: string; id: string };
let other: { key: string; id: string };
beforeAll(async () => {
  stack = await createTestStack();
  raw = await outsiderTemporalClient();
  owner = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
  other = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
});
afterAll(async () => {
  await raw.connection.close();
  await stack.close();
});

const api = () => request(stack.app.callback());
const line = { description: 'Rice: out of stock', amount: -10, reason: 'out_of_stock' };

async function authorisedCard(estimate: number) {
  const orderId = uniq('so');
  const res = await api()
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', owner.key)
    .send({ orderId, userId: 'u', amount: String(estimate), token: 'tok_test_visa', capture: 'false' });
  const paymentId = res.body.body.paymentId as string;
  await stack.client.workflow
    .getHandle(await orderWorkflowOf(stack.db, orderId))
    .signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'card' }));
  await waitFor(
    async () => (await stack.db('orders').where({ order_id: orderId, status: 'open' }).first()) ?? undefined,
  );
  return { orderId, paymentId, chargeId: res.body.body.chargeId as string };
}

const movedOf = async (chargeId: string, orderId: string) => ({
  captures: (await stack.db('sim_card_captures').where({ charge_id: chargeId })).length,
  applied: (await stack.db('order_adjustments').where({ order_id: orderId, status: 'applied' })).length,
  order: (await stack.db('orders').where({ order_id: orderId }).first()).status,
});

describe('HTTP: every order route checks its owner', () => {
  it("another merchant's key gets 404 with nothing of the order; no key gets 401; nothing changes", async () => {
    const { orderId, chargeId } = await authorisedCard(100);
    const { orderId: qrOrder } = await paidQr(stack, owner.key, 40, 'so');
    for (const id of [orderId, qrOrder]) {
      const calls = [
        () =>
          api()
            .post(`/orders/${id}/adjustments`)
            .send({ lines: [line] }),
        () => api().post(`/orders/${id}/finalize`).send(),
        () => api().get(`/orders/${id}`),
      ];
      for (const call of calls) {
        const foreign = await call().set('X-API-Key', other.key);
        expect(foreign.status).toBe(404);
        expect(foreign.body).toEqual(paymentError('NOT_FOUND', { orderId: id }));
        expect((await call()).status).toBe(401);
      }
    }
    expect(await movedOf(chargeId, orderId)).toEqual({ captures: 0, applied: 0, order: 'open' });
    expect(await stack.db('orders').where({ order_id: qrOrder }).first()).toBeUndefined();
  });
});

describe('Temporal: updates without the gateway proof', () => {
  const forged = async (workflowId: string, name: 'adjust' | 'finalize', req: unknown) => {
    try {
      return await raw.workflow.getHandle(workflowId).executeUpdate(name, { args: [req] });
    } catch (e) {
      return { error: (e as Error).message };
    }
  };

  it('adjust and finalize with no proof, a made-up one, or a proof of another kind apply and capture nothing', async () => {
    const { orderId, chargeId } = await authorisedCard(100);
    const adj = await api()
      .post(`/orders/${orderId}/adjustments`)
      .set('X-API-Key', owner.key)
      .send({ lines: [line] });
    const adjId = adj.body.body.adjustments[0].adjustmentId as string;
    const fin = await stack
      .db('order_finalizations')
      .insert({
        id: `fin_${uniq('x')}`,
        order_id: orderId,
        order_payment_id: stack.db('orders').where({ order_id: orderId }).select('payment_id'),
      })
      .returning('id');
    const finId = fin[0].id as string;
    const wf = await orderWorkflowOf(stack.db, orderId);
    const attempts: ['adjust' | 'finalize', unknown][] = [
      ['finalize', { stepId: finId }],
      ['finalize', { stepId: finId, proof: '0'.repeat(64) }],
      // an adjustment's proof (as copied from a history) does not prove a finalisation
      [
        'finalize',
        {
          stepId: finId,
          proof: signOrderStep(stack.config.results.signingKey, { kind: 'adjust', stepId: finId, orderId }),
        },
      ],
      ['adjust', { stepId: adjId, proof: 'f'.repeat(64) }],
      ['adjust', null],
    ];
    for (const [name, req] of attempts) expect(await forged(wf, name, req)).not.toMatchObject({ ok: true });
    expect(await movedOf(chargeId, orderId)).toEqual({ captures: 0, applied: 1, order: 'open' });
  });

  it('update-with-start of a new order workflow under a paid QR order refunds nothing', async () => {
    const { orderId, paymentId } = await paidQr(stack, owner.key, 60, 'so');
    const startWorkflowOperation = new WithStartWorkflowOperation('orderSettlementWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: orderWorkflowIdOf(paymentId),
      args: [
        {
          orderId,
          paymentId,
          method: 'qr',
          mode: 'sandbox',
          apiKeyId: owner.id,
          lapseSeconds: 5,
          lapseAction: 'release',
        },
      ],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    const out = await raw.workflow
      .executeUpdateWithStart('finalize', {
        args: [{ stepId: `fin_${uniq('x')}`, proof: '1'.repeat(64) }],
        startWorkflowOperation,
      })
      .catch((e: Error) => ({ error: e.message }));
    expect(out).not.toMatchObject({ ok: true });
    expect(await stack.db('refunds').where({ payment_id: paymentId })).toHaveLength(0);
  });
});
