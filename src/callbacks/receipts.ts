/**
 * The callback_receipts table: every SQL statement of a callback's receipt (the lookup that may
 * claim it, the claim, the take-over, the finish, the removal). The lifecycle that calls them,
 * and why it is safe, is in ./processor.ts.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { newId } from '../ids';
import type { CallbackProvider } from '../domain/providers';
import type { PaymentStatus } from '../payments';
import { orderReference } from '../domain/promptpay';
import {
  paymentLookupSql,
  paymentOfOrderSql,
  paymentStatusSql,
  qrReferenceOf,
  qrReferenceSql,
  toPayment,
  type PaymentRef,
} from '../payments';
import { prepared } from '../db/prepared';

/** A callback names an order id that several scopes (accounts, modes) use, and nothing that tells them apart. */
export class AmbiguousOrderError extends Error {
  constructor(
    readonly orderId: string,
    readonly candidates: number,
  ) {
    super(`order id ${orderId} names ${candidates} payments (of different accounts or modes)`);
  }
}

export type { CallbackProvider };
export type CallbackStatus = 'success' | 'failed' | 'unprocessed';
/** redriven: the payment's workflow was found closed while its row was pending (processor.ts `closed`) */
export type Outcome = 'signalled' | 'redriven' | 'payment_closed' | 'recorded' | 'conflict';

export interface StoredResponse {
  status: number;
  body: unknown;
  location?: string;
}

export interface ReceiptDeps {
  db: Db;
  /** how long a receipt may stay unfinished before a duplicate takes its delivery over (CALLBACK_DELIVERY_LEASE_S) */
  deliveryLeaseMs?: number;
}

/** A receipt's unique key. */
export interface ReceiptKey {
  provider: CallbackProvider;
  paymentId: string;
  status: CallbackStatus;
}

/**
 * A provider may name the payment by our id or by the reference we gave it: the charge id, or for
 * a QR payment the reference in its QR (bill payment Ref1, tag 62 reference label), as stored.
 */
export const paymentMatches = (p: PaymentRef, given: string): boolean =>
  given === p.id ||
  (p.providerRef !== null && given === p.providerRef) ||
  (p.method === 'qr' && given === qrReferenceOf(p));

/**
 * paymentMatches as SQL, over the payments row `p` of the order `orderId` (the callback's lookup
 * claims its receipt only for a payment the route then accepts): the same three ways, kept here
 * beside it so the two stay one rule.
 */
export const paymentMatchesSql = (given: string, orderId: string): { sql: string; bindings: string[] } => ({
  sql: `(p.id = ? OR p.provider_ref = ? OR (p.method = 'qr' AND ${qrReferenceSql} = ?))`,
  bindings: [given, given, orderReference(orderId), given],
});

/** How long a receipt may stay unfinished before a duplicate takes its delivery over (its gateway died). */
export const DELIVERY_LEASE_MS = 30_000;

/** A receipt as found: finished (it holds the first response) or a delivery under way. */
export interface Receipt {
  id: string;
  /** the first response, once the delivery has finished */
  response?: StoredResponse;
  /** unfinished for longer than the delivery lease: its delivery died, a duplicate takes it over */
  stale: boolean;
  /** how long ago it was claimed (or taken over), by the database's clock */
  ageMs: number;
  /** claimed just now by this callback's own lookup (callbackPayment with a claim): this callback delivers it */
  claimed?: true;
}

/** The columns of a receipt, read beside the payment or alone, as `receipt_*` (see receiptOf). */
const RECEIPT_COLUMNS = `r.id AS receipt_id, r.outcome AS receipt_outcome, r.response_status AS receipt_response_status,
  r.response_body AS receipt_response_body, r.response_location AS receipt_response_location,
  (r.outcome IS NULL AND r.created_at < now() - ? * interval '1 millisecond') AS receipt_stale,
  (extract(epoch FROM now() - r.created_at) * 1000)::float8 AS receipt_age_ms`;

/** A claim: the receipt inserted unfinished (no outcome), by callbackPayment's lookup or by claim(). */
const CLAIM_INSERT = `INSERT INTO callback_receipts (id, provider, payment_id, order_id, status, source_ip, request, reference, message)`;

export const leaseOf = (deps: Pick<ReceiptDeps, 'deliveryLeaseMs'>) => deps.deliveryLeaseMs ?? DELIVERY_LEASE_MS;

