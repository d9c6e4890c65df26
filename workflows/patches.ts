/**
 * How a payment workflow asks whether a change (a Patch id of src/domain/workflow-contract.ts)
 * applies to it:
 *  - the v1 types (cardPaymentWorkflow, qrPaymentWorkflow) ask `patched()`, so executions started
 *    before a change replay the commands they ran (a marker, and Core's upsert of the
 *    TemporalChangeVersion search attribute, where a new execution first asks);
 *  - the v2 types (WorkflowType.card, WorkflowType.qr) take every change there is, with no
 *    marker and no upsert: a new type is a new history shape, versioned by its name.
 * A change made after v2 asks `patched()` in both (v2 then passes `askPatched` for that id).
 */
import { patched } from '@temporalio/workflow';
import type { Patch } from '../src/domain/workflow-contract';

export type PatchId = (typeof Patch)[keyof typeof Patch];
export type HasPatch = (id: PatchId) => boolean;

/** v1: each change as `patched()` says. */
export const askPatched: HasPatch = (id) => patched(id);
/** v2: every change listed in Patch (all of them were in place when v2 began). */
export const allPatches: HasPatch = () => true;
