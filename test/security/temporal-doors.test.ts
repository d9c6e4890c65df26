/**
 * Issue 38's Temporal doors, as an outsider at the frontend makes them (a plain client, no
 * codec): a payment restarted under its own id with an earlier expiry, a payment id squatted
 * before the merchant uses it, raw bank requests, and a raw resend to a disabled endpoint.
 */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { createTestStack, outsiderTemporalClient, uniq, waitFor, type TestStack } from '../support/stack';
import { fieldSigned, post } from '../callbacks/helpers';
import { derivedPaymentWorkflowId, newKey, paymentError, request } from '../payments/support';
import { startReceiver } from '../webhooks/helpers';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { paymentWorkflowIdOf, type QrPaymentInput } from '../../src/payments';
import { taskQueueOf } from '../../src/domain/temporal';

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

const qrPayment = async (key: string, orderId = uniq('sec-door')) => {
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
  return { res, orderId };
};

/** Started raw (in clear); the result read as whoever holds the codec key would read it. */
async function executeRaw(type: string, taskQueue: string, workflowId: string, input: object): Promise<unknown> {
  await raw.workflow.start(type, { taskQueue, workflowId, args: [input] });
  return stack.client.workflow.getHandle(workflowId).result();
}

/** The start input of a running workflow, as whoever reads its history (and can decode it) sees it. */
async function startInputOf<T>(workflowId: string): Promise<T> {
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const payloads = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads!;
  return decodeFromPayloadsAtIndex<T>(stack.client.options.loadedDataConverter, 0, payloads);
}

describe('payment starts: the proof covers the whole input', () => {
  it('a payment terminated and started again under its id with an earlier expiry does not expire', async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const { res, orderId } = await qrPayment(key.key);
    expect(res.status).toBe(200);
    const id = paymentWorkflowIdOf(res.body.body.paymentId as string);
    const input = await startInputOf<QrPaymentInput>(id);
    await raw.workflow.getHandle(id).terminate('squat');
    const forged = await raw.workflow.start('qrPaymentWorkflowV2', {
      taskQueue: stack.taskQueue,
      workflowId: id,
      args: [{ ...input, expiresAt: new Date(Date.now() + 500).toISOString() }],
    });
    await forged.result().catch(() => undefined);
    const row = await stack.db('payments').where({ order_id: orderId }).first();
    expect(row.status).toBe('pending');
  });
});

describe('a paid customer is confirmed, whichever execution holds the id', () => {
  it("a payment restarted by hand under its id still settles paid on the provider's signed callback", async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const { res, orderId } = await qrPayment(key.key);
    expect(res.status).toBe(200);
    const id = paymentWorkflowIdOf(res.body.body.paymentId as string);
    const input = await startInputOf<QrPaymentInput>(id);
    await raw.workflow.getHandle(id).terminate('squat');
    await raw.workflow.start('qrPaymentWorkflowV2', {
      taskQueue: stack.taskQueue,
      workflowId: id,
      args: [{ ...input, expiresAt: new Date(Date.now() + 3_600_000).toISOString() }],
    });
    const paymentId = res.body.body.paymentId as string;
    const cb = await post(
      stack.app,
      '/qrcallback',
      fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 12, orderId }),
    );
    expect(cb.status).toBe(200);
    await waitFor(async () => (await stack.db('payments').where({ id: paymentId }).first())?.status === 'paid', 20_000);
    await raw.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  });
});

describe('the gateway adopts only its own executions', () => {
  it('a payment id squatted before the merchant uses it is a clear error, and nothing is lost', async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const orderId = uniq('sec-squat');
    await raw.workflow.start('qrPaymentWorkflowV2', {
      taskQueue: stack.taskQueue,
      workflowId: derivedPaymentWorkflowId(stack.config, key, 'sandbox', orderId),
      args: [
        {
          paymentId: 'pay_squat',
          orderId,
          userId: 'u',
          amountSatang: 1200,
          mode: 'sandbox',
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
          qr: { payload: 'x', crc: 'x', promptPayId: 'x' },
        },
      ],
    });
    const { res } = await qrPayment(key.key, orderId);
    expect(res.status).toBe(409);
    expect(res.body).toEqual(paymentError('CONFLICT', { orderId }));
    // nothing of the merchant's is left half-made: no row that no workflow of the gateway's carries
    expect(await stack.db('payments').where({ order_id: orderId }).first()).toBeUndefined();
  });
});

