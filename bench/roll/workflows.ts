/**
 * The "next build" of the cluster's rolling-upgrade test (bench/chaos.ts --cluster): every
 * workflow of workflows/, with the QR payment type changed the way a real change must be made,
 * behind patched(): new executions record a marker and a short timer before the payment starts;
 * executions started on the current build replay as they ran. Bundled by the test, never deployed.
 */
import { patched, sleep } from '@temporalio/workflow';
import type { QrPaymentInput } from '../../src/payments';
import { qrPaymentWorkflowV3 as current } from '../../workflows/payments/qr';

export * from '../../workflows';

export const ROLL_PATCH = 'cluster-roll-test';

/** The type the gateway starts (v3: its first task comes with the result or at the expiry). */
export async function qrPaymentWorkflowV3(input: QrPaymentInput): ReturnType<typeof current> {
  if (patched(ROLL_PATCH)) await sleep(10);
  return current(input);
}
