/**
 * The callback processor: what happens to a verified callback of an IP-restricted endpoint.
 *
 * Guarantees:
 *  - Duplicates: one receipt per (provider, payment, status). A duplicate, also one arriving
 *    concurrently, waits for the first delivery to finish and gets its stored response; it
 *    records nothing and signals nothing.
 *  - Durable before the 200: the receipt is committed only after Temporal accepted the signal
 *    (the insert holds the unique key until then), so an answered callback is in the workflow's
 *    history, and a callback whose signal failed leaves no receipt and gets a 503, so the
 *    provider's retry does the whole work again. A repeated signal after a crash between signal
 *    and commit is harmless: the payment workflow keeps the first result only.
 *  - Proof: what is signalled carries the receipt id and its proof (src/callbacks/result-proof),
 *    an HMAC only this gateway and the worker can make; the workflow settles nothing without it.
 *  - Conflicts: a result that contradicts a settled payment (success after expired or failed,
 *    failed after paid) is outcome `conflict`: instead of the signal (or, when the payment was
 *    settled while the signal was on its way, besides it) a lateResultWorkflow records it, tells
 *    the administrator once and applies LATE_PAYMENT_POLICY (workflows/late-result.ts).
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { newId } from '../ids';
import { contradicts, type PaymentStatus } from '../domain/payment-state';
import { OrderIdKey } from '../domain/search-attributes';
import {
  lateResultWorkflowId,
  paymentResultSignal,
  taskQueueOf,
  WorkflowType,
  type LateResultWorkflow,
  type PaymentResult,
} from '../domain/workflow-contract';
import type { Logger } from '../logger';
import { callbacks } from '../metrics';
import { withTemporal } from '../temporal/payments';
import type { PaymentRef } from '../payments/repository';
import type { CallbackProvider } from '../domain/providers';
import { signResult } from './result-proof';

export type { CallbackProvider };
export type CallbackStatus = 'success' | 'failed' | 'unprocessed';
export type Outcome = 'signalled' | 'payment_closed' | 'recorded' | 'conflict';

export interface StoredResponse {
  status: number;
  body: unknown;
  location?: string;
}

export interface VerifiedCallback {
  provider: CallbackProvider;
  payment: PaymentRef;
  status: CallbackStatus;
  sourceIp: string;
  /** the parsed payload, kept with the receipt */
  request: unknown;
  /** the provider's reference (charge id, wallet transaction id...) and message, passed to the workflow */
  reference?: string;
  message?: string;
  /** further writes in the same transaction (the handler-form record stores) */
  record?: (trx: Knex.Transaction) => Promise<void>;
  /** the response; `paymentStatus`: what the payment had become (for a conflict, what the result contradicts) */
  respond: (outcome: Outcome, paymentStatus: PaymentStatus) => StoredResponse;
}

export interface ProcessorDeps {
  db: Db;
  client: Client;
  logger: Logger;
  /** the task queue of lateResultWorkflow */
  taskQueue: string;
  /** RESULT_SIGNING_KEY: signs what is signalled */
  signingKey: string;
  /** deadline of the signal call; the receipt's key is locked meanwhile */
  signalTimeoutMs?: number;
}

const SIGNAL_TIMEOUT_MS = 5_000;

export async function processCallback(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
): Promise<{ response: StoredResponse; duplicate: boolean }> {
  // a committed receipt always holds its response: a duplicate that comes later needs no lock
  const known = await storedResponse(deps, cb);
  if (known) {
    callbacks.inc({ provider: cb.provider, outcome: 'duplicate', reason: '' });
    return { response: known, duplicate: true };
  }

  const first = await deps.db.transaction(async (trx) => {
    const id = newId('evt');
    const inserted = await trx('callback_receipts')
      .insert({
        id,
        provider: cb.provider,
        payment_id: cb.payment.id,
        order_id: cb.payment.orderId,
        status: cb.status,
        source_ip: cb.sourceIp,
        request: JSON.stringify(cb.request ?? null),
      })
      .onConflict(['provider', 'payment_id', 'status'])
      .ignore()
      .returning('id');
    if (inserted.length === 0) return undefined; // a committed receipt exists: a duplicate

    await cb.record?.(trx);
    const { outcome, paymentStatus } =
      cb.status === 'unprocessed'
        ? { outcome: 'recorded' as const, paymentStatus: cb.payment.status }
        : await deliver(deps, cb, id, trx);
    const response = cb.respond(outcome, paymentStatus);
    await trx('callback_receipts')
      .where({ id })
      .update({
        outcome,
        response_status: response.status,
        response_body: JSON.stringify(response.body),
        response_location: response.location ?? null,
      });
    deps.logger.info(
      {
        provider: cb.provider,
        paymentId: cb.payment.id,
        orderId: cb.payment.orderId,
        status: cb.status,
        outcome,
        receipt: id,
      },
      'callback accepted',
    );
    return response;
  });
  if (first) {
    callbacks.inc({ provider: cb.provider, outcome: 'accepted', reason: '' });
    return { response: first, duplicate: false };
  }
  callbacks.inc({ provider: cb.provider, outcome: 'duplicate', reason: '' });

  // the first delivery committed while this one waited on the unique key
  const response = await storedResponse(deps, cb);
  if (!response) throw new Error(`callback receipt of ${cb.provider}/${cb.payment.id}/${cb.status} has no response`);
  return { response, duplicate: true };
}

