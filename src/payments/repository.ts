/**
 * The payments table family (payments, payment_events): the only place a payments row is read
 * or written and mapped. The rows are the workflows' projection: written by the payment
 * activities after the workflow decided a transition, read by the payment and callback APIs.
 */
import { paymentTransitions } from '../metrics';
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';
import { afterCursor, pageOf, type Page } from '../http/pagination';
import { canTransition, type PaymentMethod, type PaymentStatus } from './index';
import type { NewPayment, OrderScope, Payment, PaymentEvent, PaymentRecords } from './index';
import { paymentOfOrderSql, settlementRefSql, toPayment, type SettlementRef } from './index';
import { prepared, type LeadingCtes } from '../db/prepared';

export type { Payment, PaymentEvent, PaymentRef } from './index';
export { toPayment } from './index';

type Row = Record<string, unknown>;

/** The order's payment in `scope`; without a scope, the only payment of that order id (none when several). */
export async function paymentByOrderId(db: Db, orderId: string, scope?: OrderScope): Promise<Payment | undefined> {
  if (scope) return toPayment(await db('payments').where(scopeWhere(orderId, scope)).first());
  const rows = (await db('payments').where({ order_id: orderId }).limit(2)) as Row[];
  return rows.length === 1 ? toPayment(rows[0]) : undefined;
}

/** Every payment of an order id, across scopes (a callback that names only the order id). */
export const paymentsOfOrderId = async (db: Db, orderId: string): Promise<Payment[]> =>
  ((await db('payments').where({ order_id: orderId }).orderBy('created_at').limit(20)) as Row[]).map((r) =>
    toPayment(r)!,
  );

const scopeWhere = (orderId: string, scope: OrderScope) => (q: import('knex').Knex.QueryBuilder) =>
  q.where({ order_id: orderId, mode: scope.mode }).andWhereRaw('account_id IS NOT DISTINCT FROM ?', [scope.accountId]);

export const paymentById = async (db: Db, id: string): Promise<Payment | undefined> =>
  toPayment(await db('payments').where({ id }).first());

/**
 * The payments of these order ids in a scope (an account's, or one key's, in a mode), by order id;
 * without one, any owner's (the caller checks ownership; an order id other scopes use is then
 * any one of theirs).
 */
export async function paymentsByOrderIds(
  db: Db,
  orderIds: string[],
  scope?: OrderScope | { apiKeyId: string; mode: Mode },
): Promise<Map<string, Payment>> {
  if (orderIds.length === 0) return new Map();
  const rows = (await db('payments')
    .whereIn('order_id', orderIds)
    .modify((q) => {
      if (scope && 'apiKeyId' in scope) q.where({ mode: scope.mode, api_key_id: scope.apiKeyId });
      else if (scope) q.where({ mode: scope.mode }).andWhereRaw('account_id IS NOT DISTINCT FROM ?', [scope.accountId]);
    })) as Row[];
  return new Map(rows.map((r) => [String(r.order_id), toPayment(r)!]));
}

export interface PaymentFilter {
  apiKeyId: string;
  mode: Mode;
  status?: PaymentStatus;
  method?: PaymentMethod;
  createdGte?: Date;
  createdLt?: Date;
  limit: number;
  startingAfter?: string;
}

/** A key's own payments, newest first, filtered; one page (keyset on created_at, id). */
export async function listPayments(db: Db, f: PaymentFilter): Promise<Page<Payment & { id: string }>> {
  const q = db('payments as p')
    .where({ 'p.api_key_id': f.apiKeyId, 'p.mode': f.mode })
    .modify((x) => {
      if (f.status) x.where('p.status', f.status);
      if (f.method) x.where('p.method', f.method);
      if (f.createdGte) x.where('p.created_at', '>=', f.createdGte);
      if (f.createdLt) x.where('p.created_at', '<', f.createdLt);
    })
    .select('p.*');
  return pageOf(
    afterCursor(q, { alias: 'p', table: 'payments', cursor: f.startingAfter, order: 'desc' }),
    f.limit,
    (r: Row) => toPayment(r)!,
  );
}

