/**
 * Payment workflows: one per payment, id payment-<orderId>. Deterministic code only; activities
 * do the I/O. This file holds what every payment method shares (signal, query, the settle step)
 * and the card payment; payment-qr.ts holds the PromptPay QR payment.
 *
 * The workflow keeps the payment's status; the payments row is its durable projection, written
 * only through activities after the workflow decided a transition (src/domain/payment-state).
 *
 * Contracts other modules rely on:
 *  - signal `paymentResult` {status: 'success'|'failed', provider, reference?, message?}: the
 *    first valid one decides; one that arrives after the payment left `pending` changes nothing.
 *  - query `payment`: PaymentView (status and history).
 *  - every terminal transition runs updatePaymentStatus, then emits payment.status.updated
 *    (workflows/notify.ts); the search attribute PaymentStatus follows the status.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { isTerminal, transition, type PaymentMethod, type PaymentStatus } from '../src/domain/payment-state';
import { PaymentStatusKey } from '../src/domain/search-attributes';
import { emitPaymentStatusUpdated } from './notify';

export interface PaymentResult {
  status: 'success' | 'failed';
  provider: string;
  reference?: string;
  message?: string;
}

export interface ChargeView {
  id: string;
  status: string;
  authorizeUri: string | null;
}

export interface PaymentView {
  paymentId: string;
  orderId: string;
  method: PaymentMethod;
  amountSatang: number;
  status: PaymentStatus;
  history: { status: PaymentStatus; at: string; reason: string }[];
  /** card: the charge at the card provider, once created */
  charge?: ChargeView;
  /** why the payment failed or expired */
  failureReason?: string;
}

export interface PaymentOutcome {
  paymentId: string;
  orderId: string;
  status: PaymentStatus;
}

/** What every payment workflow starts from (the gateway builds it). */
export interface PaymentInput {
  paymentId: string;
  orderId: string;
  userId: string;
  amountSatang: number;
  mode: 'live' | 'sandbox';
  apiKeyId?: string;
  customerId?: string;
  /** card: where the user is sent after the provider's callback */
  callbackUrl?: string;
}

export interface CardPaymentInput extends PaymentInput {
  /** one-time card token from the provider's client library */
  token: string;
  /** the provider's browser return address (our /callback) */
  returnUri?: string;
  timeoutSeconds: number;
}

export const paymentResultSignal = defineSignal<[PaymentResult]>('paymentResult');
export const paymentQuery = defineQuery<PaymentView>('payment');
/** Card: resolves once the charge exists at the provider (or the payment ended); returns the view. */
export const chargeUpdate = defineUpdate<PaymentView>('charge');

const { recordPayment, updatePaymentStatus, attachCharge } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Provider calls: a few quick retries for network errors and 5xx; a 4xx is non-retryable (thrown as such). */
const { createCardCharge } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 4 },
});

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

/** A provider failure as a short reason for the payment's history. */
function providerFailure(e: unknown): string {
  const cause = e instanceof ActivityFailure ? e.cause : e;
  if (cause instanceof ApplicationFailure) {
    if (cause.type === 'CardRejected') return `card provider rejected the charge: ${cause.message}`;
    if (cause.type === 'ProviderNotConfigured') return cause.message;
  }
  return 'card provider unavailable';
}

export async function cardPaymentWorkflow(input: CardPaymentInput): Promise<PaymentOutcome> {
  const m = paymentMachine(input, 'card');
  let chargeStepDone = false;
  setHandler(chargeUpdate, async () => {
    await condition(() => chargeStepDone || m.view.status !== 'pending');
    return m.view;
  });

  await m.record();
  try {
    const charge = await createCardCharge({
      paymentId: input.paymentId,
      orderId: input.orderId,
      amountSatang: input.amountSatang,
      token: input.token,
      mode: input.mode,
      returnUri: input.returnUri,
    });
    await attachCharge({ paymentId: input.paymentId, providerRef: charge.id, details: { charge: { status: charge.status, authorizeUri: charge.authorizeUri } } });
    m.view.charge = charge;
    // a charge may be decided at once (no 3-D Secure step): settle without waiting for a callback
    if (charge.status === 'successful') await m.settle('paid', 'card provider: charge successful');
    else if (charge.status === 'failed') await m.settle('failed', 'card provider: charge failed');
    chargeStepDone = true;
    if (m.view.status !== 'pending') return m.finish();
  } catch (e) {
    await m.settle('failed', providerFailure(e));
    return m.finish();
  }
  return m.awaitResult(input.timeoutSeconds * 1000, 'no result from the card provider in time');
}
