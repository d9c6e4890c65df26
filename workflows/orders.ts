/**
 * orderSettlementWorkflow (id order-<paymentId>; order-<orderId> for orders made before order ids
 * were scoped): an order settled on what was picked. A card order is authorised here first (the
 * payment machine, success = `authorized`); then updates `adjust` and `finalize` are applied one
 * at a time, each on a row the gateway recorded and proved (activities/orders.ts). Finalising
 * captures the final amount and releases the rest (card) or refunds the difference through the
 * refunds ledger (QR); a card final above the authorisation first gets a new authorisation of the
 * difference on the card on file. A durable timer captures or releases an authorisation nobody
 * finalised before it lapses, and alerts when neither works. A costlier substitution waits for the
 * customer (update `decideApproval`) or its timer (order-approvals-v1).
 */
import {
  allHandlersFinished,
  condition,
  executeChild,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PROVIDER_CALL, providerFailureReason } from './provider-call';
import { ActivityFailureType } from '../src/domain/temporal';
import {
  chargeUpdate,
  paymentWorkflowId,
  PaymentWorkflowType,
  type QrPaymentInput,
  type QrPaymentWorkflow,
} from '../src/payments';
import { OrderIdKey } from '../src/domain/search-attributes';
import { type OrderEvent, type OrderEventType, type PaymentEventStatus } from '../src/webhooks';
import {
  adjustUpdate,
  decideApprovalUpdate,
  finalizeKeys,
  finalizeUpdate,
  ORDER_APPROVALS_PATCH,
  OrderPatch,
  type ApprovalWait,
  orderQuery,
  type OrderInput,
  type OrderStatus,
  type OrderStepOutcome,
  type OrderView,
} from '../src/orders';
import { paymentMachine } from './payments';
import { v2Patches } from './patches';
import { emitPaymentStatusUpdated, retryWebhookDeliveries } from './webhooks';

/** The order's Postgres steps as local activities (docs/orders.md says why), retried with back-off. */
const db = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
const provider = proxyActivities<Activities>(PROVIDER_CALL);
const { chargeCard } = proxyLocalActivities<Activities>(PROVIDER_CALL);

const refusal = (e: unknown): string =>
  providerFailureReason(
    e,
    [ActivityFailureType.CardRejected, ActivityFailureType.RefundRejected, ActivityFailureType.ProviderNotConfigured],
    (f) => `provider refused: ${f.message}`,
    'provider unavailable',
  );

type Finalized = NonNullable<Awaited<ReturnType<Activities['fixOrderFinal']>>>;

