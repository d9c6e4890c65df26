/**
 * The callback processor: what happens to a verified callback of an IP-restricted endpoint.
 *
 * Guarantees:
 *  - Duplicates: one receipt per (provider, payment, status). A duplicate, also one arriving
 *    concurrently, waits for the first delivery to finish and gets its stored response (the wait
 *    is bounded: see "A retry while the first delivery is unfinished"); it records nothing and
 *    signals nothing.
 *  - Durable before the 200: the receipt is claimed (committed unfinished, no outcome: the
 *    unique key is then taken, and no transaction stays open across the signal) and finished
 *    with its outcome and response only after Temporal accepted the signal, so an answered
 *    callback is in the workflow's history. A callback whose signal failed removes its
 *    unfinished receipt and gets a 503, so the provider's retry does the whole work again; one
 *    whose gateway died before finishing leaves it unfinished, and a retry after the delivery
 *    lease (30 s) takes it over with the same receipt id. A repeated signal is harmless: the
 *    payment workflow keeps the first result only.
 *  - Two round trips for a first callback: the lookup that reads the payment and its receipt
 *    (callbackPayment) also claims the receipt, in one statement, when the callback passes the
 *    route's checks (the payment id it gives, its amount): every callback that passes them is
 *    delivered and keeps a receipt, whatever its outcome (signalled, payment_closed, recorded,
 *    conflict); one they refuse claims nothing. Then the signal, then the finish. The statement's
 *    snapshot cannot see a receipt a concurrent first delivery committed after it began, but its
 *    INSERT (ON CONFLICT DO NOTHING) meets it: "none seen, none claimed" is read again and is a
 *    duplicate that waits, never an error or a second delivery.
 *  - A retry while the first delivery is unfinished: a living delivery finishes within
 *    milliseconds, so a duplicate waits only while the unfinished receipt is younger than 2 s
 *    (duplicateWaitMs; the age is the database's). An older one's gateway died (or it is stuck):
 *    the retry gets a prompt 503 SERVICE_UNAVAILABLE with Retry-After, the seconds until the
 *    lease ends and a retry takes the delivery over, instead of a wait of up to 11 s and then the
 *    503 while the provider's connection is held.
 *  - Proof: what is signalled carries the receipt id and its proof (src/callbacks/result-proof),
 *    an HMAC only this gateway and the worker can make; the workflow settles nothing without it.
 *  - Conflicts: a result that contradicts a settled payment (success after expired or failed,
 *    failed after paid) is outcome `conflict`: instead of the signal (or, when the payment was
 *    settled while the signal was on its way, besides it) a lateResultWorkflow records it, tells
 *    the administrator once and applies LATE_PAYMENT_POLICY (workflows/late-result.ts).
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { newId } from '../ids';
import { AppError, ErrorCode } from '../domain/errors';
import { CONTRADICTED_BY, contradicts, type PaymentStatus } from '../domain/payment-state';
import { OrderIdKey } from '../domain/search-attributes';
import {
  lateResultWorkflowId,
  paymentResultSignal,
  taskQueueOf,
  WorkflowType,
  type LateResultWorkflow,
  type PaymentResult,
} from '../domain/workflow-contract';
import type { Logger } from '../logger';
import { callbacks } from '../metrics';
import { withTemporal } from '../temporal/payments';
import { paymentMatchesSql, toPayment, type PaymentRef } from '../payments/repository';
import type { CallbackProvider } from '../domain/providers';
import { signResult } from './result-proof';

export type { CallbackProvider };
export type CallbackStatus = 'success' | 'failed' | 'unprocessed';
export type Outcome = 'signalled' | 'payment_closed' | 'recorded' | 'conflict';

export interface StoredResponse {
  status: number;
  body: unknown;
  location?: string;
}

export interface VerifiedCallback {
  provider: CallbackProvider;
  payment: PaymentRef;
  status: CallbackStatus;
  sourceIp: string;
  /** the parsed payload, kept with the receipt */
  request: unknown;
  /** the provider's reference (charge id, wallet transaction id...) and message, passed to the workflow */
  reference?: string;
  message?: string;
  /** its receipt, when callbackPayment read it with the payment (null: none); read again when absent */
  receipt?: Receipt | null;
  /**
   * a write made by the very statement that finishes the receipt, and only if it does (the
   * handler-form record stores): a statement that reads the finished receipt from CTE `source`
   */
  record?: (source: string) => { sql: string; bindings: readonly Knex.RawBinding[] };
  /**
   * the response; `paymentStatus`: for a conflict, what the result contradicts; else the status
   * the callback found (the payment may have moved on since the signal)
   */
  respond: (outcome: Outcome, paymentStatus: PaymentStatus) => StoredResponse;
}

