/**
 * One workflow per payment (id payment-<orderId>). Deterministic code only: activities do the I/O.
 *
 * The workflow keeps the payment's status; the payments row is its durable projection, written
 * only through activities after the workflow decided a transition (src/domain/payment-state).
 */
import { condition, defineQuery, defineSignal, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RecordPaymentInput } from '../activities/payments';
import { transition, type PaymentStatus } from '../src/domain/payment-state';
import { PaymentStatusKey } from '../src/domain/search-attributes';

export interface PaymentResult {
  status: 'success' | 'failed';
  provider: string;
  reference?: string;
  message?: string;
}

export interface PaymentView {
  paymentId: string;
  orderId: string;
  status: PaymentStatus;
  history: { status: PaymentStatus; at: string; reason: string }[];
}

export interface PaymentOutcome {
  paymentId: string;
  orderId: string;
  status: PaymentStatus;
}

export const paymentResultSignal = defineSignal<[PaymentResult]>('paymentResult');
export const paymentQuery = defineQuery<PaymentView>('payment');

const { recordPayment, updatePaymentStatus } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export type CardPaymentInput = Omit<RecordPaymentInput, 'method' | 'workflowId'> & { timeoutSeconds: number };

export async function cardPaymentWorkflow(input: CardPaymentInput): Promise<PaymentOutcome> {
  const view: PaymentView = {
    paymentId: input.paymentId,
    orderId: input.orderId,
    status: 'pending',
    history: [{ status: 'pending', at: new Date().toISOString(), reason: 'created' }],
  };
  let result: PaymentResult | undefined;
  setHandler(paymentQuery, () => view);
  // The first result decides; a later or duplicate signal is kept out of the state.
  setHandler(paymentResultSignal, (r) => {
    if (result === undefined && view.status === 'pending') result = r;
  });

  await recordPayment({ ...input, method: 'card', workflowId: workflowInfo().workflowId });

  const arrived = await condition(() => result !== undefined, `${input.timeoutSeconds} seconds`);
  const target: PaymentStatus = !arrived ? 'expired' : result!.status === 'success' ? 'paid' : 'failed';
  const next = transition(view.status, target);
  if (next) {
    const reason = arrived ? `${result!.provider}: ${result!.status}${result!.message ? ` (${result!.message})` : ''}` : 'timeout';
    await updatePaymentStatus({ paymentId: input.paymentId, from: view.status, to: next, reason });
    view.status = next;
    view.history.push({ status: next, at: new Date().toISOString(), reason });
    upsertSearchAttributes([{ key: PaymentStatusKey, value: next }]);
  }
  return { paymentId: input.paymentId, orderId: input.orderId, status: view.status };
}
