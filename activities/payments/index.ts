/**
 * Payment record activities: the workflow's only way to write the payments tables (through
 * src/payments/repository.ts). Each is idempotent, so Temporal may retry it safely.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../../src/db/knex';
import type { LeadingCtes } from '../../src/db/prepared';
import { verifyResultProof } from '../../src/result-proof';
import { verifyStartProof } from '../../src/proofs';
import type { PaymentStatusEvent } from '../../src/webhooks';
import { canTransition, isOwnPaymentWorkflow, isTerminal, type PaymentStatus } from '../../src/payments';
import type { PaymentRedriveInput } from '../../src/payments';
import { ActivityFailureType } from '../../src/domain/temporal';
import type { PaymentResult } from '../../src/payments';
import type { Logger } from '../../src/logger';
import {
  applyTransition,
  applyTransitionIfAgrees,
  countTransition,
  transitionCtes,
  attachProviderRef,
  insertPayment,
  type NewPayment,
  type StatusChange,
} from '../../src/payments/repository';
import type { Charge, CreateChargeInput } from './card-provider';
import { logForgedResult } from './late-results';
import { UNDELIVERED_RESULT_SQL } from '../../src/callbacks';

export type RecordPaymentInput = NewPayment;
export type { StatusChange };

export interface SettleInput {
  change: StatusChange;
  /** the row, in case the gateway's insert was undone after a start it believed failed */
  payment: NewPayment;
  /** a terminal transition's payment.status.updated: planned and attempted once here */
  event?: PaymentStatusEvent;
  /**
   * result-proof-v1: the signalled result this transition comes from; its proof must verify
   * before anything is written (a transition the workflow decided itself, such as the expiry or
   * the card charge's answer, has none)
   */
  result?: PaymentResult;
  /** the gateway's proof of the workflow's start (PaymentInput.proof) */
  proof?: string;
  /** the workflow's whole start input, with its talat-start-v1 proof (issue 38) */
  start?: object;
}

export interface SettleResult {
  /** deliveries whose first attempt failed: the workflow retries them in a child */
  retry: string[];
  /** bulkhead-v1: deliveries not attempted here (their endpoint is failing or busy): the child makes their first attempt */
  deferred?: string[];
  /** ms since the epoch: when the first attempts began (the retries are spaced from it) */
  firstAttemptAt?: number;
  /** result-proof-v1: the result's proof did not verify; nothing was written */
  rejected?: boolean;
  /**
   * late-result-v1: the row had already been settled otherwise (by an earlier attempt of a
   * workflow task that then failed, e.g. when a signal came during the settle step): its status.
   * Nothing was written or sent.
   */
  current?: PaymentStatus;
}

