/**
 * Issue 14, item 1: anyone who reaches the Temporal frontend could mark a payment paid with
 * `temporal workflow signal --name paymentResult --input '{"status":"success","provider":"qr"}'`.
 * Now the payment workflow settles a signalled result only when its proof verifies (an HMAC over
 * receipt id, payment id and status with RESULT_SIGNING_KEY, made by the callback processor): a
 * forged or replayed signal leaves the payment pending, sends no webhook and is logged as a
 * security event; the payment keeps waiting for its real result.
 */
import request from 'supertest';
import { PaymentWorkflowType, type PaymentView } from '../../src/payments';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { fieldSigned, post } from '../callbacks/helpers';
import { newKey, rowOf } from '../payments/support';
import { capturingLogger, createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { startReceiver, type Receiver } from '../webhooks/helpers';
import { paymentHandle } from '../payments/support';

jest.setTimeout(120_000);

const log = capturingLogger();
let stack: TestStack;
let key: string;
let receiver: Receiver;
beforeAll(async () => {
  stack = await createTestStack({ logger: log.logger });
  const k = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
  key = k.key;
  receiver = await startReceiver(200);
  await createEndpoint(stack.db, stack.config, { id: k.id, mode: 'sandbox' }, { url: receiver.url });
});
afterAll(async () => {
  await receiver.stop();
  await stack.close();
});

async function qrPayment(): Promise<{ orderId: string; paymentId: string }> {
  const orderId = uniq('proof');
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount: 42.5, customerId: 'c-1' });
  expect(res.status).toBe(200);
  return { orderId, paymentId: res.body.body.paymentId };
}

const forgeries = () => log.lines.filter((l) => l.securityEvent === 'payment_result_forged');
const webhooksOf = (orderId: string) =>
  receiver.log
    .map((r) => JSON.parse(r.body) as { data: { orderId: string; status: string } })
    .filter((b) => b.data.orderId === orderId);

/**
 * Signals `result` to the payment's workflow and waits until the worker has dealt with it:
 * rejected it (its security event), or (what the code before proofs did) settled the payment.
 */
async function signalRejected(orderId: string, result: unknown): Promise<void> {
  const before = forgeries().length;
  await (await paymentHandle(stack, orderId)).signal('paymentResult', result as never);
  await waitFor(
    async () => forgeries().length > before || (await rowOf(stack.db, orderId)).status !== 'pending',
    20_000,
    'the rejection (or the settlement) of the signalled result',
  );
  expect((await rowOf(stack.db, orderId)).status).toBe('pending');
  expect(forgeries().length).toBe(before + 1);
}

async function stillPending(orderId: string, paymentId: string): Promise<void> {
  const handle = await paymentHandle(stack, orderId);
  const ran = ((await handle.fetchHistory()).events ?? []).some((e) => e.workflowTaskCompletedEventAttributes);
  // a delayed-start payment that no result reached has run no task (a query needs one): running
  if (ran) expect((await handle.query<PaymentView>('payment')).status).toBe('pending');
  else expect((await handle.describe()).status.name).toBe('RUNNING');
  expect((await rowOf(stack.db, orderId)).status).toBe('pending');
  expect(await stack.db('payment_events').where({ payment_id: paymentId }).pluck('to_status')).toEqual(['pending']);
  expect(await stack.db('webhook_deliveries').where({ payment_id: paymentId })).toEqual([]);
  expect(webhooksOf(orderId)).toEqual([]);
}

it('a signal sent straight to Temporal without a proof leaves the payment pending, sends no webhook and is logged as a security event; the real callback then pays it', async () => {
  const { orderId, paymentId } = await qrPayment();
  // the result `temporal workflow signal-with-start --signal-name paymentResult` would deliver
  // (its start input is ignored for a running workflow; it ends the start delay)
  await signalRejected(orderId, { status: 'success', provider: 'qr' });
  await stillPending(orderId, paymentId);
  const event = forgeries().at(-1)!;
  expect(event).toMatchObject({ level: 50, paymentId, status: 'success', provider: 'qr', proofPresent: false });
  expect(event.msg).toMatch(/^security: payment result rejected/);

  // the payment still waits for its result: the provider's signed callback settles it, once
  const res = await post(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 42.5, orderId }),
  );
  expect(res.body).toMatchObject({ statusCode: 200, body: { message: 'Callback processed' } });
  await expect((await paymentHandle(stack, orderId)).result()).resolves.toMatchObject({
    status: 'paid',
  });
  await waitFor(async () => webhooksOf(orderId).length > 0, 20_000, 'the paid webhook');
  expect(webhooksOf(orderId).map((b) => b.data.status)).toEqual(['paid']);
});

it('a valid proof replayed for another payment, or for the other status, or a made-up one, is rejected: nothing changes', async () => {
  const a = await qrPayment();
  const b = await qrPayment();
  const forAsuccess = provenResult(stack.config, a.paymentId, { status: 'success', provider: 'qr' });
  const forBfailed = provenResult(stack.config, b.paymentId, { status: 'failed', provider: 'qr' });
  // A's proof on B's workflow
  await signalRejected(b.orderId, forAsuccess);
  // B's proof of `failed` presented as a success
  await signalRejected(b.orderId, { ...forBfailed, status: 'success' });
  // the right shape, the wrong key
  await signalRejected(b.orderId, { ...forBfailed, status: 'success', proof: 'ab'.repeat(32) });
  await stillPending(b.orderId, b.paymentId);
  await stillPending(a.orderId, a.paymentId);
  // no secret in the log: neither the key nor a proof
  for (const line of log.raw) {
    expect(line).not.toContain(stack.config.results.signingKey);
    expect(line).not.toContain(forAsuccess.proof);
    expect(line).not.toContain(forBfailed.proof);
  }
  for (const o of [a, b]) await (await paymentHandle(stack, o.orderId)).terminate('test done');
});

it('a late-result workflow started straight through Temporal changes nothing without a proof, or with a true proof and a false payment status', async () => {
  const { orderId, paymentId } = await qrPayment();
  const proven = provenResult(stack.config, paymentId, { status: 'success', provider: 'qr' });
  await (await paymentHandle(stack, orderId)).signal('paymentResult', proven);
  await expect((await paymentHandle(stack, orderId)).result()).resolves.toMatchObject({
    status: 'paid',
  });
  const start = (id: string, result: unknown) =>
    stack.client.workflow.execute(PaymentWorkflowType.lateResult, {
      taskQueue: stack.taskQueue,
      workflowId: uniq(id),
      args: [{ paymentId, orderId, paymentStatus: 'expired', result }],
    });
  // no proof: rejected (a security event)
  await expect(start('forged-late', { status: 'success', provider: 'qr' })).resolves.toEqual({ verdict: 'rejected' });
  // the payment's own proof, but it is paid, not expired: no conflict, nothing refunded
  await expect(start('lying-late', proven)).resolves.toEqual({ verdict: 'agrees' });
  expect(await stack.db('payment_conflicts').where({ payment_id: paymentId })).toEqual([]);
  expect(await stack.db('refunds').where({ payment_id: paymentId })).toEqual([]);
  expect((await rowOf(stack.db, orderId)).status).toBe('paid');
});
