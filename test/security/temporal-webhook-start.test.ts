/**
 * A forged webhookDeliveryWorkflow start (a plain Temporal client, no codec): an event saying a
 * merchant's pending order was paid. Talat signs and sends nothing the records do not hold.
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

it('a forged "paid" event for a pending order sends no signed webhook', async () => {
  const key = await newKey(stack.db, { scopes: ['payments:write', 'webhooks:manage'] });
  const witness = await webhookWitness(stack, key);
  try {
    const orderId = uniq('sec-hook');
    const created = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
    expect(created.status).toBe(200);
    const forged = await raw.workflow.start('webhookDeliveryWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `forged-${randomUUID()}`,
      args: [
        {
          paymentId: created.body.body.paymentId,
          orderId,
          status: 'paid',
          amountSatang: 1200,
          timestamp: new Date().toISOString(),
          mode: 'sandbox',
          apiKeyId: key.id,
        },
      ],
    });
    await forged.result().catch(() => undefined);
    await expect(witness.received(orderId, 'paid')).rejects.toThrow(/not met/);
    expect(await stack.db('webhook_deliveries').where({ order_id: orderId })).toHaveLength(0);
  } finally {
    await witness.stop();
  }
});
