/**
 * PromptPay QR payment: the gateway builds the payload and the expiry; the workflow records the
 * payment, waits for the QR provider's result (signal `paymentResult`, sent by the callback API)
 * and ends `expired` when the expiry passes first.
 */
import { paymentMachine, type PaymentInput, type PaymentOutcome } from './payment';

export interface QrPaymentInput extends PaymentInput {
  /** ISO 8601 UTC; the workflow's timer runs until then */
  expiresAt: string;
  qr: { payload: string; crc: string; promptPayId: string };
}

export async function qrPaymentWorkflow(input: QrPaymentInput): Promise<PaymentOutcome> {
  const m = paymentMachine(input, 'qr');
  await m.record({ expiresAt: input.expiresAt, details: { qr: { payload: input.qr.payload, crc: input.qr.crc } } });
  return m.awaitResult(Date.parse(input.expiresAt) - Date.now(), 'QR code expired unpaid');
}