async function storedResponse(deps: ProcessorDeps, cb: VerifiedCallback): Promise<StoredResponse | undefined> {
  const row = await deps
    .db('callback_receipts')
    .where({ provider: cb.provider, payment_id: cb.payment.id, status: cb.status })
    .first('response_status', 'response_body', 'response_location');
  if (!row) return undefined;
  deps.logger.info(
    { provider: cb.provider, paymentId: cb.payment.id, status: cb.status },
    'duplicate callback: first response returned',
  );
  return {
    status: Number(row.response_status),
    body: row.response_body,
    ...(row.response_location ? { location: String(row.response_location) } : {}),
  };
}

/**
 * The result to the payment: a conflict when the payment is already settled the other way,
 * else the signal (with its proof); a payment found settled the other way after the signal
 * (the workflow decided while the signal was on its way) or after its workflow ended is a
 * conflict too.
 */
async function deliver(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  receiptId: string,
  trx: Knex.Transaction,
): Promise<{ outcome: Outcome; paymentStatus: PaymentStatus }> {
  const status = cb.status === 'success' ? 'success' : 'failed';
  const result: PaymentResult = {
    status,
    provider: cb.provider,
    ...(cb.reference ? { reference: cb.reference } : {}),
    ...(cb.message ? { message: cb.message } : {}),
    receiptId,
    proof: signResult(deps.signingKey, { receiptId, paymentId: cb.payment.id, status }),
  };
  if (contradicts(status, cb.payment.status)) return conflict(deps, cb, result, cb.payment.status);

  const signalled = await signal(deps, cb, result);
  const now = (await trx('payments').where({ id: cb.payment.id }).first('status'))?.status as PaymentStatus | undefined;
  if (now && contradicts(status, now)) return conflict(deps, cb, result, now);
  return { outcome: signalled ? 'signalled' : 'payment_closed', paymentStatus: now ?? cb.payment.status };
}

/** Starts the late result's workflow (one per payment and status: a second start finds it, running or completed). */
async function conflict(
  deps: ProcessorDeps,
  cb: VerifiedCallback,
  result: PaymentResult,
  paymentStatus: PaymentStatus,
): Promise<{ outcome: Outcome; paymentStatus: PaymentStatus }> {
  deps.logger.warn(
    { provider: cb.provider, paymentId: cb.payment.id, status: cb.status, paymentStatus, receipt: result.receiptId },
    'callback contradicts the settled payment: recorded as a conflict',
  );
  try {
    await withTemporal(() =>
      deps.client.withDeadline(Date.now() + (deps.signalTimeoutMs ?? SIGNAL_TIMEOUT_MS), () =>
        deps.client.workflow.start<LateResultWorkflow>(WorkflowType.lateResult, {
          // background work (a refund at the provider, an e-mail): off the payments' queue (bulkheads)
          taskQueue: taskQueueOf('background', deps.taskQueue),
          workflowId: lateResultWorkflowId(cb.payment.id, result.status),
          // once per payment and status; again only after a run that failed or was terminated
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
          args: [{ paymentId: cb.payment.id, orderId: cb.payment.orderId, paymentStatus, result }],
          typedSearchAttributes: [{ key: OrderIdKey, value: cb.payment.orderId }],
        }),
      ),
    );
  } catch (e) {
    if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
  }
  return { outcome: 'conflict', paymentStatus };
}

/** True when the signal reached the running payment workflow; false when it had ended. */
async function signal(deps: ProcessorDeps, cb: VerifiedCallback, result: PaymentResult): Promise<boolean> {
  const handle = deps.client.workflow.getHandle(cb.payment.workflowId);
  try {
    await withTemporal(() =>
      deps.client.withDeadline(Date.now() + (deps.signalTimeoutMs ?? SIGNAL_TIMEOUT_MS), () =>
        handle.signal(paymentResultSignal, result),
      ),
    );
    return true;
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) {
      // the payment workflow has ended (expired, or already decided): keep the receipt for the operator
      deps.logger.warn(
        { provider: cb.provider, paymentId: cb.payment.id, status: cb.status, paymentStatus: cb.payment.status },
        'callback for a payment that has ended',
      );
      return false;
    }
    throw e;
  }
}