/** PaymentRecords.ofOrderNamed: one statement (paymentOfOrderSql) */
async function ofOrderNamed(db: Db, orderId: string, named: string) {
  const namedSql = '(p.id = ? OR p.provider_ref = ?)';
  const { rows } = await db.raw<{ rows: Row[] }>(paymentOfOrderSql(namedSql), [
    orderId,
    named,
    named,
    orderId,
    named,
    named,
  ]);
  const candidates = Number(rows[0]?.candidates ?? 0);
  return { payment: candidates === 1 ? toPayment(rows[0]) : undefined, candidates };
}

/** The payments slice's records as the other slices take them (PaymentRecords). */
export const paymentRecords = (db: Db): PaymentRecords => ({
  byOrderId: (orderId, scope) => paymentByOrderId(db, orderId, scope),
  byId: (paymentId) => paymentById(db, paymentId),
  // written only the first time (a page opened again reads), its row as it is once marked
  watch: async (paymentId) => {
    const [marked] = await db('payments')
      .where({ id: paymentId, status_watched: false })
      .update({ status_watched: true })
      .returning('*');
    return marked ? toPayment(marked) : paymentById(db, paymentId);
  },
  byOrderNamed: async (orderId, named) => (await ofOrderNamed(db, orderId, named)).payment,
  ofOrderNamed: (orderId, named) => ofOrderNamed(db, orderId, named),
  async lockForRefund(paymentId) {
    const p = await db('payments').where({ id: paymentId }).forUpdate().first('status', 'amount_satang');
    return p && { status: p.status, amountSatang: Number(p.amount_satang) };
  },
  async addRefunded(paymentId, amountSatang, refundId) {
    const [p] = await db('payments')
      .where({ id: paymentId })
      .update({ refunded_satang: db.raw('refunded_satang + ?', [amountSatang]), updated_at: db.fn.now() })
      .returning(['status', 'amount_satang', 'refunded_satang']);
    if (Number(p.refunded_satang) === Number(p.amount_satang) && canTransition(p.status, 'refunded')) {
      await db('payments').where({ id: paymentId, status: p.status }).update({ status: 'refunded' });
      await db('payment_events').insert({
        payment_id: paymentId,
        from_status: p.status,
        to_status: 'refunded',
        reason: `refunded in full (${refundId})`,
      });
    }
  },
  reached: async (paymentId, status) =>
    !!(await db('payment_events').where({ payment_id: paymentId, to_status: status }).first('id')),
  async amounts(paymentId) {
    const p = await db('payments').where({ id: paymentId }).first('status', 'amount_satang', 'refunded_satang');
    return { status: p.status, amountSatang: Number(p.amount_satang), refundedSatang: Number(p.refunded_satang) };
  },
});

/** The payment's history, oldest first. */
export async function paymentHistory(db: Db, paymentId: string): Promise<PaymentEvent[]> {
  const rows = await db('payment_events')
    .where({ payment_id: paymentId })
    .orderBy('id')
    .select<{ to_status: PaymentStatus; reason: string; created_at: Date }[]>('to_status', 'reason', 'created_at');
  return rows.map((e) => ({ status: e.to_status, at: e.created_at, reason: e.reason }));
}

/** The reason of the payment's latest transition. */
export async function lastTransitionReason(db: Db, paymentId: string): Promise<string | undefined> {
  const row = await db('payment_events')
    .where({ payment_id: paymentId })
    .orderBy('id', 'desc')
    .first<{ reason: string } | undefined>('reason');
  return row?.reason;
}

// ---- writes (the payment activities; each idempotent, so Temporal may retry it) ----

export type { NewPayment } from './index';

export interface StatusChange {
  paymentId: string;
  from: PaymentStatus;
  to: PaymentStatus;
  reason: string;
}

/**
 * The pending payments row and its `created` history event, written by ONE statement (a
 * data-modifying CTE, atomic on its own: no BEGIN/COMMIT round trips), unless a row with the same
 * `unique` column (the payment id, or the order id) is there already. Returns the inserted row
 * (`created`), else, with `orElseExisting`, the row that was there when the statement began.
 */
