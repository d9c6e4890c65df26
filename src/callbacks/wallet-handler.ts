/**
 * The wallet handler of the contract (POST /wallet/callback), step by step:
 *  (1) parse the body, (2) validate orderId, paymentId, success, userId, (3) append the wallet
 *  callback record, (4) when success is boolean true, start paid-order processing with the full
 *  body (fire and forget: only the start is awaited, so it is durable), (5) answer.
 * Public, so a post decides nothing alone: one that names a payment of its order (Talat's record)
 * runs as paid-order-<paymentId>; any other runs apart (unmatchedPaidOrderWorkflowId) and can
 * neither hold that id nor replace the payment's paid_orders row (activities/callbacks.ts).
 * Any failure answers HTTP 500 {success: false, error, message: 'Failed to process wallet
 * callback'}, logged, reported to the error tracker and e-mailed; none of those changes the 500.
 */
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import {
  paidOrderWorkflowId,
  paidPaymentWorkflowId,
  CallbackWorkflowType,
  type PaidOrderInput,
  type PaidOrderProcessingWorkflow,
} from './index';
import { taskQueueOf } from '../domain/temporal';
import {
  idsOf,
  paymentMismatch,
  unwrapHandlerBody,
  validateHandlerBody,
  type HandlerEvent,
} from '../domain/handler-form';
import { assertStorable } from '../http/middleware/input';
import type { PaymentRecords } from '../payments';
import { OrderIdKey } from '../domain/search-attributes';
import type { Logger } from '../logger';
import { TEMPORAL_CALL_TIMEOUT_MS, withinDeadline } from '../temporal/calls';
import type { AlertThrottle } from '../alerts';
import type { AdminEmail, Notifier } from '../notifier';
import { appendWalletRecord } from './records';

export const WALLET_FAILURE_MESSAGE = 'Failed to process wallet callback';

/** The processing of a post that does not name the order's payment: one per distinct body. */
export const unmatchedPaidOrderWorkflowId = (orderId: string, rawBody: string): string =>
  `${paidOrderWorkflowId(orderId)}-post-${createHash('sha256').update(rawBody).digest('hex').slice(0, 16)}`;

export interface WalletHandlerDeps {
  db: Db;
  payments: Pick<PaymentRecords, 'byOrderNamed'>;
  client: Client;
  /** the payments queue: paid-order processing runs on its background queue (taskQueueOf) */
  taskQueue: string;
  config: Config;
  logger: Logger;
  notifier: Notifier;
  /** when given, the administrator e-mail goes through it: once per order and error per window, a digest for the rest */
  alerts?: AlertThrottle;
}

export type WalletReply =
  | { status: 200; body: { success: true; message: string; orderId: string; paymentId: string; amount: number } }
  | { status: 500; body: { success: false; error: string; message: typeof WALLET_FAILURE_MESSAGE } };

/** An error whose text is the `error` of the 500 (validation texts of the contract and our own safe texts). */
class WalletFailure extends Error {
  constructor(
    message: string,
    readonly underlying?: unknown,
  ) {
    super(message);
  }
}

export async function handleWalletCallback(
  deps: WalletHandlerDeps,
  requestBody: unknown,
  rawBody: string,
  requestId: string,
): Promise<WalletReply> {
  const unwrapped = unwrapHandlerBody(requestBody);
  // a JSON string's content passes the input rule unparsed: the same rule, now (400, nothing written)
  assertStorable(unwrapped.event);
  if (unwrapped.ok) assertStorable(unwrapped.body);
  try {
    if (!unwrapped.ok) throw new WalletFailure(unwrapped.error);
    const valid = validateHandlerBody(unwrapped.body);
    if (!valid.ok) throw new WalletFailure(valid.error);
    const e = valid.value;

    try {
      await appendWalletRecord(deps.db, e, unwrapped.event, unwrapped.body);
    } catch (err) {
      throw new WalletFailure('Could not save the wallet callback record', err);
    }

    if (e.succeeded) await startProcessing(deps, e, rawBody);
    deps.logger.info(
      { requestId, orderId: e.orderId, paymentId: e.paymentId, success: e.succeeded },
      'wallet callback recorded',
    );
    return {
      status: 200,
      body: {
        success: true,
        message: e.succeeded
          ? 'Wallet callback processed successfully'
          : 'Wallet callback recorded; payment not successful, nothing to process',
        orderId: e.orderId,
        paymentId: e.paymentId,
        amount: e.amount,
      },
    };
  } catch (err) {
    if (!(err instanceof WalletFailure)) throw err;
    await reportFailure(deps, err, unwrapped.ok ? unwrapped.body : undefined, unwrapped.event, requestId);
    return { status: 500, body: { success: false, error: err.message, message: WALLET_FAILURE_MESSAGE } };
  }
}