export interface ProcessorDeps {
  db: Db;
  client: Client;
  logger: Logger;
  /** the task queue of lateResultWorkflow */
  taskQueue: string;
  /** RESULT_SIGNING_KEY: signs what is signalled */
  signingKey: string;
  /** deadline of the signal call */
  signalTimeoutMs?: number;
  /** how long a receipt may stay unfinished before a duplicate takes its delivery over (CALLBACK_DELIVERY_LEASE_S, default 30 s) */
  deliveryLeaseMs?: number;
  /**
   * how old an unfinished receipt may be for a duplicate to wait for it (CALLBACK_DUPLICATE_WAIT_MS, default 2 s); one older
   * than this (its delivery is stuck or its gateway died) gets a prompt 503 with Retry-After
   */
  duplicateWaitMs?: number;
}

const SIGNAL_TIMEOUT_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a receipt may stay unfinished before a duplicate takes its delivery over (its gateway died). */
const DELIVERY_LEASE_MS = 30_000;
/**
 * How old an unfinished receipt may be for a duplicate to wait for it. A living delivery finishes
 * within milliseconds (one signal, one UPDATE); one unfinished after this is stuck or its gateway
 * died, and a duplicate then gets a prompt 503 (Retry-After: until the lease ends) instead of
 * holding the provider's connection.
 */
const DUPLICATE_WAIT_MS = 2_000;
/** How often a duplicate looks whether the delivery it waits for has finished. */
const WAIT_POLL_MS = 20;

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
const CLAIM_INSERT = `INSERT INTO callback_receipts (id, provider, payment_id, order_id, status, source_ip, request)`;

const leaseOf = (deps: Pick<ProcessorDeps, 'deliveryLeaseMs'>) => deps.deliveryLeaseMs ?? DELIVERY_LEASE_MS;

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
}

/**
 * The payment a callback names (by order id or by the provider's reference) and, in the same
 * statement, its receipt for (provider, status) if there is one: what processCallback needs to
 * answer a duplicate without another round trip. With `claim`, the same statement also claims
 * the receipt (inserts it unfinished, see processCallback) when there is none and the payment
 * passes the claim's checks: a first callback then costs the lookup and the finish, two round
 * trips. `receipt` is then:
 *  - the new receipt, `claimed` (this callback delivers it);
 *  - the receipt found (a duplicate);
 *  - undefined: none was visible to the statement's snapshot, but its insert met one committed
 *    since (a concurrent first delivery): processCallback reads it again and waits for it;
 *  - null: none, and nothing claimed (the payment fails the checks: the route refuses it).
 */
