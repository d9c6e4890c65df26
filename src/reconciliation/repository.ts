/**
 * Reconciliation's SQL: the Talat items a file's references name, the rows of a run (replaced as
 * a whole in one transaction, so a day run twice has the same rows, the operator's resolutions
 * kept), the items no file settled, and the reads of the API, the CSV export and the timeline.
 * What reads the payments' and refunds' ledgers embeds their owners' fragments (their faces).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';
import type { SqlFragment } from '../domain/sql';
import {
  conflictsOfSql,
  paidBetweenSql,
  paymentIdsSql,
  paymentsByRefSql,
  type PaymentMethod,
  type SettlementRef,
} from '../payments';
import { refundsByRefSql, succeededBetweenSql } from '../refunds';
import {
  addDays,
  bangkokDayStart,
  OUTCOMES,
  SETTLEMENT_DELAY_DAYS,
  type Outcome,
  type ReconciliationCounts,
  type SettlementProvider,
} from './index';
import type { ClassifiedRow, TalatItem } from './classify';
import type { SettlementLine } from './parsers';

type Q = Db | Knex.Transaction;

/**
 * Which payments and refunds (of payments of which method) a provider settles, and the
 * settlement reference its lines give a payment by. The SQL naming their tables is their
 * owners' (`src/payments/rows.ts`, `src/refunds/rows.ts`); this file composes it.
 */
const SOURCES: Record<
  SettlementProvider,
  { payments?: { method: PaymentMethod; ref: SettlementRef }; refunds?: { method: PaymentMethod } }
> = {
  card: { payments: { method: 'card', ref: 'providerRef' }, refunds: { method: 'card' } },
  promptpay: { payments: { method: 'qr', ref: 'qrRef1' } },
  bank: { refunds: { method: 'qr' } },
};

interface ItemRow {
  id: string;
  payment_id: string;
  order_id: string;
  amount_satang: string;
  status: string;
  ref: string;
  authorized_satang?: string | null;
  top_up_of?: string | null;
}

/** The Talat items the lines' references name, by `${kind}:${reference}`. */
export async function itemsOf(
  q: Q,
  provider: SettlementProvider,
  mode: Mode,
  lines: SettlementLine[],
): Promise<Map<string, TalatItem>> {
  const src = SOURCES[provider];
  const refs = (kind: string) => [...new Set(lines.filter((l) => l.kind === kind).map((l) => l.reference!))];
  const run = async <T>(f: SqlFragment): Promise<T[]> => (await q.raw(f.sql, f.bindings)).rows as T[];
  const out = new Map<string, TalatItem>();
  const payRefs = refs('payment');
  if (src.payments && payRefs.length) {
    const rows = await run<ItemRow>(paymentsByRefSql(src.payments.ref, payRefs, src.payments.method, mode));
    const conflicts = new Map<string, TalatItem['conflict']>();
    if (rows.length)
      for (const c of await run<{ id: string; payment_id: string; result_status: string; resolution: string }>(
        conflictsOfSql(rows.map((r) => r.id)),
      ))
        conflicts.set(c.payment_id, { id: c.id, result: c.result_status, resolution: c.resolution });
    for (const r of rows)
      out.set(`payment:${r.ref}`, {
        kind: 'payment',
        id: r.id,
        paymentId: r.id,
        orderId: r.order_id,
        amountSatang: Number(r.amount_satang),
        status: r.status,
        settles: r.status === 'paid' || r.status === 'refunded',
        conflict: conflicts.get(r.id),
        ...(r.authorized_satang ? { authorizedSatang: Number(r.authorized_satang) } : {}),
        ...(r.top_up_of ? { topUpOf: r.top_up_of } : {}),
      });
  }
  const refundRefs = refs('refund');
  if (src.refunds && refundRefs.length) {
    const rows = await run<ItemRow>(refundsByRefSql(refundRefs, paymentIdsSql(src.refunds.method, mode)));
    for (const r of rows)
      out.set(`refund:${r.ref}`, {
        kind: 'refund',
        id: r.id,
        paymentId: r.payment_id,
        orderId: r.order_id,
        amountSatang: Number(r.amount_satang),
        status: r.status,
        settles: r.status === 'succeeded',
      });
  }
  return out;
}

/** The items of `ids` a line of another run of this provider claimed: `${kind}:${id}` -> run id. */
export async function claimsElsewhere(
  q: Q,
  provider: SettlementProvider,
  runId: string,
  ids: string[],
): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const { rows } = await q.raw(
    `SELECT l.kind, l.item_id, l.run_id FROM unnest(?::text[]) AS x(id)
       JOIN reconciliation_lines l ON l.item_id = x.id
      WHERE l.provider = ? AND l.run_id <> ? AND l.outcome IN ('matched', 'amount_mismatch')`,
    [ids, provider, runId],
  );
  return new Map(
    (rows as { kind: string; item_id: string; run_id: string }[]).map((r) => [`${r.kind}:${r.item_id}`, r.run_id]),
  );
}

export interface RunKey {
  runId: string;
  provider: SettlementProvider;
  mode: Mode;
  date: string;
}

