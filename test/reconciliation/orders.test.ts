/**
 * Reconciliation of orders settled on what was picked, on the real stack: card settlement lines
 * match the capture (the captured amount, not the authorised one); a line of the authorised
 * amount is an amount mismatch that says so; an authorisation alone, or a released one, is not
 * settled money (unknown); a capture no line settles is unsettled. A PromptPay top-up's line
 * matches the top-up payment and names its order; a wrong amount is a mismatch.
 */
import { orderWorkflowOf, topUpWorkflowOf } from '../orders/support';
import {
  addDays,
  bangkokDayOf,
  RECONCILIATION_WORKFLOW,
  reconciliationRunId,
  settlementKey,
  type ReconciliationResult,
  type SettlementProvider,
} from '../../src/reconciliation';
import { formatSettlementFile, type SettlementEntry } from '../../src/reconciliation/parsers';
import { createSettlementStore } from '../../src/reconciliation/files';
import { taskQueueOf } from '../../src/domain/temporal';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paidQr, request } from '../payments/support';
import { settlementEnv } from './generate';

let stack: TestStack;
let smtp: SmtpSink;
let key: string;
beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await createTestStack({ database: 'talat_test_recon_orders', env: settlementEnv(smtp.url) });
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
}, 120_000);
afterAll(async () => {
  await stack.close();
  await smtp.stop();
});

const api = () => request(stack.app.callback());
const orderOf = async (orderId: string) => (await api().get(`/orders/${orderId}`).set('X-API-Key', key)).body.body;
const adjust = (orderId: string, amount: number) =>
  api()
    .post(`/orders/${orderId}/adjustments`)
    .set('X-API-Key', key)
    .send({ lines: [{ description: 'picked', amount, reason: 'weight' }] });
const finalize = (orderId: string) => api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key).send();

/** A card order authorised for `estimate` (+10 %), then adjusted by `delta` and finalised unless `delta` is null. */
async function cardOrder(estimate: number, delta: number | null) {
  const orderId = uniq('rco');
  const res = await api()
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount: String(estimate), token: 'tok_test_visa', capture: 'false' });
  expect(res.status).toBe(200);
  const { paymentId, chargeId } = res.body.body as { paymentId: string; chargeId: string };
  await stack.client.workflow
    .getHandle(await orderWorkflowOf(stack.db, orderId))
    .signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'card' }));
  await waitFor(async () => (await orderOf(orderId)).status === 'open', 20_000, 'order open');
  if (delta !== null) {
    if (delta !== 0) expect((await adjust(orderId, delta)).status).toBe(200);
    expect((await finalize(orderId)).body.body.status).toBe('settled');
  }
  return { orderId, paymentId, chargeId };
}

/** A paid QR order of 100 THB finalised 20.50 THB above it, its top-up paid: the top-up's payment and Ref1. */
async function toppedUp() {
  const { orderId } = await paidQr(stack, key, 100, 'rqo');
  await adjust(orderId, 20.5);
  const [topUp] = (await finalize(orderId)).body.body.topUps;
  const handle = stack.client.workflow.getHandle(await topUpWorkflowOf(stack.db, orderId));
  await waitFor(async () => !!(await handle.describe().catch(() => undefined)), 20_000, 'top-up started');
  await handle.signal(
    'paymentResult',
    provenResult(stack.config, topUp.paymentId, { status: 'success', provider: 'qr' }),
  );
  await waitFor(async () => (await orderOf(orderId)).status === 'settled', 20_000, 'settled');
  const row = await stack.db('payments').where({ id: topUp.paymentId }).first();
  return { orderId, paymentId: topUp.paymentId as string, ref1: row.details.qr.ref1 as string };
}

async function reconcile(provider: SettlementProvider, date: string, entries: SettlementEntry[]) {
  await createSettlementStore(stack.config).put(
    settlementKey(provider, date),
    formatSettlementFile(provider, date, entries),
  );
  const handle = await stack.client.workflow.start(RECONCILIATION_WORKFLOW, {
    taskQueue: taskQueueOf('background', stack.taskQueue),
    workflowId: uniq(`recon-${provider}-${date}`),
    args: [{ provider, mode: 'sandbox', date, fileWaitSeconds: 0, filePollSeconds: 1 }],
  });
  expect(((await handle.result()) as ReconciliationResult).status).toBe('completed');
  const rows = await stack.db('reconciliation_lines').where({ run_id: reconciliationRunId(provider, 'sandbox', date) });
  return (paymentId: string) =>
    rows
      .filter((r) => r.payment_id === paymentId)
      .map((r) => ({
        outcome: r.outcome,
        line: r.line_no !== null,
        amount: Number(r.amount_satang) / 100,
        talat: r.talat_amount_satang === null ? null : Number(r.talat_amount_satang) / 100,
        orderId: r.order_id,
        detail: r.detail,
      }));
}