export async function callbackPayment(
  deps: Pick<ProcessorDeps, 'db' | 'deliveryLeaseMs'>,
  by: { orderId: string } | { providerRef: string },
  provider: CallbackProvider,
  status: CallbackStatus,
  claim?: Claim,
): Promise<{ payment: PaymentRef; receipt: Receipt | null | undefined } | undefined> {
  const byOrder = 'orderId' in by;
  const where = byOrder ? 'p.order_id = ?' : 'p.provider_ref = ? ORDER BY p.created_at DESC';
  const key = byOrder ? by.orderId : by.providerRef;
  if (!claim) {
    const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
      `SELECT p.*, ${RECEIPT_COLUMNS}
         FROM payments p
         LEFT JOIN LATERAL (
           SELECT * FROM callback_receipts r WHERE r.provider = ? AND r.payment_id = p.id AND r.status = ? LIMIT 1
         ) r ON true
        WHERE ${where} LIMIT 1`,
      [leaseOf(deps), provider, status, key],
    );
    const payment = toPayment(rows[0]);
    return payment && { payment, receipt: receiptOf(rows[0]) };
  }
  if (claim.paymentRef !== undefined && !byOrder)
    throw new Error('callbackPayment: a claim with paymentRef needs the order id lookup');
  const checks: { sql: string; bindings: (string | number | boolean)[] }[] = [
    ...(claim.paymentRef !== undefined ? [paymentMatchesSql(claim.paymentRef, key)] : []),
    ...(claim.amountSatang !== undefined ? [{ sql: 'p.amount_satang = ?', bindings: [claim.amountSatang] }] : []),
  ];
  // `r` names the payment by a scalar subquery (above: a LATERAL subquery with LIMIT, which the
  // planner cannot flatten), so the receipt is one probe of the unique key (provider, payment_id,
  // status) whatever the statistics say; as a plain join, on a table whose statistics still
  // counted few receipts, the planner scanned every receipt of the provider and status.
  // One statement, one snapshot: `r` cannot see a receipt committed after the statement began.
  // The INSERT's ON CONFLICT can (it waits for a concurrent insert of the key and does nothing
  // when that commits), so "no receipt seen, none claimed" is a concurrent first delivery.
  const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
    `WITH p AS (
       SELECT p.*, (${checks.map((c) => c.sql).join(' AND ') || 'true'}) AS claim_checks
         FROM payments p WHERE ${where} LIMIT 1
     ), r AS (
       SELECT r.* FROM callback_receipts r
        WHERE r.provider = ? AND r.payment_id = (SELECT p.id FROM p) AND r.status = ?
     ), c AS (
       ${CLAIM_INSERT}
       SELECT ?::text, ?::text, p.id, p.order_id, ?::text, ?::text, ?::jsonb FROM p
        WHERE p.claim_checks AND NOT EXISTS (SELECT 1 FROM r)
       ON CONFLICT (provider, payment_id, status) DO NOTHING
       RETURNING id
     )
     SELECT p.*, ${RECEIPT_COLUMNS}, c.id AS claimed_id
       FROM p LEFT JOIN r ON true LEFT JOIN c ON true`,
    [
      ...checks.flatMap((c) => c.bindings),
      key,
      provider,
      status,
      newId('evt'),
      provider,
      status,
      claim.sourceIp,
      JSON.stringify(claim.request ?? null),
      leaseOf(deps),
    ],
  );
  const row = rows[0];
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

/**
 * A receipt claimed by callbackPayment for a callback the route then refused after all (its
 * checks and the claim's disagreed): removed, so the key is free again. Not expected to happen.
 */
export async function releaseClaim(deps: Pick<ProcessorDeps, 'db' | 'logger'>, receipt: Receipt): Promise<void> {
  deps.logger.error({ receipt: receipt.id }, 'a callback the route refused had claimed its receipt: removed');
  await deps.db.raw('DELETE FROM callback_receipts WHERE id = ? AND outcome IS NULL', [receipt.id]);
}

async function readReceipt(deps: ProcessorDeps, cb: VerifiedCallback): Promise<Receipt | null> {
  const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
    `SELECT ${RECEIPT_COLUMNS} FROM callback_receipts r WHERE r.provider = ? AND r.payment_id = ? AND r.status = ?`,
    [leaseOf(deps), cb.provider, cb.payment.id, cb.status],
  );
  return receiptOf(rows[0]);
}

