/**
 * Reaching an order's workflow (its orders.workflow_id: order-<paymentId>): started at a card's authorisation (with the
 * `charge` update, as a card payment is) or, for a paid QR payment, by its first step
 * (update-with-start). REJECT_DUPLICATE: a settled order's workflow is never run again. A step's
 * update id is its row id and a digest of its proof, so a retried request is the same update.
 */
import { createHash } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { OrderIdKey } from '../domain/search-attributes';
import { chargeUpdate, type PaymentView } from '../payments';
import { withinDeadline } from '../temporal/calls';
import {
  adjustUpdate,
  decideApprovalUpdate,
  finalizeUpdate,
  OrderWorkflowType,
  type OrderInput,
  type OrderSettlementWorkflow,
  type OrderStepOutcome,
  type OrderStepRequest,
} from './index';

/** How long a step waits for its outcome (a capture or a refund at the provider included) before 503. */
export const ORDER_STEP_WAIT_MS = 60_000;

const startOperation = (taskQueue: string, workflowId: string, input: OrderInput) =>
  new WithStartWorkflowOperation<OrderSettlementWorkflow>(OrderWorkflowType.order, {
    taskQueue,
    workflowId,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    workflowTaskTimeout: '5 seconds',
    typedSearchAttributes: [{ key: OrderIdKey, value: input.orderId }],
  });

export const stepUpdateId = (r: OrderStepRequest): string =>
  `${r.stepId}.${createHash('sha256').update(r.proof).digest('hex').slice(0, 16)}`;

/** The card order's start and its charge: the view once the charge exists, undefined after waitMs. */
export async function startCardOrder(
  client: Client,
  opts: { taskQueue: string; workflowId: string; input: OrderInput; waitMs: number },
): Promise<PaymentView | undefined | 'closed'> {
  try {
    return await withinDeadline(
      client,
      opts.waitMs,
      () =>
        client.workflow.executeUpdateWithStart(chargeUpdate, {
          startWorkflowOperation: startOperation(opts.taskQueue, opts.workflowId, opts.input),
        }),
      () => undefined,
    );
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError || e instanceof WorkflowUpdateFailedError) return 'closed';
    throw e;
  }
}

/** One step (adjust, finalize or a customer's decision) on the order's workflow; 'closed' when it has ended. */
export async function sendOrderStep(
  client: Client,
  opts: {
    taskQueue: string;
    kind: 'adjust' | 'finalize' | 'approval';
    request: OrderStepRequest;
    /** the order's stored workflow id (orders.workflow_id) */
    workflowId: string;
    input: OrderInput;
  },
): Promise<OrderStepOutcome | 'closed'> {
  const update = { adjust: adjustUpdate, finalize: finalizeUpdate, approval: decideApprovalUpdate }[opts.kind];
  const updateId = stepUpdateId(opts.request);
  try {
    return await withinDeadline(client, ORDER_STEP_WAIT_MS, () =>
      // a card order's workflow was started at its authorisation, an approval's by its adjustment
      opts.input.method === 'card' || opts.kind === 'approval'
        ? client.workflow.getHandle(opts.workflowId).executeUpdate(update, {
            args: [opts.request],
            updateId,
          })
        : client.workflow.executeUpdateWithStart(update, {
            args: [opts.request],
            updateId,
            startWorkflowOperation: startOperation(opts.taskQueue, opts.workflowId, opts.input),
          }),
    );
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError || e instanceof WorkflowNotFoundError) return 'closed';
    throw e;
  }
}
