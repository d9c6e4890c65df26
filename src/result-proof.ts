/**
 * Proofs of payment results (talat-result-v1, one kind of src/proofs.ts): what makes a
 * `paymentResult` signal (or a late-result workflow) acceptable to the worker. Only the gateway's callback processor creates them, after it
 * verified the provider's callback and inserted its receipt; the worker checks them
 * (activities/payments/index.ts, activities/payments/late-results.ts) before anything changes.
 *
 * proof = hex HMAC-SHA256(RESULT_SIGNING_KEY, `talat-result-v1\n<receiptId>\n<paymentId>\n<status>`)
 *
 * The key is held by the gateway and the worker only, never put in a workflow history; a proof
 * binds one receipt to one payment and one status, so a proof copied from a history does not
 * settle another payment, nor this one the other way. Compared in constant time.
 */
import { signProof, verifyProof } from './proofs';

export interface ResultClaim {
  receiptId: string;
  paymentId: string;
  status: 'success' | 'failed';
}

const fields = (c: ResultClaim) => [c.receiptId, c.paymentId, c.status];

export const signResult = (key: string, claim: ResultClaim): string => signProof(key, 'talat-result-v1', fields(claim));

/** True only for a well-formed proof of exactly this receipt, payment and status. */
export function verifyResultProof(key: string, claim: Partial<ResultClaim>, proof: unknown): boolean {
  if (typeof claim.receiptId !== 'string' || !claim.receiptId || typeof claim.paymentId !== 'string') return false;
  if (claim.status !== 'success' && claim.status !== 'failed') return false;
  return verifyProof(key, 'talat-result-v1', fields(claim as ResultClaim), proof);
}