const insertPendingSql = (unique: 'id' | 'order_id', orElseExisting: boolean) => `
  WITH ins AS (
    INSERT INTO payments (id, order_id, user_id, method, amount_satang, status, mode, customer_id,
                          callback_url, api_key_id, account_id, workflow_id, expires_at, details)
    VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?::jsonb)
    ON CONFLICT ${unique === 'id' ? '(id)' : '(account_id, mode, order_id)'} DO NOTHING
    RETURNING *
  ), ev AS (
    INSERT INTO payment_events (payment_id, from_status, to_status, reason)
    SELECT id, NULL, 'pending', 'created' FROM ins
  )
  SELECT ins.*, true AS created FROM ins${
    orElseExisting
      ? `
  UNION ALL
  SELECT p.*, false AS created FROM payments p WHERE ${
    unique === 'id' ? 'p.id = ?' : 'p.account_id IS NOT DISTINCT FROM ? AND p.mode = ? AND p.order_id = ?'
  } AND NOT EXISTS (SELECT 1 FROM ins)`
      : ''
  }`;

/** A new payment's account: the one given, else its key's id (a key is its own account unless linked). */
const accountOf = (input: NewPayment): string | null =>
  input.accountId !== undefined ? input.accountId : (input.apiKeyId ?? null);

async function insertPending(
  db: Db,
  input: NewPayment,
  unique: 'id' | 'order_id',
  orElseExisting: boolean,
): Promise<(Row & { created: boolean }) | undefined> {
  const values = [
    input.paymentId,
    input.orderId,
    input.userId,
    input.method,
    input.amountSatang,
    input.mode,
    input.customerId ?? null,
    input.callbackUrl ?? null,
    input.apiKeyId ?? null,
    accountOf(input),
    input.workflowId,
    input.expiresAt ?? null,
    JSON.stringify(input.details ?? {}),
  ];
  if (orElseExisting)
    values.push(...(unique === 'id' ? [input.paymentId] : [accountOf(input), input.mode, input.orderId]));
  const { rows } = await prepared<Row & { created: boolean }>(db, insertPendingSql(unique, orElseExisting), values);
  return rows[0];
}

/** Insert the payment row and its first history event; a retry finds the row and does nothing. */
export async function insertPayment(db: Db, input: NewPayment): Promise<void> {
  await insertPending(db, input, 'id', false);
}

/**
 * The gateway's write before it starts the workflow (lean-payment-v1), so a callback that comes
 * the moment the gateway answered finds the payment: the row and its first history event, unless
 * the order already has a payment. Returns the order's payment and whether it is this one. One
 * round trip; a second only when the order's row was committed by another request while this
 * statement ran (its snapshot, taken before, does not show it).
 */
export async function createPendingPayment(db: Db, input: NewPayment): Promise<{ created: boolean; payment: Payment }> {
  const row = await insertPending(db, input, 'order_id', true);
  if (row) return { created: row.created, payment: toPayment(row)! };
  const scope = { accountId: accountOf(input), mode: input.mode };
  return { created: false, payment: toPayment(await db('payments').where(scopeWhere(input.orderId, scope)).first())! };
}

/** Undo createPendingPayment when the workflow could not be started (nothing else refers to the row yet). */
export async function removeUnstartedPayment(db: Db, paymentId: string): Promise<void> {
  await db.transaction(async (trx) => {
    const still = await trx('payments')
      .where({ id: paymentId, status: 'pending' })
      .whereNull('provider_ref')
      .forUpdate()
      .first('id');
    if (!still) return;
    await trx('payment_events').where({ payment_id: paymentId }).delete();
    await trx('payments').where({ id: paymentId }).delete();
  });
}

/** Card: note the provider's charge id (provider_ref, which the callback API looks up) and its details. */
export async function attachProviderRef(
  db: Db,
  input: { paymentId: string; providerRef: string; details: Record<string, unknown> },
): Promise<void> {
  await db('payments')
    .where({ id: input.paymentId })
    .update({
      provider_ref: input.providerRef,
      details: db.raw('details || ?::jsonb', [JSON.stringify(input.details)]),
      updated_at: db.fn.now(),
    });
}

