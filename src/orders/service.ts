/**
 * The orders service: a card authorisation (POST /cardpayment capture=false), adjustments, the
 * finalisation and the order's view. Each step is recorded first (./repository), then sent to
 * the order's workflow with its proof; money moves only in the workflow, after the record. The
 * payments slice's rows are reached through the functions passed in (deps.payments).
 */
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { ApiKeyInfo } from '../domain/api-keys';
import { AppError, ErrorCode } from '../domain/errors';
import type { Mode } from '../domain/mode';
import { satangToThb } from '../domain/money';
import { scopedPaymentId } from '../ids';
import { signOrderStep, withStartProof } from '../proofs';
import type { TemporalDeps } from '../temporal/client';
import type { OrderScope, PaymentMethod, PaymentStatus } from '../payments';
import {
  orderWorkflowId,
  orderWorkflowIdOf,
  OrderWorkflowType,
  type ApprovalDecision,
  type OrderInput,
  type OrderStepOutcome,
} from './index';
import { approvalLinkOf, verifyApprovalToken } from './approval-token';
import {
  adjustmentsOf,
  approvalById,
  approvalsOf,
  cardHoldsOf,
  createOrder,
  requestApproval,
  type Approval,
  orderByKey,
  orderInScope,
  recordAdjustment,
  recordFinalization,
  topUpsOf,
  type Order,
} from './repository';
import type { AdjustmentRequest, OrderOut } from './schemas';
import { sendOrderStep, startCardOrder } from './workflow-client';

/** The payments row as the orders slice needs it (src/payments/repository's Payment). */
export interface OrderPayment {
  id: string;
  orderId: string;
  userId: string;
  status: PaymentStatus;
  method: PaymentMethod;
  mode: Mode;
  amountSatang: number;
  apiKeyId: string | null;
  workflowId: string;
  details?: Record<string, unknown>;
  expiresAt?: Date | null;
  /** the provider's charge id (a card payment) */
  providerRef?: string | null;
}

export interface OrderServiceDeps {
  config: Config;
  db: Db;
  temporal: TemporalDeps;
  /** the checkout slice: the hosted page's signed link of a top-up's QR payment */
  checkout?: { urlOf(paymentId: string, expiresAt: string): string };
  /** the payments slice's functions (src/payments/repository) */
  payments: {
    /** the order's payment in `scope` (order ids of payments are unique per account and mode) */
    paymentByOrderId(orderId: string, scope: OrderScope): Promise<OrderPayment | undefined>;
    paymentById(paymentId: string): Promise<OrderPayment | undefined>;
    createPendingPayment(row: {
      paymentId: string;
      orderId: string;
      userId: string;
      method: 'card';
      amountSatang: number;
      mode: Mode;
      workflowId: string;
      callbackUrl?: string;
      apiKeyId?: string;
      accountId?: string | null;
    }): Promise<{ created: boolean; payment: OrderPayment }>;
  };
}

export interface CardAuthorization {
  orderId: string;
  userId: string;
  /** satang: the estimate (the margin is added here) */
  amount: number;
  token: string;
  callback?: string;
}

const CHARGE_WAIT_MS = 10_000;

/** A key's order scope: its account (each key its own unless linked) and the mode. */
const scopeOf = (key: ApiKeyInfo, mode: Mode): OrderScope & { accountId: string } => ({
  accountId: key.accountId ?? key.id,
  mode,
});
/** Whether a payment's workflow is an order's (order-<paymentId>, or order-<orderId> before the scope). */
const isOrderWorkflow = (p: OrderPayment): boolean =>
  p.workflowId === orderWorkflowIdOf(p.id) || p.workflowId === orderWorkflowId(p.orderId);