function receiptOf(row: Record<string, unknown> | undefined): Receipt | null {
  if (!row?.receipt_id) return null;
  return {
    id: String(row.receipt_id),
    stale: row.receipt_stale === true,
    ageMs: Number(row.receipt_age_ms ?? 0),
    ...(row.receipt_outcome == null
      ? {}
      : {
          response: {
            status: Number(row.receipt_response_status),
            body: row.receipt_response_body,
            ...(row.receipt_response_location ? { location: String(row.receipt_response_location) } : {}),
          },
        }),
  };
}

/**
 * What a callback that passed verification claims with its lookup (callbackPayment): the receipt
 * is claimed only when the payment it finds is one the route then delivers to, so these are the
 * route's own checks, as SQL: the id the provider gave must name the payment (paymentMatches) and
 * the amount must be the payment's. A callback the route refuses (404, 400) claims nothing.
 */
export interface Claim {
  sourceIp: string;
  /** the parsed payload, kept with the receipt */
  request: unknown;
  /** the payment id the callback gave (our id, the provider's reference, a QR's order reference); only with an order id lookup */
  paymentRef?: string;
  /** the amount the callback gave, in satang */
  amountSatang?: number;
  /** the provider's reference and message, kept with the receipt: its signal can be sent from the table alone */
  reference?: string;
  message?: string;
}

/**
 * The payment a callback names (by order id or the provider's reference) and its receipt for
 * (provider, status), in one statement; with `claim`, the same statement claims the receipt when
 * there is none and the payment passes the claim's checks. `receipt` is then: the new one,
 * `claimed`; the one found (a duplicate); undefined, when the insert met a receipt committed
 * after the statement began (a concurrent first delivery: read it again and wait); or null, none
 * and nothing claimed (the route refuses the callback).
 */
export async function callbackPayment(
  deps: ReceiptDeps,
  by: { orderId: string } | { providerRef: string },
  provider: CallbackProvider,
  status: CallbackStatus,
  claim?: Claim,
): Promise<{ payment: PaymentRef; receipt: Receipt | null | undefined } | undefined> {
  const byOrder = 'orderId' in by;
  const orderId = byOrder ? by.orderId : '';
  // by order id (unique per account and mode only): the one payment it means, the one the
  // callback's payment id names when it names one, with the count of candidates (paymentOfOrderSql)
  const named =
    byOrder && claim?.paymentRef !== undefined
      ? paymentMatchesSql(claim.paymentRef, orderId)
      : { sql: 'false', bindings: [] as (string | boolean)[] };
  const lookupSql = (columns = '') =>
    byOrder ? paymentOfOrderSql(named.sql, columns) : paymentLookupSql('providerRef', columns);
  const lookupBindings = byOrder
    ? [orderId, ...named.bindings, orderId, ...named.bindings]
    : [(by as { providerRef: string }).providerRef];
  const unambiguous = (row: Record<string, unknown> | undefined) => {
    const n = Number(row?.candidates ?? 1);
    if (n > 1) throw new AmbiguousOrderError(orderId, n);
  };
  if (!claim) {
    const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
      `SELECT p.*, ${RECEIPT_COLUMNS}
         FROM (${lookupSql()}) p
         LEFT JOIN LATERAL (
           SELECT * FROM callback_receipts r WHERE r.provider = ? AND r.payment_id = p.id AND r.status = ? LIMIT 1
         ) r ON true`,
      [leaseOf(deps), ...lookupBindings, provider, status],
    );
    unambiguous(rows[0]);
    const payment = toPayment(rows[0]);
    return payment && { payment, receipt: receiptOf(rows[0]) };
  }
  if (claim.paymentRef !== undefined && !byOrder)
    throw new Error('callbackPayment: a claim with paymentRef needs the order id lookup');
  const checks: { sql: string; bindings: (string | number | boolean)[] }[] = [
    ...(claim.paymentRef !== undefined ? [paymentMatchesSql(claim.paymentRef, orderId)] : []),
    ...(claim.amountSatang !== undefined ? [{ sql: 'p.amount_satang = ?', bindings: [claim.amountSatang] }] : []),
  ];
  // `r` names the payment by a scalar subquery (above: a LATERAL subquery with LIMIT, which the
  // planner cannot flatten), so the receipt is one probe of the unique key (provider, payment_id,
  // status) whatever the statistics say; as a plain join, on a table whose statistics still
  // counted few receipts, the planner scanned every receipt of the provider and status.
  // One statement, one snapshot: `r` cannot see a receipt committed after the statement began.
  // The INSERT's ON CONFLICT can (it waits for a concurrent insert of the key and does nothing
  // when that commits), so "no receipt seen, none claimed" is a concurrent first delivery.
  const { rows } = await prepared(
    deps.db,
    `WITH p AS (
       ${lookupSql(`(${checks.map((c) => c.sql).join(' AND ') || 'true'}) AS claim_checks`)}
     ), r AS (
       SELECT r.* FROM callback_receipts r
        WHERE r.provider = ? AND r.payment_id = (SELECT p.id FROM p) AND r.status = ?
     ), c AS (
       ${CLAIM_INSERT}
       SELECT ?::text, ?::text, p.id, p.order_id, ?::text, ?::text, ?::jsonb, ?::text, ?::text FROM p
        WHERE p.claim_checks AND NOT EXISTS (SELECT 1 FROM r)${byOrder ? ' AND p.candidates = 1' : ''}
       ON CONFLICT (provider, payment_id, status) DO NOTHING
       RETURNING id
     )
     SELECT p.*, ${RECEIPT_COLUMNS}, c.id AS claimed_id
       FROM p LEFT JOIN r ON true LEFT JOIN c ON true`,
    [
      ...checks.flatMap((c) => c.bindings),
      ...lookupBindings,
      provider,
      status,
      newId('evt'),
      provider,
      status,
      claim.sourceIp,
      JSON.stringify(claim.request ?? null),
      claim.reference ?? null,
      claim.message ?? null,
      leaseOf(deps),
    ],
  );
  const row = rows[0];
  unambiguous(row);
  const payment = toPayment(row);
  if (!payment) return undefined;
  if (row.claimed_id) {
    return {
      payment,
      receipt: { id: String(row.claimed_id), stale: false, ageMs: 0, claimed: true },
    };
  }
  const receipt = receiptOf(row);
  return { payment, receipt: receipt ?? (row.claim_checks === true ? undefined : null) };
}

