/**
 * The payment service: creating card and QR payments (one workflow per order, started through
 * the Temporal contract) and reading a payment's status. Built over explicit deps; the routes
 * validate, call one function here and shape the envelope.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { ApiKeyInfo } from '../domain/api-keys';
import { AppError, ErrorCode } from '../domain/errors';
import type { Mode } from '../domain/mode';
import { satangToThb } from '../domain/money';
import { billPaymentPayload, paymentReference, promptPayPayload } from '../domain/promptpay';
import { paymentWorkflowIdOf, PaymentWorkflowType, settlementView, type OrderScope, type PaymentView } from './index';
import { scopedPaymentId } from '../ids';
import { withStartProof } from '../proofs';
import type { TemporalDeps } from '../temporal/client';
import { withinDeadline } from '../temporal/calls';
import {
  ForeignExecutionError,
  ownedMemo,
  qrStartOf,
  storedQr,
  paymentMemoOf,
  startCardPayment,
  startPaymentWorkflow,
  type PaymentMemo,
} from './workflow-client';
import { qrImage } from '../qr-image';
import {
  createPendingPayment,
  lastTransitionReason,
  listPayments,
  paymentByOrderId,
  paymentHistory,
  removeUnstartedPayment,
  type NewPayment,
  type Payment,
} from './repository';
import type {
  CardPaymentCreated,
  CardPaymentRequest,
  PaymentList,
  PaymentListQuery,
  PaymentStatusOut,
  QrPaymentCreated,
  QrPaymentRequest,
} from './schemas';

/** How long POST /cardpayment waits for the charge to exist at the provider before answering without it. */

/** The 409s of an order id that has a payment in the caller's scope: another key of the account's, or one's own with other details. */
const takenByAnother = (orderId: string) =>
  `Order id ${orderId} is already used by a payment of another API key of your account in this mode: order ids are unique per account and mode (docs/concepts.md)`;
const otherDetails = (orderId: string, method: string, amount: string) =>
  `Order ${orderId} already has a payment of ${amount} THB by ${method}: use the same amount and method to get it, or a new order id`;
/** The 409 of an order id whose workflow id is held by an execution this gateway did not start. */
const FOREIGN_EXECUTION =
  'This order id cannot be used: its payment workflow id is held by an execution Talat did not start; use another order id';
export const CARD_CHARGE_WAIT_MS = 10_000;

/** A refund of a payment as GET /checkstatus lists it (the refunds slice's records). */
export interface RefundSummary {
  id: string;
  amountSatang: number;
  status: 'pending' | 'succeeded' | 'failed';
  reason: string | null;
  failureReason: string | null;
  createdAt: Date;
}

/** What the payments slice takes of the others, wired by the composition root (src/app). */
export interface PaymentSliceDeps {
  /** the refunds slice: a payment's refunds, oldest first */
  refunds: { ofPayment(paymentId: string): Promise<RefundSummary[]> };
  /** the checkout slice: the hosted page's signed link, and the check of a shop's returnUrl */
  checkout: { urlOf(paymentId: string, expiresAt: string): string; checkReturnUrl(returnUrl: string): void };
}

export interface PaymentServiceDeps extends PaymentSliceDeps {
  config: Config;
  db: Db;
  temporal: TemporalDeps;
  /** ms since the epoch (QR expiry) */
  clock: () => number;
}

/** the input with the proof of its start (talat-start-v1): the worker acts only on what it vouches for */
function proven<T extends object>(d: Pick<PaymentServiceDeps, 'config'>, type: string, p: Payment, input: T) {
  const { config } = d;
  return withStartProof(config.results.signingKey, type, p.workflowId, input);
}

/** The caller's order scope (docs/concepts.md): its key's account, none for a keyless card payment; and the mode. */
export const scopeOfKey = (key: ApiKeyInfo | undefined, mode: Mode): OrderScope => ({
  accountId: key ? (key.accountId ?? key.id) : null,
  mode,
});

/** A new payment's id and workflow id, from its order scope: unique, and no outsider can guess either. */
function scopedIds(d: PaymentServiceDeps, scope: OrderScope, orderId: string) {
  const paymentId = scopedPaymentId(d.config.identity.secret, scope.accountId, scope.mode, orderId);
  return { paymentId, workflowId: paymentWorkflowIdOf(paymentId), accountId: scope.accountId };
}
/** the memo with the proof that marks the execution as the gateway's own (adopted only then) */
function owned(d: Pick<PaymentServiceDeps, 'config'>, type: string, memo: PaymentMemo): PaymentMemo {
  return ownedMemo(d.config.results.signingKey, type, memo);
}

