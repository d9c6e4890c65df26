/**
 * The payment state machine every payment workflow shares (payment-card.ts, payment-qr.ts): the
 * view, the `paymentResult` signal and `payment` query handlers, and the settle step. The
 * workflow keeps the status; the payments row is its projection, written by activities after
 * the workflow decided (src/payments/states). The first result whose proof verifies decides
 * (result-proof-v1: settlePayment checks it); a later one that contradicts is a late result
 * (workflows/payments/late-result.ts). Every terminal transition emits payment.status.updated
 * (workflows/webhooks/notify.ts); the search attribute PaymentStatus follows the status.
 */
import {
  allHandlersFinished,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { PaymentActivities } from '../../activities/payments/index';
import { contradicts, isTerminal, transition, type PaymentMethod, type PaymentStatus } from '../../src/payments';
import { PaymentStatusKey } from '../../src/domain/search-attributes';
import type { PaymentStatusEvent } from '../../src/webhooks';
import { Patch } from '../../src/domain/temporal';
import {
  paymentQuery,
  paymentResultSignal,
  type PaymentInput,
  type PaymentOutcome,
  type PaymentResult,
  type PaymentView,
} from '../../src/payments';
import { resolveLateResult } from './late-result';
import { emitPaymentStatusUpdated, retryWebhookDeliveries } from '../webhooks';
import type { HasPatch } from '../patches';

/**
 * The payments-record activities (short, retried until they succeed); the card workflow's attachCharge too.
 * 5 s: one transaction each, so a worker killed during one is noticed (and the write retried
 * elsewhere, idempotently) within 5 s; timeouts are not part of a history's commands.
 */
export const recordActivities = proxyActivities<Activities>({
  startToCloseTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

const { recordPayment, updatePaymentStatus } = recordActivities;

/**
 * lean-payment-v1: the settle step as a local activity (a marker in the history instead of an
 * activity's three events and a workflow task). It holds the first webhook attempts, each bounded
 * by WEBHOOK_TIMEOUT_MS; Postgres errors are retried with back-off.
 */
const { settlePayment } = proxyLocalActivities<PaymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

const isValidResult = (r: unknown): r is PaymentResult =>
  typeof r === 'object' &&
  r !== null &&
  ((r as PaymentResult).status === 'success' || (r as PaymentResult).status === 'failed');

/** State, handlers and the settle step shared by the payment workflows. */
/** `successStatus`: what a provider's success settles (`authorized` for an order's card authorisation). */
export function paymentMachine(
  input: PaymentInput,
  method: PaymentMethod,
  has: HasPatch,
  successStatus: PaymentStatus = 'paid',
) {
  // a new execution takes the lean path; a history recorded before it replays the old commands
  const lean = has(Patch.leanPayment);
  const view: PaymentView = {
    paymentId: input.paymentId,
    orderId: input.orderId,
    method,
    amountSatang: input.amountSatang,
    status: 'pending',
    history: [{ status: 'pending', at: new Date().toISOString(), reason: 'created' }],
  };
  /** results received before the payment was decided, in arrival order: the first whose proof verifies decides */
  const queue: PaymentResult[] = [];
  /** what the payment was decided to: set as a settle step begins (a signalled result's once its proof verified) */
  let decided: PaymentStatus | undefined;
  setHandler(paymentQuery, () => view);
  // Until the payment is decided, a valid result waits in the queue; after, one that contradicts
  // the decision is a late result (it is never dropped), one that agrees changes nothing.
  setHandler(paymentResultSignal, async (r) => {
    if (!isValidResult(r)) return;
    if (decided === undefined) queue.push(r);
    else await lateResult(r);
  });

  /**
   * late-result-v1: a result that contradicts the decision is recorded, e-mailed and handled by
   * LATE_PAYMENT_POLICY (workflows/payments/late-result.ts). Its proof is checked there first. The patch
   * marker is written only when this happens; a history from before replays as it ran (dropped).
   */
  async function lateResult(r: PaymentResult): Promise<void> {
    const status = decided!;
    if (!contradicts(r.status, status) || !has(Patch.lateResult)) return;
    await resolveLateResult({ paymentId: input.paymentId, orderId: input.orderId, paymentStatus: status, result: r });
  }

  const statusEvent = (status: PaymentStatus, at: string): PaymentStatusEvent => ({
    paymentId: input.paymentId,
    orderId: input.orderId,
    status,
    amountSatang: input.amountSatang,
    timestamp: at,
    mode: input.mode,
    apiKeyId: input.apiKeyId,
  });

  /**
   * lean-payment-v1: one local activity writes the transition and makes the first webhook
   * attempts. result-proof-v1: for a signalled result it first checks the result's proof; false
   * when it did not verify (nothing was written: the payment keeps waiting).
   */
  async function settleLean(target: PaymentStatus, reason: string, result?: PaymentResult): Promise<boolean> {
    const from = view.status;
    const next = transition(from, target);
    if (!next) return true;
    if (!result) decided = next;
    const at = new Date().toISOString();
    const event = isTerminal(next) ? statusEvent(next, at) : undefined;
    const { retry, firstAttemptAt, deferred, rejected, current } = await settlePayment({
      change: { paymentId: input.paymentId, from, to: next, reason },
      payment: row(),
      proof: input.proof,
      // the whole start input: its talat-start-v1 proof is checked in this same activity (no new event)
      start: input,
      event,
      ...(result ? { result } : {}),
    });
    if (rejected && has(Patch.resultProof)) return false;
    if (current && has(Patch.lateResult)) {
      // the row was settled otherwise first (a workflow task that wrote it failed, and its retry
      // saw the timer and a signal together): the row is the truth, this result is a late one
      decided = current;
      view.status = current;
      view.history.push({ status: current, at, reason: 'settled by an earlier attempt of this step' });
      upsertSearchAttributes([{ key: PaymentStatusKey, value: current }]);
      // the webhook of the row's status: its deliveries' first attempts were made by the step
      if (isTerminal(current))
        await retryWebhookDeliveries(statusEvent(current, at), retry, firstAttemptAt, deferred, has);
      if (result) await lateResult(result);
      return true;
    }
    decided = next;
    view.status = next;
    view.history.push({ status: next, at, reason });
    if (next === 'failed' || next === 'expired') view.failureReason = reason;
    upsertSearchAttributes([{ key: PaymentStatusKey, value: next }]);
    if (event) await retryWebhookDeliveries(event, retry, firstAttemptAt, deferred, has);
    return true;
  }

  /** Settle to `target`; with `result` (a signalled one), only when its proof verifies: false when it did not. */
  async function settle(target: PaymentStatus, reason: string, result?: PaymentResult): Promise<boolean> {
    if (lean) return settleLean(target, reason, result);
    const from = view.status;
    const next = transition(from, target);
    if (!next) return true;
    decided = next;
    await updatePaymentStatus({ paymentId: input.paymentId, from, to: next, reason });
    const at = new Date().toISOString();
    view.status = next;
    view.history.push({ status: next, at, reason });
    if (next === 'failed' || next === 'expired') view.failureReason = reason;
    upsertSearchAttributes([{ key: PaymentStatusKey, value: next }]);
    if (isTerminal(next)) await emitPaymentStatusUpdated(statusEvent(next, at), has);
    return true;
  }

  const settleResult = (r: PaymentResult): Promise<boolean> =>
    settle(
      r.status === 'success' ? successStatus : 'failed',
      `${r.provider}: ${r.status}${r.message ? ` (${r.message})` : ''}`,
      r,
    );

  /**
   * Wait for the provider's result until `timeoutMs`, then settle paid, failed or expired.
   * Lean: the expiry timer is never cancelled (a result that comes first just ends the workflow,
   * and an open timer ends with it: no TimerCanceled event); a result whose proof does not
   * verify is skipped and the wait goes on (result-proof-v1).
   */
  async function awaitResult(timeoutMs: number, expiredReason: string, delayedStart = false): Promise<PaymentOutcome> {
    if (!lean) {
      const arrived = await condition(() => queue.length > 0, Math.max(1, timeoutMs));
      if (arrived) await settleResult(queue.shift()!);
      else await settle('expired', expiredReason);
      return finish();
    }
    let expired = false;
    let timer = false;
    const deadline = Date.now() + timeoutMs;
    const startTimer = () => {
      timer = true;
      void sleep(Math.max(1, deadline - Date.now())).then(() => {
        expired = true;
      });
    };
    // a delayed start (v3) begins with its result or at its expiry: a timer only to wait on
    if (!delayedStart) startTimer();
    else if (queue.length === 0 && timeoutMs <= 0) expired = true;
    for (;;) {
      if (!timer && !expired && queue.length === 0) startTimer();
      await condition(() => queue.length > 0 || expired);
      if (queue.length === 0) {
        await settle('expired', expiredReason);
        break;
      }
      if (await settleResult(queue.shift()!)) break;
    }
    return finish();
  }

  /** Results still queued when the payment was decided are late results; then every handler ends. */
  async function finish(): Promise<PaymentOutcome> {
    for (let r = queue.shift(); r; r = queue.shift()) await lateResult(r);
    await condition(allHandlersFinished);
    return { paymentId: input.paymentId, orderId: input.orderId, status: view.status };
  }

  let rowExtra: { expiresAt?: string; details?: Record<string, unknown> } = {};
  const row = () => ({
    paymentId: input.paymentId,
    orderId: input.orderId,
    userId: input.userId,
    method,
    amountSatang: input.amountSatang,
    mode: input.mode,
    workflowId: workflowInfo().workflowId,
    customerId: input.customerId,
    callbackUrl: input.callbackUrl,
    apiKeyId: input.apiKeyId,
    ...rowExtra,
  });
  /** The payments row: written by the gateway since lean-payment-v1, by this activity before. */
  const record = async (extra: { expiresAt?: string; details?: Record<string, unknown> } = {}) => {
    rowExtra = extra;
    if (!lean) await recordPayment(row());
  };

  return { view, lean, settle, awaitResult, finish, record };
}