/**
 * Step 4. A post that names a payment of its order (by id or provider reference, whatever other
 * accounts or modes use the order id) runs as that payment's own paid-order-<paymentId>: it joins
 * the run deciding; after a rejection (that run may still be e-mailing) it decides again, from
 * the payment's state now; confirmed is final. Any other post runs apart, once per body.
 */
async function startProcessing(deps: WalletHandlerDeps, e: HandlerEvent, rawBody: string): Promise<void> {
  let matched: string | undefined;
  let decided: string | undefined;
  try {
    const payment = await deps.payments.byOrderNamed(e.orderId, e.paymentId);
    matched = payment !== undefined && paymentMismatch(e, payment) === undefined ? payment.id : undefined;
    if (matched)
      decided = (await deps.db('paid_orders').where({ order_id: e.orderId, payment_id: matched }).first('status'))
        ?.status;
  } catch (err) {
    throw new WalletFailure('Could not start paid-order processing', err);
  }
  if (decided === 'confirmed') return; // nothing to process, as for an already started one
  const input: PaidOrderInput = {
    body: rawBody,
    source: 'wallet',
    confirmWindowSeconds: deps.config.paidOrders.confirmWindowSeconds,
  };
  try {
    await withinDeadline(deps.client, TEMPORAL_CALL_TIMEOUT_MS, () =>
      deps.client.workflow.start<PaidOrderProcessingWorkflow>(CallbackWorkflowType.paidOrder, {
        taskQueue: taskQueueOf('background', deps.taskQueue),
        workflowId: matched ? paidPaymentWorkflowId(matched) : unmatchedPaidOrderWorkflowId(e.orderId, rawBody),
        args: [input],
        ...(matched
          ? {
              workflowIdReusePolicy: 'ALLOW_DUPLICATE',
              workflowIdConflictPolicy: decided === 'rejected' ? 'TERMINATE_EXISTING' : 'USE_EXISTING',
            }
          : { workflowIdReusePolicy: 'REJECT_DUPLICATE' }),
        // every workflow of an order carries OrderId, so OrderId="X" in Temporal Web finds this one too
        typedSearchAttributes: [{ key: OrderIdKey, value: e.orderId }],
      }),
    );
  } catch (err) {
    // the same body again (a post apart): already started by its earlier delivery, nothing more to do
    if (!(err instanceof WorkflowExecutionAlreadyStartedError))
      throw new WalletFailure('Could not start paid-order processing', err);
  }
}

async function reportFailure(
  deps: WalletHandlerDeps,
  failure: WalletFailure,
  body: unknown,
  event: unknown,
  requestId: string,
): Promise<void> {
  // the error log must take what the record store could not (Postgres text holds no NUL)
  const noNul = (v: string | null) => v && v.split('\u0000').join('\uFFFD');
  const ids = idsOf(body);
  const orderId = noNul(ids.orderId);
  const paymentId = noNul(ids.paymentId);
  const cause = failure.underlying instanceof Error ? failure.underlying.message : undefined;
  deps.logger.warn({ requestId, orderId, paymentId, error: failure.message, cause }, 'wallet callback failed');
  const request = (() => {
    try {
      return JSON.stringify(event ?? null).replace(/\\u0000/g, '\\ufffd');
    } catch {
      return 'null';
    }
  })();

  const results = await Promise.allSettled([
    deps.db('callback_errors').insert({
      source: 'wallet',
      order_id: orderId,
      payment_id: paymentId,
      error: failure.message,
      request,
      request_id: requestId,
    }),
    deps.notifier.reportError({
      message: `Wallet callback failed: ${failure.message}`,
      tags: { source: 'wallet', orderId: orderId ?? 'unknown', paymentId: paymentId ?? 'unknown' },
      extra: { requestId, ...(cause ? { cause } : {}) },
    }),
    adminEmail(deps, `wallet:${orderId ?? 'unknown'}:${failure.message}`, {
      subject: `[Talat] Wallet callback failed for order ${orderId ?? 'unknown'}`,
      text: [
        'A wallet callback could not be processed.',
        '',
        `Error:      ${failure.message}`,
        ...(cause ? [`Cause:      ${cause}`] : []),
        `Order id:   ${orderId ?? 'unknown'}`,
        `Payment id: ${paymentId ?? 'unknown'}`,
        `Request id: ${requestId}`,
        '',
        'Request body:',
        request.slice(0, 10_000),
        '',
      ].join('\n'),
    }),
  ]);
  const names = ['error log', 'error tracker', 'administrator e-mail'];
  results.forEach((r, i) => {
    if (r.status === 'rejected')
      deps.logger.error(
        { requestId, orderId, paymentId, err: r.reason },
        `wallet callback failure: ${names[i]} failed`,
      );
  });
}

/** The administrator e-mail of a failure: throttled per order and error when an alert throttle is wired in. */
async function adminEmail(deps: WalletHandlerDeps, key: string, mail: AdminEmail): Promise<void> {
  if (deps.alerts) await deps.alerts.alert(key, mail);
  else await deps.notifier.sendAdminEmail(mail);
}
