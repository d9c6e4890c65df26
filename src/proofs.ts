/**
 * Proofs the gateway issues for what the worker does on its word (docs/security.md):
 * HMAC-SHA256 with RESULT_SIGNING_KEY (held by the gateway and the worker, never in a workflow
 * history) over `<kind>\n<field>\n<field>...`, compared in constant time. Each kind binds one
 * operation exactly, so a proof copied from a history does nothing else:
 *  - talat-result-v1: a payment result (src/result-proof.ts);
 *  - talat-refund-v1: a refund POST /refund recorded (refund, payment, order, amount);
 *  - talat-start-v1: any workflow start the gateway makes: its type, its id and its WHOLE input
 *    (canonical JSON without the `proof` field), so no field (an expiry, a token) can be changed.
 *  - talat-order-v1: an order step recorded by the gateway (kind, step id, order: src/orders);
 *    kind `approval`: a customer's decision on a substitution, recorded from its signed link.
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

/**
 * The start input's text that talat-start-v1 signs: keys sorted at every level, then put back in
 * an object, so JavaScript's own order wins where it has one (integer-like keys first, in numeric
 * order). Not src/canonical-json.ts, which sorts every key: proofs in running histories were
 * signed over this text, and must verify. One JSON.stringify whose replacer sorts each object
 * (it sees values after toJSON; boxed primitives are unboxed as JSON.stringify would).
 */
export const proofJson = (value: unknown): string => JSON.stringify(value ?? null, sortedObject);

function sortedObject(_key: string, v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return v.valueOf();
  const o = v as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]),
  );
}

/** One workflow start as the gateway made it: type, id and the input (its `proof` field is left out). */
export interface StartClaim {
  workflowType: string;
  workflowId: string;
  input: object;
}
const startFields = (c: StartClaim) => {
  const { proof: _proof, ...rest } = c.input as { proof?: unknown };
  return [c.workflowType, c.workflowId, proofJson(rest)];
};
export const signStart = (key: string, c: StartClaim): string => signProof(key, 'talat-start-v1', startFields(c));
/** True only for the gateway's proof of exactly this type, id and input (`input.proof`). */
export const verifyStartProof = (key: string, c: StartClaim): boolean =>
  typeof c.input === 'object' &&
  c.input !== null &&
  verifyProof(key, 'talat-start-v1', startFields(c), (c.input as { proof?: unknown }).proof);
/** The input with its proof of this start added. */
export const withStartProof = <T extends object>(key: string, workflowType: string, workflowId: string, input: T) => ({
  ...input,
  proof: signStart(key, { workflowType, workflowId, input }),
});

/** The facts of a payment a retry of the same request repeats (its payments row). */
export interface PaymentOwnerClaim {
  paymentId: string;
  orderId: string;
  amountSatang: number;
  method: string;
  mode?: string | null;
  apiKeyId?: string | null;
}
/**
 * What marks a payment execution as the gateway's own (kept in its memo as `startProof`):
 * talat-start-v1 over its type, id and the payment's facts.
 */
export const paymentOwnerProof = (key: string, workflowType: string, workflowId: string, p: PaymentOwnerClaim) =>
  signStart(key, {
    workflowType,
    workflowId,
    input: {
      paymentId: p.paymentId,
      orderId: p.orderId,
      amountSatang: p.amountSatang,
      method: p.method,
      mode: p.mode ?? null,
      apiKeyId: p.apiKeyId ?? null,
    },
  });

/** One order step (an adjustment or the finalisation) as the gateway recorded it. */
export interface OrderStepClaim {
  stepId: string;
  orderId: string;
  kind: 'adjust' | 'finalize' | 'approval';
}
const orderStepFields = (c: OrderStepClaim) => [c.kind, c.stepId, c.orderId];
export const signOrderStep = (key: string, c: OrderStepClaim): string =>
  signProof(key, 'talat-order-v1', orderStepFields(c));
export const verifyOrderStepProof = (key: string, c: OrderStepClaim, proof: unknown): boolean =>
  verifyProof(key, 'talat-order-v1', orderStepFields(c), proof);
