/**
 * PromptPay QR payment (id payment-<orderId>): the gateway builds the payload and the expiry;
 * the workflow records the payment, waits for the QR provider's result (signal `paymentResult`,
 * sent by the callback API) and ends `expired` when the expiry passes first.
 */
import type { PaymentOutcome, QrPaymentInput } from '../../src/payments';
import { paymentMachine } from './machine';
import { v2Patches, askPatched, type HasPatch } from '../patches';

async function qrPayment(input: QrPaymentInput, has: HasPatch, delayedStart = false): Promise<PaymentOutcome> {
  const m = paymentMachine(input, 'qr', has);
  await m.record({ expiresAt: input.expiresAt, details: { qr: { payload: input.qr.payload, crc: input.qr.crc } } });
  return m.awaitResult(Date.parse(input.expiresAt) - Date.now(), 'QR code expired unpaid', delayedStart);
}

/**
 * v3 (PaymentWorkflowType.qrDelayed, what the gateway starts): v2's changes, started with a start
 * delay until the expiry. Its first task comes with the result (signal-with-start) or at the
 * expiry; the expiry timer is started only when it still has to wait.
 */
export async function qrPaymentWorkflowV3(input: QrPaymentInput): Promise<PaymentOutcome> {
  return qrPayment(input, v2Patches, true);
}

/** v2 (PaymentWorkflowType.qr, what order top-ups start, and QR payments before v3): every patch, no marker (workflows/patches.ts). */
export async function qrPaymentWorkflowV2(input: QrPaymentInput): Promise<PaymentOutcome> {
  return qrPayment(input, v2Patches);
}

/** v1: executions started before v2, replaying as they ran. */
export async function qrPaymentWorkflow(input: QrPaymentInput): Promise<PaymentOutcome> {
  return qrPayment(input, askPatched);
}