/** The receipt of (provider, payment, status), if any. */
export async function readReceipt(deps: ReceiptDeps, key: ReceiptKey): Promise<Receipt | null> {
  const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
    `SELECT ${RECEIPT_COLUMNS} FROM callback_receipts r WHERE r.provider = ? AND r.payment_id = ? AND r.status = ?`,
    [leaseOf(deps), key.provider, key.paymentId, key.status],
  );
  return receiptOf(rows[0]);
}

/** The new receipt's id, unfinished and committed; undefined when (provider, payment, status) has one. */
export async function claimReceipt(db: Db, key: ReceiptKey & { orderId: string } & Claim): Promise<string | undefined> {
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `${CLAIM_INSERT}
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (provider, payment_id, status) DO NOTHING RETURNING id`,
    [
      newId('evt'),
      key.provider,
      key.paymentId,
      key.orderId,
      key.status,
      key.sourceIp,
      JSON.stringify(key.request ?? null),
      key.reference ?? null,
      key.message ?? null,
    ],
  );
  return rows[0]?.id;
}

/** A stale unfinished receipt's id, its lease renewed for this delivery; undefined when another took it. */
export async function takeOverReceipt(deps: ReceiptDeps, id: string): Promise<string | undefined> {
  const { rows } = await deps.db.raw<{ rows: { id: string }[] }>(
    `UPDATE callback_receipts SET created_at = now()
      WHERE id = ? AND outcome IS NULL AND created_at < now() - ? * interval '1 millisecond' RETURNING id`,
    [id, leaseOf(deps)],
  );
  return rows[0]?.id;
}

/** Removes an unfinished receipt (a refused claim or a failed delivery), so the key is free again. */
export async function removeUnfinished(db: Db, id: string): Promise<void> {
  await db.raw('DELETE FROM callback_receipts WHERE id = ? AND outcome IS NULL', [id]);
}

/** One finish of a receipt: its outcome and response, unless its payment is in one of `unless`. */
export interface Finish {
  id: string;
  outcome: Outcome;
  response: StoredResponse;
  unless: readonly PaymentStatus[];
}

/** The finishing UPDATE of one or many receipts (one row of arrays per finish), and its bindings. */
const FINISH_SQL = `UPDATE callback_receipts r
        SET outcome = v.outcome, response_status = v.status, response_body = v.body::json,
            response_location = v.location
       FROM unnest(?::text[], ?::text[], ?::int[], ?::text[], ?::text[], ?::text[])
            AS v(id, outcome, status, body, location, unless)
      WHERE r.id = v.id AND r.outcome IS NULL
        AND (v.unless = '' OR ${paymentStatusSql('r.payment_id')} <> ALL (string_to_array(v.unless, ',')))
      RETURNING r.id`;
