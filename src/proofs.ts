/**
 * Proofs the gateway issues for what the worker does on its word (docs/security.md):
 * HMAC-SHA256 with RESULT_SIGNING_KEY (held by the gateway and the worker, never in a workflow
 * history) over `<kind>\n<field>\n<field>...`, compared in constant time. Each kind binds one
 * operation exactly, so a proof copied from a history does nothing else:
 *  - talat-result-v1: a payment result (src/result-proof.ts);
 *  - talat-refund-v1: a refund POST /refund recorded (refund, payment, order, amount);
 *  - talat-payment-v1: a payment workflow's start (payment, order, amount, mode, key, workflow id).
 *  - talat-order-v1: an order step recorded by the gateway (kind, step id, order: src/orders).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const hmacSha256Hex = (secret: string, message: string): string =>
  createHmac('sha256', secret).update(message, 'utf8').digest('hex');

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** Constant-time comparison of a hex digest with the expected one; malformed input is simply false. */
export function hexDigestEquals(expectedHex: string, givenHex: unknown): boolean {
  if (typeof givenHex !== 'string' || !HEX_SHA256.test(givenHex)) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(givenHex, 'hex'));
}

type Field = string | number;
/** The proof of one operation of `kind`. */
export const signProof = (key: string, kind: string, fields: Field[]): string =>
  hmacSha256Hex(key, [kind, ...fields].join('\n'));
/** True only for a well-formed proof of exactly this operation. */
export const verifyProof = (key: string, kind: string, fields: Field[], proof: unknown): boolean =>
  hexDigestEquals(signProof(key, kind, fields), proof);

/** One refund as the gateway recorded it (the refunds row). */
export interface RefundClaim {
  refundId: string;
  paymentId: string;
  orderId: string;
  amountSatang: number;
}
const refundFields = (c: RefundClaim) => [c.refundId, c.paymentId, c.orderId, c.amountSatang];
export const signRefund = (key: string, c: RefundClaim): string => signProof(key, 'talat-refund-v1', refundFields(c));
export const verifyRefundProof = (key: string, c: RefundClaim, proof: unknown): boolean =>
  verifyProof(key, 'talat-refund-v1', refundFields(c), proof);

/** One payment workflow's start as the gateway recorded it (the payments row). */
export interface PaymentClaim {
  paymentId: string;
  orderId: string;
  amountSatang: number;
  mode: string;
  apiKeyId?: string | null;
  workflowId: string;
}
const paymentFields = (c: PaymentClaim) => [
  c.paymentId,
  c.orderId,
  c.amountSatang,
  c.mode,
  c.apiKeyId ?? '',
  c.workflowId,
];
export const signPayment = (key: string, c: PaymentClaim): string =>
  signProof(key, 'talat-payment-v1', paymentFields(c));
export const verifyPaymentProof = (key: string, c: PaymentClaim, proof: unknown): boolean =>
  verifyProof(key, 'talat-payment-v1', paymentFields(c), proof);

/** One order step (an adjustment or the finalisation) as the gateway recorded it. */
export interface OrderStepClaim {
  stepId: string;
  orderId: string;
  kind: 'adjust' | 'finalize';
}
const orderStepFields = (c: OrderStepClaim) => [c.kind, c.stepId, c.orderId];
export const signOrderStep = (key: string, c: OrderStepClaim): string =>
  signProof(key, 'talat-order-v1', orderStepFields(c));
export const verifyOrderStepProof = (key: string, c: OrderStepClaim, proof: unknown): boolean =>
  verifyProof(key, 'talat-order-v1', orderStepFields(c), proof);
