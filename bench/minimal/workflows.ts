/**
 * The minimal anchor's workflow (bench/minimal/app.ts): waits for the provider's result signal,
 * records it with a local activity and posts the signed webhook with another, or expires.
 */
import { condition, defineSignal, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { MinimalActivities } from './activities';

export const paidSignal = defineSignal<[{ status: string }]>('paid');

const { recordResult, postWebhook } = proxyLocalActivities<MinimalActivities>({ startToCloseTimeout: '10 seconds' });

export async function minimalPayment(p: { paymentId: string; orderId: string }): Promise<string> {
  let status: string | undefined;
  setHandler(paidSignal, (r) => {
    status ??= r.status;
  });
  if (!(await condition(() => status !== undefined, '10 minutes'))) status = 'expired';
  await recordResult(p.paymentId, status!);
  await postWebhook(p.orderId, p.paymentId, status!);
  return status!;
}