/** Create or update the run's row. */
export async function saveRun(
  q: Q,
  k: RunKey,
  fields: { status: string; fileKey: string; workflowId?: string; error?: string | null; sha256?: string | null },
): Promise<void> {
  const row = {
    status: fields.status,
    file_key: fields.fileKey,
    ...(fields.workflowId ? { workflow_id: fields.workflowId } : {}),
    ...(fields.error !== undefined ? { error: fields.error } : {}),
    ...(fields.sha256 !== undefined ? { file_sha256: fields.sha256 } : {}),
    updated_at: q.fn.now(),
  };
  await q('reconciliation_runs')
    .insert({ id: k.runId, provider: k.provider, mode: k.mode, settlement_date: k.date, ...row })
    .onConflict('id')
    .merge(row);
}

const rowOf = (k: RunKey, id: string, r: ClassifiedRow) => ({
  id,
  run_id: k.runId,
  provider: k.provider,
  line_no: r.lineNo,
  outcome: r.outcome,
  expected: r.expected,
  kind: r.kind,
  reference: r.reference,
  amount_satang: r.amountSatang,
  talat_amount_satang: r.talatAmountSatang,
  item_id: r.itemId,
  payment_id: r.paymentId,
  order_id: r.orderId,
  txn_at: r.txnAt,
  detail: r.detail,
});

/**
 * The run's rows become `rows` (line ids `<run>:<line>`) plus the items due this day that no
 * line of the provider settled (`<run>:u:<item>`); resolutions of rows that stay are kept, and
 * unsettled rows of other runs that a line now settles are closed as accepted.
 */
export async function replaceRows(
  trx: Knex.Transaction,
  k: RunKey,
  rows: ClassifiedRow[],
  onChunk: () => void,
): Promise<void> {
  const kept = await trx('reconciliation_lines')
    .where({ run_id: k.runId })
    .whereNotNull('resolution')
    .select('id', 'resolution', 'resolution_note', 'resolved_by', 'resolved_at');
  await trx('reconciliation_lines').where({ run_id: k.runId }).delete();
  const lineId = (n: number) => `${k.runId}:${String(n).padStart(6, '0')}`;
  for (let i = 0; i < rows.length; i += 1000) {
    await trx('reconciliation_lines').insert(rows.slice(i, i + 1000).map((r) => rowOf(k, lineId(r.lineNo!), r)));
    onChunk();
  }
  // the planner's figures for the rows just written (else it scans them once per due item)
  await trx.raw('ANALYZE reconciliation_lines');
  await insertUnsettled(trx, k);
  for (const r of kept) await trx('reconciliation_lines').where({ id: r.id }).update(r);
  await trx.raw(
    `UPDATE reconciliation_lines u
        SET resolution = 'accepted', resolved_by = 'reconciliation', resolved_at = now(), updated_at = now(),
            resolution_note = 'settled later by ' || l.id
       FROM reconciliation_lines l
      WHERE l.run_id = ? AND l.outcome IN ('matched', 'amount_mismatch')
        AND u.provider = l.provider AND u.kind = l.kind AND u.item_id = l.item_id
        AND u.outcome = 'unsettled' AND u.run_id <> l.run_id AND u.resolution IS NULL`,
    [k.runId],
  );
}

/** The items of the provider whose money moved on the day this file was due for, settled by no line. */
async function insertUnsettled(trx: Knex.Transaction, k: RunKey): Promise<void> {
  const src = SOURCES[k.provider];
  const due = addDays(k.date, -SETTLEMENT_DELAY_DAYS[k.provider]);
  const from = bangkokDayStart(due);
  const to = bangkokDayStart(addDays(due, 1));
  const unclaimed = (kind: string, col: string) =>
    `NOT EXISTS (SELECT 1 FROM reconciliation_lines l WHERE l.provider = ? AND l.kind = '${kind}' AND l.item_id = ${col}
                   AND l.outcome IN ('matched', 'amount_mismatch'))`;
  const prefix = `${k.runId}:u:`;
  if (src.payments) {
    const paid = paidBetweenSql({ ...src.payments, mode: k.mode, from, to });
    await trx.raw(
      `INSERT INTO reconciliation_lines (id, run_id, provider, outcome, expected, kind, reference, amount_satang,
                                         talat_amount_satang, item_id, payment_id, order_id, txn_at, detail)
       SELECT ?::text || p.id, ?, ?, 'unsettled', p.failed_conflict IS NOT NULL, 'payment', p.ref, p.amount_satang,
              p.amount_satang, p.id, p.id, p.order_id, p.paid_at,
              CASE WHEN p.failed_conflict IS NULL
                   THEN CASE WHEN p.authorized_satang IS NULL THEN 'paid' ELSE 'captured' END
                        || ' in Talat on ' || ?::text || ', in no settlement file'
                   ELSE 'Talat recorded a failure after paid (' || p.failed_conflict || ')' END
         FROM (${paid.sql}) p
        WHERE ${unclaimed('payment', 'p.id')}`,
      [prefix, k.runId, k.provider, due, ...paid.bindings, k.provider],
    );
  }
  if (src.refunds) {
    const refunded = succeededBetweenSql({ from, to, payments: paymentIdsSql(src.refunds.method, k.mode) });
    await trx.raw(
      `INSERT INTO reconciliation_lines (id, run_id, provider, outcome, expected, kind, reference, amount_satang,
                                         talat_amount_satang, item_id, payment_id, order_id, txn_at, detail)
       SELECT ?::text || r.id, ?, ?, 'unsettled', false, 'refund', r.provider_ref, r.amount_satang, r.amount_satang,
              r.id, r.payment_id, r.order_id, r.updated_at, 'refunded in Talat on ' || ?::text || ', in no settlement file'
         FROM (${refunded.sql}) r
        WHERE ${unclaimed('refund', 'r.id')}`,
      [prefix, k.runId, k.provider, due, ...refunded.bindings, k.provider],
    );
  }
}

