/**
 * Payment record activities: the workflow's only way to write the payments tables.
 * Each is idempotent, so Temporal may retry it safely.
 */
import type { Db } from '../src/db/knex';
import { canTransition, type PaymentMethod, type PaymentStatus } from '../src/domain/payment-state';

export interface RecordPaymentInput {
  paymentId: string;
  orderId: string;
  userId: string;
  method: PaymentMethod;
  amountSatang: number;
  mode: 'live' | 'sandbox';
  workflowId: string;
  customerId?: string;
  callbackUrl?: string;
  apiKeyId?: string;
  expiresAt?: string;
  details?: Record<string, unknown>;
}

export interface StatusChange {
  paymentId: string;
  from: PaymentStatus;
  to: PaymentStatus;
  reason: string;
}

export function createPaymentActivities({ db }: { db: Db }) {
  return {
    /** Insert the payment row and its first history event; a retry finds the row and does nothing. */
    async recordPayment(input: RecordPaymentInput): Promise<void> {
      await db.transaction(async (trx) => {
        const inserted = await trx('payments')
          .insert({
            id: input.paymentId,
            order_id: input.orderId,
            user_id: input.userId,
            method: input.method,
            amount_satang: input.amountSatang,
            status: 'pending',
            mode: input.mode,
            customer_id: input.customerId ?? null,
            callback_url: input.callbackUrl ?? null,
            api_key_id: input.apiKeyId ?? null,
            workflow_id: input.workflowId,
            expires_at: input.expiresAt ?? null,
            details: JSON.stringify(input.details ?? {}),
          })
          .onConflict('id')
          .ignore()
          .returning('id');
        if (inserted.length > 0) {
          await trx('payment_events').insert({ payment_id: input.paymentId, from_status: null, to_status: 'pending', reason: 'created' });
        }
      });
    },

    /** Card: note the provider's charge id (provider_ref, which the callback API looks up) and its details. */
    async attachCharge(input: { paymentId: string; providerRef: string; details: Record<string, unknown> }): Promise<void> {
      await db('payments')
        .where({ id: input.paymentId })
        .update({ provider_ref: input.providerRef, details: db.raw('details || ?::jsonb', [JSON.stringify(input.details)]), updated_at: db.fn.now() });
    },

    /** Apply a transition decided by the workflow; guarded on the current status, so a retry is a no-op. */
    async updatePaymentStatus(change: StatusChange): Promise<void> {
      if (!canTransition(change.from, change.to)) throw new Error(`illegal transition ${change.from} -> ${change.to}`);
      await db.transaction(async (trx) => {
        const updated = await trx('payments')
          .where({ id: change.paymentId, status: change.from })
          .update({ status: change.to, updated_at: trx.fn.now() })
          .returning('id');
        if (updated.length > 0) {
          await trx('payment_events').insert({ payment_id: change.paymentId, from_status: change.from, to_status: change.to, reason: change.reason });
        }
      });
    },
  };
}
