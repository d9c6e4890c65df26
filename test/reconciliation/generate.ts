/**
 * A generated settlement day for the tests and bench:reconciliation: Talat's side written straight
 * to Postgres (payments, paid events, refunds, late payments and conflicts) and the provider's
 * file, mixing every outcome in a cycle of 20 items, with the outcome each line and each
 * unsettled item must get.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/knex';
import {
  addDays,
  bangkokDayStart,
  SETTLEMENT_DELAY_DAYS,
  type Outcome,
  type SettlementProvider,
} from '../../src/reconciliation';
import { formatSettlementFile, type SettlementEntry } from '../../src/reconciliation/parsers';

export interface GeneratedDay {
  provider: SettlementProvider;
  date: string;
  text: string;
  /** outcome of each line of the file (by line number) */
  lines: Map<number, { outcome: Outcome; expected: boolean }>;
  /** the items that must come out unsettled, and whether expected */
  unsettled: Map<string, boolean>;
  counts: Record<Outcome, number>;
  /** an order with an exception (for its timeline) */
  exceptionOrderId: string;
}

/**
 * `n` items of `provider` due in the file of `date` (mode sandbox), `tag` keeping ids apart.
 * Cycle: 0-9, 16, 18, 19 matched; 10 amount mismatch; 11 settled twice; 12 not settled; 13 a
 * reference Talat lacks; 14 a late payment Talat recorded (expected); 15 expired / failed, not
 * recorded; 16 (payments) a paid payment with a recorded failure and no line (expected
 * unsettled); 17 a fee. Card also refunds: 0-2 matched refunds, 4 an unsettled refund.
 */