/** The card view of a payment whose workflow has ended: its record is final. */
async function recordedCardView(
  d: PaymentServiceDeps,
  orderId: string,
  scope: OrderScope,
): Promise<Pick<PaymentView, 'status' | 'charge' | 'failureReason'> | undefined> {
  const { db } = d;
  const p = await paymentByOrderId(db, orderId, scope);
  if (!p) return undefined;
  const reason = await lastTransitionReason(db, p.id);
  return {
    status: p.status,
    charge: p.providerRef
      ? {
          id: p.providerRef,
          status: p.details.charge?.status ?? 'pending',
          authorizeUri: p.details.charge?.authorizeUri ?? null,
        }
      : undefined,
    failureReason: p.status === 'failed' || p.status === 'expired' ? reason : undefined,
  };
}

/**
 * The payments row first (so a callback that comes the moment the gateway answered finds it),
 * then the workflow. The order's existing row decides idempotency: the same caller, method and
 * amount get that payment (its workflow started again if an earlier start failed); anything
 * else is a 409 CONFLICT. A start that fails (Temporal unavailable) undoes the new row; the
 * payment id is derived from the order (orderPaymentId), so when that start had in fact reached
 * Temporal, the caller's retry writes the row again with the id the running workflow carries.
 */
async function createOrFind<T>(
  d: PaymentServiceDeps,
  row: NewPayment,
  key: ApiKeyInfo | undefined,
  launch: (existing: Payment) => Promise<T>,
): Promise<{ payment: Payment; launched: T }> {
  const { db } = d;
  const { created, payment } = await createPendingPayment(db, row);
  if (!created) {
    // order ids are unique per account and mode: another key of the same account learns that
    // the id is taken, and nothing of the payment
    if ((payment.apiKeyId ?? null) !== (key?.id ?? null) || payment.mode !== row.mode)
      throw new AppError(ErrorCode.CONFLICT, takenByAnother(row.orderId), { orderId: row.orderId });
    if (payment.amountSatang !== row.amountSatang || payment.method !== row.method)
      throw new AppError(
        ErrorCode.CONFLICT,
        otherDetails(row.orderId, payment.method, satangToThb(payment.amountSatang).toFixed(2)),
        {
          orderId: row.orderId,
          existing: { method: payment.method, amount: satangToThb(payment.amountSatang) },
        },
      );
  }
  try {
    return { payment, launched: await launch(payment) };
  } catch (e) {
    if (created) await removeUnstartedPayment(db, payment.id).catch(() => undefined);
    // the order's workflow id is held by an execution started by hand at Temporal (issue 38)
    if (e instanceof ForeignExecutionError)
      throw new AppError(ErrorCode.CONFLICT, FOREIGN_EXECUTION, { orderId: row.orderId });
    throw e;
  }
}

/** POST /cardpayment: start (or find) the order's card payment and wait briefly for its charge. */
async function createCardPayment(
  d: PaymentServiceDeps,
  req: CardPaymentRequest,
  key: ApiKeyInfo | undefined,
  mode: Mode,
): Promise<CardPaymentCreated> {
  const { config } = d;
  const { client, taskQueue } = d.temporal;
  const scope = scopeOfKey(key, mode);
  const row: NewPayment = {
    ...scopedIds(d, scope, req.orderId),
    orderId: req.orderId,
    userId: req.userId,
    method: 'card',
    amountSatang: req.amount,
    mode,
    callbackUrl: req.callback,
    apiKeyId: key?.id,
  };
  const { payment, launched } = await createOrFind(d, row, key, (p) =>
    startCardPayment(client, {
      taskQueue,
      waitMs: CARD_CHARGE_WAIT_MS,
      memo: owned(d, PaymentWorkflowType.card, {
        workflowId: p.workflowId,
        paymentId: p.id,
        orderId: p.orderId,
        method: 'card',
        amountSatang: p.amountSatang,
        mode: p.mode,
        apiKeyId: p.apiKeyId,
      }),
      input: proven(d, PaymentWorkflowType.card, p, {
        paymentId: p.id,
        orderId: p.orderId,
        userId: p.userId,
        amountSatang: p.amountSatang,
        mode: p.mode,
        apiKeyId: p.apiKeyId ?? undefined,
        callbackUrl: p.callbackUrl ?? undefined,
        token: req.token,
        returnUri: `${config.publicBaseUrl.replace(/\/+$/, '')}/callback`,
        timeoutSeconds: config.payments.cardTimeoutSeconds,
      }),
    }),
  );
  const view = launched === 'closed' ? await recordedCardView(d, req.orderId, scope) : launched;
  return {
    paymentId: payment.id,
    orderId: req.orderId,
    method: 'card',
    status: view?.status ?? payment.status,
    amount: satangToThb(req.amount),
    currency: 'THB',
    chargeId: view?.charge?.id ?? null,
    authorizeUri: view?.charge?.authorizeUri ?? null,
    ...(view?.failureReason ? { failureReason: view.failureReason } : {}),
  };
}

