/**
 * Starting a refund: update-with-start on the order's refunds workflow (refunds-<orderId>,
 * search attribute OrderId): the workflow is started when it is not running, and the `refund`
 * update runs in it, after any refund of the order still in progress. The update id is the refund
 * id and a digest of its proof: an outsider who learns a refund id cannot claim its update id first.
 */
import { createHash } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowUpdateStage, type Client } from '@temporalio/client';
import { OrderIdKey } from '../domain/search-attributes';
import {
  refundsWorkflowId,
  refundUpdate,
  RefundsWorkflowType,
  type OrderRefundsWorkflow,
  type RefundOutcome,
  type RefundRequest,
} from './index';
import { withinDeadline } from '../temporal/calls';

/** How long a refunds workflow stays open without a refund. */
export const REFUNDS_IDLE_SECONDS = 6 * 3600;
/** How long POST /refund waits for the refund's outcome (provider calls included) before 503. */
export const REFUND_WAIT_MS = 60_000;

/** How long a re-drive (./refund-redrive.ts) waits for the workflow to accept a refund. */
export const REDRIVE_ACCEPT_MS = 15_000;

interface RefundCall {
  taskQueue: string;
  orderId: string;
  request: RefundRequest;
}

/** `<refund id>.<16 hex of sha256(proof)>`: the same for every retry and re-drive of one refund. */
export const refundUpdateId = (r: RefundRequest): string =>
  r.proof ? `${r.refundId}.${createHash('sha256').update(r.proof).digest('hex').slice(0, 16)}` : r.refundId;

const refundCall = (opts: RefundCall) => ({
  args: [opts.request] as [RefundRequest],
  updateId: refundUpdateId(opts.request),
  startWorkflowOperation: new WithStartWorkflowOperation<OrderRefundsWorkflow>(RefundsWorkflowType.refunds, {
    taskQueue: opts.taskQueue,
    workflowId: refundsWorkflowId(opts.orderId),
    args: [{ orderId: opts.orderId, idleSeconds: REFUNDS_IDLE_SECONDS }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    typedSearchAttributes: [{ key: OrderIdKey, value: opts.orderId }],
  }),
});

export async function executeRefund(client: Client, opts: RefundCall): Promise<RefundOutcome> {
  return withinDeadline(client, REFUND_WAIT_MS, () =>
    client.workflow.executeUpdateWithStart(refundUpdate, refundCall(opts)),
  );
}

/**
 * The same refund, handed over without waiting for its outcome: returns once the workflow has
 * accepted the update. A refund it already has (same update id in its run) is not run again.
 */
export async function sendRefund(client: Client, opts: RefundCall): Promise<void> {
  await withinDeadline(client, REDRIVE_ACCEPT_MS, () =>
    client.workflow.startUpdateWithStart(refundUpdate, {
      ...refundCall(opts),
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    }),
  );
}
