/**
 * The bank slice's face and contract: what other slices, the workflows and the toolkit may
 * use of it. Pure (no I/O): its Temporal names, ids, signals, updates, inputs and outputs, and
 * the types and pure helpers others share. Names in recorded histories (test/replay) never change.
 */
import type { Mode } from '../domain/mode';

// ---- contract ----

/**
 * The bank's Temporal contract: one workflow per call to the partner bank (bankRequestWorkflow,
 * workflows/bank.ts), its id, input and outcome.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
export const BankWorkflowType = { bank: 'bankRequestWorkflow' } as const;

/** one bank call; `unique` is a fresh random suffix */
export const bankRequestWorkflowId = (op: BankCall['op'], unique: string): string => `bank-${op}-${unique}`;

/** `proof`: the gateway's talat-start-v1 proof over the workflow type, id and the whole call (src/proofs.ts) */
export type BankCall = (
  | { op: 'createUser'; mode: Mode; body: { userId: string; name: string; email?: string; phone?: string } }
  | { op: 'getUser'; mode: Mode; userId: string }
  | {
      op: 'createOrder';
      mode: Mode;
      body: { orderId: string; userId: string; amountSatang: number; currency: 'THB'; description?: string };
    }
) & { proof?: string };

export type BankOutcome =
  | { ok: true; status: number; body: unknown }
  | { ok: false; kind: 'rejected'; status: number; body: unknown; message: string }
  | { ok: false; kind: 'unavailable'; message: string };

export type BankRequestWorkflow = (call: BankCall) => Promise<BankOutcome>;