export async function orderSettlementWorkflow(input: OrderInput): Promise<OrderView | { status: OrderStatus }> {
  const { orderId } = input;
  let status: OrderStatus = input.card ? 'authorizing' : 'open';
  let last: OrderView | undefined;
  /** a top-up due (set by a QR finalisation above what was paid; the main loop runs it) */
  let topUp: { finalizeId: string; start: QrPaymentInput; paidSatang: number; workflowId?: string } | undefined;
  let issued = 0;
  let serving = 0;
  /** one step at a time, in arrival order */
  async function serial<T>(fn: () => Promise<T>): Promise<T> {
    const ticket = issued++;
    await condition(() => serving === ticket);
    try {
      return await fn();
    } finally {
      serving++;
    }
  }
  const conflict = (message: string): OrderStepOutcome => ({
    ok: false,
    code: 'CONFLICT',
    message,
    details: { orderId, status },
  });
  const notFound: OrderStepOutcome = { ok: false, code: 'NOT_FOUND', message: `No order ${orderId}` };
  const statusNow = (): OrderStatus => status;
  const done = (s: OrderStatus) => s === 'settled' || s === 'short' || s === 'failed' || s === 'attention';

  const webhook = (paymentStatus: PaymentEventStatus, amountSatang: number, refundId?: string) =>
    emitPaymentStatusUpdated(
      {
        paymentId: input.paymentId,
        orderId,
        status: paymentStatus,
        amountSatang,
        timestamp: new Date().toISOString(),
        mode: input.mode,
        apiKeyId: input.apiKeyId,
        ...(refundId ? { refundId } : {}),
      },
      v2Patches,
    );

  /** order-webhooks-v1: the order's events, each sent after the ones before it (awaited at the end) */
  let outbox: Promise<void> = Promise.resolve();
  const orderEvent = (type: OrderEventType, ref?: string): void => {
    if (!patched(OrderPatch.webhooks)) return;
    const event: OrderEvent = {
      kind: 'order',
      type,
      orderId,
      paymentId: input.paymentId,
      ...(ref ? { ref } : {}),
      timestamp: new Date().toISOString(),
      mode: input.mode,
      apiKeyId: input.apiKeyId,
    };
    // first attempts here (the per-endpoint bulkhead), retries in a webhookRetryWorkflow child
    outbox = outbox.then(async () => {
      const { retry, deferred, firstAttemptAt } = await db.firstWebhookAttempts(event);
      try {
        await retryWebhookDeliveries(event, retry, firstAttemptAt, deferred, v2Patches);
      } catch (e) {
        if ((e as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw e;
      }
    });
  };

  const wellFormed = (r: unknown): r is { stepId: string; proof: string } =>
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { stepId?: unknown }).stepId === 'string' &&
    typeof (r as { proof?: unknown }).proof === 'string' &&
    (r as { stepId: string }).stepId.length <= 64;
  /** costlier substitutions waiting for the customer (order-approvals-v1) and those decided */
  let waiting = 0;
  const decided = new Set<string>();
  const tracked = new Set<string>();
  /** A durable wait for one approval: decided through `decideApproval`, or at its timeout the shop's default. */
  function awaitApproval(w: ApprovalWait): void {
    if (tracked.has(w.approvalId)) return; // an adjustment applied again (a copied update): one wait each
    tracked.add(w.approvalId);
    waiting++;
    void (async () => {
      try {
        const inTime = await condition(() => decided.has(w.approvalId), `${w.timeoutSeconds} seconds`);
        if (!inTime) await serial(() => db.timeoutOrderApproval(w.approvalId));
      } finally {
        waiting--;
      }
    })();
  }

  setHandler(orderQuery, () => ({ status }));
  setHandler(adjustUpdate, (req) =>
    serial(async () => {
      if (!wellFormed(req)) return notFound;
      const proven = await db.checkOrderStep({ kind: 'adjust', stepId: req.stepId, orderId, proof: req.proof });
      if (!proven) return notFound;
      const r = await db.applyOrderAdjustment(req.stepId);
      if (r.status === 'rejected') return conflict(`The order is ${r.order.status}: it takes no more adjustments`);
      orderEvent('order.adjusted', req.stepId);
      const fresh = r.approvals?.filter((w) => !tracked.has(w.approvalId)) ?? [];
      if (fresh.length && patched(ORDER_APPROVALS_PATCH)) {
        for (const w of fresh) awaitApproval(w);
        // its links are signed when the deliveries are planned (activity side), never in this history
        orderEvent('order.approval_requested', req.stepId);
      }
      return { ok: true, order: r.order };
    }),
  );
  setHandler(decideApprovalUpdate, (req) =>
    serial(async () => {
      if (!wellFormed(req)) return notFound;
      const proven = await db.checkOrderStep({ kind: 'approval', stepId: req.stepId, orderId, proof: req.proof });
      if (!proven) return notFound;
      const order = await db.decideOrderApproval(req.stepId);
      decided.add(req.stepId);
      return { ok: true, order };
    }),
  );
  setHandler(finalizeUpdate, (req) =>
    serial(async () => {
      if (!wellFormed(req)) return notFound;
      const proven = await db.checkOrderStep({ kind: 'finalize', stepId: req.stepId, orderId, proof: req.proof });
      if (!proven) return notFound;
      if (status === 'authorizing') return conflict('The card is still being authorised');
      return finalize(req.stepId, false);
    }),
  );

  async function finalize(finalizeId: string, release: boolean): Promise<OrderStepOutcome> {
    if (status === 'failed') return conflict("The order's payment failed: nothing to settle");
    if (status === 'awaiting_topup') {
      const view = await db.orderView(orderId);
      return view ? { ok: true, order: view } : notFound;
    }
    // order-card-reauth-v1: a card final above the authorisation is fixed (a new authorisation follows)
    const above = input.method === 'card' && patched(OrderPatch.cardReauth);
    const f = above
      ? await db.fixOrderFinal(finalizeId, { aboveAuthorization: true })
      : await db.fixOrderFinal(finalizeId);
    if (!f) return notFound;
    if (f.exceeds)
      return conflict(
        input.method === 'card'
          ? `The final amount ${f.finalSatang / 100} THB is above the authorised ${f.order.authorizedSatang / 100} THB`
          : `The final amount ${f.finalSatang / 100} THB is above the ${f.order.paidSatang / 100} THB paid`,
      );
    if (f.awaitingApproval)
      return conflict("A substitution waits for the customer's approval: finalize once it is decided or timed out");
    if (f.outcome) return { ok: true, order: f.order };
    status = 'finalizing';
    const out = input.method === 'card' ? await settleCard(finalizeId, f, release) : await settleQr(finalizeId, f);
    last = out.ok ? out.order : last;
    return out;
  }

  /** Capture the final amount (the provider releases the rest), or void the whole hold. */
  async function settleCard(finalizeId: string, f: Finalized, release: boolean): Promise<OrderStepOutcome> {
    if (!release && f.finalSatang > f.order.authorizedSatang) return settleCardAbove(finalizeId, f);
    const final = release ? 0 : f.finalSatang;
    const hold = { orderId, chargeId: f.chargeId ?? '', mode: f.mode };
    if (final > 0) {
      try {
        await provider.orderHold('capture', { ...hold, idempotencyKey: `${finalizeId}.capture`, amountSatang: final });
      } catch (e) {
        return releaseCard(finalizeId, f, refusal(e));
      }
      return cardSettled(finalizeId, f, 'paid', final);
    }
    return releaseCard(finalizeId, f);
  }

  /** Void the whole first authorisation (nothing captured, or its capture refused). */
  async function releaseCard(finalizeId: string, f: Finalized, captureFailure?: string): Promise<OrderStepOutcome> {
    try {
      const hold = { orderId, chargeId: f.chargeId ?? '', mode: f.mode };
      await provider.orderHold('void', { ...hold, idempotencyKey: `${finalizeId}.void` });
    } catch (e) {
      const message = `order ${orderId}: ${captureFailure ? `the capture failed (${captureFailure}) and ` : ''}the release failed (${refusal(e)})`;
      await db.alertOrder({ orderId, message });
      status = 'attention';
      return conflict(message);
    }
    return cardSettled(finalizeId, f, captureFailure ? 'failed' : 'expired', 0, captureFailure);
  }

  async function cardSettled(
    finalizeId: string,
    f: Finalized,
    to: 'paid' | 'expired' | 'failed',
    captured: number,
    captureFailure?: string,
  ): Promise<OrderStepOutcome> {
    const reason =
      captured > 0
        ? `captured ${captured / 100} THB of ${f.order.authorizedSatang / 100} THB authorised; the rest released`
        : captureFailure
          ? `the capture failed (${captureFailure}); the authorisation released`
          : 'the authorisation released';
    const view = await db.settleCardOrder({
      orderId,
      paymentId: input.paymentId,
      finalizeId,
      to,
      capturedSatang: captured,
      reason,
      status: captureFailure ? 'failed' : 'settled',
    });
    status = view.status;
    // the event's amount is the payments row's: the captured amount, or the authorised one released
    await webhook(to, captured > 0 ? captured : f.order.authorizedSatang);
    if (captured < f.order.authorizedSatang) orderEvent('order.released');
    return { ok: true, order: view };
  }

  /**
   * A card final above the authorisation: the new authorisation of the difference (its row
   * first, then the provider, on the card on file), then the first authorisation captured in
   * full and the new one. The difference declined (or its capture refused): the first is still
   * captured in full and the order ends `short`, with an alert. The first's capture refused:
   * both are released and the order fails, as below.
   */
  async function settleCardAbove(finalizeId: string, f: Finalized): Promise<OrderStepOutcome> {
    const keys = finalizeKeys(finalizeId);
    const authorized = f.order.authorizedSatang;
    const diff = f.finalSatang - authorized;
    const first = { orderId, chargeId: f.chargeId ?? '', mode: f.mode };
    const hold = await db.recordOrderCardHold({ orderId, finalizeId, amountSatang: diff });
    let second = hold.chargeId ?? undefined;
    let shortBecause: string | undefined;
    if (hold.status === 'declined') shortBecause = hold.failureReason ?? 'declined';
    else if (!second)
      try {
        second = (await provider.orderReauthorize({ orderId, finalizeId, chargeId: first.chargeId, mode: f.mode }))
          .chargeId;
        await db.orderCardHoldOutcome({ orderId, finalizeId, status: 'authorized', chargeId: second });
      } catch (e) {
        shortBecause = `the new authorisation of ${diff / 100} THB was declined (${refusal(e)})`;
        await db.orderCardHoldOutcome({ orderId, finalizeId, status: 'declined', failureReason: shortBecause });
      }
    try {
      await provider.orderHold('capture', { ...first, idempotencyKey: keys.capture, amountSatang: authorized });
    } catch (e) {
      if (second) await releaseSecond(finalizeId, second, f.mode);
      return releaseCard(finalizeId, f, refusal(e));
    }
    let extra = 0;
    if (second)
      try {
        await provider.orderHold('capture', {
          orderId,
          chargeId: second,
          mode: f.mode,
          idempotencyKey: keys.reauthCapture,
          amountSatang: diff,
        });
        extra = diff;
        await db.orderCardHoldOutcome({ orderId, finalizeId, status: 'captured', capturedSatang: diff });
      } catch (e) {
        shortBecause = `the capture of the ${diff / 100} THB difference failed (${refusal(e)})`;
        await releaseSecond(finalizeId, second, f.mode);
      }
    const captured = authorized + extra;
    const reason = shortBecause
      ? `captured the ${authorized / 100} THB authorised; ${shortBecause}: ${diff / 100} THB short of the final ${f.finalSatang / 100} THB`
      : `captured ${authorized / 100} THB authorised and ${diff / 100} THB on a new authorisation of the difference`;
    const view = await db.settleCardOrder({
      orderId,
      paymentId: input.paymentId,
      finalizeId,
      to: 'paid',
      capturedSatang: captured,
      reason,
      status: shortBecause ? 'short' : 'settled',
      ...(shortBecause ? { alert: `order ${orderId}: ${reason}` } : {}),
    });
    status = view.status;
    await webhook('paid', captured);
    return { ok: true, order: view };
  }

  /** Void the new authorisation (the order takes only the first); a refused void is left on its row. */
  async function releaseSecond(finalizeId: string, chargeId: string, mode: Finalized['mode']): Promise<void> {
    try {
      await provider.orderHold('void', {
        orderId,
        chargeId,
        mode,
        idempotencyKey: finalizeKeys(finalizeId).reauthVoid,
      });
      await db.orderCardHoldOutcome({ orderId, finalizeId, status: 'voided' });
    } catch (e) {
      await db.orderCardHoldOutcome({
        orderId,
        finalizeId,
        status: 'authorized',
        failureReason: `void refused (${refusal(e)})`,
      });
    }
  }

  /** A refund of `amountSatang` of the order's payment through the refunds ledger: its row first, then the bank. */
  async function refund(finalizeId: string, amountSatang: number): Promise<{ refunded: number } | OrderStepOutcome> {
    const r = await db.recordOrderRefund({ orderId, finalizeId, amountSatang });
    if (r.status !== 'pending') return { refunded: r.status === 'succeeded' ? r.amountSatang : 0 };
    try {
      const { providerRef } = await provider.requestProviderRefund({
        refundId: r.refundId,
        paymentId: input.paymentId,
        orderId,
        method: 'qr',
        mode: input.mode,
        providerRef: null,
        amountSatang: r.amountSatang,
        reason: r.reason ?? undefined,
      });
      const after = await db.settleRefund({
        refundId: r.refundId,
        paymentId: input.paymentId,
        status: 'succeeded',
        providerRef,
      });
      await webhook(after.status === 'refunded' ? 'refunded' : 'partially_refunded', r.amountSatang, r.refundId);
      return { refunded: r.amountSatang };
    } catch (e) {
      const failureReason = refusal(e);
      await db.settleRefund({ refundId: r.refundId, paymentId: input.paymentId, status: 'failed', failureReason });
      const message = `order ${orderId}: the refund of ${amountSatang / 100} THB failed (${failureReason})`;
      await db.alertOrder({ orderId, message });
      status = 'attention';
      return conflict(message);
    }
  }

  /** QR: below what was paid, the difference is refunded; above, a top-up QR payment of it is due. */
  async function settleQr(finalizeId: string, f: Finalized): Promise<OrderStepOutcome> {
    const diff = f.order.paidSatang - f.finalSatang;
    if (diff < 0) {
      const { start, workflowId } = await db.prepareTopUp({ orderId, finalizeId, amountSatang: -diff });
      status = 'awaiting_topup';
      topUp = { finalizeId, start, paidSatang: f.order.paidSatang, workflowId };
      orderEvent('order.topup_pending', start.paymentId);
      const view = await db.orderView(orderId);
      return view ? { ok: true, order: view } : notFound;
    }
    let refunded = 0;
    if (diff > 0) {
      const r = await refund(finalizeId, diff);
      if ('ok' in r) return r;
      refunded = r.refunded;
    }
    const view = await db.settleQrOrder({
      orderId,
      finalizeId,
      refundedSatang: refunded,
      status: 'settled',
      reason:
        refunded > 0 ? `refunded ${refunded / 100} THB of ${f.order.paidSatang / 100} THB paid` : 'settled as paid',
      outcome: refunded > 0 ? 'refunded' : 'paid',
    });
    status = view.status;
    return { ok: true, order: view };
  }

  /**
   * The top-up's QR payment, run as a child (its payments row's workflow id, payment-<paymentId>;
   * a history recorded before the activity answered one keeps payment-<orderId>.topup); then the
   * order settles as the shop chose.
   */
  async function runTopUp(t: NonNullable<typeof topUp>): Promise<void> {
    const out = await executeChild<QrPaymentWorkflow>(PaymentWorkflowType.qr, {
      workflowId: t.workflowId ?? paymentWorkflowId(t.start.orderId),
      args: [t.start],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [{ key: OrderIdKey, value: t.start.orderId }],
    });
    await serial(async () => {
      const paid = out.status === 'paid';
      await db.settleOrderTopUp({ orderId, paymentId: t.start.paymentId, paid });
      orderEvent(paid ? 'order.topup_paid' : 'order.topup_expired', t.start.paymentId);
      let view: OrderView;
      if (paid)
        view = await db.settleQrOrder({
          orderId,
          finalizeId: t.finalizeId,
          refundedSatang: 0,
          status: 'settled',
          reason: `paid ${t.paidSatang / 100} THB and a top-up of ${t.start.amountSatang / 100} THB`,
          outcome: 'topped_up',
        });
      else if (input.topUpExpired === 'cancel') {
        const r = await refund(t.finalizeId, t.paidSatang);
        if ('ok' in r) return;
        view = await db.settleQrOrder({
          orderId,
          finalizeId: t.finalizeId,
          refundedSatang: r.refunded,
          status: 'failed',
          reason: `the top-up was not paid (${out.status}): the order was cancelled and ${r.refunded / 100} THB refunded`,
          outcome: 'cancelled',
        });
      } else
        view = await db.settleQrOrder({
          orderId,
          finalizeId: t.finalizeId,
          refundedSatang: 0,
          status: 'settled',
          reason: `the top-up was not paid (${out.status}): settled at the ${t.paidSatang / 100} THB paid`,
          outcome: 'topup_unpaid',
          finalSatang: t.paidSatang,
        });
      status = view.status;
      last = view;
    });
  }

  if (input.card) {
    const m = paymentMachine(input.card, 'card', v2Patches, 'authorized');
    let chargeStepDone = false;
    setHandler(chargeUpdate, async () => {
      await condition(() => chargeStepDone || m.view.status !== 'pending');
      return m.view;
    });
    try {
      const c = input.card;
      const charge = await chargeCard({
        paymentId: c.paymentId,
        orderId,
        amountSatang: c.amountSatang,
        token: c.token,
        mode: c.mode,
        returnUri: c.returnUri,
        capture: false,
        apiKeyId: c.apiKeyId,
        proof: c.proof,
        // the whole start input: its talat-start-v1 proof is checked in this same activity
        start: c,
      });
      m.view.charge = charge;
      if (charge.status === 'successful') await m.settle('authorized', 'card provider: authorised');
      else if (charge.status === 'failed') await m.settle('failed', 'card provider: authorisation failed');
    } catch (e) {
      await m.settle('failed', `authorisation refused (${refusal(e)})`);
    }
    chargeStepDone = true;
    if (m.view.status === 'pending')
      await m.awaitResult(
        Math.max(1, input.card.timeoutSeconds) * 1000,
        'no authorisation from the card provider in time',
      );
    if (m.view.status !== 'authorized') {
      status = 'failed';
      await db.orderStatus({ orderId, status, reason: m.view.failureReason ?? `the payment is ${m.view.status}` });
      orderEvent('order.failed');
      await outbox;
      return { status };
    }
    last = await db.orderAuthorized({ orderId, authorizedSatang: input.card.amountSatang });
    status = 'open';
    await webhook('authorized', input.card.amountSatang);
  }

  // until finalised: the lapse timer (card) or an idle end (QR: a later update starts a new run)
  for (;;) {
    const ended = await condition(() => done(status) || topUp !== undefined, `${input.lapseSeconds} seconds`);
    if (topUp) {
      const t = topUp;
      topUp = undefined;
      await runTopUp(t);
      continue;
    }
    if (ended) break;
    if (statusNow() === 'awaiting_topup') continue;
    if (input.method !== 'card') {
      if (serving === issued && status === 'open' && waiting === 0) break;
      continue;
    }
    const lapsed = await serial(async () => {
      if (status !== 'open') return true;
      const finalizeId = await db.lapseFinalization(orderId);
      if (!finalizeId) return false;
      const out = await finalize(finalizeId, input.lapseAction === 'release');
      if (!out.ok && status === 'open') {
        // the adjusted basket is above the authorisation: a person decides
        await db.alertOrder({ orderId, message: `order ${orderId}: the authorisation lapses; ${out.message}` });
        status = 'attention';
      }
      return true;
    });
    if (lapsed && done(status)) break;
  }
  await condition(() => serving === issued && allHandlersFinished());
  if (done(status)) orderEvent(`order.${status}` as OrderEventType);
  await outbox;
  return last ?? { status };
}
