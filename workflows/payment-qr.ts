/**
 * PromptPay QR payment (id payment-<orderId>): the gateway builds the payload and the expiry;
 * the workflow records the payment, waits for the QR provider's result (signal `paymentResult`,
 * sent by the callback API) and ends `expired` when the expiry passes first.
 */
import type { PaymentOutcome, QrPaymentInput } from '../src/domain/workflow-contract';
import { paymentMachine } from './payment-machine';

export async function qrPaymentWorkflow(input: QrPaymentInput): Promise<PaymentOutcome> {
  const m = paymentMachine(input, 'qr');
  await m.record({ expiresAt: input.expiresAt, details: { qr: { payload: input.qr.payload, crc: input.qr.crc } } });
  return m.awaitResult(Date.parse(input.expiresAt) - Date.now(), 'QR code expired unpaid');
}
