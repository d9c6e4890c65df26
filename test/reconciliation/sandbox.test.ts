/**
 * A sandbox day end to end: QR payments made and paid through the payment API (amounts choosing
 * the sandbox providers' settlement quirks), a refund, the files the sandbox providers drop, and
 * the reconciliation of the PromptPay and bank files with every outcome present.
 */
import { bangkokDayOf, settlementKey, type ReconciliationResult } from '../../src/reconciliation';
import { taskQueueOf } from '../../src/domain/temporal';
import { createSettlementStore } from '../../src/reconciliation/files';
import { parseSettlementFile } from '../../src/reconciliation/parsers';
import { dropSandboxSettlements } from '../../src/reconciliation/sandbox';
import { sandboxLedgers } from '../../src/app/sandbox-ledgers';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { newKey, paidQr as paidQrWith, request, storedRef1 } from '../payments/support';
import { settlementEnv } from './generate';

let stack: TestStack;
let smtp: SmtpSink;
let key: string;
let operator: string;
beforeAll(async () => {
  smtp = await startSmtpSink();
  // its own database: the day's file lists every sandbox payment of the database, and the
  // files run before on this jest worker's database push this test's rows past one page
  stack = await createTestStack({ database: 'talat_test_sbx_recon', env: settlementEnv(smtp.url) });
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
  operator = (await newKey(stack.db, { scopes: ['reconciliation:read'] })).key;
}, 120_000);
afterAll(async () => {
  await stack.close();
  await smtp.stop();
});

const api = () => request(stack.app.callback());

const paidQr = (amount: number) => paidQrWith(stack, key, amount, 'sbx');

it('the sandbox providers settle a day with every outcome, and it reconciles end to end', async () => {
  const plain = await paidQr(120.5);
  const short = await paidQr(80.21);
  const twice = await paidQr(64.22);
  const never = await paidQr(99.23);
  const refunded = await paidQr(300);
  const refund = await api().post('/refund').set('X-API-Key', key).send({ orderId: refunded.orderId, amount: 100 });
  expect(refund.status).toBe(200);

  const date = bangkokDayOf(new Date());
  const store = createSettlementStore(stack.config);
  const written = await dropSandboxSettlements({ ledgers: sandboxLedgers(stack.db), store }, date);
  expect(written).toEqual(expect.arrayContaining([settlementKey('promptpay', date), settlementKey('bank', date)]));
  const file = (await store.get(settlementKey('promptpay', date)))!.text;
  expect(parseSettlementFile('promptpay', date, file).length).toBeGreaterThanOrEqual(7);
  expect(await dropSandboxSettlements({ ledgers: sandboxLedgers(stack.db), store }, date)).toEqual([]); // dropped once

  for (const provider of ['promptpay', 'bank'] as const) {
    const r = (await stack.client.workflow.execute('reconcileSettlementWorkflow', {
      taskQueue: taskQueueOf('background', stack.taskQueue),
      workflowId: uniq(`sbx-${provider}`),
      args: [{ provider, mode: 'sandbox', date, fileWaitSeconds: 0, filePollSeconds: 1 }],
    })) as ReconciliationResult;
    expect(r.status).toBe('completed');
  }
  const res = await api().get(`/reconciliation/promptpay/${date}?outcome=all&limit=200`).set('X-API-Key', operator);
  expect(res.status).toBe(200);
  const refs = new Map<string, string>();
  for (const p of [plain, short, twice, never]) refs.set(p.orderId, await storedRef1(stack.db, p.paymentId));
  const byOrder = (orderId: string) =>
    res.body.body.rows
      .filter((r: { reference: string }) => r.reference === refs.get(orderId))
      .map((r: { outcome: string }) => r.outcome)
      .sort();
  expect(byOrder(plain.orderId)).toEqual(['matched']);
  expect(byOrder(short.orderId)).toEqual(['amount_mismatch']);
  expect(byOrder(twice.orderId)).toEqual(['duplicate', 'matched']);
  expect(byOrder(never.orderId)).toEqual(['unsettled']);
  const outcomes = new Set(res.body.body.rows.map((r: { outcome: string }) => r.outcome));
  expect([...outcomes].sort()).toEqual(['amount_mismatch', 'duplicate', 'fee', 'matched', 'unknown', 'unsettled']);

  const bank = await api().get(`/reconciliation/bank/${date}?outcome=all&limit=200`).set('X-API-Key', operator);
  const mine = bank.body.body.rows.find((r: { refundId: string }) => r.refundId === refund.body.body.refundId);
  expect(mine).toMatchObject({ outcome: 'matched', orderId: refunded.orderId, amount: 100 });
  expect(smtp.messages.map((m) => m.subject)).toContainEqual(
    expect.stringMatching(/Reconciliation promptpay .* exceptions/),
  );
});
