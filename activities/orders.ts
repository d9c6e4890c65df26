/**
 * Order activities: the order workflow's only way to read and write the orders rows, to end a
 * card authorisation on the payments row (src/payments/repository: settleAuthorization), to
 * record a refund of the difference in the refunds ledger (src/refunds/repository) and to
 * capture or void at the card provider. A step runs only on a row the gateway recorded, proven by
 * its talat-order-v1 proof; the lapse runs only once the order's own lapses_at has passed.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';
import { ActivityFailureType } from '../src/domain/temporal';
import { finalizeKeys, topUpOrderId, type ApprovalWait, type OrderStatus, type OrderView } from '../src/orders';
import {
  adjustmentById,
  applyAdjustment,
  approvalById,
  settleApproval,
  finalizationById,
  finalizationOf,
  fixFinalAmount,
  orderByKey,
  orderByWorkflowId,
  recordFinalization,
  type Order,
  updateOrder,
  viewOf,
} from '../src/orders/repository';
import {
  paymentWorkflowIdOf,
  PaymentWorkflowType,
  type HoldOperationInput,
  type NewPayment,
  type Payment,
  type PaymentStatus,
  type QrPaymentInput,
} from '../src/payments';
import type { RecordedRefund, RefundRequestDecision } from '../src/refunds';
import { billPaymentPayload, paymentReference, promptPayPayload } from '../src/domain/promptpay';
import { scopedPaymentId } from '../src/ids';
import { recordTopUp, settleTopUp, topUpsOf, type TopUp } from '../src/orders/repository';
import { cardHoldsOf, recordCardHold, updateCardHold, type CardHold } from '../src/orders/repository';
import { adjustmentsOf } from '../src/orders/repository';
import { verifyOrderStepProof, withStartProof } from '../src/proofs';

export interface OrderStepCheck {
  kind: 'adjust' | 'finalize' | 'approval';
  stepId: string;
  orderId: string;
  proof: string;
}

/**
 * What the orders take of the payments and refunds slices (their repositories' functions), wired
 * by the composition root (activities/index.ts).
 */
export interface OrderLedgers {
  createPendingPayment(p: NewPayment): Promise<{ created: boolean; payment: Payment }>;
  paymentById(paymentId: string): Promise<Payment | undefined>;
  settleAuthorization(s: {
    paymentId: string;
    to: 'paid' | 'expired' | 'failed';
    capturedSatang: number;
    reason: string;
  }): Promise<PaymentStatus>;
  recordRefund(r: {
    paymentId: string;
    orderId: string;
    apiKeyId: string;
    idempotencyKey?: string;
    amountSatang?: number;
    reason?: string;
  }): Promise<RefundRequestDecision>;
}