/**
 * Records a verified callback and delivers it, once per (provider, payment, status).
 *
 * The receipt is claimed first (by callbackPayment's lookup, `cb.receipt.claimed`, or else here),
 * committed on its own and unfinished (no outcome), so no transaction stays open across the
 * signal; the delivery then finishes it with its outcome and response (one UPDATE, which also
 * finds a payment settled the other way while the signal was on its way). A duplicate that finds
 * the receipt finished gets its response; one that finds it unfinished waits for it while it is
 * younger than duplicateWaitMs, and past that gets a prompt 503 with Retry-After; one that finds
 * it unfinished for longer than the lease (its gateway died) takes the delivery over, with the
 * same receipt id: the workflow keeps the first result. A delivery that fails removes its
 * unfinished receipt, so the provider's retry does the work.
 */
export async function processCallback(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
): Promise<{ response: StoredResponse; duplicate: boolean }> {
  let receipt = cb.receipt === undefined ? await readReceipt(deps, cb) : cb.receipt;
  for (;;) {
    if (receipt?.response) return duplicate(deps, cb, receipt.response);
    const id = receipt?.claimed
      ? receipt.id
      : !receipt
        ? await claim(deps, cb)
        : receipt.stale
          ? await takeOver(deps, receipt.id)
          : undefined;
    if (id) {
      const response = await deliverAndFinish(deps, cb, id);
      callbacks.inc({ provider: cb.provider, outcome: 'accepted', reason: '' });
      return { response, duplicate: false };
    }
    if (receipt && !receipt.stale) {
      // another delivery of this callback is under way: its response is ours, unless it is stuck
      if (receipt.ageMs >= (deps.duplicateWaitMs ?? DUPLICATE_WAIT_MS)) throw stillUnderWay(deps, cb, receipt);
      await sleep(WAIT_POLL_MS);
    }
    receipt = await readReceipt(deps, cb);
  }
}

/**
 * The 503 of a duplicate whose first delivery has not finished in the time a living one takes:
 * its gateway died (or it is stuck). Answered at once, with Retry-After until the lease ends and a
 * retry takes the delivery over, instead of holding the provider's connection.
 */
function stillUnderWay(deps: ProcessorDeps, cb: VerifiedCallback, receipt: Receipt): AppError {
  const retryAfter = Math.max(1, Math.ceil((leaseOf(deps) - receipt.ageMs) / 1000));
  deps.logger.warn(
    { provider: cb.provider, paymentId: cb.payment.id, status: cb.status, receipt: receipt.id, ageMs: receipt.ageMs },
    'duplicate callback: its first delivery has not finished; 503 until its lease ends',
  );
  return new AppError(
    ErrorCode.SERVICE_UNAVAILABLE,
    `An earlier delivery of this callback has not finished; retry after ${retryAfter} s`,
    {},
    { 'Retry-After': String(retryAfter) },
  );
}

function duplicate(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  response: StoredResponse,
): { response: StoredResponse; duplicate: boolean } {
  callbacks.inc({ provider: cb.provider, outcome: 'duplicate', reason: '' });
  deps.logger.info(
    { provider: cb.provider, paymentId: cb.payment.id, status: cb.status },
    'duplicate callback: first response returned',
  );
  return { response, duplicate: true };
}

/** The new receipt's id, unfinished and committed; undefined when (provider, payment, status) has one. */
async function claim(deps: ProcessorDeps, cb: VerifiedCallback): Promise<string | undefined> {
  const { rows } = await deps.db.raw<{ rows: { id: string }[] }>(
    `${CLAIM_INSERT}
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (provider, payment_id, status) DO NOTHING RETURNING id`,
    [
      newId('evt'),
      cb.provider,
      cb.payment.id,
      cb.payment.orderId,
      cb.status,
      cb.sourceIp,
      JSON.stringify(cb.request ?? null),
    ],
  );
  return rows[0]?.id;
}