it('card: lines match captures, not authorisations; an authorisation alone is not settled; a missing capture is unsettled', async () => {
  const captured = await cardOrder(100, -14); // held 110, captured 86
  const authOnly = await cardOrder(50, -10); // held 55, captured 40: its line gives the authorised 55
  const held = await cardOrder(30, null); // held 33, never captured
  const released = await cardOrder(20, -20); // held 22, released
  const missing = await cardOrder(60, 0); // held 66, captured the estimate 60, in no line
  const now = new Date();
  // a capture of Bangkok day T is due in the card file of T+1
  const date = addDays(bangkokDayOf(now), 1);
  const line = (reference: string, amount: number): SettlementEntry => ({
    kind: 'payment',
    reference,
    amountSatang: Math.round(amount * 100),
    txnAt: now,
  });
  const rowsOf = await reconcile('card', date, [
    line(captured.chargeId, 86),
    line(authOnly.chargeId, 55),
    line(held.chargeId, 33),
    line(released.chargeId, 22),
  ]);
  expect(rowsOf(captured.paymentId)).toEqual([
    { outcome: 'matched', line: true, amount: 86, talat: 86, orderId: captured.orderId, detail: null },
  ]);
  expect(rowsOf(authOnly.paymentId)).toEqual([
    {
      outcome: 'amount_mismatch',
      line: true,
      amount: 55,
      talat: 40,
      orderId: authOnly.orderId,
      detail:
        'settled 55.00 THB, Talat captured 40.00 THB of 55.00 THB authorised (the line is the authorisation, not the capture)',
    },
  ]);
  expect(rowsOf(held.paymentId)).toEqual([
    {
      outcome: 'unknown',
      line: true,
      amount: 33,
      talat: 33,
      orderId: held.orderId,
      detail:
        'the card payment is only authorized in Talat (held, not captured): an authorisation is not settled money',
    },
  ]);
  expect(rowsOf(released.paymentId)).toMatchObject([
    {
      outcome: 'unknown',
      line: true,
      detail: 'the authorisation of 22.00 THB was released in Talat, nothing captured',
    },
  ]);
  expect(rowsOf(missing.paymentId)).toEqual([
    {
      outcome: 'unsettled',
      line: false,
      amount: 60,
      talat: 60,
      orderId: missing.orderId,
      detail: `captured in Talat on ${bangkokDayOf(now)}, in no settlement file`,
    },
  ]);
  // the authorisation that was never captured is not due in any file
  expect(rowsOf(held.paymentId).filter((r) => r.outcome === 'unsettled')).toEqual([]);
});

it("PromptPay: a top-up's line matches the top-up and names its order; a wrong amount is a mismatch", async () => {
  const good = await toppedUp();
  const short = await toppedUp();
  const now = new Date();
  const date = bangkokDayOf(now);
  const rowsOf = await reconcile('promptpay', date, [
    { kind: 'payment', reference: good.ref1, amountSatang: 2050, txnAt: now },
    { kind: 'payment', reference: short.ref1, amountSatang: 2000, txnAt: now },
  ]);
  expect(rowsOf(good.paymentId)).toEqual([
    {
      outcome: 'matched',
      line: true,
      amount: 20.5,
      talat: 20.5,
      orderId: `${good.orderId}.topup`,
      detail: `top-up of order ${good.orderId}`,
    },
  ]);
  expect(rowsOf(short.paymentId)).toEqual([
    {
      outcome: 'amount_mismatch',
      line: true,
      amount: 20,
      talat: 20.5,
      orderId: `${short.orderId}.topup`,
      detail: `settled 20.00 THB, Talat has 20.50 THB (top-up of order ${short.orderId})`,
    },
  ]);
});