export function createOrderActivities(deps: {
  db: Db;
  config: Config;
  logger: Logger;
  card: {
    holdOperation(kind: 'capture' | 'void', input: HoldOperationInput): Promise<{ id: string }>;
    chargeCardOnFile(input: {
      sourceChargeId: string;
      orderId: string;
      amountSatang: number;
      mode: HoldOperationInput['mode'];
      idempotencyKey: string;
    }): Promise<{ id: string; status: string }>;
  };
  ledgers: OrderLedgers;
}) {
  const { db, config, logger, card, ledgers } = deps;
  const callerWorkflowId = (): string | undefined => {
    try {
      return Context.current().info.workflowExecution?.workflowId;
    } catch {
      return undefined;
    }
  };
  /**
   * Only the order's own workflow acts on an order: the order whose stored workflow id is the
   * caller's (order ids are scoped, so the order id alone names no order), and of this order id.
   */
  const mine = async (orderId: string): Promise<Order | undefined> => {
    const caller = callerWorkflowId();
    const o = caller === undefined ? undefined : await orderByWorkflowId(db, caller);
    return o && o.orderId === orderId ? o : undefined;
  };
  const notMine = () => ApplicationFailure.nonRetryable('not the order of this workflow');
  const mineOrFail = async (orderId: string): Promise<Order> => {
    const o = await mine(orderId);
    if (!o) throw notMine();
    return o;
  };
  /** whether the row of this order key (orders.payment_id) is the calling workflow's order's */
  const ownKey = async (orderKey: string): Promise<boolean> => {
    const caller = callerWorkflowId();
    return caller !== undefined && (await orderByWorkflowId(db, caller))?.paymentId === orderKey;
  };

  /** The reasons of the applied adjustment lines that raised the order, in first-seen order. */
  const raisedBy = async (orderKey: string): Promise<string[]> => [
    ...new Set(
      (await adjustmentsOf(db, orderKey))
        .filter((a) => a.status === 'applied')
        .flatMap((a) => a.lines.filter((l) => l.amountSatang > 0).map((l) => l.reason)),
    ),
  ];

  return {
    /** A step's row exists for this order and its proof is the gateway's: else a forged update. */
    async checkOrderStep(s: OrderStepCheck): Promise<boolean> {
      if (typeof s.stepId !== 'string' || typeof s.proof !== 'string') return false;
      const row =
        s.kind === 'adjust'
          ? await adjustmentById(db, s.stepId)
          : s.kind === 'approval'
            ? await approvalById(db, s.stepId)
            : await finalizationById(db, s.stepId);
      const o = await mine(s.orderId);
      const ok =
        o !== undefined &&
        row?.orderId === s.orderId &&
        row.orderKey === o.paymentId &&
        verifyOrderStepProof(
          config.results.signingKey,
          { kind: s.kind, stepId: s.stepId, orderId: s.orderId },
          s.proof,
        );
      if (!ok)
        logger.error(
          { securityEvent: 'order_step_forged', orderId: s.orderId, stepId: s.stepId, kind: s.kind },
          'security: an order update without a valid proof; nothing changed',
        );
      return ok;
    },

    async orderView(orderId: string): Promise<OrderView | null> {
      const o = await mine(orderId);
      return o ? viewOf(o) : null;
    },

    /** The card was authorised: the order opens; its lapse is counted from now (the worker's clock). */
    async orderAuthorized(input: { orderId: string; authorizedSatang: number }): Promise<OrderView> {
      const o = await mineOrFail(input.orderId);
      const lapsesAt = new Date(Date.now() + config.orders.lapseSeconds * 1000).toISOString();
      return viewOf(
        await updateOrder(db, o.paymentId, {
          status: 'open',
          authorizedSatang: input.authorizedSatang,
          lapsesAt,
        }),
      );
    },

    async orderStatus(input: { orderId: string; status: OrderStatus; reason: string }): Promise<OrderView> {
      const o = await mineOrFail(input.orderId);
      return viewOf(await updateOrder(db, o.paymentId, { status: input.status, statusReason: input.reason }));
    },

    /** Applied: the costlier substitutions that wait for the customer, each with the seconds left to decide. */
    async applyOrderAdjustment(adjustmentId: string) {
      const row = await adjustmentById(db, adjustmentId);
      if (!row || !(await ownKey(row.orderKey))) throw notMine();
      const { adjustment, order, approvals } = await applyAdjustment(db, adjustmentId, {
        thresholdSatang: config.orders.approvalThresholdSatang,
        timeoutSeconds: config.orders.approvalTimeoutSeconds,
      });
      const waits: ApprovalWait[] = approvals
        .filter((a) => a.status === 'pending')
        .map((a) => ({
          approvalId: a.id,
          timeoutSeconds: Math.max(1, Math.ceil((a.expiresAt.getTime() - Date.now()) / 1000)),
        }));
      return {
        status: adjustment.status,
        rejection: adjustment.rejection,
        order: viewOf(order),
        ...(waits.length ? { approvals: waits } : {}),
      };
    },

    /** The customer's decision the gateway recorded on the approval row (proven first by checkOrderStep). */
    async decideOrderApproval(approvalId: string): Promise<OrderView> {
      const a = await approvalById(db, approvalId);
      if (!a || !(await ownKey(a.orderKey))) throw notMine();
      await settleApproval(db, approvalId);
      return viewOf((await orderByKey(db, a.orderKey))!);
    },

    /** Nobody decided in time: the recorded decision if one arrived, else the shop's default (timed_out). */
    async timeoutOrderApproval(approvalId: string): Promise<void> {
      const a = await approvalById(db, approvalId);
      if (!a || !(await ownKey(a.orderKey))) throw notMine();
      await settleApproval(db, approvalId, { fallback: config.orders.approvalDefault });
    },

    /** The finalisation's fixed amount and what is needed to settle it (the charge of a card order). */
    async fixOrderFinal(finalizeId: string, opts?: { aboveAuthorization?: boolean }) {
      const f = await finalizationById(db, finalizeId);
      if (!f) return null;
      const fixed = await fixFinalAmount(db, finalizeId, opts);
      const { finalSatang, order, exceeds } = fixed;
      const payment = await ledgers.paymentById(order.paymentId);
      const { awaitingApproval } = fixed;
      return {
        finalSatang,
        exceeds: exceeds ?? false,
        ...(awaitingApproval ? { awaitingApproval } : {}),
        outcome: f.outcome,
        order: viewOf(order),
        apiKeyId: order.apiKeyId,
        chargeId: payment?.providerRef ?? null,
        paymentStatus: payment?.status ?? null,
        mode: order.mode,
      };
    },

    /**
     * The lapse timer fired: the order's own finalisation row (recorded here, as the gateway
     * would), only when lapses_at has passed and the order is still open; else null.
     */
    async lapseFinalization(orderId: string): Promise<string | null> {
      const o = await mine(orderId);
      if (!o || o.status !== 'open' || !o.lapsesAt || o.lapsesAt.getTime() > Date.now()) return null;
      return (await recordFinalization(db, o)).id;
    },

    async orderFinalizationOf(orderId: string): Promise<string | null> {
      const o = await mine(orderId);
      return o ? ((await finalizationOf(db, o.paymentId))?.id ?? null) : null;
    },

    /** Capture (part of) or void the card authorisation at the provider, once per idempotency key. */
    async orderHold(kind: 'capture' | 'void', input: HoldOperationInput & { orderId: string }) {
      if (!(await mine(input.orderId)))
        throw ApplicationFailure.nonRetryable('not the order of this workflow', ActivityFailureType.CardRejected);
      return card.holdOperation(kind, input);
    },

    /** A card final above the authorisation: the new authorisation's row, before the provider is asked. */
    async recordOrderCardHold(input: { orderId: string; finalizeId: string; amountSatang: number }): Promise<CardHold> {
      const o = await mineOrFail(input.orderId);
      return recordCardHold(db, { ...input, orderKey: o.paymentId });
    },

    /**
     * The new authorisation of the difference at the provider, on the card on file of the order's
     * first charge (no card data here or in the workflow), once per finalisation (its own
     * Idempotency-Key); only for a recorded row of this order. A decline is CardRejected.
     */
    async orderReauthorize(input: {
      orderId: string;
      finalizeId: string;
      chargeId: string;
      mode: HoldOperationInput['mode'];
    }) {
      const o = await mine(input.orderId);
      const hold = o && (await cardHoldsOf(db, o.paymentId)).find((h) => h.finalizeId === input.finalizeId);
      if (!hold)
        throw ApplicationFailure.nonRetryable(
          'no recorded authorisation of this order',
          ActivityFailureType.CardRejected,
        );
      const charge = await card.chargeCardOnFile({
        sourceChargeId: input.chargeId,
        orderId: input.orderId,
        amountSatang: hold.amountSatang,
        mode: input.mode,
        idempotencyKey: finalizeKeys(input.finalizeId).reauth,
      });
      return { chargeId: charge.id, status: charge.status, amountSatang: hold.amountSatang };
    },

    /** The new authorisation's outcome (authorised, declined, captured, voided) on its row. */
    async orderCardHoldOutcome(input: {
      orderId: string;
      finalizeId: string;
      status: CardHold['status'];
      chargeId?: string;
      capturedSatang?: number;
      failureReason?: string;
    }): Promise<CardHold> {
      const o = await mineOrFail(input.orderId);
      const hold = (await cardHoldsOf(db, o.paymentId)).find((h) => h.finalizeId === input.finalizeId);
      if (!hold) throw notMine();
      return updateCardHold(db, input.finalizeId, {
        status: input.status,
        chargeId: input.chargeId,
        capturedSatang: input.capturedSatang,
        failureReason: input.failureReason,
      });
    },

    /** The card authorisation's end on the payments row and the order row (idempotent). */
    async settleCardOrder(input: {
      orderId: string;
      paymentId: string;
      finalizeId: string;
      to: 'paid' | 'expired' | 'failed';
      capturedSatang: number;
      reason: string;
      status: OrderStatus;
      /** logged as an error line with alert: order_settlement (the order is short) */
      alert?: string;
    }): Promise<OrderView> {
      const o = await mineOrFail(input.orderId);
      if (input.alert) logger.error({ alert: 'order_settlement', orderId: input.orderId }, input.alert);
      await ledgers.settleAuthorization({
        paymentId: input.paymentId,
        to: input.to,
        capturedSatang: input.capturedSatang,
        reason: input.reason,
      });
      return viewOf(
        await updateOrder(
          db,
          o.paymentId,
          {
            status: input.status,
            statusReason: input.reason,
            capturedSatang: input.capturedSatang,
            paidSatang: input.capturedSatang,
          },
          { finalizeId: input.finalizeId, outcome: input.to === 'paid' ? 'captured' : input.to },
        ),
      );
    },

    /**
     * A paid order finalised below what was paid: the difference as a refunds row (the ledger's
     * own checks; the finalisation's id as its Idempotency-Key, so a retry is the same refund).
     */
    async recordOrderRefund(input: {
      orderId: string;
      finalizeId: string;
      amountSatang: number;
    }): Promise<RecordedRefund> {
      const o = await mineOrFail(input.orderId);
      const r = await ledgers.recordRefund({
        paymentId: o.paymentId,
        orderId: o.orderId,
        apiKeyId: o.apiKeyId,
        idempotencyKey: `order-final-${input.finalizeId}`,
        amountSatang: input.amountSatang,
        reason: 'order finalised below the amount paid',
      });
      if (!r.ok) throw ApplicationFailure.nonRetryable(`the refund of the difference was refused: ${r.message}`);
      return r.refund;
    },

    async settleQrOrder(input: {
      orderId: string;
      finalizeId: string;
      refundedSatang: number;
      status: OrderStatus;
      reason: string;
      outcome: string;
      finalSatang?: number;
    }): Promise<OrderView> {
      const o = await mineOrFail(input.orderId);
      return viewOf(
        await updateOrder(
          db,
          o.paymentId,
          {
            status: input.status,
            statusReason: input.reason,
            refundedSatang: input.refundedSatang,
            finalSatang: input.finalSatang,
          },
          { finalizeId: input.finalizeId, outcome: input.outcome },
        ),
      );
    },

    /**
     * A QR order finalised above what was paid: the top-up's payments row (its own order id,
     * `<orderId>.topup` in the order's account and mode, a scoped payment id, and QR of the
     * difference) and its order_topups row, both idempotent; returns the QR payment workflow's
     * input and id (payments.workflow_id: the order workflow runs it as a child).
     */
    async prepareTopUp(input: { orderId: string; finalizeId: string; amountSatang: number }) {
      const o = await mineOrFail(input.orderId);
      const base = await ledgers.paymentById(o.paymentId);
      const topOrder = topUpOrderId(o.orderId);
      const { billerId, promptPayId, merchantName, merchantCity } = config.payments;
      const paymentId = scopedPaymentId(config.identity.secret, o.accountId, o.mode, topOrder);
      // the top-up's reference is its own payment's (unique), as for any new QR payment
      const ref1 = paymentReference(paymentId);
      const tags = { merchantName, merchantCity, referenceLabel: ref1, amountSatang: input.amountSatang };
      const qr = billerId
        ? billPaymentPayload({ billerId, ref1, ...tags })
        : promptPayPayload({ id: promptPayId, ...tags });
      const { payment } = await ledgers.createPendingPayment({
        paymentId,
        orderId: topOrder,
        userId: base?.userId ?? 'unknown',
        method: 'qr',
        amountSatang: input.amountSatang,
        mode: o.mode,
        workflowId: paymentWorkflowIdOf(paymentId),
        apiKeyId: o.apiKeyId,
        accountId: o.accountId,
        expiresAt: new Date(Date.now() + config.payments.qrExpirySeconds * 1000).toISOString(),
        details: {
          qr: { payload: qr.payload, crc: qr.crc, ref1 },
          topUpOf: o.orderId,
          // what the checkout page says the top-up is for: the reasons of the lines that cost more
          purpose: { kind: 'order_topup', orderId: o.orderId, reasons: await raisedBy(o.paymentId) },
        },
      });
      const topUp: TopUp = await recordTopUp(db, {
        paymentId: payment.id,
        orderId: o.orderId,
        orderKey: o.paymentId,
        topUpOrderId: topOrder,
        finalizeId: input.finalizeId,
        amountSatang: payment.amountSatang,
      });
      const stored = (payment.details as { qr?: { payload: string; crc: string } }).qr ?? qr;
      const start: QrPaymentInput = withStartProof(
        config.results.signingKey,
        PaymentWorkflowType.qr,
        payment.workflowId,
        {
          paymentId: payment.id,
          orderId: topOrder,
          userId: payment.userId,
          amountSatang: payment.amountSatang,
          mode: payment.mode,
          apiKeyId: o.apiKeyId,
          expiresAt: (payment.expiresAt ?? new Date()).toISOString(),
          qr: { payload: stored.payload, crc: stored.crc, promptPayId, ...(billerId ? { billerId, ref1 } : {}) },
        },
      );
      return { topUp, start, workflowId: payment.workflowId };
    },

    /** The top-up's payment ended: paid (the order's paid amount grows) or not. */
    async settleOrderTopUp(input: { orderId: string; paymentId: string; paid: boolean }): Promise<OrderView> {
      const o = await mineOrFail(input.orderId);
      if (!(await topUpsOf(db, o.paymentId)).some((t) => t.paymentId === input.paymentId)) throw notMine();
      await settleTopUp(db, input.paymentId, input.paid);
      return viewOf((await orderByKey(db, o.paymentId))!);
    },

    /** Neither capture nor release worked: the order needs a person (logged as an error, status attention). */
    async alertOrder(input: { orderId: string; message: string }): Promise<void> {
      logger.error({ alert: 'order_settlement', orderId: input.orderId }, input.message);
      const o = await mineOrFail(input.orderId);
      await updateOrder(db, o.paymentId, { status: 'attention', statusReason: input.message });
    },
  };
}

export type OrderActivities = ReturnType<typeof createOrderActivities>;
