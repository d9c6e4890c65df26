/**
 * Starting payment workflows from the gateway, with the idempotency rules of DESIGN.md:
 * one workflow per order (id payment-<orderId>); the same order and amount again returns the
 * existing payment; another amount or method (or another caller) is a 409 CONFLICT.
 * Temporal unreachable or not answering in time -> 503 SERVICE_UNAVAILABLE, never a hang.
 */
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { AppError, ErrorCode } from '../domain/errors';
import type { Mode } from '../domain/mode';
import type { PaymentMethod } from '../domain/payment-state';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../domain/search-attributes';
import {
  chargeUpdate,
  paymentWorkflowId,
  WorkflowType,
  type CardPaymentInput,
  type CardPaymentWorkflow,
  type PaymentView,
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

/**
 * gRPC UNAVAILABLE / DEADLINE_EXCEEDED / CANCELLED or a refused connection: Temporal cannot be
 * reached, or did not answer in time. CANCELLED is a deadline too: when a call's deadline passes,
 * the server may end the stream itself (RST_STREAM CANCEL) before the client's own timer fires,
 * and grpc-js then reports "1 CANCELLED: Call cancelled" instead of DEADLINE_EXCEEDED (seen at 50
 * paid payments/s in bench:engine's steady phase: a callback's signal, then a 500).
 */
export function isUnavailable(e: unknown): boolean {
  const err = e as { code?: number; cause?: unknown; message?: string; name?: string; details?: unknown };
  if (!err) return false;
  if (err.code === 14 || err.code === 4) return true;
  if (err.code === 1 && typeof err.details === 'string') return true; // a gRPC status, not another code 1
  if (err.name === 'ServiceError' && /UNAVAILABLE|DEADLINE|ECONNREFUSED|connect/i.test(String(err.message)))
    return true;
  return err.cause !== undefined && err.cause !== e ? isUnavailable(err.cause) : false;
}

const unavailable = () =>
  new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Payment engine is unavailable, try again later', {
    service: 'temporal',
  });

export async function withTemporal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isUnavailable(e)) throw unavailable();
    throw e;
  }
}

/** How long after withinDeadline's timer a call's own gRPC deadline passes (the timer answers first). */
export const CALL_DEADLINE_GRACE_MS = 1_000;

/** A call still running after this long makes the gateway ask whether Temporal is reachable at all. */
export const PROBE_AFTER_MS = 1_000;

/**
 * Run `fn` (calls on `client`) with a deadline: when it passes, the calls are aborted and the
 * result is `onTimeout()` (by default a 503 SERVICE_UNAVAILABLE). The calls also carry a gRPC
 * deadline CALL_DEADLINE_GRACE_MS later: a client on a NativeConnection (the eager-start client of
 * `npm start`) ignores the abort, and its call would otherwise go on after the answer was given
 * (30 s, seen with a Temporal that accepted connections and never answered).
 * The client retries an unreachable server for a long time, so a call that has not finished after
 * PROBE_AFTER_MS is checked with a short reachability probe: Temporal down -> 503 at once instead
 * of at the deadline.
 */
export async function withinDeadline<T>(
  client: Client,
  ms: number,
  fn: () => Promise<T>,
  onTimeout?: () => T,
): Promise<T> {
  const ctrl = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  const timedOut = Symbol('timeout');
  const down = Symbol('down');
  try {
    const r = await Promise.race([
      withTemporal(() =>
        client.withDeadline(Date.now() + ms + CALL_DEADLINE_GRACE_MS, () => client.withAbortSignal(ctrl.signal, fn)),
      ),
      new Promise<typeof timedOut>((resolve) => timers.push(setTimeout(() => resolve(timedOut), ms))),
      new Promise<typeof down>((resolve) =>
        timers.push(
          setTimeout(
            () => {
              void temporalReachable(client, 2_000).then((up) => up || resolve(down));
            },
            Math.min(PROBE_AFTER_MS, ms),
          ),
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

/** Which payment workflow to start, with its typed input. */
export type PaymentStart =
  { type: typeof WorkflowType.card; input: CardPaymentInput } | { type: typeof WorkflowType.qr; input: QrPaymentInput };

/**
 * A payment's workflow task timeout: when a worker dies in the middle of a task (say, during the
 * settle local activity), the server hands the task to another worker after this long instead of
 * Temporal's default 10 s, so a crashed worker's payments resume within 10 s (README
 * "Reliability"). A local activity longer than 80% of it makes the SDK heartbeat the task.
 */
export const PAYMENT_WORKFLOW_TASK_TIMEOUT = '5 seconds';

const startOptions = (taskQueue: string, memo: PaymentMemo) =>
  ({
    taskQueue,
    workflowTaskTimeout: PAYMENT_WORKFLOW_TASK_TIMEOUT,
    workflowId: paymentWorkflowId(memo.orderId),
    memo: { ...memo },
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: OrderIdKey, value: memo.orderId },
      { key: PaymentMethodKey, value: memo.method },
      { key: PaymentStatusKey, value: 'pending' },
    ],
  }) satisfies Omit<WorkflowStartOptions, 'args'>;

/**
 * Start the order's payment workflow, or find it running (USE_EXISTING); a closed one is left
 * alone (REJECT_DUPLICATE). The gateway has written and checked the payments row before
 * (idempotency and conflicts come from the row), so the start needs no describe() after it.
 * With `eagerStartClient` the server gives the first workflow task to the local worker in its
 * answer (the same history; the start is as durable; if that worker cannot take it, the task
 * goes through the queue as usual).
 */
export async function startPaymentWorkflow(
  plainClient: Client,
  opts: {
    taskQueue: string;
    start: PaymentStart;
    memo: PaymentMemo;
    /** a client on the NativeConnection of a local worker of `taskQueue`: the start asks for eager execution */
    eagerStartClient?: Client;
  },
): Promise<void> {
  const client = opts.eagerStartClient ?? plainClient;
  await withinDeadline(client, TEMPORAL_CALL_TIMEOUT_MS, async () => {
    try {
      const options = { ...startOptions(opts.taskQueue, opts.memo), requestEagerStart: !!opts.eagerStartClient };
      const { start } = opts;
      if (start.type === WorkflowType.card)
        await client.workflow.start<CardPaymentWorkflow>(start.type, { ...options, args: [start.input] });
      else await client.workflow.start<QrPaymentWorkflow>(start.type, { ...options, args: [start.input] });
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    }
  });
}

/**
 * Card: start (or find running) the order's card payment and wait, in the same call, for its
 * charge (update `charge`, update-with-start: one round trip, and the update rides on the
 * workflow's first task). `undefined` when the charge is not there within `waitMs` (the caller
 * answers without it); `'closed'` when the workflow has already ended (its record is final).
 */
export async function startCardPayment(
  client: Client,
  opts: { taskQueue: string; input: CardPaymentInput; memo: PaymentMemo; waitMs: number },
): Promise<PaymentView | undefined | 'closed'> {
  const startWorkflowOperation = new WithStartWorkflowOperation<CardPaymentWorkflow>(WorkflowType.card, {
    ...startOptions(opts.taskQueue, opts.memo),
    args: [opts.input],
  });
  try {
    return await withinDeadline(
      client,
      opts.waitMs,
      () => client.workflow.executeUpdateWithStart(chargeUpdate, { startWorkflowOperation }),
      () => undefined,
    );
  } catch (e) {
    if (
      e instanceof WorkflowExecutionAlreadyStartedError ||
      e instanceof WorkflowUpdateFailedError ||
      e instanceof WorkflowNotFoundError
    )
      return 'closed';
    throw e;
  }
}
