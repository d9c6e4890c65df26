/**
 * The workflow of bench/temporal-shapes.ts: waits for its result signal, records it with a local
 * activity, upserts PaymentStatus when asked, and completes (the paid QR payment's shape).
 */
import {
  condition,
  defineSignal,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { PaymentStatusKey } from '../../src/domain/search-attributes';

export const resultSignal = defineSignal<[{ status: string; pad?: string }]>('result');
const { record } = proxyLocalActivities<{ record(status: string): Promise<string> }>({
  startToCloseTimeout: '10 seconds',
});

export async function shapePayment(p: { upsert?: boolean; pad?: string }): Promise<string> {
  let status: string | undefined;
  setHandler(resultSignal, (r) => void (status ??= r.status));
  if (!(await condition(() => status !== undefined, '10 minutes'))) status = 'expired';
  await record(status!);
  if (p.upsert) upsertSearchAttributes([{ key: PaymentStatusKey, value: status! }]);
  return status!;
}