const finishBindings = (finishes: Finish[]): unknown[] => [
  finishes.map((f) => f.id),
  finishes.map((f) => f.outcome),
  finishes.map((f) => f.response.status),
  finishes.map((f) => JSON.stringify(f.response.body)),
  finishes.map((f) => f.response.location ?? null),
  finishes.map((f) => f.unless.join(',')),
];

/**
 * Writes the outcome and response of unfinished receipt `id`, and the callback's `record` in the
 * same statement (one round trip, atomic without BEGIN/COMMIT); with `unless`, only while the
 * payment is in none of those statuses. False when it changed nothing.
 */
export async function finishReceipt(
  db: Db,
  id: string,
  outcome: Outcome,
  response: StoredResponse,
  unless: readonly PaymentStatus[],
  record?: { sql: string; bindings: readonly Knex.RawBinding[] },
): Promise<boolean> {
  if (!record) return (await finishReceipts(db, [{ id, outcome, response, unless }]))[0];
  const { rows } = await prepared(
    db,
    `WITH finished AS (${FINISH_SQL}), recorded AS (${record.sql}) SELECT id FROM finished`,
    [...finishBindings([{ id, outcome, response, unless }]), ...record.bindings],
  );
  return rows.length > 0;
}

/**
 * finishReceipt of many receipts in one statement (src/db/write-batch.ts), each with its own
 * `unless`; per finish, whether it changed its receipt.
 */
export async function finishReceipts(db: Db, finishes: Finish[]): Promise<boolean[]> {
  const { rows } = await prepared<{ id: string }>(db, FINISH_SQL, finishBindings(finishes));
  const finished = new Set(rows.map((r) => r.id));
  return finishes.map((f) => finished.has(f.id));
}

/** Receipt `id` and its payment's status now (undefined: the receipt is gone). */
export async function readReceiptById(
  deps: ReceiptDeps,
  id: string,
): Promise<{ receipt: Receipt; paymentStatus: PaymentStatus } | undefined> {
  const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
    `SELECT ${RECEIPT_COLUMNS}, ${paymentStatusSql('r.payment_id')} AS payment_status
       FROM callback_receipts r WHERE r.id = ?`,
    [leaseOf(deps), id],
  );
  const receipt = receiptOf(rows[0]);
  return receipt ? { receipt, paymentStatus: rows[0].payment_status as PaymentStatus } : undefined;
}

/** A payment's callback receipts as stored, for the order timeline. */
export const receiptRowsOfPayment = (db: Db, paymentId: string) =>
  db('callback_receipts')
    .where({ payment_id: paymentId })
    .select('id', 'provider', 'status', 'outcome', 'source_ip', 'response_status', 'created_at');

/** Marks receipt `id` as a late, contradicting result (lateResultWorkflow); the number of rows marked. */
export const markReceiptConflict = (db: Db, id: string): Promise<number> =>
  db('callback_receipts').where({ id }).update({ outcome: 'conflict' });

/** A receipt left unfinished past the lease, with what its signal carries and its payment. */
export interface UnfinishedReceipt {
  id: string;
  provider: CallbackProvider;
  status: 'success' | 'failed';
  reference?: string;
  message?: string;
  payment: PaymentRef;
}

/**
 * Up to `limit` receipts of `providers` unfinished for longer than the lease (oldest first; the
 * partial index callback_receipts_unfinished), each with its payment (read by the payments
 * slice's lookup): the redelivery's work.
 */
export async function unfinishedReceipts(
  deps: ReceiptDeps,
  providers: readonly CallbackProvider[],
  limit: number,
): Promise<UnfinishedReceipt[]> {
  const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
    `SELECT r.id, r.provider, r.status, r.reference, r.message, r.payment_id FROM callback_receipts r
      WHERE r.outcome IS NULL AND r.created_at < now() - ? * interval '1 millisecond'
        AND r.provider = ANY(?) AND r.status IN ('success', 'failed')
      ORDER BY r.created_at LIMIT ?`,
    [leaseOf(deps), [...providers], limit],
  );
  const found: UnfinishedReceipt[] = [];
  for (const row of rows) {
    const p = await deps.db.raw<{ rows: Record<string, unknown>[] }>(paymentLookupSql('id'), [String(row.payment_id)]);
    const payment = toPayment(p.rows[0]);
    if (!payment) continue;
    found.push({
      id: String(row.id),
      provider: row.provider as CallbackProvider,
      status: row.status as 'success' | 'failed',
      ...(row.reference ? { reference: String(row.reference) } : {}),
      ...(row.message ? { message: String(row.message) } : {}),
      payment,
    });
  }
  return found;
}
