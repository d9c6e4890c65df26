/**
 * Starting a refund: update-with-start on the order's refunds workflow (refunds-<orderId>,
 * search attribute OrderId): the workflow is started when it is not running, and the `refund`
 * update (update id = refund id) runs in it, after any refund of the order still in progress.
 */
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { OrderIdKey } from '../domain/search-attributes';
import {
  refundsWorkflowId,
  refundUpdate,
  WorkflowType,
  type OrderRefundsWorkflow,
  type RefundOutcome,
  type RefundRequest,
} from '../domain/workflow-contract';
import { withinDeadline } from '../temporal/calls';

/** How long a refunds workflow stays open without a refund. */
export const REFUNDS_IDLE_SECONDS = 6 * 3600;
/** How long POST /refund waits for the refund's outcome (provider calls included) before 503. */
export const REFUND_WAIT_MS = 60_000;

export async function executeRefund(
  client: Client,
  opts: { taskQueue: string; orderId: string; request: RefundRequest },
): Promise<RefundOutcome> {
  return withinDeadline(client, REFUND_WAIT_MS, () => {
    const startWorkflowOperation = new WithStartWorkflowOperation<OrderRefundsWorkflow>(WorkflowType.refunds, {
      taskQueue: opts.taskQueue,
      workflowId: refundsWorkflowId(opts.orderId),
      args: [{ orderId: opts.orderId, idleSeconds: REFUNDS_IDLE_SECONDS }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [{ key: OrderIdKey, value: opts.orderId }],
    });
    return client.workflow.executeUpdateWithStart(refundUpdate, {
      args: [opts.request],
      updateId: opts.request.refundId,
      startWorkflowOperation,
    });
  });
}