/** A stale unfinished receipt's id, its lease renewed for this delivery; undefined when another took it. */
async function takeOver(deps: ProcessorDeps, id: string): Promise<string | undefined> {
  const { rows } = await deps.db.raw<{ rows: { id: string }[] }>(
    `UPDATE callback_receipts SET created_at = now()
      WHERE id = ? AND outcome IS NULL AND created_at < now() - ? * interval '1 millisecond' RETURNING id`,
    [id, leaseOf(deps)],
  );
  if (rows[0]) deps.logger.warn({ receipt: id }, 'callback delivery taken over: its first delivery did not finish');
  return rows[0]?.id;
}

/** Delivers the claimed receipt `id` and finishes it; a failed delivery removes it (the retry does the work). */
async function deliverAndFinish(deps: ProcessorDeps, cb: VerifiedCallback, id: string): Promise<StoredResponse> {
  try {
    return cb.status === 'unprocessed'
      ? await finish(deps, cb, id, 'recorded', cb.payment.status)
      : await deliver(deps, cb, id);
  } catch (e) {
    await deps.db
      .raw('DELETE FROM callback_receipts WHERE id = ? AND outcome IS NULL', [id])
      .catch((err: unknown) =>
        deps.logger.warn({ err, receipt: id }, 'unfinished callback receipt not removed: a retry takes it over'),
      );
    throw e;
  }
}

/**
 * Writes the outcome and response of receipt `id` (and the callback's record, in the same
 * statement: one round trip, atomic without BEGIN/COMMIT), unless a delivery that took it over
 * finished it first: then that response. With `unless`, only while the payment is in none of
 * those statuses: undefined otherwise.
 */
async function finish(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  id: string,
  outcome: Outcome,
  paymentStatus: PaymentStatus,
  unless: readonly PaymentStatus[] = [],
): Promise<StoredResponse> {
  const response = cb.respond(outcome, paymentStatus);
  const update = `UPDATE callback_receipts r
          SET outcome = ?, response_status = ?, response_body = ?, response_location = ?
         FROM payments p
        WHERE r.id = ? AND r.outcome IS NULL AND p.id = r.payment_id
          ${unless.length ? `AND p.status NOT IN (${unless.map(() => '?').join(', ')})` : ''}
        RETURNING r.id`;
  const bindings: Knex.RawBinding[] = [
    outcome,
    response.status,
    JSON.stringify(response.body),
    response.location ?? null,
    id,
    ...unless,
  ];
  const record = cb.record?.('finished');
  const { rows } = await deps.db.raw<{ rows: unknown[] }>(
    record ? `WITH finished AS (${update}), recorded AS (${record.sql}) SELECT id FROM finished` : update,
    record ? [...bindings, ...record.bindings] : bindings,
  );
  if (rows.length === 0) return finishedElsewhere(deps, cb, id, outcome, paymentStatus, unless);
  deps.logger.info(
    {
      provider: cb.provider,
      paymentId: cb.payment.id,
      orderId: cb.payment.orderId,
      status: cb.status,
      outcome,
      receipt: id,
    },
    'callback accepted',
  );
  return response;
}

/** The final UPDATE changed nothing: the receipt was finished by a delivery that took it over, or the payment is now settled the other way. */
async function finishedElsewhere(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  id: string,
  outcome: Outcome,
  paymentStatus: PaymentStatus,
  unless: readonly PaymentStatus[],
): Promise<StoredResponse> {
  const { rows } = await deps.db.raw<{ rows: Record<string, unknown>[] }>(
    `SELECT ${RECEIPT_COLUMNS}, p.status AS payment_status
       FROM callback_receipts r JOIN payments p ON p.id = r.payment_id WHERE r.id = ?`,
    [leaseOf(deps), id],
  );
  const receipt = receiptOf(rows[0]);
  if (receipt?.response) return receipt.response;
  if (!receipt) throw new Error(`callback receipt ${id} of ${cb.provider}/${cb.payment.id}/${cb.status} is gone`);
  const now = rows[0].payment_status as PaymentStatus;
  if (!unless.includes(now)) return finish(deps, cb, id, outcome, paymentStatus, unless);
  // the payment was settled the other way while the signal was on its way (or after its workflow ended)
  return conflict(deps, cb, id, now);
}