export function createPaymentActivities({
  db,
  webhooks,
  card,
  signingKey,
  logger,
}: {
  db: Db;
  /** RESULT_SIGNING_KEY: the key of the result proofs */
  signingKey: string;
  logger: Logger;
  webhooks: {
    /** with `after`: the deliveries planned only when those CTEs matched, in their statement (`guard`) */
    firstWebhookAttempts(
      event: PaymentStatusEvent,
      after?: LeadingCtes,
    ): Promise<SettleResult & { guard?: string | null }>;
  };
  card: { createCardCharge(input: CreateChargeInput): Promise<Charge> };
}) {
  /** The calling workflow's id and type (undefined outside an activity: a direct call, no Temporal door). */
  const callerOf = (): { workflowId: string; workflowType: string } | undefined => {
    try {
      const { workflowExecution, workflowType } = Context.current().info;
      return workflowExecution && workflowType ? { workflowId: workflowExecution.workflowId, workflowType } : undefined;
    } catch {
      return undefined;
    }
  };
  const sameTime = (a: Date | string | null | undefined, b: Date | string | null | undefined) =>
    (a ? new Date(a).getTime() : null) === (b ? new Date(b).getTime() : null);

  /** Whether the start input carries the gateway's talat-start-v1 proof for the calling workflow. */
  const provenStart = (
    caller: { workflowId: string; workflowType: string } | undefined,
    paymentId: string,
    start: object | undefined,
  ): caller is { workflowId: string; workflowType: string } =>
    !!caller &&
    !!start &&
    (start as { paymentId?: unknown }).paymentId === paymentId &&
    verifyStartProof(signingKey, { ...caller, input: start });

  /**
   * Whether the calling workflow is the payment's own. Its start carries the gateway's
   * talat-start-v1 proof over its type, id and whole input (expiry and card token included), and
   * the payments row, when there is one, names this workflow and agrees (order, amount, mode, key,
   * expiry). Without that proof (an execution started before it) only from the records: a pending
   * row that agrees in all of these, and never for a charge (`strict`: the token is in no record).
   * A workflow started by hand with forged input changes and charges nothing.
   */
  async function vouched(
    p: {
      paymentId: string;
      orderId: string;
      amountSatang: number;
      mode: string;
      apiKeyId?: string | null;
      expiresAt?: string;
    },
    start: object | undefined,
    strict = false,
    /** told whether the payment's row exists (read here, so the caller need not write it again) */
    seen?: { row?: boolean },
  ): Promise<boolean> {
    const caller = callerOf();
    const row = await db('payments').where({ id: p.paymentId }).first();
    if (seen) seen.row = !!row;
    const workflowId = caller?.workflowId ?? row?.workflow_id;
    const proven = provenStart(caller, p.paymentId, start);
    const agrees =
      !!row &&
      row.workflow_id === workflowId &&
      row.order_id === p.orderId &&
      Number(row.amount_satang) === p.amountSatang &&
      row.mode === p.mode &&
      (row.api_key_id ?? null) === (p.apiKeyId ?? null);
    // unproven: every fact from the row, the expiry too (a proven expiry is the gateway's own)
    const recorded =
      !strict && row?.status === 'pending' && (!('expiresAt' in p) || sameTime(row.expires_at, p.expiresAt));
    const ok = row ? agrees && (proven || !caller || recorded) : proven;
    if (!ok)
      logger.error(
        {
          securityEvent: 'payment_workflow_forged',
          paymentId: p.paymentId,
          orderId: p.orderId,
          workflowId: caller?.workflowId,
        },
        "security: a payment workflow that is not the payment's own (forged start); nothing changed",
      );
    return ok;
  }

  /**
   * A verified result (talat-result-v1: the gateway's word after the provider's signed callback)
   * carried by a workflow that is not the payment's own (terminated and started again by hand):
   * the result still settles the pending row, and its webhook is built from the row alone, so a
   * paid customer's order confirms. Nothing of the workflow's input is used.
   */
  async function settleFromRecords(paymentId: string, r: PaymentResult): Promise<SettleResult> {
    const row = await db('payments').where({ id: paymentId }).first();
    if (!row || row.status !== 'pending') return { retry: [], rejected: true };
    const to: PaymentStatus = r.status === 'success' ? 'paid' : 'failed';
    const reason = `${r.provider}: ${r.status} (kept from a workflow Talat did not start)`;
    if ((await applyTransition(db, { paymentId, from: 'pending', to, reason })) !== to)
      return { retry: [], rejected: true };
    return webhooks.firstWebhookAttempts({
      paymentId,
      orderId: row.order_id,
      status: to,
      amountSatang: Number(row.amount_satang),
      timestamp: new Date().toISOString(),
      mode: row.mode,
      apiKeyId: row.api_key_id ?? undefined,
    });
  }

  /**
   * paymentRedriveWorkflow's step: a verified result (talat-result-v1) for a payment whose
   * workflow was closed while its row was pending. The row is the truth: pending, it takes the
   * result's status; at that status (now or by an earlier attempt), the webhook built from the row
   * is planned and attempted (idempotent per endpoint, payment and status); any other status is
   * returned unchanged. Only a plain payment (its row names payment-<orderId>): an order's
   * authorisation is the order workflow's. A forged or copied-elsewhere proof changes nothing.
   */
  async function settleClosedPayment(
    input: PaymentRedriveInput,
  ): Promise<SettleResult & { status: PaymentStatus | null; event?: PaymentStatusEvent }> {
    const r = input.result;
    const claim = { receiptId: r?.receiptId, paymentId: input.paymentId, status: r?.status };
    if (!r || !verifyResultProof(signingKey, claim, r.proof)) {
      logForgedResult(logger, 'redrive', { ...r, paymentId: input.paymentId });
      return { retry: [], rejected: true, status: null };
    }
    const row = await db('payments').where({ id: input.paymentId }).first();
    if (
      !row ||
      row.order_id !== input.orderId ||
      !isOwnPaymentWorkflow({ id: row.id, orderId: row.order_id, workflowId: row.workflow_id })
    )
      return { retry: [], rejected: true, status: null };
    const to: PaymentStatus = r.status === 'success' ? 'paid' : 'failed';
    const reason = `${r.provider}: ${r.status} (re-driven: the payment's workflow had been closed while it was pending)`;
    const now: PaymentStatus =
      row.status === 'pending'
        ? await applyTransition(db, { paymentId: input.paymentId, from: 'pending', to, reason })
        : row.status;
    if (now !== to) return { retry: [], status: now };
    const event: PaymentStatusEvent = {
      paymentId: input.paymentId,
      orderId: row.order_id,
      status: to,
      amountSatang: Number(row.amount_satang),
      timestamp: new Date().toISOString(),
      mode: row.mode,
      ...(row.api_key_id ? { apiKeyId: row.api_key_id } : {}),
    };
    return { ...(await webhooks.firstWebhookAttempts(event)), status: now, event };
  }

  /**
   * The expiry of a payment that a callback's result reached first, its delivery unfinished (the
   * callback was answered once its receipt was committed, and the signal was on its way, or its
   * gateway died): the result settles it instead, and the workflow adopts that status (`current`).
   * Undefined when there is none (or this is not the payment's own workflow): the expiry goes on.
   */
  async function settleUndelivered(input: SettleInput): Promise<SettleResult | undefined> {
    const { rows } = await db.raw<{ rows: { status: 'success' | 'failed'; provider: string }[] }>(
      UNDELIVERED_RESULT_SQL,
      [input.change.paymentId],
    );
    const waiting = rows[0];
    const caller = callerOf();
    const p = input.payment;
    if (
      !waiting ||
      !caller ||
      p.paymentId !== input.change.paymentId ||
      !isOwnPaymentWorkflow({ id: p.paymentId, orderId: p.orderId, workflowId: caller.workflowId }) ||
      !(await vouched(p, input.start))
    )
      return undefined;
    const to: PaymentStatus = waiting.status === 'success' ? 'paid' : 'failed';
    const reason = `${waiting.provider}: ${waiting.status} (its callback was answered before the expiry; the signal was on its way)`;
    const now = await applyTransition(db, { paymentId: p.paymentId, from: input.change.from, to, reason });
    logger.warn(
      { paymentId: p.paymentId, orderId: p.orderId, provider: waiting.provider, status: now },
      'expiry: a result answered before it settles the payment',
    );
    const attempts =
      input.event && isTerminal(now)
        ? await webhooks.firstWebhookAttempts({ ...input.event, status: now })
        : { retry: [] };
    return { ...attempts, current: now };
  }

  return {
    settleClosedPayment,

    /**
     * lean-payment-v1, a local activity: the transition on the payments row (and its history),
     * then for a terminal one the webhook deliveries and their first attempts. A transition
     * from a signalled result first checks the result's proof (result-proof-v1): a forged or
     * replayed one is logged as a security event and rejected, before any write; so is a step of a
     * workflow that is not the payment's own (vouched). Idempotent: the
     * transition is guarded on the current status, deliveries are unique per endpoint, payment
     * and status, and a delivery attempted before is left to the retries.
     */
    async settlePayment(input: SettleInput): Promise<SettleResult> {
      const r = input.result;
      if (r) {
        const claim = { receiptId: r.receiptId, paymentId: input.change.paymentId, status: r.status };
        if (!verifyResultProof(signingKey, claim, r.proof)) {
          logForgedResult(logger, 'settle', { ...r, paymentId: input.change.paymentId });
          return { retry: [], rejected: true };
        }
      }
      if (!r && input.change.to === 'expired') {
        const settled = await settleUndelivered(input);
        if (settled) return settled;
      }
      // the fast path (issue 41): a proven start and a row that agrees with it, vouched for by the
      // transition's own WHERE, one statement; anything else (no row yet, another status, a row
      // that disagrees) takes the reads below, which decide as before
      const caller = callerOf();
      const p = input.payment;
      if (input.change.paymentId === p.paymentId && provenStart(caller, p.paymentId, input.start)) {
        const facts = { ...p, workflowId: caller.workflowId };
        if (input.event) {
          // the transition and the webhook's deliveries in one statement: planned only when it matched
          const { guard, ...attempts } = await webhooks.firstWebhookAttempts(
            input.event,
            transitionCtes(input.change, facts),
          );
          countTransition(input.change, guard);
          if (guard) return attempts;
        } else if (await applyTransitionIfAgrees(db, input.change, facts)) return { retry: [] };
      }
      const seen: { row?: boolean } = {};
      if (!(await vouched(input.payment, input.start, false, seen)))
        return r ? settleFromRecords(input.change.paymentId, r) : { retry: [], rejected: true };
      // the row read above exists (the gateway writes it before the start): inserting it is a no-op
      if (!seen.row) await insertPayment(db, input.payment);
      const now = await applyTransition(db, input.change);
      if (now !== input.change.to && !canTransition(input.change.to, now)) {
        // A settle step whose workflow task was lost (worker killed, task timed out) committed
        // another status (say `expired`) before this retried task decided its own (`paid`, its
        // signal having arrived meanwhile): the row is what happened, so the workflow adopts it,
        // and only the row's webhook goes out (idempotent: a delivery the lost step attempted is
        // left to the retries). Found by `npm run chaos`: a `paid` webhook for an expired payment.
        const attempts =
          input.event && isTerminal(now)
            ? await webhooks.firstWebhookAttempts({ ...input.event, status: now })
            : { retry: [] };
        return { ...attempts, current: now };
      }
      return input.event ? webhooks.firstWebhookAttempts(input.event) : { retry: [] };
    },

    /** lean-payment-v1, a local activity: the charge at the card provider, then its id on the payments row. */
    async chargeCard(
      input: CreateChargeInput & { apiKeyId?: string; proof?: string; start?: object },
    ): Promise<Charge> {
      if (!(await vouched(input, input.start, true)))
        throw ApplicationFailure.nonRetryable(
          'not the payment of this workflow: nothing charged',
          ActivityFailureType.CardRejected,
        );
      const charge = await card.createCardCharge(input);
      await attachProviderRef(db, {
        paymentId: input.paymentId,
        providerRef: charge.id,
        details: { charge: { status: charge.status, authorizeUri: charge.authorizeUri } },
      });
      return charge;
    },

    /** Insert the payment row and its first history event; a retry finds the row and does nothing. */
    async recordPayment(input: RecordPaymentInput): Promise<void> {
      await insertPayment(db, input);
    },

    /** Card: note the provider's charge id (provider_ref, which the callback API looks up) and its details. */
    async attachCharge(input: {
      paymentId: string;
      providerRef: string;
      details: Record<string, unknown>;
    }): Promise<void> {
      await attachProviderRef(db, input);
    },

    /** Apply a transition decided by the workflow; guarded on the current status, so a retry is a no-op. */
    async updatePaymentStatus(change: StatusChange): Promise<void> {
      await applyTransition(db, change);
    },
  };
}

/** The payment activities' types, for the workflows' proxies (workflows/payments/machine.ts). */
export type PaymentActivities = ReturnType<typeof createPaymentActivities>;
