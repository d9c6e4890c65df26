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
import { allHandlersFinished, condition, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { isTerminal, transition, type PaymentMethod, type PaymentStatus } from '../src/domain/payment-state';
import { PaymentStatusKey } from '../src/domain/search-attributes';
import {
  paymentQuery,
  paymentResultSignal,
  type PaymentInput,
  type PaymentOutcome,
  type PaymentResult,
  type PaymentView,
} from '../src/domain/workflow-contract';
import { emitPaymentStatusUpdated } from './notify';

/** The payments-record activities (short, retried until they succeed); the card workflow's attachCharge too. */
export const recordActivities = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

const { recordPayment, updatePaymentStatus } = recordActivities;

const isValidResult = (r: unknown): r is PaymentResult =>
  typeof r === 'object' && r !== null && ((r as PaymentResult).status === 'success' || (r as PaymentResult).status === 'failed');

/** State, handlers and the settle step shared by the payment workflows. */
export function paymentMachine(input: PaymentInput, method: PaymentMethod) {
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

  async function settle(target: PaymentStatus, reason: string): Promise<void> {
    const from = view.status;
    const next = transition(from, target);
    if (!next) return;
    await updatePaymentStatus({ paymentId: input.paymentId, from, to: next, reason });
    const at = new Date().toISOString();
    view.status = next;
    view.history.push({ status: next, at, reason });
    if (next === 'failed' || next === 'expired') view.failureReason = reason;
    upsertSearchAttributes([{ key: PaymentStatusKey, value: next }]);
    if (isTerminal(next)) {
      await emitPaymentStatusUpdated({
        paymentId: input.paymentId,
        orderId: input.orderId,
        status: next,
        amountSatang: input.amountSatang,
        timestamp: at,
        mode: input.mode,
        apiKeyId: input.apiKeyId,
      });
    }
  }

  /** Wait for the provider's result until `timeoutMs`, then settle paid, failed or expired. */
  async function awaitResult(timeoutMs: number, expiredReason: string): Promise<PaymentOutcome> {
    const arrived = await condition(() => box.result !== undefined, Math.max(1, timeoutMs));
    if (arrived) {
      const r = box.result!;
      await settle(r.status === 'success' ? 'paid' : 'failed', `${r.provider}: ${r.status}${r.message ? ` (${r.message})` : ''}`);
    } else {
      await settle('expired', expiredReason);
    }
    return finish();
  }

  async function finish(): Promise<PaymentOutcome> {
    await condition(allHandlersFinished);
    return { paymentId: input.paymentId, orderId: input.orderId, status: view.status };
  }

  const record = (extra: { expiresAt?: string; details?: Record<string, unknown> } = {}) =>
    recordPayment({
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
      ...extra,
    });

  return { view, box, settle, awaitResult, finish, record };
}
