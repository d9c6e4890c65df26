/**
 * Starting payment workflows from the gateway, with the idempotency rules of DESIGN.md:
 * one workflow per order (id payment-<orderId>); the same order and amount again returns the
 * existing payment; another amount or method is a 409 CONFLICT. Temporal unreachable -> 503.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { AppError, ErrorCode } from '../domain/errors';
import { paymentWorkflowId } from '../domain/ids';
import type { PaymentMethod } from '../domain/payment-state';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../domain/search-attributes';

export interface PaymentMemo {
  paymentId: string;
  orderId: string;
  method: PaymentMethod;
  amountSatang: number;
}

/** gRPC UNAVAILABLE / DEADLINE_EXCEEDED or a refused connection: Temporal cannot be reached. */
export function isUnavailable(e: unknown): boolean {
  const err = e as { code?: number; cause?: unknown; message?: string; name?: string };
  if (!err) return false;
  if (err.code === 14 || err.code === 4) return true;
  if (err.name === 'ServiceError' && /UNAVAILABLE|DEADLINE|ECONNREFUSED|connect/i.test(String(err.message))) return true;
  return err.cause !== undefined && err.cause !== e ? isUnavailable(err.cause) : false;
}

export async function withTemporal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isUnavailable(e)) throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Payment engine is unavailable, try again later', { service: 'temporal' });
    throw e;
  }
}

export async function startPaymentWorkflow(
  client: Client,
  opts: { taskQueue: string; workflowType: string; memo: PaymentMemo; args: unknown[] },
): Promise<{ paymentId: string; created: boolean; workflowId: string }> {
  const workflowId = paymentWorkflowId(opts.memo.orderId);
  return withTemporal(async () => {
    let runId: string | undefined;
    try {
      const handle = await client.workflow.start(opts.workflowType, {
        taskQueue: opts.taskQueue,
        workflowId,
        args: opts.args,
        memo: { ...opts.memo },
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: OrderIdKey, value: opts.memo.orderId },
          { key: PaymentMethodKey, value: opts.memo.method },
          { key: PaymentStatusKey, value: 'pending' },
        ],
      });
      runId = handle.firstExecutionRunId;
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    }
    const desc = await client.workflow.getHandle(workflowId).describe();
    const memo = (desc.memo ?? {}) as Partial<PaymentMemo>;
    if (memo.amountSatang !== opts.memo.amountSatang || memo.method !== opts.memo.method) {
      throw new AppError(ErrorCode.CONFLICT, 'A payment for this order already exists with another amount or method', {
        orderId: opts.memo.orderId,
        existing: { method: memo.method, amount: memo.amountSatang === undefined ? undefined : memo.amountSatang / 100 },
      });
    }
    return { paymentId: memo.paymentId ?? opts.memo.paymentId, created: desc.runId === runId && memo.paymentId === opts.memo.paymentId, workflowId };
  });
}
