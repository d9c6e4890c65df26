/**
 * Starting payment workflows from the gateway, with these idempotency rules:
 * one workflow per payment (id payments.workflow_id); the same order and amount again returns the
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
  paymentResultSignal,
  paymentWorkflowId,
  qrReferenceOf,
  PaymentWorkflowType,
  type CardPaymentInput,
  type CardPaymentWorkflow,
  type Payment,
  type PaymentResult,
  type PaymentView,
  type QrPaymentInput,
  type QrPaymentWorkflow,
} from './index';
import { TEMPORAL_CALL_TIMEOUT_MS, withinDeadline } from '../temporal/calls';
import { paymentOwnerProof, withStartProof } from '../proofs';
import type { Config } from '../config';

/** What the gateway can learn about a payment from Temporal alone (workflow memo). */
export interface PaymentMemo {
  /** the execution's id (payments.workflow_id); absent: payment-<orderId>, as before ids were scoped */
  workflowId?: string;
  paymentId: string;
  orderId: string;
  method: PaymentMethod;
  amountSatang: number;
  mode?: Mode;
  apiKeyId?: string | null;
  /** qr: its expiry (the payload and CRC are the row's: the memo no longer carries them) */
  expiresAt?: string;
  /** the gateway's proof that it started this execution (ownerProof): checked before adopting one found running */
  startProof?: string;
}

/**
 * The memo as Temporal keeps it: the whole PaymentMemo in ONE field (issue 41: each field is a
 * payload the codec seals on its own, and the memo is rewritten with the execution's state at
 * every workflow task: one field is one seal, not ten). Executions started before kept one
 * field per memo key: paymentMemoOf reads both.
 */
export const PAYMENT_MEMO_FIELD = 'payment';
export const paymentMemoOf = (memo: Record<string, unknown> | undefined): Partial<PaymentMemo> =>
  ((memo?.[PAYMENT_MEMO_FIELD] as Partial<PaymentMemo> | undefined) ?? memo ?? {}) as Partial<PaymentMemo>;

/**
 * What marks an execution as the gateway's own: talat-start-v1 over its type, id and the facts a
 * retry of the same request repeats (payment, order, amount, method, mode, key); kept in the memo.
 */
export const ownerProof = (key: string, type: string, m: PaymentMemo): string =>
  paymentOwnerProof(key, type, workflowIdOf(m), m);
/** `m` with the proof that marks the execution as the gateway's own (adopted only then) */
export const ownedMemo = (key: string, type: string, m: PaymentMemo): PaymentMemo => ({
  ...m,
  startProof: ownerProof(key, type, m),
});

/** The payment's workflow id: the row's (memo.workflowId), else the one derived from its order (older callers). */
const workflowIdOf = (m: PaymentMemo): string => m.workflowId ?? paymentWorkflowId(m.orderId);

/** The payment's id is held by an execution the gateway did not start (started by hand at the frontend). */
export class ForeignExecutionError extends Error {
  constructor(readonly workflowId: string) {
    super(`workflow ${workflowId} was not started by this gateway`);
  }
}

/** The types an execution of this payment may have: the one started now, or its v1 (begun before v2). */
const FAMILY: Record<string, string[]> = {
  [PaymentWorkflowType.qrDelayed]: [PaymentWorkflowType.qrDelayed, PaymentWorkflowType.qr, PaymentWorkflowType.qrV1],
  [PaymentWorkflowType.qr]: [PaymentWorkflowType.qr, PaymentWorkflowType.qrV1],
  [PaymentWorkflowType.card]: [PaymentWorkflowType.card, PaymentWorkflowType.cardV1],
};

/**
 * A start found an execution under the id (running or closed): adopt it only when its memo
 * carries the gateway's proof for this payment; one begun before that proof existed, when its
 * memo names the payment id (derived from IDENTITY_SECRET: no outsider knows it in advance).
 */
