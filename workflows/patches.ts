/**
 * How a payment workflow asks whether a change (a Patch id of src/domain/temporal.ts)
 * applies to it:
 *  - the v1 types (cardPaymentWorkflow, qrPaymentWorkflow) ask `patched()`, so executions started
 *    before a change replay the commands they ran (a marker, and Core's upsert of the
 *    TemporalChangeVersion search attribute, where a new execution first asks);
 *  - the v2 types (PaymentWorkflowType.card, PaymentWorkflowType.qr) take every change that was in place when
 *    v2 began (V2_BASELINE), with no marker and no upsert: a new type is a new history shape,
 *    versioned by its name.
 * A change added to Patch after v2 is asked with `patched()` by both types: v2 executions already
 * in flight must replay without it. So V2_BASELINE is a fixed list, never "every id in Patch".
 */
import { patched } from '@temporalio/workflow';
import { Patch } from '../src/domain/temporal';

export type PatchId = (typeof Patch)[keyof typeof Patch];
export type HasPatch = (id: PatchId) => boolean;

/** v1: each change as `patched()` says. */
export const askPatched: HasPatch = (id) => patched(id);
/** The changes in place when the v2 types began: never add to this list. */
export const V2_BASELINE: ReadonlySet<PatchId> = new Set([
  Patch.leanPayment,
  Patch.resultProof,
  Patch.lateResult,
  Patch.bulkhead,
]);

/** v2: the baseline without asking; a later change as `patched()` says. */
export const v2Patches: HasPatch = (id) => V2_BASELINE.has(id) || patched(id);
