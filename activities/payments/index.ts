/**
 * Payment record activities: the workflow's only way to write the payments tables (through
 * src/payments/repository.ts). Each is idempotent, so Temporal may retry it safely.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../../src/db/knex';
import { verifyResultProof } from '../../src/result-proof';
import { verifyPaymentProof } from '../../src/proofs';
import type { PaymentStatusEvent } from '../../src/webhooks';
import { canTransition, isTerminal, type PaymentStatus } from '../../src/payments';
import { ActivityFailureType } from '../../src/domain/temporal';
import type { PaymentResult } from '../../src/payments';
import type { Logger } from '../../src/logger';
import {
  applyTransition,
  attachProviderRef,
  insertPayment,
  type NewPayment,
  type StatusChange,
} from '../../src/payments/repository';
import type { Charge, CreateChargeInput } from './card-provider';
import { logForgedResult } from './late-results';

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
  webhooks: { firstWebhookAttempts(event: PaymentStatusEvent): Promise<SettleResult> };
  card: { createCardCharge(input: CreateChargeInput): Promise<Charge> };
}) {
  /** The calling workflow's id (undefined outside an activity: a direct call, no Temporal door). */
  const callerWorkflowId = (): string | undefined => {
    try {
      return Context.current().info.workflowExecution?.workflowId;
    } catch {
      return undefined;
    }
  };

  /**
   * Whether the calling workflow is the payment's own, from Talat's records: its payments row
   * names this workflow and agrees with the input; a missing row (the gateway undid its insert
   * after a start it believed failed) only with the gateway's start proof. A workflow started by
   * hand with forged input (another id, another amount, another key) changes and charges nothing.
   */
  async function vouched(
    p: { paymentId: string; orderId: string; amountSatang: number; mode: string; apiKeyId?: string | null },
    proof: string | undefined,
  ): Promise<boolean> {
    const caller = callerWorkflowId();
    const row = await db('payments').where({ id: p.paymentId }).first();
    const workflowId = caller ?? row?.workflow_id;
    const ok = row
      ? row.workflow_id === workflowId &&
        row.order_id === p.orderId &&
        Number(row.amount_satang) === p.amountSatang &&
        row.mode === p.mode &&
        (row.api_key_id ?? null) === (p.apiKeyId ?? null)
      : workflowId !== undefined && verifyPaymentProof(signingKey, { ...p, workflowId }, proof);
    if (!ok)
      logger.error(
        { securityEvent: 'payment_workflow_forged', paymentId: p.paymentId, orderId: p.orderId, workflowId: caller },
        "security: a payment workflow that is not the payment's own (forged start); nothing changed",
      );
    return ok;
  }

  return {
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
      if (!(await vouched(input.payment, input.proof))) return { retry: [], rejected: true };
      await insertPayment(db, input.payment);
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
    async chargeCard(input: CreateChargeInput & { apiKeyId?: string; proof?: string }): Promise<Charge> {
      if (!(await vouched(input, input.proof)))
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
