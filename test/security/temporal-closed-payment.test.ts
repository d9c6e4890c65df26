/**
 * Issue 38, item 2: a pending payment whose workflow was closed by hand (terminated with the raw
 * Temporal client, the id squatted and terminated again) still ends paid on the provider's signed
 * success callback: the row is the truth. The merchant gets its signed webhook, GET /checkstatus
 * shows paid, a duplicate callback changes nothing. Before the fix: 200 and a row pending for good.
 */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { createTestStack, outsiderTemporalClient, uniq, waitFor, type TestStack } from '../support/stack';
import { fieldSigned, post, receiptsOf } from '../callbacks/helpers';
import { request } from '../payments/support';
import { apiKey, registerEndpoint, startReceiver, type Receiver } from '../webhooks/helpers';
import { paymentWorkflowIdOf, type QrPaymentInput } from '../../src/payments';

let stack: TestStack;
let raw: Client;
let receiver: Receiver;
beforeAll(async () => {
  stack = await createTestStack();
  raw = await outsiderTemporalClient();
  receiver = await startReceiver(200);
});
afterAll(async () => {
  await receiver.stop();
  await raw.connection.close();
  await stack.close();
});

/** A merchant with a webhook endpoint, and a pending QR payment of theirs. */
async function pendingPayment() {
  const key = await apiKey(stack);
  const endpoint = await registerEndpoint(stack, key.key, { url: receiver.url });
  const orderId = uniq('sec-closed');
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
  expect(res.status).toBe(200);
  return { key, endpoint, orderId, paymentId: res.body.body.paymentId as string };
}

const successCallback = (p: { paymentId: string; orderId: string }) =>
  fieldSigned(stack.config, 'QR', { paymentId: p.paymentId, status: 'success', amount: 12, orderId: p.orderId });

const rowStatus = async (paymentId: string) =>
  (await stack.db('payments').where({ id: paymentId }).first())?.status as string | undefined;

/** The `paid` webhooks the receiver got for this payment, each verified with the endpoint's secret. */
const paidWebhooks = (paymentId: string, secret: string) =>
  receiver.log.filter((r) => {
    const body = JSON.parse(r.body) as { data?: { paymentId?: string; status?: string } };
    return body.data?.paymentId === paymentId && body.data.status === 'paid' && receiver.verified(r, secret);
  });

async function expectPaidEverywhere(p: Awaited<ReturnType<typeof pendingPayment>>) {
  await waitFor(async () => (await rowStatus(p.paymentId)) === 'paid', 20_000, 'payment paid');
  await waitFor(async () => paidWebhooks(p.paymentId, p.endpoint.secret).length > 0, 20_000, 'paid webhook');
  const check = await request(stack.app.callback()).get(`/checkstatus/${p.orderId}`).set('X-API-Key', p.key.key);
  expect(check.status).toBe(200);
  expect(check.body.body).toMatchObject({ paymentId: p.paymentId, status: 'paid' });
}

describe('a pending payment whose workflow was closed by hand', () => {
  it('terminated with the raw client: the signed success callback still makes it paid, webhook and all', async () => {
    const p = await pendingPayment();
    await raw.workflow.getHandle(paymentWorkflowIdOf(p.paymentId)).terminate('attacker');
    const sent = successCallback(p);
    const res = await post(stack.app, '/qrcallback', sent);
    expect(res.status).toBe(200);
    expect(res.body.body.message).not.toMatch(/already ended/);
    await expectPaidEverywhere(p);

    // the provider's duplicate gets the first response and changes nothing: one receipt, one webhook
    const again = await post(stack.app, '/qrcallback', sent);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(await receiptsOf(stack, p.paymentId)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(paidWebhooks(p.paymentId, p.endpoint.secret)).toHaveLength(1);
    expect(await stack.db('payment_events').where({ payment_id: p.paymentId, to_status: 'paid' })).toHaveLength(1);
  });

  it('terminated, squatted under its id with forged input, terminated again: still paid', async () => {
    const p = await pendingPayment();
    const id = paymentWorkflowIdOf(p.paymentId);
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const payloads = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads!;
    const input = await decodeFromPayloadsAtIndex<QrPaymentInput>(
      stack.client.options.loadedDataConverter,
      0,
      payloads,
    );
    await raw.workflow.getHandle(id).terminate('squat');
    await raw.workflow.start('qrPaymentWorkflowV2', {
      taskQueue: stack.taskQueue,
      workflowId: id,
      args: [{ ...input, expiresAt: new Date(Date.now() + 3_600_000).toISOString() }],
    });
    await raw.workflow.getHandle(id).terminate('squat again');
    const res = await post(stack.app, '/qrcallback', successCallback(p));
    expect(res.status).toBe(200);
    await expectPaidEverywhere(p);
  });
});