/**
 * The payment's PromptPay payload: a tag-30 bill payment (Ref1 = the payment's reference, optional
 * Ref2) when PROMPTPAY_BILLER_ID is set, else tag 29 to PROMPTPAY_ID; merchant name and city
 * and the reference label (tag 62) in both.
 */
function qrPayload(d: PaymentServiceDeps, paymentId: string, amountSatang: number, ref2?: string) {
  const { config } = d;
  const { billerId, promptPayId, merchantName, merchantCity } = config.payments;
  const ref1 = paymentReference(paymentId);
  const tags = { merchantName, merchantCity, referenceLabel: ref1, amountSatang };
  if (billerId) return { ...billPaymentPayload({ billerId, ref1, ref2, ...tags }), billerId, ref1 };
  return { ...promptPayPayload({ id: promptPayId, ...tags }), billerId: undefined, ref1 };
}

/** POST /qrpayment: the PromptPay payload and a started (or the existing) QR payment workflow. */
async function createQrPayment(
  d: PaymentServiceDeps,
  req: QrPaymentRequest,
  key: ApiKeyInfo,
): Promise<QrPaymentCreated> {
  const { config, clock, checkout } = d;
  const { client, taskQueue } = d.temporal;
  if (req.returnUrl) checkout.checkReturnUrl(req.returnUrl);
  const ids = scopedIds(d, scopeOfKey(key, key.mode), req.orderId);
  const qr = qrPayload(d, ids.paymentId, req.amount, req.ref2);
  const row: NewPayment = {
    ...ids,
    orderId: req.orderId,
    userId: req.userId,
    method: 'qr',
    amountSatang: req.amount,
    mode: key.mode,
    customerId: req.customerId,
    apiKeyId: key.id,
    expiresAt: new Date(clock() + config.payments.qrExpirySeconds * 1000).toISOString(),
    details: {
      qr: { payload: qr.payload, crc: qr.crc, ref1: qr.ref1, ...(qr.billerId ? { billerId: qr.billerId } : {}) },
      ...(req.returnUrl ? { returnUrl: req.returnUrl } : {}),
      workflowType: PaymentWorkflowType.qrDelayed,
    },
  };
  const { payment } = await createOrFind(d, row, key, (p) =>
    startPaymentWorkflow(client, { taskQueue, ...qrStartOf(config, p, req.customerId, qr) }),
  );
  const expiresAt = payment.expiresAt ? payment.expiresAt.toISOString() : row.expiresAt!;
  const { payload, crc, ref1 } = storedQr(payment, qr);
  return {
    paymentId: payment.id,
    orderId: req.orderId,
    method: 'qr',
    status: payment.status,
    amount: satangToThb(req.amount),
    currency: 'THB',
    customerId: req.customerId,
    expiresAt,
    qr: { payload, crc, image: qrImage(payload), reference: ref1 },
    checkoutUrl: checkout.urlOf(payment.id, expiresAt),
  };
}

