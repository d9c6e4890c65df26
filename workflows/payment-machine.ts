/**
 * The payment state machine every payment workflow shares (card: payment-card.ts, QR:
 * payment-qr.ts): the view, the `paymentResult` signal and `payment` query handlers, and the
 * settle step. Deterministic code only; activities do the I/O.
 *
 * The workflow keeps the payment's status; the payments row is its durable projection, written
 * only through activities after the workflow decided a transition (src/domain/payment-state).
 *  - signal `paymentResult`: the first valid one decides; one that arrives after the payment
 *    left `pending` changes nothing.
 *  - every terminal transition runs updatePaymentStatus, then emits payment.status.updated
 *    (workflows/notify.ts); the search attribute PaymentStatus follows the status.
 */
import {
  allHandlersFinished,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { isTerminal, transition, type PaymentMethod, type PaymentStatus } from '../src/domain/payment-state';
import { PaymentStatusKey } from '../src/domain/search-attributes';
import type { PaymentStatusEvent } from '../src/domain/events';
import {
  Patch,
  paymentQuery,
  paymentResultSignal,
  type PaymentInput,
  type PaymentOutcome,
  type PaymentResult,
  type PaymentView,
} from '../src/domain/workflow-contract';
import { emitPaymentStatusUpdated, retryWebhookDeliveries } from './notify';

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
const { settlePayment } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

const isValidResult = (r: unknown): r is PaymentResult =>
  typeof r === 'object' &&
  r !== null &&
  ((r as PaymentResult).status === 'success' || (r as PaymentResult).status === 'failed');

/** State, handlers and the settle step shared by the payment workflows. */
export function paymentMachine(input: PaymentInput, method: PaymentMethod) {
  // a new execution takes the lean path; a history recorded before it replays the old commands
  const lean = patched(Patch.leanPayment);
  const view: PaymentView = {
    paymentId: input.paymentId,
    orderId: input.orderId,
    method,
    amountSatang: input.amountSatang,
    status: 'pending',
    history: [{ status: 'pending', at: new Date().toISOString(), reason: 'created' }],
  };
  const box: { result?: PaymentResult } = {};
  setHandler(paymentQuery, () => view);
  // The first valid result decides; a later, duplicate or malformed signal is kept out of the state.
  setHandler(paymentResultSignal, (r) => {
    if (box.result === undefined && view.status === 'pending' && isValidResult(r)) box.result = r;
  });

  const statusEvent = (status: PaymentStatus, at: string): PaymentStatusEvent => ({
    paymentId: input.paymentId,
    orderId: input.orderId,
    status,
    amountSatang: input.amountSatang,
    timestamp: at,
    mode: input.mode,
    apiKeyId: input.apiKeyId,
  });

  /** lean-payment-v1: one local activity writes the transition and makes the first webhook attempts. */
  async function settleLean(target: PaymentStatus, reason: string): Promise<void> {
    const from = view.status;
    const next = transition(from, target);
    if (!next) return;
    const at = new Date().toISOString();
    const event = isTerminal(next) ? statusEvent(next, at) : undefined;
    const { retry, firstAttemptAt } = await settlePayment({
      change: { paymentId: input.paymentId, from, to: next, reason },
      payment: row(),
      event,
    });
    view.status = next;
    view.history.push({ status: next, at, reason });
    if (next === 'failed' || next === 'expired') view.failureReason = reason;
    upsertSearchAttributes([{ key: PaymentStatusKey, value: next }]);
    if (event) await retryWebhookDeliveries(event, retry, firstAttemptAt);
  }

  async function settle(target: PaymentStatus, reason: string): Promise<void> {
    if (lean) return settleLean(target, reason);
    const from = view.status;
    const next = transition(from, target);
    if (!next) return;
    await updatePaymentStatus({ paymentId: input.paymentId, from, to: next, reason });
    const at = new Date().toISOString();
    view.status = next;
    view.history.push({ status: next, at, reason });
    if (next === 'failed' || next === 'expired') view.failureReason = reason;
    upsertSearchAttributes([{ key: PaymentStatusKey, value: next }]);
    if (isTerminal(next)) await emitPaymentStatusUpdated(statusEvent(next, at));
  }

  /**
   * Until the result or the deadline. Lean: the expiry timer is never cancelled (a result that
   * comes first just ends the workflow, and an open timer ends with it: no TimerCanceled event).
   */
  async function resultWithin(timeoutMs: number): Promise<boolean> {
    if (!lean) return condition(() => box.result !== undefined, Math.max(1, timeoutMs));
    let expired = false;
    void sleep(Math.max(1, timeoutMs)).then(() => {
      expired = true;
    });
    await condition(() => box.result !== undefined || expired);
    return box.result !== undefined;
  }

  /** Wait for the provider's result until `timeoutMs`, then settle paid, failed or expired. */
  async function awaitResult(timeoutMs: number, expiredReason: string): Promise<PaymentOutcome> {
    const arrived = await resultWithin(timeoutMs);
    if (arrived) {
      const r = box.result!;
      await settle(
        r.status === 'success' ? 'paid' : 'failed',
        `${r.provider}: ${r.status}${r.message ? ` (${r.message})` : ''}`,
      );
    } else {
      await settle('expired', expiredReason);
    }
    return finish();
  }

  async function finish(): Promise<PaymentOutcome> {
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

  return { view, box, lean, settle, awaitResult, finish, record };
}
