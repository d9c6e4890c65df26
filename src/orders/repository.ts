/**
 * The orders tables (orders, order_adjustments, order_finalizations): the only place they are
 * read or written. The gateway records an order, an adjustment or the finalisation before the
 * order workflow is asked; the order activities apply them (each write idempotent: Temporal may
 * retry it) and keep the order row as the settlement's projection. An order's key is its payment's
 * id (orders.payment_id; order ids are unique per account and mode): the other tables key on it
 * (order_payment_id), so one merchant's or mode's order id never reaches another's rows.
 */
import type { Db } from '../db/knex';
import { newId } from '../ids';
import type { Mode } from '../domain/mode';
import type {
  AdjustmentReason,
  ApprovalDecision,
  ApprovalStatus,
  OrderMethod,
  OrderStatus,
  OrderTimelineType,
  OrderView,
} from './index';

export interface Order extends OrderView {
  mode: Mode;
  apiKeyId: string;
  /** the key's account: an order id is unique per (account, mode) */
  accountId: string;
  /** the order's workflow (order-<paymentId>; order-<orderId> for orders made before the scope) */
  workflowId: string;
  baseSatang: number;
  statusReason: string | null;
  lapsesAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AdjustmentLine {
  description: string;
  amountSatang: number;
  reason: AdjustmentReason;
}

export interface Adjustment {
  id: string;
  orderId: string;
  /** the order's key (its payment id) */
  orderKey: string;
  lines: AdjustmentLine[];
  totalSatang: number;
  status: 'pending' | 'applied' | 'rejected';
  rejection: string | null;
  createdAt: Date;
}

export interface Finalization {
  id: string;
  orderId: string;
  orderKey: string;
  finalSatang: number | null;
  outcome: string | null;
}

type Row = Record<string, unknown>;
const num = (v: unknown): number => Number(v ?? 0);

const toOrder = (r: Row): Order => ({
  orderId: String(r.order_id),
  paymentId: String(r.payment_id),
  method: r.method as OrderMethod,
  mode: r.mode as Mode,
  apiKeyId: String(r.api_key_id),
  accountId: String(r.account_id),
  workflowId: String(r.workflow_id),
  status: r.status as OrderStatus,
  baseSatang: num(r.base_satang),
  authorizedSatang: num(r.authorized_satang),
  capturedSatang: num(r.captured_satang),
  paidSatang: num(r.paid_satang),
  refundedSatang: num(r.refunded_satang),
  finalSatang: r.final_satang === null || r.final_satang === undefined ? null : num(r.final_satang),
  statusReason: (r.status_reason as string | null) ?? null,
  lapsesAt: (r.lapses_at as Date | null) ?? null,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

const toAdjustment = (r: Row): Adjustment => ({
  id: String(r.id),
  orderId: String(r.order_id),
  orderKey: String(r.order_payment_id),
  lines: r.lines as AdjustmentLine[],
  totalSatang: num(r.total_satang),
  status: r.status as Adjustment['status'],
  rejection: (r.rejection as string | null) ?? null,
  createdAt: r.created_at as Date,
});

const toFinalization = (r: Row): Finalization => ({
  id: String(r.id),
  orderId: String(r.order_id),
  orderKey: String(r.order_payment_id),
  finalSatang: r.final_satang === null ? null : num(r.final_satang),
  outcome: (r.outcome as string | null) ?? null,
});

export const viewOf = (o: Order): OrderView => ({
  orderId: o.orderId,
  paymentId: o.paymentId,
  method: o.method,
  status: o.status,
  authorizedSatang: o.authorizedSatang,
  capturedSatang: o.capturedSatang,
  paidSatang: o.paidSatang,
  refundedSatang: o.refundedSatang,
  finalSatang: o.finalSatang,
});

/** Where an order id is unique: the key's account and the mode (as the payments' OrderScope). */
interface Scope {
  accountId: string;
  mode: Mode;
}

/** The order of its key (its payment's id). */
export async function orderByKey(db: Db, paymentId: string): Promise<Order | undefined> {
  const r = await db('orders').where({ payment_id: paymentId }).first();
  return r ? toOrder(r) : undefined;
}

/** The order of this order id in this account and mode (another scope's same id is another order). */
export async function orderInScope(db: Db, orderId: string, scope: Scope): Promise<Order | undefined> {
  const r = await db('orders').where({ order_id: orderId, account_id: scope.accountId, mode: scope.mode }).first();
  return r ? toOrder(r) : undefined;
}

/** The order whose workflow this is (orders.workflow_id): how the order activities find their order. */
export async function orderByWorkflowId(db: Db, workflowId: string): Promise<Order | undefined> {
  const r = await db('orders').where({ workflow_id: workflowId }).first();
  return r ? toOrder(r) : undefined;
}

/** The order row, unless its scope has one of this order id: returns that scope's row either way. */
export async function createOrder(
  db: Db,
  o: {
    orderId: string;
    paymentId: string;
    method: OrderMethod;
    mode: Mode;
    apiKeyId: string;
    accountId: string;
    workflowId: string;
    status: OrderStatus;
    baseSatang: number;
    authorizedSatang?: number;
    paidSatang?: number;
  },
): Promise<{ created: boolean; order: Order }> {
  const [row] = await db('orders')
    .insert({
      order_id: o.orderId,
      payment_id: o.paymentId,
      method: o.method,
      mode: o.mode,
      api_key_id: o.apiKeyId,
      account_id: o.accountId,
      workflow_id: o.workflowId,
      status: o.status,
      base_satang: o.baseSatang,
      authorized_satang: o.authorizedSatang ?? 0,
      paid_satang: o.paidSatang ?? 0,
    })
    .onConflict()
    .ignore()
    .returning('*');
  if (row) return { created: true, order: toOrder(row) };
  const existing =
    (await orderInScope(db, o.orderId, { accountId: o.accountId, mode: o.mode })) ??
    (await orderByKey(db, o.paymentId));
  return { created: false, order: existing! };
}

export type RecordDecision<T> =
  { ok: true; value: T } | { ok: false; code: 'IDEMPOTENCY_KEY_REUSED'; existingId: string };

/** An adjustment's row, before the workflow applies it; with an Idempotency-Key, that key's row when it matches. */
export async function recordAdjustment(
  db: Db,
  a: { orderId: string; orderKey: string; apiKeyId: string; lines: AdjustmentLine[]; idempotencyKey?: string },
): Promise<RecordDecision<Adjustment>> {
  const totalSatang = a.lines.reduce((s, l) => s + l.amountSatang, 0);
  const prior = async (): Promise<RecordDecision<Adjustment> | undefined> => {
    if (!a.idempotencyKey) return undefined;
    const r = await db('order_adjustments')
      .where({ api_key_id: a.apiKeyId, idempotency_key: a.idempotencyKey })
      .first();
    if (!r) return undefined;
    const same = r.order_payment_id === a.orderKey && JSON.stringify(r.lines) === JSON.stringify(a.lines);
    return same
      ? { ok: true, value: toAdjustment(r) }
      : { ok: false, code: 'IDEMPOTENCY_KEY_REUSED', existingId: r.id };
  };
  const found = await prior();
  if (found) return found;
  const [row] = await db('order_adjustments')
    .insert({
      id: newId('adj'),
      order_id: a.orderId,
      order_payment_id: a.orderKey,
      lines: JSON.stringify(a.lines),
      total_satang: totalSatang,
      api_key_id: a.apiKeyId,
      idempotency_key: a.idempotencyKey ?? null,
    })
    .onConflict(['api_key_id', 'idempotency_key'])
    .ignore()
    .returning('*');
  if (row) return { ok: true, value: toAdjustment(row) };
  return (await prior())!;
}

export async function adjustmentsOf(db: Db, orderKey: string): Promise<Adjustment[]> {
  const rows = await db('order_adjustments')
    .where({ order_payment_id: orderKey })
    .orderBy([{ column: 'created_at' }, 'id']);
  return rows.map(toAdjustment);
}

export async function adjustmentById(db: Db, id: string): Promise<Adjustment | undefined> {
  const r = await db('order_adjustments').where({ id }).first();
  return r ? toAdjustment(r) : undefined;
}

/** The order's one finalisation: the first request's row for every later or concurrent one. */
export async function recordFinalization(db: Db, o: { orderId: string; paymentId: string }): Promise<Finalization> {
  const [row] = await db('order_finalizations')
    .insert({ id: newId('fin'), order_id: o.orderId, order_payment_id: o.paymentId })
    .onConflict('order_payment_id')
    .ignore()
    .returning('*');
  return toFinalization(row ?? (await db('order_finalizations').where({ order_payment_id: o.paymentId }).first()));
}

export async function finalizationById(db: Db, id: string): Promise<Finalization | undefined> {
  const r = await db('order_finalizations').where({ id }).first();
  return r ? toFinalization(r) : undefined;
}

export async function finalizationOf(db: Db, orderKey: string): Promise<Finalization | undefined> {
  const r = await db('order_finalizations').where({ order_payment_id: orderKey }).first();
  return r ? toFinalization(r) : undefined;
}

export interface Approval {
  id: string;
  orderId: string;
  orderKey: string;
  adjustmentId: string;
  lineIndex: number;
  description: string;
  amountSatang: number;
  status: ApprovalStatus;
  requested: ApprovalDecision | null;
  counted: boolean | null;
  expiresAt: Date;
  decidedAt: Date | null;
}
const toApproval = (r: Row): Approval => ({
  id: String(r.id),
  orderId: String(r.order_id),
  orderKey: String(r.order_payment_id),
  adjustmentId: String(r.adjustment_id),
  lineIndex: Number(r.line_index),
  description: String(r.description),
  amountSatang: num(r.amount_satang),
  status: r.status as ApprovalStatus,
  requested: (r.requested as ApprovalDecision | null) ?? null,
  counted: (r.counted as boolean | null) ?? null,
  expiresAt: r.expires_at as Date,
  decidedAt: (r.decided_at as Date | null) ?? null,
});

/** `apr_<32 hex>` as newId makes its ids (src/ids.ts's prefix list left as it is) */
const approvalId = (): string => `apr_${newId('adj').slice(4)}`;

export async function approvalsOf(db: Db, orderKey: string): Promise<Approval[]> {
  return (await db('order_approvals').where({ order_payment_id: orderKey }).orderBy(['created_at', 'line_index'])).map(
    toApproval,
  );
}

export async function approvalById(db: Db, id: string): Promise<Approval | undefined> {
  const r = await db('order_approvals').where({ id }).first();
  return r ? toApproval(r) : undefined;
}

/** The customer's decision as the gateway records it: the first one stands (a second is the same). */
export async function requestApproval(db: Db, id: string, decision: ApprovalDecision): Promise<Approval> {
  await db('order_approvals').where({ id, status: 'pending' }).whereNull('requested').update({ requested: decision });
  return (await approvalById(db, id))!;
}

/**
 * The workflow settles a pending approval: the customer's recorded decision, or at the timeout
 * (none recorded) `timed_out` with the shop's default. A decided one stays as it is.
 */
export async function settleApproval(db: Db, id: string, timeout?: { fallback: ApprovalDecision }): Promise<Approval> {
  return db.transaction(async (trx) => {
    const a = toApproval(await trx('order_approvals').where({ id }).forUpdate().first());
    if (a.status !== 'pending' || (!a.requested && !timeout)) return a;
    const decision = a.requested ?? timeout!.fallback;
    const status: ApprovalStatus = a.requested ? (a.requested === 'approve' ? 'approved' : 'declined') : 'timed_out';
    const [u] = await trx('order_approvals')
      .where({ id })
      .update({ status, counted: decision === 'approve', decided_at: trx.fn.now() })
      .returning('*');
    return toApproval(u);
  });
}

// ---- the order activities' writes (each idempotent) ----

/** Which lines of an applied adjustment wait for the customer (orders.approval*: src/config.ts). */
export interface ApprovalPolicy {
  thresholdSatang: number;
  timeoutSeconds: number;
}

/**
 * Apply a pending adjustment while the order is open, else reject it; the row's state
 * afterwards. Applied: each substitution line above the threshold gets its approval row.
 */
export async function applyAdjustment(
  db: Db,
  id: string,
  policy?: ApprovalPolicy,
): Promise<{ adjustment: Adjustment; order: Order; approvals: Approval[] }> {
  return db.transaction(async (trx) => {
    const a = await trx('order_adjustments').where({ id }).forUpdate().first();
    const o = await trx('orders').where({ payment_id: a.order_payment_id }).forUpdate().first();
    if (a.status === 'pending') {
      const open = o.status === 'open' || o.status === 'authorizing';
      const [u] = await trx('order_adjustments')
        .where({ id })
        .update(open ? { status: 'applied' } : { status: 'rejected', rejection: `the order is ${o.status}` })
        .returning('*');
      const asking = (u.lines as AdjustmentLine[])
        .map((l, lineIndex) => ({ l, lineIndex }))
        .filter(({ l }) => policy && open && l.reason === 'substitution' && l.amountSatang > policy.thresholdSatang);
      if (asking.length > 0)
        await trx('order_approvals').insert(
          asking.map(({ l, lineIndex }) => ({
            id: approvalId(),
            order_id: a.order_id,
            order_payment_id: a.order_payment_id,
            adjustment_id: id,
            line_index: lineIndex,
            description: l.description,
            amount_satang: l.amountSatang,
            expires_at: trx.raw(`now() + make_interval(secs => ?)`, [policy!.timeoutSeconds]),
          })),
        );
      const approvals = (await trx('order_approvals').where({ adjustment_id: id }).orderBy('line_index')).map(
        toApproval,
      );
      return { adjustment: toAdjustment(u), order: toOrder(o), approvals };
    }
    const approvals = (await trx('order_approvals').where({ adjustment_id: id }).orderBy('line_index')).map(toApproval);
    return { adjustment: toAdjustment(a), order: toOrder(o), approvals };
  });
}

/**
 * The finalisation's amount, fixed once: the estimate plus every applied adjustment (pending
 * ones still open are rejected: nothing is half-applied), the order `finalizing`. A retry
 * returns the amount fixed before.
 */
export async function fixFinalAmount(
  db: Db,
  finalizeId: string,
  opts: { aboveAuthorization?: boolean } = {},
): Promise<{ finalSatang: number; order: Order; exceeds?: boolean; awaitingApproval?: boolean }> {
  return db.transaction(async (trx) => {
    const f = await trx('order_finalizations').where({ id: finalizeId }).forUpdate().first();
    const o = await trx('orders').where({ payment_id: f.order_payment_id }).forUpdate().first();
    if (f.final_satang !== null) return { finalSatang: num(f.final_satang), order: toOrder(o) };
    if (await trx('order_approvals').where({ order_payment_id: f.order_payment_id, status: 'pending' }).first()) {
      // a substitution waits for the customer: nothing fixed (as above the authorisation)
      await trx('order_finalizations').where({ id: finalizeId }).delete();
      return { finalSatang: 0, order: toOrder(o), awaitingApproval: true };
    }
    const [{ total }] = await trx('order_adjustments')
      .where({ order_payment_id: f.order_payment_id, status: 'applied' })
      .sum({ total: 'total_satang' });
    // a declined (or timed-out declined) substitution is not in the final amount
    const [{ uncounted }] = await trx('order_approvals')
      .where({ order_payment_id: f.order_payment_id, counted: false })
      .sum({ uncounted: 'amount_satang' });
    const finalSatang = num(o.base_satang) + num(total) - num(uncounted);
    // a QR order above what was paid takes a top-up; a card order a new authorisation of the
    // difference (aboveAuthorization), else it cannot pass its authorisation
    const limit = o.method === 'card' && !opts.aboveAuthorization ? num(o.authorized_satang) : Number.MAX_SAFE_INTEGER;
    if (finalSatang > limit || finalSatang < 0) {
      // nothing fixed: the finalisation is undone, so a later one (after an adjustment) is a new one
      await trx('order_finalizations').where({ id: finalizeId }).delete();
      return { finalSatang, order: toOrder(o), exceeds: true };
    }
    await trx('order_adjustments')
      .where({ order_payment_id: f.order_payment_id, status: 'pending' })
      .update({ status: 'rejected', rejection: 'the order was finalised first' });
    await trx('order_finalizations').where({ id: finalizeId }).update({ final_satang: finalSatang });
    const [u] = await trx('orders')
      .where({ payment_id: f.order_payment_id })
      .update({ status: 'finalizing', final_satang: finalSatang, updated_at: trx.fn.now() })
      .returning('*');
    return { finalSatang, order: toOrder(u) };
  });
}

/** The order's amounts and status after a step; returns the row. */
export async function updateOrder(
  db: Db,
  orderKey: string,
  patch: Partial<{
    status: OrderStatus;
    statusReason: string | null;
    authorizedSatang: number;
    capturedSatang: number;
    paidSatang: number;
    refundedSatang: number;
    finalSatang: number;
    lapsesAt: string;
  }>,
  finalizeOutcome?: { finalizeId: string; outcome: string },
): Promise<Order> {
  const cols: Record<string, unknown> = {};
  const map: Record<string, string> = {
    status: 'status',
    statusReason: 'status_reason',
    authorizedSatang: 'authorized_satang',
    capturedSatang: 'captured_satang',
    paidSatang: 'paid_satang',
    refundedSatang: 'refunded_satang',
    finalSatang: 'final_satang',
    lapsesAt: 'lapses_at',
  };
  for (const [k, v] of Object.entries(patch)) if (v !== undefined) cols[map[k]] = v;
  return db.transaction(async (trx) => {
    // the authorisation's time (the timeline's order.authorized) rides on the same UPDATE
    if (patch.authorizedSatang !== undefined) cols.authorized_at = trx.fn.now();
    const [row] = await trx('orders')
      .where({ payment_id: orderKey })
      .update({ ...cols, updated_at: trx.fn.now() })
      .returning('*');
    if (finalizeOutcome)
      await trx('order_finalizations')
        .where({ id: finalizeOutcome.finalizeId })
        .update({ outcome: finalizeOutcome.outcome, settled_at: trx.fn.now() });
    return toOrder(row);
  });
}

export interface TopUp {
  paymentId: string;
  orderId: string;
  orderKey: string;
  topUpOrderId: string;
  finalizeId: string;
  amountSatang: number;
  status: 'pending' | 'paid' | 'expired';
}
const toTopUp = (r: Row): TopUp => ({
  paymentId: String(r.payment_id),
  orderId: String(r.order_id),
  orderKey: String(r.order_payment_id),
  topUpOrderId: String(r.topup_order_id),
  finalizeId: String(r.finalize_id),
  amountSatang: num(r.amount_satang),
  status: r.status as TopUp['status'],
});

/** The finalisation's top-up row (one per finalisation: a retry finds it); the order awaits it. */
export async function recordTopUp(db: Db, t: Omit<TopUp, 'status'>): Promise<TopUp> {
  return db.transaction(async (trx) => {
    await trx('order_topups')
      .insert({
        payment_id: t.paymentId,
        order_id: t.orderId,
        order_payment_id: t.orderKey,
        topup_order_id: t.topUpOrderId,
        finalize_id: t.finalizeId,
        amount_satang: t.amountSatang,
      })
      .onConflict('finalize_id')
      .ignore();
    await trx('orders')
      .where({ payment_id: t.orderKey })
      .update({
        status: 'awaiting_topup',
        status_reason: `a top-up of ${t.amountSatang / 100} THB is due`,
        updated_at: trx.fn.now(),
      });
    return toTopUp(await trx('order_topups').where({ finalize_id: t.finalizeId }).first());
  });
}

export async function topUpsOf(db: Db, orderKey: string): Promise<TopUp[]> {
  return (await db('order_topups').where({ order_payment_id: orderKey }).orderBy('created_at')).map(toTopUp);
}

/** The top-up's end: paid (the order's paid amount grows by it) or expired. */
export async function settleTopUp(db: Db, paymentId: string, paid: boolean): Promise<TopUp> {
  return db.transaction(async (trx) => {
    const [t] = await trx('order_topups')
      .where({ payment_id: paymentId, status: 'pending' })
      .update({ status: paid ? 'paid' : 'expired', settled_at: trx.fn.now() })
      .returning('*');
    if (t && paid)
      await trx('orders')
        .where({ payment_id: t.order_payment_id })
        .update({ paid_satang: trx.raw('paid_satang + ?', [num(t.amount_satang)]), updated_at: trx.fn.now() });
    return toTopUp(t ?? (await trx('order_topups').where({ payment_id: paymentId }).first()));
  });
}

/** A card order's second authorisation: the difference above the first, on the card on file. */
export interface CardHold {
  id: string;
  orderId: string;
  orderKey: string;
  finalizeId: string;
  amountSatang: number;
  chargeId: string | null;
  status: 'pending' | 'authorized' | 'declined' | 'captured' | 'voided';
  capturedSatang: number;
  failureReason: string | null;
}
const toCardHold = (r: Row): CardHold => ({
  id: String(r.id),
  orderId: String(r.order_id),
  orderKey: String(r.order_payment_id),
  finalizeId: String(r.finalize_id),
  amountSatang: num(r.amount_satang),
  chargeId: (r.charge_id as string | null) ?? null,
  status: r.status as CardHold['status'],
  capturedSatang: num(r.captured_satang),
  failureReason: (r.failure_reason as string | null) ?? null,
});

/** The finalisation's new authorisation, recorded before the provider is asked (a retry finds it). */
export async function recordCardHold(
  db: Db,
  h: { orderId: string; orderKey: string; finalizeId: string; amountSatang: number },
): Promise<CardHold> {
  await db('order_card_holds')
    .insert({
      id: `${h.finalizeId}.hold`,
      order_id: h.orderId,
      order_payment_id: h.orderKey,
      finalize_id: h.finalizeId,
      amount_satang: h.amountSatang,
    })
    .onConflict('finalize_id')
    .ignore();
  return toCardHold(await db('order_card_holds').where({ finalize_id: h.finalizeId }).first());
}

/** The new authorisation's outcome at the provider; returns the row. */
export async function updateCardHold(
  db: Db,
  finalizeId: string,
  patch: Partial<{ status: CardHold['status']; chargeId: string; capturedSatang: number; failureReason: string }>,
): Promise<CardHold> {
  const cols: Record<string, unknown> = { updated_at: db.fn.now() };
  if (patch.status) cols.status = patch.status;
  if (patch.chargeId) cols.charge_id = patch.chargeId;
  if (patch.capturedSatang !== undefined) cols.captured_satang = patch.capturedSatang;
  if (patch.failureReason) cols.failure_reason = patch.failureReason;
  const [row] = await db('order_card_holds').where({ finalize_id: finalizeId }).update(cols).returning('*');
  return toCardHold(row);
}

export async function cardHoldsOf(db: Db, orderKey: string): Promise<CardHold[]> {
  return (await db('order_card_holds').where({ order_payment_id: orderKey }).orderBy('created_at')).map(toCardHold);
}

export interface OrderStoryEntry {
  at: Date;
  type: OrderTimelineType;
  details: Record<string, unknown>;
}

/**
 * The order's settlement steps from its own rows, for the payment's timeline (src/app/timeline.ts):
 * authorised, each adjustment, the finalisation and its end (captured and released, voided,
 * refunded), top-ups, and the order's end. Empty unless the payment (paymentId) is an order's of
 * that order id; without paymentId, the order id's only order (none when scopes share it).
 */
export async function orderStory(db: Db, orderId: string, paymentId?: string): Promise<OrderStoryEntry[]> {
  const found = await db('orders')
    .where(paymentId === undefined ? { order_id: orderId } : { order_id: orderId, payment_id: paymentId })
    .limit(2);
  if (found.length !== 1) return [];
  const o = found[0];
  const key = String(o.payment_id);
  const [adjustments, f, topUps] = await Promise.all([
    db('order_adjustments')
      .where({ order_payment_id: key })
      .orderBy([{ column: 'created_at' }, 'id']),
    db('order_finalizations').where({ order_payment_id: key }).first(),
    db('order_topups').where({ order_payment_id: key }).orderBy('created_at'),
  ]);
  const baht = (v: unknown) => num(v) / 100;
  const out: OrderStoryEntry[] = [];
  const add = (at: unknown, type: OrderTimelineType, details: Record<string, unknown>) =>
    out.push({ at: new Date(at as string), type, details });
  if (o.authorized_at) add(o.authorized_at, 'order.authorized', { amount: baht(o.authorized_satang) });
  for (const a of adjustments)
    add(a.created_at, 'order.adjusted', {
      adjustmentId: a.id,
      amount: baht(a.total_satang),
      lines: (a.lines as AdjustmentLine[]).map((l) => ({
        description: l.description,
        reason: l.reason,
        amount: l.amountSatang / 100,
      })),
      status: a.status,
      rejection: a.rejection,
    });
  if (f?.final_satang !== null && f?.final_satang !== undefined)
    add(f.created_at, 'order.finalized', { finalizeId: f.id, finalAmount: baht(f.final_satang) });
  for (const t of topUps) {
    const who = { paymentId: t.payment_id, orderId: t.topup_order_id, amount: baht(t.amount_satang) };
    add(t.created_at, 'order.topup_pending', who);
    if (t.status !== 'pending') add(t.settled_at ?? o.updated_at, `order.topup_${t.status as 'paid' | 'expired'}`, who);
  }
  const endAt = f?.settled_at ?? o.updated_at;
  const outcome = f?.outcome as string | null | undefined;
  const authorized = num(o.authorized_satang);
  const captured = num(o.captured_satang);
  if (outcome === 'captured') {
    add(endAt, 'order.captured', { amount: baht(captured), authorizedAmount: baht(authorized) });
    if (authorized > captured) add(endAt, 'order.released', { amount: baht(authorized - captured) });
  } else if (outcome === 'expired' || outcome === 'failed')
    add(endAt, 'order.voided', { amount: baht(authorized), reason: o.status_reason });
  else if ((outcome === 'refunded' || outcome === 'cancelled') && num(o.refunded_satang) > 0)
    add(endAt, 'order.refunded', { amount: baht(o.refunded_satang), paidAmount: baht(o.paid_satang) });
  const end = { settled: 'order.settled', failed: 'order.failed', attention: 'order.attention' } as const;
  const type = end[o.status as keyof typeof end];
  if (type)
    add(outcome ? endAt : o.updated_at, type, {
      status: o.status,
      finalAmount: o.final_satang === null ? null : baht(o.final_satang),
      capturedAmount: baht(captured),
      paidAmount: baht(o.paid_satang),
      refundedAmount: baht(o.refunded_satang),
      reason: o.status_reason,
    });
  return out;
}

/** An order step as the webhooks name it (src/webhooks OrderEvent, kept structural here). */
export interface OrderStepEvent {
  type: string;
  orderId: string;
  paymentId: string;
  ref?: string;
  mode: Mode;
  apiKeyId?: string;
}
/** What a top-up's payment shows the customer (the payments slice's row, the checkout's link). */
export type TopUpPaymentView = (
  paymentId: string,
) => Promise<{ qrPayload: string | null; expiresAt: string | null; checkoutUrl: string | null } | undefined>;

/** The signed link of an approval's page (built with the identity secret, outside the workflow). */
export type ApprovalLink = (approvalId: string, expiresAtMs: number) => string;

/**
 * The body's data of an order step's webhook, read from the order's rows; undefined unless the
 * rows hold that step of that order, payment, key and mode (a forged event signs nothing).
 */
export async function orderEventData(
  db: Db,
  e: OrderStepEvent,
  topUpPayment: TopUpPaymentView,
  approvalLink?: ApprovalLink,
): Promise<Record<string, unknown> | undefined> {
  const o = await db('orders').where({ payment_id: e.paymentId }).first();
  if (!o || o.order_id !== e.orderId || o.mode !== e.mode || String(o.api_key_id) !== (e.apiKeyId ?? ''))
    return undefined;
  const baht = (v: unknown) => num(v) / 100;
  const authorized = num(o.authorized_satang);
  const captured = num(o.captured_satang);
  if (e.type === 'order.adjusted') {
    const applied = await db('order_adjustments')
      .where({ order_payment_id: e.paymentId, status: 'applied' })
      .orderBy([{ column: 'created_at' }, 'id']);
    const at = applied.findIndex((a: Row) => a.id === e.ref);
    if (at < 0) return undefined;
    const a = applied[at];
    const running = applied.slice(0, at + 1).reduce((s: number, r: Row) => s + num(r.total_satang), num(o.base_satang));
    return {
      adjustmentId: a.id,
      amount: baht(a.total_satang),
      lines: (a.lines as AdjustmentLine[]).map((l) => ({
        description: l.description,
        amount: l.amountSatang / 100,
        reason: l.reason,
      })),
      estimateAmount: baht(o.base_satang),
      runningTotal: running / 100,
    };
  }
  if (e.type === 'order.approval_requested') {
    const a = await db('order_adjustments')
      .where({ id: e.ref ?? '', order_payment_id: e.paymentId, status: 'applied' })
      .first();
    const waits = a
      ? (await db('order_approvals').where({ adjustment_id: a.id }).orderBy('line_index')).map(toApproval)
      : [];
    if (!waits.length || !approvalLink) return undefined;
    return {
      adjustmentId: a.id,
      approvals: waits.map((w) => ({
        approvalId: w.id,
        description: w.description,
        amount: w.amountSatang / 100,
        status: w.status,
        url: approvalLink(w.id, w.expiresAt.getTime()),
        expiresAt: w.expiresAt.toISOString(),
      })),
    };
  }
  if (e.type === 'order.released') {
    const f = await db('order_finalizations').where({ order_payment_id: e.paymentId }).first();
    const released = authorized - Math.min(captured, authorized);
    if (o.method !== 'card' || !['captured', 'expired', 'failed'].includes(f?.outcome) || released <= 0)
      return undefined;
    return {
      authorizedAmount: baht(authorized),
      capturedAmount: baht(captured),
      releasedAmount: released / 100,
      voided: captured === 0,
    };
  }
  if (e.type.startsWith('order.topup_')) {
    const t = await db('order_topups')
      .where({ order_payment_id: e.paymentId, payment_id: e.ref ?? '' })
      .first();
    const want = e.type.slice('order.topup_'.length);
    if (!t || (want !== 'pending' && t.status !== want)) return undefined;
    const topUp = { paymentId: t.payment_id, orderId: t.topup_order_id, amount: baht(t.amount_satang) };
    if (want !== 'pending') return { topUp: { ...topUp, status: t.status } };
    const p = await topUpPayment(String(t.payment_id));
    return { topUp: { ...topUp, qrPayload: null, expiresAt: null, checkoutUrl: null, ...p } };
  }
  if (e.type !== `order.${o.status}` || !['settled', 'short', 'failed', 'attention'].includes(o.status))
    return undefined;
  return {
    status: o.status,
    statusReason: o.status_reason ?? null,
    estimateAmount: baht(o.base_satang),
    authorizedAmount: baht(authorized),
    capturedAmount: baht(captured),
    paidAmount: baht(o.paid_satang),
    refundedAmount: baht(o.refunded_satang),
    finalAmount: o.final_satang === null ? null : baht(o.final_satang),
  };
}