/**
 * The result to the payment: a conflict when the payment is already settled the other way,
 * else the signal (with its proof), its receipt finished only while the payment is not settled
 * the other way: one found so after the signal (the workflow decided while the signal was on its
 * way) or after its workflow ended is a conflict too.
 */
async function deliver(deps: ProcessorDeps, cb: VerifiedCallback, receiptId: string): Promise<StoredResponse> {
  const status = cb.status === 'success' ? 'success' : 'failed';
  if (contradicts(status, cb.payment.status)) return conflict(deps, cb, receiptId, cb.payment.status);
  const signalled = await signal(deps, cb, resultOf(deps, cb, receiptId));
  return finish(
    deps,
    cb,
    receiptId,
    signalled ? 'signalled' : 'payment_closed',
    cb.payment.status,
    CONTRADICTED_BY[status],
  );
}

function resultOf(deps: ProcessorDeps, cb: VerifiedCallback, receiptId: string): PaymentResult {
  const status = cb.status === 'success' ? 'success' : 'failed';
  return {
    status,
    provider: cb.provider,
    ...(cb.reference ? { reference: cb.reference } : {}),
    ...(cb.message ? { message: cb.message } : {}),
    receiptId,
    proof: signResult(deps.signingKey, { receiptId, paymentId: cb.payment.id, status }),
  };
}

/** Starts the late result's workflow (one per payment and status: a second start finds it, running or completed). */
async function conflict(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  receiptId: string,
  paymentStatus: PaymentStatus,
): Promise<StoredResponse> {
  const result = resultOf(deps, cb, receiptId);
  deps.logger.warn(
    { provider: cb.provider, paymentId: cb.payment.id, status: cb.status, paymentStatus, receipt: result.receiptId },
    'callback contradicts the settled payment: recorded as a conflict',
  );
  try {
    await withTemporal(() =>
      deps.client.withDeadline(Date.now() + (deps.signalTimeoutMs ?? SIGNAL_TIMEOUT_MS), () =>
        deps.client.workflow.start<LateResultWorkflow>(WorkflowType.lateResult, {
          // background work (a refund at the provider, an e-mail): off the payments' queue (bulkheads)
          taskQueue: taskQueueOf('background', deps.taskQueue),
          workflowId: lateResultWorkflowId(cb.payment.id, result.status),
          // once per payment and status; again only after a run that failed or was terminated
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
          args: [{ paymentId: cb.payment.id, orderId: cb.payment.orderId, paymentStatus, result }],
          typedSearchAttributes: [{ key: OrderIdKey, value: cb.payment.orderId }],
        }),
      ),
    );
  } catch (e) {
    if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
  }
  return finish(deps, cb, receiptId, 'conflict', paymentStatus);
}

/** True when the signal reached the running payment workflow; false when it had ended. */
async function signal(deps: ProcessorDeps, cb: VerifiedCallback, result: PaymentResult): Promise<boolean> {
  const handle = deps.client.workflow.getHandle(cb.payment.workflowId);
  try {
    await withTemporal(() =>
      deps.client.withDeadline(Date.now() + (deps.signalTimeoutMs ?? SIGNAL_TIMEOUT_MS), () =>
        handle.signal(paymentResultSignal, result),
      ),
    );
    return true;
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) {
      // the payment workflow has ended (expired, or already decided): keep the receipt for the operator
      deps.logger.warn(
        { provider: cb.provider, paymentId: cb.payment.id, status: cb.status, paymentStatus: cb.payment.status },
        'callback for a payment that has ended',
      );
      return false;
    }
    throw e;
  }
}
