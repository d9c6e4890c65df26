/**
 * paidOrderProcessingWorkflow (id paid-order-<paymentId>; a post that does not name a payment of
 * its order runs apart, see src/callbacks/wallet-handler.ts): the asynchronous processing of a paid
 * wallet order that the wallet handler starts, fire and forget, with the full request body.
 *
 * The wallet handler is public (the contract), so its body alone never makes an order paid: the order
 * is confirmed for fulfilment only when its payment exists, matches the body (payment id,
 * amount when given) and has been confirmed paid by a verified provider callback, waiting up to
 * the confirmation window for that. Otherwise the order is recorded as rejected, with the
 * reason, and the administrator is told.
 */
import { log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ADMIN_MAIL, DB_ACTIVITY } from './activity-options';
import type { OrderPayment } from '../activities/callbacks';
import type { PaidOrderInput, PaidOrderOutcome } from '../src/callbacks';
import { paymentMismatch, unwrapHandlerBody, validateHandlerBody } from '../src/domain/handler-form';

const { loadOrderPayment, recordPaidOrder } = proxyActivities<Activities>(DB_ACTIVITY);
const { notifyAdmin } = proxyActivities<Activities>(ADMIN_MAIL);

const MAX_POLL_MS = 15_000;

export async function paidOrderProcessingWorkflow(input: PaidOrderInput): Promise<PaidOrderOutcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.body);
  } catch {
    parsed = undefined;
  }
  const unwrapped = unwrapHandlerBody(parsed);
  const valid = unwrapped.ok ? validateHandlerBody(unwrapped.body) : unwrapped;
  if (!valid.ok)
    throw new Error(`paid-order processing got a body the wallet handler should have refused: ${valid.error}`);
  const event = valid.value;

  const decide = async (
    status: PaidOrderOutcome['status'],
    reason: string,
    payment?: OrderPayment,
  ): Promise<PaidOrderOutcome> => {
    await recordPaidOrder({
      orderId: event.orderId,
      paymentId: payment?.id ?? event.paymentId,
      userId: event.userId,
      amountSatang: payment?.amountSatang ?? event.amountSatang,
      status,
      reason,
      source: input.source,
      workflowId: workflowInfo().workflowId,
      body: input.body,
    });
    if (status === 'rejected') {
      try {
        await notifyAdmin({
          subject: `[Talat] Paid ${input.source} order ${event.orderId} not confirmed`,
          text: `The ${input.source} handler reported order ${event.orderId} (payment ${event.paymentId}) as paid, but it was not confirmed: ${reason}.\n\nBody:\n${input.body.slice(0, 10_000)}\n`,
        });
      } catch (e) {
        log.warn('administrator e-mail failed', { orderId: event.orderId, error: (e as Error).message });
      }
    }
    return { orderId: event.orderId, paymentId: payment?.id ?? event.paymentId, status, reason };
  };

  // the payment the post names, whatever other accounts or modes use its order id (a run recorded
  // before gave the order id alone: same command, the activity then finds the order's only payment)
  const found = await loadOrderPayment(event.orderId, event.paymentId);
  if (!found || 'missing' in found) return decide('rejected', found?.missing ?? 'no payment exists for this order');
  let payment = found;
  const mismatch = paymentMismatch(event, payment);
  if (mismatch) return decide('rejected', mismatch, payment);

  const deadline = Date.now() + input.confirmWindowSeconds * 1000;
  let wait = 1000;
  while (payment.status === 'pending' && Date.now() < deadline) {
    await sleep(Math.min(wait, deadline - Date.now()));
    wait = Math.min(wait * 2, MAX_POLL_MS);
    const again = await loadOrderPayment(event.orderId, event.paymentId);
    if (!again || 'missing' in again) return decide('rejected', again?.missing ?? 'no payment exists for this order');
    payment = again;
  }
  if (payment.status === 'paid') return decide('confirmed', 'payment confirmed paid', payment);
  return decide(
    'rejected',
    payment.status === 'pending'
      ? 'payment not confirmed paid within the confirmation window'
      : `payment is ${payment.status}`,
    payment,
  );
}