export async function generateDay(
  db: Db,
  provider: SettlementProvider,
  date: string,
  n: number,
  tag: string,
): Promise<GeneratedDay> {
  const txnDay = addDays(date, -SETTLEMENT_DELAY_DAYS[provider]);
  const t0 = bangkokDayStart(txnDay).getTime();
  const at = (i: number) => new Date(t0 + 60_000 + ((i * 37_000) % 86_000_000));
  const method = provider === 'card' ? 'card' : 'qr';
  const payments: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  const refunds: Record<string, unknown>[] = [];
  const conflicts: Record<string, unknown>[] = [];
  const entries: (SettlementEntry & { outcome: Outcome; expected: boolean })[] = [];
  const dups: typeof entries = [];
  const unsettled = new Map<string, boolean>();
  let exceptionOrderId = '';

  const ref = (p: string, i: number) =>
    provider === 'promptpay' ? `R${tag}${i}`.toUpperCase().replace(/[^A-Z0-9]/g, '') : `${p}_${tag}_${i}`;
  const payment = (i: number, status: string, withEvent: boolean) => {
    const id = `pay_${tag}_${i}`;
    const amount = 10_000 + ((i * 7919) % 500_000);
    payments.push({
      id,
      order_id: `ord-${tag}-${i}`,
      user_id: 'u-gen',
      method,
      amount_satang: amount,
      status,
      mode: 'sandbox',
      provider_ref: provider === 'card' ? ref('chrg', i) : null,
      workflow_id: `payment-ord-${tag}-${i}`,
      details: provider === 'promptpay' ? { qr: { ref1: ref('', i) } } : {},
      created_at: at(i),
    });
    if (withEvent)
      events.push({
        payment_id: id,
        from_status: 'pending',
        to_status: 'paid',
        reason: 'generated',
        created_at: at(i),
      });
    return { id, orderId: `ord-${tag}-${i}`, amount };
  };
  const refund = (i: number, p: { id: string; orderId: string; amount: number }, status: string) => {
    const id = `re_${tag}_${i}`;
    const amount = Math.max(100, Math.floor(p.amount / 3));
    refunds.push({
      id,
      payment_id: p.id,
      order_id: p.orderId,
      amount_satang: amount,
      status,
      provider_ref: ref('rfnd', i),
      created_at: at(i),
      updated_at: at(i),
    });
    return { id, amount, reference: ref('rfnd', i) };
  };
  const line = (
    kind: SettlementEntry['kind'],
    reference: string | null,
    amount: number,
    i: number,
    outcome: Outcome,
    expected = false,
  ) => entries.push({ kind, reference, amountSatang: amount, txnAt: at(i), outcome, expected });

  for (let i = 0; i < n; i++) {
    const c = i % 20;
    if (provider === 'bank') {
      // refunds of QR payments (paid long before: no paid event, so no promptpay run expects them)
      const parent = payment(i, 'paid', false);
      if (c === 17) line('fee', null, 1_500, i, 'fee');
      else if (c === 13) line('refund', ref('rfnd_none', i), 2_000, i, 'unknown');
      else if (c === 14 || c === 15) {
        const r = refund(i, parent, c === 14 ? 'failed' : 'pending');
        line('refund', r.reference, r.amount, i, 'unknown');
        exceptionOrderId ||= parent.orderId;
      } else {
        const r = refund(i, parent, 'succeeded');
        if (c === 12) unsettled.set(r.id, false);
        else if (c === 10) line('refund', r.reference, r.amount + 100, i, 'amount_mismatch');
        else {
          line('refund', r.reference, r.amount, i, 'matched');
          if (c === 11) dups.push({ ...entries[entries.length - 1], outcome: 'duplicate' });
        }
      }
      continue;
    }
    if (c === 17) {
      line('fee', null, 1_000 + i, i, 'fee');
      continue;
    }
    if (c === 13) {
      line('payment', ref('chrg_none', i), 5_000, i, 'unknown');
      continue;
    }
    if (c === 14 || c === 15) {
      const p = payment(i, c === 14 ? 'expired' : 'failed', false);
      if (c === 14)
        conflicts.push({
          id: `cfl_${tag}_${i}`,
          payment_id: p.id,
          order_id: p.orderId,
          result_status: 'success',
          payment_status: 'expired',
          provider: method,
          resolution: 'refunded',
        });
      line('payment', ref('chrg', i), p.amount, i, 'unknown', c === 14);
      exceptionOrderId ||= p.orderId;
      continue;
    }
    const p = payment(i, 'paid', true);
    if (c === 12) unsettled.set(p.id, false);
    else if (c === 16) {
      conflicts.push({
        id: `cfl_${tag}_${i}`,
        payment_id: p.id,
        order_id: p.orderId,
        result_status: 'failed',
        payment_status: 'paid',
        provider: method,
        resolution: 'recorded',
      });
      unsettled.set(p.id, true);
    } else if (c === 10) line('payment', ref('chrg', i), p.amount + 1_000, i, 'amount_mismatch');
    else {
      line('payment', ref('chrg', i), p.amount, i, 'matched');
      if (c === 11) dups.push({ ...entries[entries.length - 1], outcome: 'duplicate' });
    }
    if (provider === 'card' && c <= 4) {
      const r = refund(i, p, 'succeeded');
      if (c === 4) unsettled.set(r.id, false);
      else line('refund', r.reference, r.amount, i, 'matched');
    }
  }
  entries.push(...dups);

  const chunk = async (table: string, rows: Record<string, unknown>[]) => {
    for (let i = 0; i < rows.length; i += 1000) await db(table).insert(rows.slice(i, i + 1000));
  };
  await chunk('payments', payments);
  await chunk('payment_events', events);
  await chunk('refunds', refunds);
  await chunk('payment_conflicts', conflicts);

  const counts = { matched: 0, unknown: 0, unsettled: unsettled.size, amount_mismatch: 0, duplicate: 0, fee: 0 };
  const lines = new Map<number, { outcome: Outcome; expected: boolean }>();
  entries.forEach((e, i) => {
    lines.set(i + 3, { outcome: e.outcome, expected: e.expected });
    counts[e.outcome] += 1;
  });
  const text = formatSettlementFile(
    provider,
    date,
    entries.map(({ kind, reference, amountSatang, txnAt }) => ({ kind, reference, amountSatang, txnAt })),
  );
  return { provider, date, text, lines, unsettled, counts, exceptionOrderId };
}

/** The settings of a test file's reconciliation: the tests' object store, a bucket of its own, `smtpUrl`. */
export const settlementEnv = (smtpUrl: string): Record<string, string> => ({
  S3_ENDPOINT: process.env.TALAT_TEST_S3_ENDPOINT!,
  S3_ACCESS_KEY_ID: process.env.TALAT_TEST_S3_ACCESS_KEY_ID!,
  S3_SECRET_ACCESS_KEY: process.env.TALAT_TEST_S3_SECRET_ACCESS_KEY!,
  S3_BUCKET_SETTLEMENTS: `t-settle-${randomUUID().slice(0, 8)}`,
  SMTP_URL: smtpUrl,
});
