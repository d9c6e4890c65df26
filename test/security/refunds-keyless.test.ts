/**
 * Keyless (public) card payments: no merchant's key refunds one (only a key with the operator
 * scope refunds:public does), and an order's timeline never shows another key's id, nor the
 * deliveries to another merchant's endpoint.
 */
import { cardPayment } from '../callbacks/helpers';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { startReceiver } from '../webhooks/helpers';
import { createTestStack, provenResult, type TestStack } from '../support/stack';
import { newKey, request } from '../payments/support';

let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack();
});
afterAll(() => stack.close());

const api = () => request(stack.app.callback());

/** A keyless (public) card payment of `amount` THB, settled paid by the provider's proven result. */
async function paidPublicCard(amount: number) {
  const p = await cardPayment(stack, { amount });
  const handle = stack.client.workflow.getHandle(p.workflowId);
  await handle.signal(
    'paymentResult',
    provenResult(stack.config, p.paymentId, { status: 'success', provider: 'card', reference: p.providerRef }),
  );
  await handle.result();
  return p;
}

describe('refunds of a keyless payment', () => {
  it("merchant keys get 404; the operator's refund does not show its key id to the merchants", async () => {
    const a = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const b = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const p = await paidPublicCard(100);

    const byA = await api().post('/refund').set('X-API-Key', a.key).send({ orderId: p.orderId, amount: 10 });
    expect(byA.status).toBe(404);
    const byB = await api().post('/refund').set('X-API-Key', b.key).send({ orderId: p.orderId, amount: 10 });
    expect(byB.status).toBe(404);
    expect(Number((await stack.db('payments').where({ id: p.paymentId }).first()).refunded_satang)).toBe(0);

    const operator = await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'refunds:public'] });
    const byOp = await api().post('/refund').set('X-API-Key', operator.key).send({ orderId: p.orderId, amount: 10 });
    expect(byOp.status).toBe(200);
    expect(byOp.body.body).toMatchObject({ status: 'succeeded', payment: { refundedAmount: 10 } });

    for (const viewer of [a, b]) {
      const t = await api().get(`/payments/${p.orderId}/timeline`).set('X-API-Key', viewer.key);
      expect(t.status).toBe(200);
      expect(t.body.body.entries.some((e: { type: string }) => e.type === 'refund')).toBe(true);
      const text = JSON.stringify(t.body);
      for (const other of [a, b, operator].filter((k) => k !== viewer)) expect(text).not.toContain(other.id);
    }
  });

  it("a merchant's timeline of a keyless payment shows its own webhook deliveries, not another merchant's", async () => {
    const receiver = await startReceiver(200);
    try {
      const a = await newKey(stack.db, { scopes: ['payments:read', 'webhooks:manage'] });
      const b = await newKey(stack.db, { scopes: ['payments:read'] });
      const ep = await createEndpoint(
        stack.db,
        stack.config,
        { id: a.id, mode: 'sandbox' },
        { url: receiver.url, publicPayments: true },
      );
      const p = await paidPublicCard(40);
      const timeline = async (k: string) =>
        JSON.stringify((await api().get(`/payments/${p.orderId}/timeline`).set('X-API-Key', k)).body);
      expect(await timeline(a.key)).toContain(ep.id);
      expect(await timeline(b.key)).not.toContain(ep.id);
    } finally {
      await receiver.stop();
    }
  });
});