/** The facts a payment's own workflow holds of its row (the settle step's vouching, issue 38). */
export interface RowFacts {
  workflowId: string;
  orderId: string;
  amountSatang: number;
  mode: string;
  apiKeyId?: string | null;
}

/**
 * The guarded update and its history event as CTEs of one statement (a data-modifying CTE is
 * atomic on its own: no BEGIN/COMMIT round trips); the event is written only when the update
 * matched, and with `facts` only on a row that agrees with every one of them. `updated` returns
 * the payment's method when it matched.
 */
export function transitionCtes(change: StatusChange, facts?: RowFacts): LeadingCtes {
  if (!canTransition(change.from, change.to)) throw new Error(`illegal transition ${change.from} -> ${change.to}`);
  const agrees = facts
    ? ` AND workflow_id = ? AND order_id = ? AND amount_satang = ? AND mode = ?
        AND api_key_id IS NOT DISTINCT FROM ?::text`
    : '';
  return {
    ctes: `updated AS (
       UPDATE payments SET status = ?, updated_at = now() WHERE id = ? AND status = ?${agrees} RETURNING method
     ), event AS (
       INSERT INTO payment_events (payment_id, from_status, to_status, reason)
       SELECT ?, ?, ?, ? FROM updated
     )`,
    bindings: [
      change.to,
      change.paymentId,
      change.from,
      ...(facts ? [facts.workflowId, facts.orderId, facts.amountSatang, facts.mode, facts.apiKeyId ?? null] : []),
      change.paymentId,
      change.from,
      change.to,
      change.reason,
    ],
    matched: 'updated',
    value: 'method',
  };
}

/** Counts a transition that applied (the payment's method, from transitionCtes' `updated`). */
export function countTransition(change: StatusChange, method: string | null | undefined): void {
  if (method) paymentTransitions.inc({ method, to: change.to });
}

/** transitionCtes as a statement of its own: the method when it matched. */
async function transitionStatement(db: Db, change: StatusChange, facts?: RowFacts): Promise<string | undefined> {
  const t = transitionCtes(change, facts);
  const { rows } = await prepared<{ method: string | null }>(
    db,
    `WITH ${t.ctes} SELECT (SELECT method FROM updated) AS method`,
    t.bindings,
  );
  const method = rows[0]?.method;
  countTransition(change, method);
  return method ?? undefined;
}

/**
 * The settle step's fast path (issue 41): the transition only on a row that agrees with the
 * workflow's `facts`, in one statement with no read before it. False when nothing matched (no
 * such row, another status, or a row that disagrees): the caller then reads the row and decides.
 */
export const applyTransitionIfAgrees = async (db: Db, change: StatusChange, facts: RowFacts): Promise<boolean> =>
  (await transitionStatement(db, change, facts)) !== undefined;

/**
 * Apply a transition decided by the workflow; guarded on the current status, so a retry is a
 * no-op. Resolves to the row's status afterwards: `change.to` (or a later status) when this
 * transition is, or was before, applied; another one when a different transition won.
 */
export async function applyTransition(db: Db, change: StatusChange): Promise<PaymentStatus> {
  if (await transitionStatement(db, change)) return change.to;
  // Not from `change.from` (any more): what the row says now. A statement of its own, so that it
  // sees what a concurrent transition committed (the statement above read the row as it was when
  // it began, though its update waited for that transition's lock and then found no match).
  const row = await db('payments').where({ id: change.paymentId }).first('status');
  return (row?.status ?? change.to) as PaymentStatus;
}

/**
 * The payment row of an order id that `viewer` may see (the order timeline reads its columns):
 * its own key's in its mode, else a keyless one of its mode; never another key's of that order id.
 */
export const paymentRowByOrder = (db: Db, orderId: string, viewer: { apiKeyId: string; mode: Mode }) =>
  db('payments')
    .where({ order_id: orderId, mode: viewer.mode })
    .andWhere((q) => q.where({ api_key_id: viewer.apiKeyId }).orWhereNull('api_key_id'))
    .orderByRaw('api_key_id IS NULL, created_at')
    .first();