/** GET /checkstatus: the record, or the running workflow of a payment started a moment ago. */
async function paymentStatus(d: PaymentServiceDeps, orderId: string, key: ApiKeyInfo): Promise<PaymentStatusOut> {
  const { db, refunds: refundLedger } = d;
  const { client } = d.temporal;
  const notFound = () => new AppError(ErrorCode.NOT_FOUND, `No payment for order ${orderId}`, { orderId });
  const scope = scopeOfKey(key, key.mode);
  // the caller's own payment of the order; else a keyless card payment of that order in its mode
  const p =
    (await paymentByOrderId(db, orderId, scope)) ??
    (await paymentByOrderId(db, orderId, { accountId: null, mode: key.mode }));
  if (p) {
    if (p.mode !== key.mode || (p.apiKeyId !== null && p.apiKeyId !== key.id)) throw notFound();
    const history = await paymentHistory(db, p.id);
    const refunds = await refundLedger.ofPayment(p.id);
    return {
      paymentId: p.id,
      orderId: p.orderId,
      method: p.method,
      status: p.status,
      amount: satangToThb(p.amountSatang),
      currency: 'THB',
      mode: p.mode,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
      expiresAt: p.expiresAt ? p.expiresAt.toISOString() : null,
      providerRef: p.providerRef,
      history: history.map((e) => ({ status: e.status, at: e.at.toISOString(), reason: e.reason })),
      refundedAmount: satangToThb(p.refundedSatang),
      ...settlementView(p),
      refunds: refunds.map((r) => ({
        refundId: r.id,
        amount: satangToThb(r.amountSatang),
        status: r.status,
        reason: r.reason,
        failureReason: r.failureReason,
        createdAt: r.createdAt.toISOString(),
      })),
    };
  }
  // Started a moment ago, its first activity not run yet: the workflow is still pending.
  const desc = await withinDeadline(client, 5_000, async () => {
    try {
      const { workflowId } = scopedIds(d, scope, orderId);
      return await client.workflow.getHandle(workflowId).describe();
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return undefined;
      throw e;
    }
  });
  const memo = desc ? paymentMemoOf(desc.memo) : undefined;
  if (!desc || !memo?.paymentId || desc.status.name !== 'RUNNING') throw notFound();
  if (memo.mode !== key.mode || ((memo.apiKeyId ?? null) !== null && memo.apiKeyId !== key.id)) throw notFound();
  const at = desc.startTime.toISOString();
  return {
    paymentId: memo.paymentId,
    orderId,
    method: memo.method as string,
    status: 'pending',
    amount: satangToThb(memo.amountSatang ?? 0),
    currency: 'THB',
    mode: memo.mode,
    createdAt: at,
    updatedAt: at,
    expiresAt: memo.expiresAt ?? null,
    providerRef: null,
    history: [{ status: 'pending', at, reason: 'created' }],
    refundedAmount: 0,
    refunds: [],
  };
}

/** GET /payments: the key's own payments, newest first, one page. */
async function listOwnPayments(d: PaymentServiceDeps, q: PaymentListQuery, key: ApiKeyInfo): Promise<PaymentList> {
  const { db } = d;
  const page = await listPayments(db, {
    apiKeyId: key.id,
    mode: key.mode,
    status: q.status,
    method: q.method,
    createdGte: q.created_gte ? new Date(q.created_gte) : undefined,
    createdLt: q.created_lt ? new Date(q.created_lt) : undefined,
    limit: q.limit,
    startingAfter: q.starting_after,
  });
  return {
    payments: page.items.map((p) => ({
      paymentId: p.id,
      orderId: p.orderId,
      method: p.method,
      status: p.status,
      amount: satangToThb(p.amountSatang),
      refundedAmount: satangToThb(p.refundedSatang),
      ...settlementView(p),
      currency: 'THB' as const,
      mode: p.mode,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
    })),
    hasMore: page.hasMore,
    nextCursor: page.nextCursor,
  };
}

/** The payment service over its declared dependencies: each operation a function of its own above. */
export function createPaymentService(d: PaymentServiceDeps) {
  return {
    createCardPayment: (...a: Rest<typeof createCardPayment>) => createCardPayment(d, ...a),
    createQrPayment: (...a: Rest<typeof createQrPayment>) => createQrPayment(d, ...a),
    paymentStatus: (...a: Rest<typeof paymentStatus>) => paymentStatus(d, ...a),
    listPayments: (...a: Rest<typeof listOwnPayments>) => listOwnPayments(d, ...a),
  };
}
/** A function's parameters after its dependencies. */
type Rest<F> = F extends (d: PaymentServiceDeps, ...rest: infer A) => unknown ? A : never;

export type PaymentService = ReturnType<typeof createPaymentService>;
