/**
 * Payment record activities: the workflow's only way to write the payments tables (through
 * src/payments/repository.ts). Each is idempotent, so Temporal may retry it safely.
 */
import type { Db } from '../src/db/knex';
import { applyTransition, attachProviderRef, insertPayment, type NewPayment, type StatusChange } from '../src/payments/repository';

export type RecordPaymentInput = NewPayment;
export type { StatusChange };

export function createPaymentActivities({ db }: { db: Db }) {
  return {
    /** Insert the payment row and its first history event; a retry finds the row and does nothing. */
    async recordPayment(input: RecordPaymentInput): Promise<void> {
      await insertPayment(db, input);
    },

    /** Card: note the provider's charge id (provider_ref, which the callback API looks up) and its details. */
    async attachCharge(input: { paymentId: string; providerRef: string; details: Record<string, unknown> }): Promise<void> {
      await attachProviderRef(db, input);
    },

    /** Apply a transition decided by the workflow; guarded on the current status, so a retry is a no-op. */
    async updatePaymentStatus(change: StatusChange): Promise<void> {
      await applyTransition(db, change);
    },
  };
}