describe('the gateway adopts only its own card executions', () => {
  it('a card payment id squatted before the merchant uses it is a clear error, and no row is left', async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const orderId = uniq('sec-squat-card');
    await raw.workflow.start('cardPaymentWorkflowV2', {
      taskQueue: stack.taskQueue,
      workflowId: derivedPaymentWorkflowId(stack.config, key, 'sandbox', orderId),
      args: [
        {
          paymentId: 'pay_squat',
          orderId,
          userId: 'u',
          amountSatang: 1000,
          mode: 'sandbox',
          token: 'tok_visa',
          timeoutSeconds: 60,
        },
      ],
    });
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: '10', token: 'tok_visa' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(paymentError('CONFLICT', { orderId }));
    expect(await stack.db('payments').where({ order_id: orderId }).first()).toBeUndefined();
  });
});

describe('bank requests', () => {
  const createUser = async (key: string) => {
    const userId = uniq('u');
    const res = await request(stack.app.callback())
      .post('/bank/createuser')
      .set('X-API-Key', key)
      .send({ userId, name: 'Somchai Jaidee', email: 'somchai@example.com' });
    expect(res.status).toBe(200);
    return userId;
  };

  it("a raw getUser reads nothing of a merchant's customer back", async () => {
    const key = await newKey(stack.db, { scopes: ['bank:write', 'bank:read'] });
    const userId = await createUser(key.key);
    const out = await executeRaw('bankRequestWorkflow', stack.taskQueue, uniq('bank-getUser-forged'), {
      op: 'getUser',
      mode: 'sandbox',
      userId,
    });
    expect(JSON.stringify(out)).not.toContain('Somchai');
    expect(out).toMatchObject({ ok: false });
  });

  it("a raw createOrder orders nothing for a merchant's bank user", async () => {
    const key = await newKey(stack.db, { scopes: ['bank:write', 'bank:read'] });
    const userId = await createUser(key.key);
    const out = await executeRaw('bankRequestWorkflow', stack.taskQueue, uniq('bank-createOrder-forged'), {
      op: 'createOrder',
      mode: 'sandbox',
      body: { orderId: uniq('o'), userId, amountSatang: 999_900, currency: 'THB' },
    });
    expect(out).toMatchObject({ ok: false });
    const user = await request(stack.app.callback()).get(`/bank/user/${userId}`).set('X-API-Key', key.key);
    expect(user.body.body.orders).toEqual([]);
  });
});

describe('webhook resend', () => {
  it('a raw resend to an endpoint its merchant disabled sends nothing', async () => {
    const key = await newKey(stack.db, { scopes: ['payments:write', 'webhooks:manage'] });
    const receiver = await startReceiver(200);
    try {
      const endpoint = await createEndpoint(
        stack.db,
        stack.config,
        { id: key.id, mode: 'sandbox' },
        { url: receiver.url },
      );
      const { res, orderId } = await qrPayment(key.key);
      expect(res.status).toBe(200);
      await stack.client.workflow.getHandle(paymentWorkflowIdOf(res.body.body.paymentId)).terminate('test: no result');
      const messageId = `wh_${uniq('m')}`;
      await stack.db('webhook_deliveries').insert({
        id: messageId,
        endpoint_id: endpoint.id,
        payment_id: res.body.body.paymentId,
        order_id: orderId,
        event_status: 'pending',
        payload: JSON.stringify({ event: 'payment.status.updated', data: { orderId, status: 'pending' } }),
        state: 'delivered',
      });
      await stack.db('webhook_endpoints').where({ id: endpoint.id }).update({ disabled: true });
      const out = await executeRaw('webhookResendWorkflow', taskQueueOf('webhooks', stack.taskQueue), uniq('wr'), {
        messageId,
        kind: 'resend',
      });
      expect(out).toMatchObject({ ok: false });
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.log).toHaveLength(0);
    } finally {
      await receiver.stop();
    }
  });
});
