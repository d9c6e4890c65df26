/**
 * Proofs that the gateway issues for what the worker does on its word: a payment result (a
 * `paymentResult` signal or a late-result workflow), a refund (the refunds workflow's `refund`
 * update) and a payment workflow's start. Only the gateway creates them: a result after it
 * verified the provider's callback and inserted its receipt, a refund after it checked the key
 * and wrote the refunds row, a start after it wrote the payments row. The worker checks them
 * (activities/payments.ts, late-results.ts, refunds.ts) before anything changes.
 *
 * result: HMAC-SHA256(RESULT_SIGNING_KEY, `talat-result-v1\n<receiptId>\n<paymentId>\n<status>`)
 * refund: HMAC-SHA256(RESULT_SIGNING_KEY, `talat-refund-v1\n<refundId>\n<paymentId>\n<orderId>\n<amountSatang>`)
 * start: HMAC-SHA256(RESULT_SIGNING_KEY, `talat-payment-v1\n<paymentId>\n<orderId>\n<amount>\n<mode>\n<apiKeyId>\n<workflowId>`)
 *
 * The key is held by the gateway and the worker only, never put in a workflow history; a proof
 * binds one operation exactly, so one copied from a history does nothing else. Constant time.
 */
import { hexDigestEquals, hmacSha256Hex } from './signature';

export interface ResultClaim {
  receiptId: string;
  paymentId: string;
  status: 'success' | 'failed';
}

const message = (c: ResultClaim) => `talat-result-v1\n${c.receiptId}\n${c.paymentId}\n${c.status}`;

export const signResult = (key: string, claim: ResultClaim): string => hmacSha256Hex(key, message(claim));

/** True only for a well-formed proof of exactly this receipt, payment and status. */
export function verifyResultProof(key: string, claim: Partial<ResultClaim>, proof: unknown): boolean {
  if (typeof claim.receiptId !== 'string' || !claim.receiptId || typeof claim.paymentId !== 'string') return false;
  if (claim.status !== 'success' && claim.status !== 'failed') return false;
  return hexDigestEquals(signResult(key, claim as ResultClaim), proof);
}

/** One refund as the gateway recorded it (the refunds row). */
export interface RefundClaim {
  refundId: string;
  paymentId: string;
  orderId: string;
  amountSatang: number;
}

const refundMessage = (c: RefundClaim) =>
  `talat-refund-v1\n${c.refundId}\n${c.paymentId}\n${c.orderId}\n${c.amountSatang}`;

export const signRefund = (key: string, claim: RefundClaim): string => hmacSha256Hex(key, refundMessage(claim));

/** True only for a well-formed proof of exactly this refund (id, payment, order, amount). */
export const verifyRefundProof = (key: string, claim: RefundClaim, proof: unknown): boolean =>
  hexDigestEquals(signRefund(key, claim), proof);

/** One payment workflow's start as the gateway recorded it (the payments row). */
export interface PaymentClaim {
  paymentId: string;
  orderId: string;
  amountSatang: number;
  mode: string;
  apiKeyId?: string | null;
  workflowId: string;
}

const paymentMessage = (c: PaymentClaim) =>
  `talat-payment-v1\n${c.paymentId}\n${c.orderId}\n${c.amountSatang}\n${c.mode}\n${c.apiKeyId ?? ''}\n${c.workflowId}`;

export const signPayment = (key: string, claim: PaymentClaim): string => hmacSha256Hex(key, paymentMessage(claim));

/** True only for a well-formed proof of exactly this payment start. */
export const verifyPaymentProof = (key: string, claim: PaymentClaim, proof: unknown): boolean =>
  hexDigestEquals(signPayment(key, claim), proof);
