/**
 * A forged webhookDeliveryWorkflow start (a plain Temporal client, no codec): an event saying a
 * merchant's pending order was paid. Talat signs and sends nothing the records do not hold.
 * A forged webhookKeepTryingWorkflow start (ids that are not a retrying dead letter) sends nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createTestStack, outsiderTemporalClient, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { paymentWorkflowIdOf } from '../../src/payments';
import { newKey, request, webhookWitness } from '../payments/support';
import { resultAware } from '../payments/support';

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

it('a forged webhookKeepTryingWorkflow start (a message that is not a retrying dead letter) sends nothing', async () => {
  const { startReceiver } = await import('../webhooks/helpers');
  const { createEndpoint } = await import('../../src/webhooks/endpoints');
  const key = await newKey(stack.db, { scopes: ['payments:write', 'webhooks:manage'] });
  const receiver = await startReceiver(500);
  try {
    // no schedule after the 1, 2, 4 s retries: the dead letter gives up at once
    await createEndpoint(
      stack.db,
      stack.config,
      { id: key.id, mode: 'sandbox' },
      { url: receiver.url, retrySchedule: [] },
    );
    const orderId = uniq('sec-kt');
    const created = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 13, customerId: 'c' });
    await resultAware(stack, stack.client.workflow.getHandle(paymentWorkflowIdOf(created.body.body.paymentId))).signal(
      'paymentResult',
      provenResult(stack.config, created.body.body.paymentId, { status: 'success', provider: 'qr', reference: 't' }),
    );
    const letter: { id: string; delivery_id: string } = await waitFor(
      () =>
        stack
          .db('webhook_dead_letters as l')
          .join('webhook_deliveries as d', 'd.id', 'l.delivery_id')
          .where({ 'd.order_id': orderId, 'l.retry_state': 'gave_up' })
          .first('l.id', 'l.delivery_id') as Promise<{ id: string; delivery_id: string } | undefined>,
      30_000,
      'the dead letter that gave up',
    );
    receiver.status = 200;
    const before = receiver.log.length;
    // its own ids (given up), made-up ones, with and without the schedule (delaysMs skips the first step)
    for (const args of [
      { deliveryId: letter.delivery_id, deadLetterId: letter.id, delaysMs: [10, 10] },
      { deliveryId: letter.delivery_id, deadLetterId: letter.id },
      { deliveryId: letter.delivery_id, deadLetterId: 'dlq_forged', delaysMs: [10] },
    ]) {
      const forged = await raw.workflow.start('webhookKeepTryingWorkflow', {
        taskQueue: stack.taskQueue,
        workflowId: `forged-${randomUUID()}`,
        args: [args],
      });
      // the outcome is sealed by the worker's codec: read it with the gateway's client
      expect(await stack.client.workflow.getHandle(forged.workflowId).result()).toMatchObject({
        state: expect.stringMatching(/^(cancelled|gave_up)$/),
      });
    }
    expect(receiver.log.length).toBe(before);
    expect(await stack.db('webhook_deliveries').where({ id: letter.delivery_id }).first()).toMatchObject({
      state: 'dead',
      attempts: 4,
    });
  } finally {
    await receiver.stop();
  }
});