export function createOrderService({ config, db, temporal, payments, checkout }: OrderServiceDeps) {
  const { client, taskQueue } = temporal;
  const notFound = (orderId: string) => new AppError(ErrorCode.NOT_FOUND, `No order ${orderId}`, { orderId });
  const inputOf = (o: Order): OrderInput => ({
    orderId: o.orderId,
    paymentId: o.paymentId,
    method: o.method,
    mode: o.mode,
    apiKeyId: o.apiKeyId,
    lapseSeconds: config.orders.lapseSeconds,
    lapseAction: config.orders.lapseAction,
    topUpExpired: config.orders.topUpExpired,
  });

  /** POST /cardpayment capture=false: the payments row (authorised amount), the order row, then the workflow. */
  async function authorizeCard(req: CardAuthorization, key: ApiKeyInfo, mode: Mode) {
    const held = Math.round((req.amount * (100 + config.orders.authMarginPercent)) / 100);
    // order ids are unique per account and mode (docs/concepts.md): the ids derive from the scope
    const scope = scopeOf(key, mode);
    const paymentId = scopedPaymentId(config.identity.secret, scope.accountId, mode, req.orderId);
    const { payment } = await payments.createPendingPayment({
      paymentId,
      orderId: req.orderId,
      userId: req.userId,
      method: 'card',
      amountSatang: held,
      mode,
      workflowId: orderWorkflowIdOf(paymentId),
      callbackUrl: req.callback,
      apiKeyId: key.id,
      accountId: scope.accountId,
    });
    if (payment.apiKeyId !== key.id)
      throw new AppError(
        ErrorCode.CONFLICT,
        `Order id ${req.orderId} is already used by a payment of another API key of your account in this mode: order ids are unique per account and mode (docs/concepts.md)`,
        { orderId: req.orderId },
      );
    const existing = { method: payment.method, amount: satangToThb(payment.amountSatang) };
    if (!isOrderWorkflow(payment))
      throw new AppError(
        ErrorCode.CONFLICT,
        `Order ${req.orderId} already has a ${payment.method} payment of ${existing.amount} THB in this mode that is not an authorisation (capture=false): use a new order id`,
        { orderId: req.orderId, existing },
      );
    if (payment.amountSatang !== held && payment.status === 'pending')
      throw new AppError(
        ErrorCode.CONFLICT,
        `Order ${req.orderId} already has an authorisation of ${existing.amount} THB (estimate plus margin) in this mode: send the same amount to get it, or use a new order id`,
        { orderId: req.orderId, existing },
      );
    const workflowId = payment.workflowId;
    const { order } = await createOrder(db, {
      orderId: req.orderId,
      paymentId: payment.id,
      method: 'card',
      mode,
      apiKeyId: key.id,
      accountId: scope.accountId,
      workflowId,
      status: 'authorizing',
      baseSatang: req.amount,
    });
    if (order.paymentId !== payment.id)
      throw new AppError(
        ErrorCode.CONFLICT,
        `Order ${req.orderId} already has an order of another payment in this account and mode: use a new order id`,
        { orderId: req.orderId },
      );
    const input: OrderInput = {
      ...inputOf(order),
      card: withStartProof(config.results.signingKey, OrderWorkflowType.order, workflowId, {
        paymentId: payment.id,
        orderId: req.orderId,
        userId: req.userId,
        amountSatang: held,
        mode,
        apiKeyId: key.id,
        callbackUrl: req.callback,
        token: req.token,
        returnUri: `${config.publicBaseUrl.replace(/\/+$/, '')}/callback`,
        timeoutSeconds: config.payments.cardTimeoutSeconds,
      }),
    };
    const view = await startCardOrder(client, { taskQueue, workflowId, input, waitMs: CHARGE_WAIT_MS });
    const live = view === 'closed' ? undefined : view;
    return {
      paymentId: payment.id,
      orderId: req.orderId,
      method: 'card' as const,
      status: live?.status ?? (await payments.paymentById(payment.id))?.status ?? payment.status,
      amount: satangToThb(held),
      currency: 'THB' as const,
      chargeId: live?.charge?.id ?? null,
      authorizeUri: live?.charge?.authorizeUri ?? null,
      ...(live?.failureReason ? { failureReason: live.failureReason } : {}),
    };
  }

  /**
   * The caller's order: the order of this order id in the key's account and mode, made with this
   * key (else 404); a paid QR payment of the caller becomes an order at its first step.
   */
  async function ownOrder(orderId: string, key: ApiKeyInfo, create: boolean): Promise<Order> {
    const scope = scopeOf(key, key.mode);
    const o = await orderInScope(db, orderId, scope);
    if (o) {
      if (o.apiKeyId !== key.id || o.mode !== key.mode) throw notFound(orderId);
      return o;
    }
    const p = await payments.paymentByOrderId(orderId, scope);
    if (!p || p.apiKeyId !== key.id || p.mode !== key.mode) throw notFound(orderId);
    if (!create) throw notFound(orderId);
    if (p.method !== 'qr' || p.status !== 'paid')
      throw new AppError(
        ErrorCode.CONFLICT,
        p.method === 'qr'
          ? `The QR payment is ${p.status}: an order is adjusted once it is paid`
          : 'This card payment was captured at once: authorise with capture=false to adjust the order',
        { orderId, status: p.status },
      );
    return (
      await createOrder(db, {
        orderId,
        paymentId: p.id,
        method: 'qr',
        mode: p.mode,
        apiKeyId: key.id,
        accountId: scope.accountId,
        workflowId: orderWorkflowIdOf(p.id),
        status: 'open',
        baseSatang: p.amountSatang,
        paidSatang: p.amountSatang,
      })
    ).order;
  }

  const closedOrder = (o: Order) =>
    new AppError(ErrorCode.CONFLICT, `The order is ${o.status}: it takes no more changes`, {
      orderId: o.orderId,
      status: o.status,
    });

  async function send(o: Order, kind: 'adjust' | 'finalize', stepId: string): Promise<OrderOut> {
    const proof = signOrderStep(config.results.signingKey, { kind, stepId, orderId: o.orderId });
    const out: OrderStepOutcome | 'closed' = await sendOrderStep(client, {
      taskQueue,
      kind,
      request: { stepId, proof },
      workflowId: o.workflowId,
      input: inputOf(o),
    });
    if (out === 'closed') throw closedOrder((await orderByKey(db, o.paymentId)) ?? o);
    if (!out.ok) throw new AppError(ErrorCode[out.code], out.message, out.details ?? { orderId: o.orderId });
    return viewOfOrder(o.paymentId);
  }

  async function adjust(orderId: string, req: AdjustmentRequest, key: ApiKeyInfo, idempotencyKey?: string) {
    const o = await ownOrder(orderId, key, true);
    if (o.status !== 'open' && o.status !== 'authorizing') throw closedOrder(o);
    const lines = req.lines.map((l) => ({ description: l.description, amountSatang: l.amount, reason: l.reason }));
    const rec = await recordAdjustment(db, { orderId, orderKey: o.paymentId, apiKeyId: key.id, lines, idempotencyKey });
    if (!rec.ok)
      throw new AppError(ErrorCode.IDEMPOTENCY_KEY_REUSED, 'This Idempotency-Key was used for another adjustment', {
        idempotencyKey,
        adjustmentId: rec.existingId,
      });
    if (rec.value.status !== 'pending') return viewOfOrder(o.paymentId);
    return send(o, 'adjust', rec.value.id);
  }

  async function finalize(orderId: string, key: ApiKeyInfo) {
    const o = await ownOrder(orderId, key, true);
    if (o.status === 'settled' || o.status === 'short' || o.status === 'awaiting_topup')
      return viewOfOrder(o.paymentId);
    if (o.status === 'failed' || o.status === 'attention') throw closedOrder(o);
    const f = await recordFinalization(db, o);
    return send(o, 'finalize', f.id);
  }

  /** The signed link of an approval page (valid a day past its deadline, to show the outcome). */
  const approvalUrl = (a: Approval): string =>
    approvalLinkOf(config.publicBaseUrl, config.identity.secret, a.id, a.expiresAt.getTime());

  /** The approval a link opens, or why none (a bad tag and an unknown approval look alike). */
  async function approvalOfLink(
    token: string,
    nowMs: number,
  ): Promise<{ ok: true; approval: Approval } | { ok: false; reason: 'invalid' | 'expired' }> {
    const check = verifyApprovalToken(config.identity.secret, token, nowMs);
    if (!check.ok) return check;
    const approval = await approvalById(db, check.approvalId);
    return approval ? { ok: true, approval } : { ok: false, reason: 'invalid' };
  }

  /**
   * The customer's decision from the link: recorded on the approval row first (the first decision
   * stands: a second one is the same), then sent to the order's workflow with its talat-order-v1
   * proof. Past the deadline nothing is recorded (`late`): the timeout applies the shop's default.
   */
  async function decideApproval(token: string, decision: ApprovalDecision, nowMs: number) {
    const found = await approvalOfLink(token, nowMs);
    if (!found.ok) return found;
    let a = found.approval;
    if (a.status !== 'pending') return { ok: true as const, approval: a, recorded: false };
    if (!a.requested && a.expiresAt.getTime() <= nowMs)
      return { ok: true as const, approval: a, recorded: false, late: true };
    a = await requestApproval(db, a.id, decision);
    const o = (await orderByKey(db, a.orderKey))!;
    const proof = signOrderStep(config.results.signingKey, { kind: 'approval', stepId: a.id, orderId: a.orderId });
    await sendOrderStep(client, {
      taskQueue,
      kind: 'approval',
      request: { stepId: a.id, proof },
      workflowId: o.workflowId,
      input: inputOf(o),
    });
    return { ok: true as const, approval: (await approvalById(db, a.id))!, recorded: true };
  }

  /** GET /orders/{orderId}: the caller's order (its account, mode and key), else 404. */
  async function orderView(orderId: string, key: ApiKeyInfo): Promise<OrderOut> {
    return viewOfOrder((await ownOrder(orderId, key, false)).paymentId);
  }

  /** The order of this key (its payment id) as the API shows it. */
  async function viewOfOrder(orderKey: string): Promise<OrderOut> {
    const o = (await orderByKey(db, orderKey))!;
    const adjustments = await adjustmentsOf(db, orderKey);
    const approvals = new Map((await approvalsOf(db, orderKey)).map((a) => [`${a.adjustmentId}#${a.lineIndex}`, a]));
    const approvalOut = (a: Approval | undefined) =>
      a
        ? {
            approval: {
              approvalId: a.id,
              status: a.status,
              url: approvalUrl(a),
              expiresAt: a.expiresAt.toISOString(),
              decidedAt: a.decidedAt ? a.decidedAt.toISOString() : null,
            },
          }
        : {};
    const topUps = await Promise.all(
      (await topUpsOf(db, orderKey)).map(async (t) => {
        const p = await payments.paymentById(t.paymentId);
        const qr = (p?.details as { qr?: { payload?: string } } | undefined)?.qr;
        return {
          paymentId: t.paymentId,
          orderId: t.topUpOrderId,
          amount: satangToThb(t.amountSatang),
          status: t.status,
          qrPayload: qr?.payload ?? null,
          expiresAt: p?.expiresAt ? p.expiresAt.toISOString() : null,
          checkoutUrl: p?.expiresAt && checkout ? checkout.urlOf(t.paymentId, p.expiresAt.toISOString()) : null,
        };
      }),
    );
    const authorizations = o.method === 'card' ? await authorizationsOf(o) : [];
    return {
      orderId: o.orderId,
      paymentId: o.paymentId,
      method: o.method,
      status: o.status,
      statusReason: o.statusReason,
      currency: 'THB',
      estimateAmount: satangToThb(o.baseSatang),
      authorizedAmount: satangToThb(o.authorizedSatang),
      capturedAmount: satangToThb(o.capturedSatang),
      paidAmount: satangToThb(o.paidSatang),
      refundedAmount: satangToThb(o.refundedSatang),
      finalAmount: o.finalSatang === null ? null : satangToThb(o.finalSatang),
      lapsesAt: o.lapsesAt ? o.lapsesAt.toISOString() : null,
      adjustments: adjustments.map((a) => ({
        adjustmentId: a.id,
        status: a.status,
        amount: satangToThb(a.totalSatang),
        lines: a.lines.map((l, i) => ({
          description: l.description,
          amount: satangToThb(l.amountSatang),
          reason: l.reason,
          ...approvalOut(approvals.get(`${a.id}#${i}`)),
        })),
        rejection: a.rejection,
        createdAt: a.createdAt.toISOString(),
      })),
      topUps,
      authorizations,
    };
  }

  /** A card order's authorisations: the first (estimate + margin), and a new one of a final above it. */
  async function authorizationsOf(o: Order): Promise<OrderOut['authorizations']> {
    const holds = await cardHoldsOf(db, o.paymentId);
    const p = await payments.paymentById(o.paymentId);
    const second = holds.reduce((sum, h) => sum + h.capturedSatang, 0);
    const firstStatus: Record<string, OrderOut['authorizations'][number]['status']> = {
      pending: 'pending',
      authorized: 'authorized',
      paid: 'captured',
      refunded: 'captured',
      expired: 'voided',
      failed: 'failed',
    };
    return [
      {
        chargeId: p?.providerRef ?? null,
        purpose: 'estimate' as const,
        amount: satangToThb(o.authorizedSatang),
        capturedAmount: satangToThb(o.capturedSatang - second),
        status:
          o.status === 'failed' && o.capturedSatang === 0
            ? 'failed'
            : (firstStatus[p?.status ?? 'pending'] ?? 'pending'),
        failureReason: null,
      },
      ...holds.map((h) => ({
        chargeId: h.chargeId,
        purpose: 'difference' as const,
        amount: satangToThb(h.amountSatang),
        capturedAmount: satangToThb(h.capturedSatang),
        status: h.status,
        failureReason: h.failureReason,
      })),
    ];
  }

  return { authorizeCard, adjust, finalize, orderView, approvalOfLink, decideApproval };
}

export type OrderService = ReturnType<typeof createOrderService>;