/** A payment's events and late-result conflicts as stored, for the order timeline. */
export async function paymentStoryRows(db: Db, paymentId: string) {
  const [events, conflicts] = await Promise.all([
    db('payment_events').where({ payment_id: paymentId }).orderBy('id'),
    db('payment_conflicts').where({ payment_id: paymentId }),
  ]);
  return { events, conflicts };
}

/** Sandbox payments still pending after the cursor, oldest first (the sandbox callback sender). */
export const sandboxPendingAfter = (db: Db, cursor: { at: string; id: string }, ageSeconds: number) =>
  db('payments')
    .where({ mode: 'sandbox', status: 'pending' })
    .whereRaw('(created_at, id) > (?::timestamptz, ?)', [cursor.at, cursor.id])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(1000)
    .select('id', 'order_id', 'user_id', 'method', 'amount_satang', 'provider_ref')
    .select(
      db.raw('created_at::text as at'),
      db.raw(`created_at < now() - interval '${Number(ageSeconds)} seconds' as aged`),
    );

/** The rows of payments `ids` as the sandbox callback sender reads them. */
export const pendingRowsByIds = (db: Db, ids: string[]) =>
  db('payments')
    .whereIn('id', ids)
    .select('id', 'order_id', 'user_id', 'method', 'amount_satang', 'provider_ref', 'status');

/** A payment whose money the provider took, by its settlement reference (a sandbox day file). */
export interface TakenPayment {
  ref: string;
  amountSatang: number;
  at: Date;
}

/**
 * The payments of a method and mode whose money the provider took in [from, to), oldest first:
 * first paid then, or a success recorded then after they had ended (a late payment's conflict);
 * those without a settlement reference left out.
 */
export async function paymentsTakenBetween(
  db: Db,
  w: { ref: SettlementRef; method: PaymentMethod; mode: Mode; from: Date; to: Date },
): Promise<TakenPayment[]> {
  const ref = settlementRefSql(w.ref);
  const { rows } = await db.raw(
    `SELECT ${ref} AS ref, p.amount_satang, x.at FROM payments p
       JOIN (SELECT payment_id, min(created_at) AS at FROM payment_events
              WHERE to_status = 'paid' AND created_at >= ? AND created_at < ? GROUP BY payment_id
             UNION ALL
             SELECT payment_id, created_at FROM payment_conflicts
              WHERE result_status = 'success' AND created_at >= ? AND created_at < ?) x ON x.payment_id = p.id
      WHERE p.method = ? AND p.mode = ? AND ${ref} IS NOT NULL ORDER BY x.at, p.id`,
    [w.from, w.to, w.from, w.to, w.method, w.mode],
  );
  return (rows as { ref: string; amount_satang: string; at: Date }[]).map((r) => ({
    ref: r.ref,
    amountSatang: Number(r.amount_satang),
    at: r.at,
  }));
}

/**
 * An authorisation's end (the orders slice): `paid` with the captured amount as the payment's
 * amount (the authorised one kept in details.authorizedSatang), or `expired`/`failed` when it was
 * released or refused; with its history event, guarded on `authorized`, so a retry is a no-op.
 */
export async function settleAuthorization(
  db: Db,
  s: { paymentId: string; to: 'paid' | 'expired' | 'failed'; capturedSatang: number; reason: string },
): Promise<PaymentStatus> {
  return db.transaction(async (trx) => {
    const p = await trx('payments').where({ id: s.paymentId }).forUpdate().first();
    if (!p || p.status !== 'authorized') return (p?.status ?? s.to) as PaymentStatus;
    const details = { authorizedSatang: Number(p.amount_satang), capturedSatang: s.capturedSatang };
    await trx('payments')
      .where({ id: s.paymentId })
      .update({
        status: s.to,
        ...(s.to === 'paid' ? { amount_satang: s.capturedSatang } : {}),
        details: trx.raw('details || ?::jsonb', [JSON.stringify(details)]),
        updated_at: trx.fn.now(),
      });
    await trx('payment_events').insert({
      payment_id: s.paymentId,
      from_status: 'authorized',
      to_status: s.to,
      reason: s.reason,
    });
    paymentTransitions.inc({ method: String(p.method), to: s.to });
    return s.to;
  });
}
