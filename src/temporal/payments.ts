/**
 * Starting payment workflows from the gateway, with the idempotency rules of DESIGN.md:
 * one workflow per order (id payment-<orderId>); the same order and amount again returns the
 * existing payment; another amount or method (or another caller) is a 409 CONFLICT.
 * Temporal unreachable or not answering in time -> 503 SERVICE_UNAVAILABLE, never a hang.
 */
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import { AppError, ErrorCode } from '../domain/errors';
import type { Mode } from '../domain/mode';
import type { PaymentMethod, PaymentStatus } from '../domain/payment-state';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../domain/search-attributes';
import {
  paymentWorkflowId,
  WorkflowType,
  type CardPaymentInput,
  type CardPaymentWorkflow,
  type QrPaymentInput,
  type QrPaymentWorkflow,
} from '../domain/workflow-contract';
import { temporalReachable } from './client';

/** What the gateway can learn about a payment from Temporal alone (workflow memo). */
export interface PaymentMemo {
  paymentId: string;
  orderId: string;
  method: PaymentMethod;
  amountSatang: number;
  mode?: Mode;
  apiKeyId?: string | null;
  /** qr: the payload and its expiry, so a repeated request returns the same QR code */
  qrPayload?: string;
  qrCrc?: string;
  expiresAt?: string;
}

/** Longest time a gateway call to Temporal may take before the request is answered 503. */
export const TEMPORAL_CALL_TIMEOUT_MS = 10_000;

/** gRPC UNAVAILABLE / DEADLINE_EXCEEDED or a refused connection: Temporal cannot be reached. */
export function isUnavailable(e: unknown): boolean {
  const err = e as { code?: number; cause?: unknown; message?: string; name?: string };
  if (!err) return false;
  if (err.code === 14 || err.code === 4) return true;
  if (err.name === 'ServiceError' && /UNAVAILABLE|DEADLINE|ECONNREFUSED|connect/i.test(String(err.message))) return true;
  return err.cause !== undefined && err.cause !== e ? isUnavailable(err.cause) : false;
}

const unavailable = () => new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Payment engine is unavailable, try again later', { service: 'temporal' });

export async function withTemporal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isUnavailable(e)) throw unavailable();
    throw e;
  }
}

/** A call still running after this long makes the gateway ask whether Temporal is reachable at all. */
export const PROBE_AFTER_MS = 1_000;

/**
 * Run `fn` (calls on `client`) with a deadline: when it passes, the calls are aborted and the
 * result is `onTimeout()` (by default a 503 SERVICE_UNAVAILABLE). The client retries an
 * unreachable server for a long time, so a call that has not finished after PROBE_AFTER_MS is
 * checked with a short reachability probe: Temporal down -> 503 at once instead of at the deadline.
 */
export async function withinDeadline<T>(client: Client, ms: number, fn: () => Promise<T>, onTimeout?: () => T): Promise<T> {
  const ctrl = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  const timedOut = Symbol('timeout');
  const down = Symbol('down');
  try {
    const r = await Promise.race([
      withTemporal(() => client.withAbortSignal(ctrl.signal, fn)),
      new Promise<typeof timedOut>((resolve) => timers.push(setTimeout(() => resolve(timedOut), ms))),
      new Promise<typeof down>((resolve) =>
        timers.push(
          setTimeout(() => {
            void temporalReachable(client, 2_000).then((up) => up || resolve(down));
          }, Math.min(PROBE_AFTER_MS, ms)),
        ),
      ),
    ]);
    if (r !== timedOut && r !== down) return r;
    ctrl.abort();
    if (r === timedOut && onTimeout) return onTimeout();
    throw unavailable();
  } finally {
    timers.forEach(clearTimeout);
  }
}

export interface StartedPayment {
  paymentId: string;
  created: boolean;
  workflowId: string;
  memo: PaymentMemo;
  /** the PaymentStatus search attribute (kept current by the workflow) */
  status: PaymentStatus;
}

/** Which payment workflow to start, with its typed input. */
export type PaymentStart = { type: typeof WorkflowType.card; input: CardPaymentInput } | { type: typeof WorkflowType.qr; input: QrPaymentInput };

export async function startPaymentWorkflow(client: Client, opts: { taskQueue: string; start: PaymentStart; memo: PaymentMemo }): Promise<StartedPayment> {
  const workflowId = paymentWorkflowId(opts.memo.orderId);
  return withinDeadline(client, TEMPORAL_CALL_TIMEOUT_MS, async () => {
    let runId: string | undefined;
    try {
      const options: Omit<WorkflowStartOptions, 'args'> = {
        taskQueue: opts.taskQueue,
        workflowId,
        memo: { ...opts.memo },
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: OrderIdKey, value: opts.memo.orderId },
          { key: PaymentMethodKey, value: opts.memo.method },
          { key: PaymentStatusKey, value: 'pending' },
        ],
      };
      const { start } = opts;
      const handle =
        start.type === WorkflowType.card
          ? await client.workflow.start<CardPaymentWorkflow>(start.type, { ...options, args: [start.input] })
          : await client.workflow.start<QrPaymentWorkflow>(start.type, { ...options, args: [start.input] });
      runId = handle.firstExecutionRunId;
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    }
    const desc = await client.workflow.getHandle(workflowId).describe();
    const memo = (desc.memo ?? {}) as Partial<PaymentMemo>;
    if ((memo.apiKeyId ?? null) !== (opts.memo.apiKeyId ?? null) || (memo.mode ?? opts.memo.mode) !== opts.memo.mode) {
      throw new AppError(ErrorCode.CONFLICT, 'This order id is already used by another payment', { orderId: opts.memo.orderId });
    }
    if (memo.amountSatang !== opts.memo.amountSatang || memo.method !== opts.memo.method) {
      throw new AppError(ErrorCode.CONFLICT, 'A payment for this order already exists with another amount or method', {
        orderId: opts.memo.orderId,
        existing: { method: memo.method, amount: memo.amountSatang === undefined ? undefined : memo.amountSatang / 100 },
      });
    }
    const status = (desc.searchAttributes?.PaymentStatus?.[0] as PaymentStatus | undefined) ?? 'pending';
    return {
      paymentId: memo.paymentId ?? opts.memo.paymentId,
      created: desc.runId === runId && memo.paymentId === opts.memo.paymentId,
      workflowId,
      memo: { ...opts.memo, ...memo } as PaymentMemo,
      status,
    };
  });
}
