/**
 * The callback processor: a verified callback's receipt lifecycle and its signal (the SQL is in
 * ./receipts.ts). One receipt per (provider, payment, status), claimed (committed unfinished,
 * with what its signal carries) first. A result for a pending payment is answered once its
 * receipt is committed; the signal and the finish follow the answer (AfterAnswer), and a receipt
 * left unfinished is delivered again after the lease (./redelivery.ts, or a retry after it). A
 * duplicate gets the first response, waiting only while the first delivery is younger than
 * duplicateWaitMs (then 503). The signal carries the receipt id and its proof. A result that
 * contradicts the settled payment is a `conflict` (lateResultWorkflow); a pending payment whose
 * workflow was closed by hand gets the result re-driven (`closed`). Handler-form callbacks, whose
 * finish writes their record, finish before they answer.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { AppError, ErrorCode } from '../domain/errors';
import { CONTRADICTED_BY, contradicts, type PaymentStatus } from '../payments';
import { OrderIdKey } from '../domain/search-attributes';
import {
  lateResultWorkflowId,
  paymentRedriveWorkflowId,
  isOwnPaymentWorkflow,
  PaymentWorkflowType,
  type LateResultWorkflow,
  type PaymentRedriveWorkflow,
  type PaymentResult,
} from '../payments';
import type { AlertThrottle } from '../alerts';
import { taskQueueOf } from '../domain/temporal';
import type { Logger } from '../logger';
import { callbacks } from '../metrics';
import { withTemporal } from '../temporal/calls';
import type { PaymentRef } from '../payments';
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
  type Finish,
  type Outcome,
  type Receipt,
  type ReceiptDeps,
  type StoredResponse,
} from './receipts';
import { signResult } from '../result-proof';
import type { AfterAnswer } from '../http/after-answer';

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
  /** the administrator's alerts (a pending payment found with its workflow closed) */
  alerts?: AlertThrottle;
  /** how a result reaches the payment's workflow (the payments slice's resultDelivery) */
  deliverResult: (p: PaymentRef, result: PaymentResult) => Promise<void>;
  /** where a receipt's finish that runs after its callback was answered is kept */
  afterAnswer: AfterAnswer;
  /** the finishes of receipts already answered, batched (finishReceipts); absent: one statement each */
  finishes?: (f: Finish) => Promise<boolean>;
  /** set on the copy of the deps that runs after the answer: its finish may wait for a batch */
  answered?: true;
}

const SIGNAL_TIMEOUT_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How old an unfinished receipt may be for a duplicate to wait for it. A living delivery finishes
 * within milliseconds (one signal, one UPDATE, batched for up to WRITE_BATCH_MS); one unfinished after this is stuck or its gateway
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
 * Records a verified callback and delivers it, once per (provider, payment, status): the receipt
 * claimed (by callbackPayment's lookup, or here), the signal, then the finish (one UPDATE, which
 * also finds a payment settled the other way meanwhile; a result to signal is answered before
 * both). A duplicate gets the finished receipt's response, waits for an unfinished one
 * younger than duplicateWaitMs (503 past it), and takes over one older than the lease, with the
 * same receipt id. A delivery that fails before its answer removes its receipt.
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
            reference: cb.reference,
            message: cb.message,
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

/** Delivers the claimed receipt `id` and finishes it; a delivery that fails before its answer removes it (the retry does the work). */
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
  const finished =
    deps.answered && deps.finishes && !cb.record
      ? await deps.finishes({ id, outcome, response, unless })
      : await finishReceipt(deps.db, id, outcome, response, unless, cb.record?.('finished'));
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
 * The result to the payment: a conflict when the payment is already settled the other way, else
 * the signal (with its proof). For a pending payment, answered "processed" as soon as the receipt
 * is committed (it holds what the signal carries): the signal and the finish run after the
 * answer, and if they fail the receipt stays unfinished for the redelivery. The finish writes
 * the receipt's outcome only while the payment is not settled the other way: one found so (the
 * workflow decided while the signal was on its way) is recorded as a conflict, which a retry of
 * the callback gets. A handler-form callback's record is written by its finish: that one
 * finishes before the answer.
 */
async function deliver(deps: ProcessorDeps, cb: VerifiedCallback, receiptId: string): Promise<StoredResponse> {
  const status = cb.status === 'success' ? 'success' : 'failed';
  if (contradicts(status, cb.payment.status)) return conflict(deps, cb, receiptId, cb.payment.status);
  const result = resultOf(deps, cb, receiptId);
  // a record to write, or a payment that has already ended (rare): its own answer, after the delivery
  if (cb.record || cb.payment.status !== 'pending') return signalAndFinish(deps, cb, receiptId, result);
  deps.afterAnswer.run(
    {
      callbackReceipt: receiptId,
      provider: cb.provider,
      paymentId: cb.payment.id,
      then: 'redelivered after the lease',
    },
    () => signalAndFinish({ ...deps, answered: true }, answeredFirst(cb), receiptId, result),
  );
  return cb.respond('signalled', cb.payment.status);
}

/**
 * A callback answered "processed" before its signal: if its payment is then found settled the
 * way its result says (the expiry yielded to the receipt: activities/payments), its receipt keeps
 * that answer rather than "the payment had already ended", so a duplicate gets the first one.
 */
