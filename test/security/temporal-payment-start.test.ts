/**
 * Forged payment workflow starts, as an outsider at the Temporal frontend would make them (a
 * plain client, no codec): a QR workflow under another id naming a real pending payment, and a
 * card workflow inventing a payment for a merchant's key. Neither changes, creates nor charges a
 * payment, and no webhook goes out.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createTestStack, outsiderTemporalClient, uniq, type TestStack } from '../support/stack';
import { newKey, request, webhookWitness } from '../payments/support';

let stack: TestStack;
let raw: Client;
beforeAll(async () => {
  stack = await createTestStack();
  raw = await outsiderTemporalClient();
});
afterAll(async () => {
  await raw.connection.close();
  await stack.close();
});

describe('forged payment workflow starts', () => {
  it('a QR workflow under another id naming a real pending payment does not expire it', async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const orderId = uniq('sec-start');
    const created = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
    expect(created.status).toBe(200);
    const paymentId = created.body.body.paymentId as string;
    const forged = await raw.workflow.start('qrPaymentWorkflowV2', {
      taskQueue: stack.taskQueue,
      workflowId: `forged-${randomUUID()}`,
      args: [
        {
          paymentId,
          orderId,
          userId: 'u',
          amountSatang: 1200,
          mode: 'sandbox',
          apiKeyId: key.id,
          expiresAt: new Date(Date.now() + 200).toISOString(),
          qr: { payload: 'x', crc: 'x', promptPayId: 'x' },
        },
      ],
    });
    await forged.result().catch(() => undefined);
    const row = await stack.db('payments').where({ id: paymentId }).first();
    expect(row.status).toBe('pending');
  });

  it("a card workflow inventing a paid payment for a merchant's key writes no row and sends no webhook", async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'webhooks:manage'] });
    const witness = await webhookWitness(stack, key);
    try {
      const orderId = uniq('sec-start');
      const forged = await raw.workflow.start('cardPaymentWorkflowV2', {
        taskQueue: stack.taskQueue,
        workflowId: `payment-${orderId}`,
        args: [
          {
            paymentId: `pay_${randomUUID().replace(/-/g, '')}`,
            orderId,
            userId: 'u',
            amountSatang: 99_900,
            mode: 'sandbox',
            apiKeyId: key.id,
            token: 'tok_test_visa',
            timeoutSeconds: 2,
          },
        ],
      });
      await forged.result().catch(() => undefined);
      expect(await stack.db('payments').where({ order_id: orderId }).first()).toBeUndefined();
      await expect(witness.received(orderId, 'paid')).rejects.toThrow(/not met/);
    } finally {
      await witness.stop();
    }
  });
});