async function assertOwnExecution(client: Client, type: string, memo: PaymentMemo): Promise<void> {
  const workflowId = workflowIdOf(memo);
  const d = await client.workflow.getHandle(workflowId).describe();
  const found = paymentMemoOf(d.memo) as { startProof?: unknown; paymentId?: unknown };
  const own =
    (FAMILY[type] ?? [type]).includes(d.type) &&
    (found.startProof === undefined ? found.paymentId === memo.paymentId : found.startProof === memo.startProof);
  if (!own) throw new ForeignExecutionError(workflowId);
}

/** Which payment workflow to start, with its typed input. */
export type PaymentStart =
  | { type: typeof PaymentWorkflowType.card; input: CardPaymentInput }
  | { type: typeof PaymentWorkflowType.qr | typeof PaymentWorkflowType.qrDelayed; input: QrPaymentInput };

/**
 * A payment's workflow task timeout: when a worker dies in the middle of a task (say, during the
 * settle local activity), the server hands the task to another worker after this long instead of
 * Temporal's default 10 s, so a crashed worker's payments resume within 10 s (README
 * "Reliability"). A local activity longer than 80% of it makes the SDK heartbeat the task.
 */
export const PAYMENT_WORKFLOW_TASK_TIMEOUT = '5 seconds';

const startOptions = (taskQueue: string, memo: PaymentMemo, conflict: 'FAIL' | 'USE_EXISTING') =>
  ({
    taskQueue,
    workflowTaskTimeout: PAYMENT_WORKFLOW_TASK_TIMEOUT,
    workflowId: workflowIdOf(memo),
    memo: { [PAYMENT_MEMO_FIELD]: memo },
    workflowIdConflictPolicy: conflict,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: OrderIdKey, value: memo.orderId },
      { key: PaymentMethodKey, value: memo.method },
      { key: PaymentStatusKey, value: 'pending' },
    ],
  }) satisfies Omit<WorkflowStartOptions, 'args'>;

/**
 * Start the order's payment workflow; one already there under the id (running, or closed:
 * REJECT_DUPLICATE) is adopted only when it is the gateway's own (assertOwnExecution: one
 * describe(), only then), else ForeignExecutionError. The gateway has written and checked the
 * payments row before (idempotency and conflicts come from the row). A delayed-start QR payment
 * starts with a start delay that ends at its expiry.
 */
export async function startPaymentWorkflow(
  client: Client,
  opts: {
    taskQueue: string;
    start: PaymentStart;
    memo: PaymentMemo;
  },
): Promise<void> {
  const { start } = opts;
  const delayed = start.type === PaymentWorkflowType.qrDelayed;
  await withinDeadline(client, TEMPORAL_CALL_TIMEOUT_MS, async () => {
    try {
      const options = {
        ...startOptions(opts.taskQueue, opts.memo, 'FAIL'),
        ...(delayed ? { startDelay: Math.max(1, Date.parse(start.input.expiresAt) - Date.now()) } : {}),
      };
      if (start.type === PaymentWorkflowType.card)
        await client.workflow.start<CardPaymentWorkflow>(start.type, { ...options, args: [start.input] });
      else await client.workflow.start<QrPaymentWorkflow>(start.type, { ...options, args: [start.input] });
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
      await assertOwnExecution(client, opts.start.type, opts.memo);
    }
  });
}

/**
 * A provider's result to the payment's workflow: `paymentResult` signalled; for a delayed-start
 * QR payment (details.workflowType) by signal-with-start of its own start, which ends the start
 * delay (a plain signal would wait for it). REJECT_DUPLICATE: a payment whose workflow has ended
 * is not started again (WorkflowExecutionAlreadyStartedError, like WorkflowNotFoundError: ended);
 * one never started is started as the gateway starts it.
 */
