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
import { withTemporal } from '../temporal/calls';
import type { PaymentRef } from '../payments/repository';
import {
  claimReceipt,
  finishReceipt,
  leaseOf,
  readReceipt,
  readReceiptById,
  removeUnfinished,
  takeOverReceipt,
  type CallbackProvider,
  type CallbackStatus,
  type Outcome,
  type Receipt,
  type ReceiptDeps,
  type StoredResponse,
} from './receipts';
import { signResult } from './result-proof';

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

export interface ProcessorDeps extends ReceiptDeps {
  client: Client;
  logger: Logger;
  /** the task queue of lateResultWorkflow */
  taskQueue: string;
  /** RESULT_SIGNING_KEY: signs what is signalled */
  signingKey: string;
  /** deadline of the signal call */
  signalTimeoutMs?: number;
  /**
   * how old an unfinished receipt may be for a duplicate to wait for it (CALLBACK_DUPLICATE_WAIT_MS, default 2 s); one older
   * than this (its delivery is stuck or its gateway died) gets a prompt 503 with Retry-After
   */
  duplicateWaitMs?: number;
}

const SIGNAL_TIMEOUT_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How old an unfinished receipt may be for a duplicate to wait for it. A living delivery finishes
 * within milliseconds (one signal, one UPDATE); one unfinished after this is stuck or its gateway
 * died, and a duplicate then gets a prompt 503 (Retry-After: until the lease ends) instead of
 * holding the provider's connection.
 */
const DUPLICATE_WAIT_MS = 2_000;
/** How often a duplicate looks whether the delivery it waits for has finished. */
const WAIT_POLL_MS = 20;

/**
 * A receipt claimed by callbackPayment for a callback the route then refused after all (its
 * checks and the claim's disagreed): removed, so the key is free again. Not expected to happen.
 */
export async function releaseClaim(deps: Pick<ProcessorDeps, 'db' | 'logger'>, receipt: Receipt): Promise<void> {
  deps.logger.error({ receipt: receipt.id }, 'a callback the route refused had claimed its receipt: removed');
  await removeUnfinished(deps.db, receipt.id);
}

const keyOf = (cb: VerifiedCallback) => ({ provider: cb.provider, paymentId: cb.payment.id, status: cb.status });

/** A stale receipt taken over for this delivery (its gateway died); undefined when another took it. */
async function takeOver(deps: ProcessorDeps, id: string): Promise<string | undefined> {
  const taken = await takeOverReceipt(deps, id);
  if (taken) deps.logger.warn({ receipt: id }, 'callback delivery taken over: its first delivery did not finish');
  return taken;
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
  let receipt = cb.receipt === undefined ? await readReceipt(deps, keyOf(cb)) : cb.receipt;
  for (;;) {
    if (receipt?.response) return duplicate(deps, cb, receipt.response);
    const id = receipt?.claimed
      ? receipt.id
      : !receipt
        ? await claimReceipt(deps.db, {
            ...keyOf(cb),
            orderId: cb.payment.orderId,
            sourceIp: cb.sourceIp,
            request: cb.request,
          })
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
    receipt = await readReceipt(deps, keyOf(cb));
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

/** Delivers the claimed receipt `id` and finishes it; a failed delivery removes it (the retry does the work). */
async function deliverAndFinish(deps: ProcessorDeps, cb: VerifiedCallback, id: string): Promise<StoredResponse> {
  try {
    return cb.status === 'unprocessed'
      ? await finish(deps, cb, id, 'recorded', cb.payment.status)
      : await deliver(deps, cb, id);
  } catch (e) {
    await removeUnfinished(deps.db, id).catch((err: unknown) =>
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
  const finished = await finishReceipt(deps.db, id, outcome, response, unless, cb.record?.('finished'));
  if (!finished) return finishedElsewhere(deps, cb, id, outcome, paymentStatus, unless);
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
  const found = await readReceiptById(deps, id);
  if (!found) throw new Error(`callback receipt ${id} of ${cb.provider}/${cb.payment.id}/${cb.status} is gone`);
  if (found.receipt.response) return found.receipt.response;
  const now = found.paymentStatus;
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