const answeredFirst = (cb: VerifiedCallback): VerifiedCallback => ({
  ...cb,
  respond: (outcome, paymentStatus) => cb.respond(outcome === 'payment_closed' ? 'signalled' : outcome, paymentStatus),
});

/** The signal, then the receipt's finish; the closed workflow's path when the signal found it ended. */
async function signalAndFinish(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  receiptId: string,
  result: PaymentResult,
): Promise<StoredResponse> {
  if (!(await signal(deps, cb, result))) return closed(deps, cb, receiptId, result);
  return finish(deps, cb, receiptId, 'signalled', cb.payment.status, CONTRADICTED_BY[result.status]);
}

/**
 * Delivers receipt `id`, taken over by the redelivery (./redelivery.ts), with the payment as read
 * now: the same paths as a first delivery, all before this returns; a failure leaves the receipt
 * unfinished (it is tried again after the lease).
 */
export async function redeliver(deps: ProcessorDeps, cb: VerifiedCallback, id: string): Promise<StoredResponse> {
  const status = cb.status === 'success' ? 'success' : 'failed';
  if (contradicts(status, cb.payment.status)) return conflict(deps, cb, id, cb.payment.status);
  return signalAndFinish(deps, answeredFirst(cb), id, resultOf(deps, cb, id));
}

/**
 * The signal found the payment's workflow closed. The row is the truth: a payment that really
 * ended keeps its answer (`payment_closed`, or a conflict); a row still pending means the workflow
 * was closed by hand (terminated, failed, timed out), so the result is re-driven by a
 * paymentRedriveWorkflow (durable before the receipt is finished, outcome `redriven`). One that
 * cannot be re-driven (an order's payment: its order workflow's) fails with a 503 (its receipt
 * stays unfinished: delivered again after the lease), and the administrator is alerted.
 */
async function closed(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  receiptId: string,
  result: PaymentResult,
): Promise<StoredResponse> {
  const contradicting = CONTRADICTED_BY[result.status];
  const now = (await readReceiptById(deps, receiptId))?.paymentStatus ?? cb.payment.status;
  if (now !== 'pending') return finish(deps, cb, receiptId, 'payment_closed', now, contradicting);
  const what = { provider: cb.provider, paymentId: cb.payment.id, orderId: cb.payment.orderId, status: cb.status };
  deps.logger.error(
    { ...what, securityEvent: 'payment_workflow_closed', workflowId: cb.payment.workflowId },
    "security: a pending payment's workflow was closed; the provider's result is re-driven from the records",
  );
  void deps.alerts
    ?.alert(`payment-closed:${cb.payment.id}`, {
      subject: `[Talat] Pending payment ${cb.payment.id} (order ${cb.payment.orderId}) found with its workflow closed`,
      text: `A verified ${cb.provider} ${cb.status} callback found the workflow ${cb.payment.workflowId} closed while the payment was pending. Who closed it: an operator, or someone who reached the Temporal frontend?\n`,
    })
    .catch((err: unknown) => deps.logger.warn({ err }, 'alert not sent'));
  if (!isOwnPaymentWorkflow(cb.payment)) {
    const retryAfter = 60;
    throw new AppError(
      ErrorCode.SERVICE_UNAVAILABLE,
      `The payment cannot take this result now; retry after ${retryAfter} s`,
      {},
      { 'Retry-After': String(retryAfter) },
    );
  }
  try {
    await withTemporal(() =>
      deps.client.withDeadline(Date.now() + (deps.signalTimeoutMs ?? SIGNAL_TIMEOUT_MS), () =>
        deps.client.workflow.start<PaymentRedriveWorkflow>(PaymentWorkflowType.redrive, {
          taskQueue: deps.taskQueue,
          workflowId: paymentRedriveWorkflowId(cb.payment.id, result.status),
          // once per payment and status; again only after a run that failed or was terminated
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
          args: [{ paymentId: cb.payment.id, orderId: cb.payment.orderId, result }],
          typedSearchAttributes: [{ key: OrderIdKey, value: cb.payment.orderId }],
        }),
      ),
    );
  } catch (e) {
    if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
  }
  return finish(deps, cb, receiptId, 'redriven', now, contradicting);
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
        deps.client.workflow.start<LateResultWorkflow>(PaymentWorkflowType.lateResult, {
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
  try {
    await withTemporal(() =>
      deps.client.withDeadline(Date.now() + (deps.signalTimeoutMs ?? SIGNAL_TIMEOUT_MS), () =>
        deps.deliverResult(cb.payment, result),
      ),
    );
    return true;
  } catch (e) {
    // ended: not found for a signal; for a signal-with-start, an ended execution under the id
    if (e instanceof WorkflowNotFoundError || e instanceof WorkflowExecutionAlreadyStartedError) {
      // the payment workflow has ended (or was closed by hand): the caller reads the row
      deps.logger.warn(
        { provider: cb.provider, paymentId: cb.payment.id, status: cb.status, paymentStatus: cb.payment.status },
        'callback for a payment whose workflow has ended',
      );
      return false;
    }
    throw e;
  }
}
