/**
 * Starting payment workflows from the gateway, with these idempotency rules:
 * one workflow per order (id payment-<orderId>); the same order and amount again returns the
 * existing payment; another amount or method (or another caller) is a 409 CONFLICT.
 */
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Mode } from '../domain/mode';
import type { PaymentMethod } from './index';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../domain/search-attributes';
import {
  chargeUpdate,
  paymentWorkflowId,
  PaymentWorkflowType,
  type CardPaymentInput,
  type CardPaymentWorkflow,
  type PaymentView,
  type QrPaymentInput,
  type QrPaymentWorkflow,
} from './index';
import { TEMPORAL_CALL_TIMEOUT_MS, withinDeadline } from '../temporal/calls';

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

/** Which payment workflow to start, with its typed input. */
export type PaymentStart =
  | { type: typeof PaymentWorkflowType.card; input: CardPaymentInput }
  | { type: typeof PaymentWorkflowType.qr; input: QrPaymentInput };

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
      if (start.type === PaymentWorkflowType.card)
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
  const startWorkflowOperation = new WithStartWorkflowOperation<CardPaymentWorkflow>(PaymentWorkflowType.card, {
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