/** Counts and amounts by outcome of a run's rows. */
export async function countsOf(q: Q, runId: string): Promise<ReconciliationCounts> {
  const rows = await q('reconciliation_lines')
    .where({ run_id: runId })
    .groupBy('outcome')
    .select('outcome')
    .select(
      q.raw(
        'count(*)::int AS n, coalesce(sum(amount_satang), 0)::bigint AS amount, sum(expected::int)::int AS expected',
      ),
    );
  const zero = () => Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  const c: ReconciliationCounts = { lines: 0, byOutcome: zero(), amountSatang: zero(), exceptions: 0, expected: 0 };
  for (const r of rows as { outcome: Outcome; n: number; amount: string; expected: number }[]) {
    c.byOutcome[r.outcome] = r.n;
    c.amountSatang[r.outcome] = Number(r.amount);
    if (r.outcome !== 'unsettled') c.lines += r.n;
    if (r.outcome !== 'matched' && r.outcome !== 'fee') c.exceptions += r.n;
    c.expected += r.expected;
  }
  return c;
}

export async function completeRun(q: Q, runId: string, counts: ReconciliationCounts, sha256: string): Promise<void> {
  await q('reconciliation_runs')
    .where({ id: runId })
    .update({
      status: 'completed',
      summary: JSON.stringify(counts),
      error: null,
      file_sha256: sha256,
      completed_at: q.fn.now(),
      updated_at: q.fn.now(),
    });
}

// ---- reads ----

export interface RunRow {
  id: string;
  provider: SettlementProvider;
  mode: Mode;
  settlement_date: string;
  status: string;
  file_key: string;
  file_sha256: string | null;
  error: string | null;
  summary: Partial<ReconciliationCounts>;
  workflow_id: string | null;
  digest_sent_for: string | null;
  completed_at: Date | null;
  updated_at: Date;
}
export const getRun = (q: Q, runId: string): Promise<RunRow | undefined> =>
  q('reconciliation_runs')
    .where({ id: runId })
    .select('*', q.raw("to_char(settlement_date, 'YYYY-MM-DD') AS settlement_date"))
    .first();

export type LineRow = Record<string, unknown> & { id: string; outcome: Outcome; amount_satang: string };

/** The run's exceptions (or every row), in (created_at, id) order from `startingAfter`. */
export function linesQuery(
  q: Q,
  runId: string,
  f: { outcomes?: readonly string[]; state?: 'open' | 'resolved' | 'all' },
): Knex.QueryBuilder {
  return q('reconciliation_lines as l')
    .where('l.run_id', runId)
    .modify((x) => {
      if (f.outcomes) x.whereIn('l.outcome', f.outcomes);
      if (f.state === 'open') x.whereNull('l.resolution');
      if (f.state === 'resolved') x.whereNotNull('l.resolution');
    })
    .select('l.*');
}

/** Close an open exception; undefined when it is no open exception of the run. */
export async function resolveException(
  q: Q,
  runId: string,
  id: string,
  r: { resolution: string; note: string; by: string },
): Promise<LineRow | undefined> {
  const [row] = await q('reconciliation_lines')
    .where({ id, run_id: runId })
    .whereNotIn('outcome', ['matched', 'fee'])
    .whereNull('resolution')
    .update({
      resolution: r.resolution,
      resolution_note: r.note,
      resolved_by: r.by,
      resolved_at: q.fn.now(),
      updated_at: q.fn.now(),
    })
    .returning('*');
  return row as LineRow | undefined;
}

/** The exceptions about one payment (for its timeline). */
export const exceptionsOfPayment = (q: Q, paymentId: string): Promise<LineRow[]> =>
  q('reconciliation_lines')
    .where({ payment_id: paymentId })
    .whereNotIn('outcome', ['matched', 'fee'])
    .orderBy('created_at')
    .select('*');

/** How many exceptions of a mode's runs no operator has resolved yet (the console's open items). */
export async function openExceptionCount(q: Q, mode: string): Promise<number> {
  const [{ n }] = await q('reconciliation_lines as l')
    .join('reconciliation_runs as r', 'r.id', 'l.run_id')
    .where('r.mode', mode)
    .whereNotIn('l.outcome', ['matched', 'fee'])
    .whereNull('l.resolution')
    .count<{ n: string }[]>('l.id as n');
  return Number(n);
}
