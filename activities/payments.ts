/**
 * Payment record activities: the workflow's only way to write the payments tables (through
 * src/payments/repository.ts). Each is idempotent, so Temporal may retry it safely.
 */
import type { Db } from '../src/db/knex';
import type { PaymentStatusEvent } from '../src/domain/events';
import { isTerminal, type PaymentStatus } from '../src/domain/payment-state';
import {
  applyTransition,
  attachProviderRef,
  insertPayment,
  type NewPayment,
  type StatusChange,
} from '../src/payments/repository';
import type { Charge, CreateChargeInput } from './card-provider';

export type RecordPaymentInput = NewPayment;
export type { StatusChange };

export interface SettleInput {
  change: StatusChange;
  /** the row, in case the gateway's insert was undone after a start it believed failed */
  payment: NewPayment;
  /** a terminal transition's payment.status.updated: planned and attempted once here */
  event?: PaymentStatusEvent;
}

export interface SettleResult {
  /** deliveries whose first attempt failed: the workflow retries them in a child */
  retry: string[];
  /** ms since the epoch: when the first attempts began (the retries are spaced from it) */
  firstAttemptAt?: number;
  /** the row's terminal status after the step: not the change's `to` when an earlier, lost step committed another */
  status?: PaymentStatus;
}

export function createPaymentActivities({
  db,
  webhooks,
  card,
}: {
  db: Db;
  webhooks: { firstWebhookAttempts(event: PaymentStatusEvent): Promise<{ retry: string[]; firstAttemptAt: number }> };
  card: { createCardCharge(input: CreateChargeInput): Promise<Charge> };
}) {
  return {
    /**
     * lean-payment-v1, a local activity: the transition on the payments row (and its history),
     * then for a terminal one the webhook deliveries and their first attempts. Idempotent: the
     * transition is guarded on the current status, deliveries are unique per endpoint, payment
     * and status, and a delivery attempted before is left to the retries.
     */
    async settlePayment(input: SettleInput): Promise<SettleResult> {
      await insertPayment(db, input.payment);
      await applyTransition(db, input.change);
      if (!input.event) return { retry: [] };
      // A settle step whose workflow task was lost (worker killed, task timed out) may have
      // committed another terminal status (say `expired`) before the retried task decided this one
      // (`paid`, its signal having arrived meanwhile): the row's status is what happened, and only
      // its webhook goes out (found by `npm run chaos`: a `paid` webhook for an expired payment).
      const row: { status: PaymentStatus } | undefined = await db('payments')
        .where({ id: input.change.paymentId })
        .first('status');
      const status = row && isTerminal(row.status) ? row.status : input.change.to;
      const event = status === input.event.status ? input.event : { ...input.event, status };
      return { ...(await webhooks.firstWebhookAttempts(event)), status };
    },

    /** lean-payment-v1, a local activity: the charge at the card provider, then its id on the payments row. */
    async chargeCard(input: CreateChargeInput): Promise<Charge> {
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