export async function deliverPaymentResult(
  client: Client,
  opts: {
    taskQueue: string;
    payment: Payment;
    result: PaymentResult;
    start: () => { start: PaymentStart; memo: PaymentMemo };
  },
): Promise<void> {
  const { payment: p, result } = opts;
  if (p.method !== 'qr' || p.details.workflowType !== PaymentWorkflowType.qrDelayed) {
    await client.workflow.getHandle(p.workflowId).signal(paymentResultSignal, result);
    return;
  }
  const { start, memo } = opts.start();
  await client.workflow.signalWithStart<QrPaymentWorkflow, [PaymentResult]>(start.type, {
    ...startOptions(opts.taskQueue, memo, 'USE_EXISTING'),
    args: [start.input as QrPaymentInput],
    signal: paymentResultSignal,
    signalArgs: [result],
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
    ...startOptions(opts.taskQueue, opts.memo, 'USE_EXISTING'),
    args: [opts.input],
  });
  let view: PaymentView | undefined | 'closed';
  try {
    view = await withinDeadline(
      client,
      opts.waitMs,
      () => client.workflow.executeUpdateWithStart(chargeUpdate, { startWorkflowOperation }),
      () => undefined,
    );
  } catch (e) {
    if (!(
      e instanceof WorkflowExecutionAlreadyStartedError ||
      e instanceof WorkflowUpdateFailedError ||
      e instanceof WorkflowNotFoundError
    ))
      throw e;
    view = 'closed';
  }
  // the view of this payment (its id derives from IDENTITY_SECRET: no outsider knows it in advance)
  // is the gateway's own execution; anything else is checked by its memo before it is adopted
  if (typeof view === 'object' && view.paymentId === opts.input.paymentId) return view;
  await assertOwnExecution(client, PaymentWorkflowType.card, opts.memo);
  return view;
}

export type QrFacts = { payload: string; crc: string; ref1: string; billerId?: string };

/** The QR a payment row holds (details.qr), else `fallback` (a row written before it held one). */
export function storedQr(p: Payment, fallback?: QrFacts): QrFacts {
  const stored = (p.details as { qr?: Partial<QrFacts> }).qr;
  if (!stored?.payload) {
    if (!fallback) throw new Error(`payment ${p.id} holds no QR`);
    return fallback;
  }
  return {
    payload: stored.payload,
    crc: stored.crc ?? stored.payload.slice(-4),
    ref1: qrReferenceOf(p),
    ...(stored.billerId ? { billerId: stored.billerId } : {}),
  };
}

/**
 * A QR payment's start from its row: the workflow type the row names (details.workflowType), its
 * input with the start's proof, and the memo with the owner's proof. The gateway's start, and the
 * signal-with-start of a result (deliverResult), are built by this one function.
 */
export function qrStartOf(config: Config, p: Payment, customerId?: string, fallback?: QrFacts) {
  const key = config.results.signingKey;
  const q = storedQr(p, fallback);
  const type =
    p.details.workflowType === PaymentWorkflowType.qrDelayed ? PaymentWorkflowType.qrDelayed : PaymentWorkflowType.qr;
  const expiresAt = p.expiresAt!.toISOString();
  return {
    start: {
      type,
      input: withStartProof(key, type, p.workflowId, {
        paymentId: p.id,
        orderId: p.orderId,
        userId: p.userId,
        customerId,
        amountSatang: p.amountSatang,
        mode: p.mode,
        apiKeyId: p.apiKeyId ?? undefined,
        expiresAt,
        qr: {
          payload: q.payload,
          crc: q.crc,
          promptPayId: config.payments.promptPayId,
          ...(q.billerId ? { billerId: q.billerId, ref1: q.ref1 } : {}),
        },
      }),
    },
    memo: ownedMemo(key, type, {
      workflowId: p.workflowId,
      paymentId: p.id,
      orderId: p.orderId,
      method: 'qr',
      amountSatang: p.amountSatang,
      mode: p.mode,
      apiKeyId: p.apiKeyId,
      expiresAt,
    }),
  };
}

/**
 * How a provider's result reaches a payment's workflow (the callbacks' deliverResult): a signal;
 * for a delayed-start QR payment a signal-with-start of its own start, which ends the delay.
 */
export const resultDelivery =
  (d: { config: Config; temporal: { client: Client; taskQueue: string } }) =>
  (p: Payment, result: PaymentResult): Promise<void> =>
    deliverPaymentResult(d.temporal.client, {
      taskQueue: d.temporal.taskQueue,
      payment: p,
      result,
      start: () => qrStartOf(d.config, p, p.customerId),
    });
