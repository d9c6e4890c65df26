import type { Knex } from 'knex';

/**
 * Late and conflicting payment results (README "Late and conflicting results"):
 *  - payment_conflicts: one row per payment and contradicting result status (a success after
 *    the payment expired or failed, a failure after it was paid). The unique key makes every
 *    duplicate (a provider's retry, a second provider, the gateway and the workflow both
 *    noticing) one conflict, e-mailed once. A success on an expired or failed payment is a late
 *    payment: LATE_PAYMENT_POLICY decides its `resolution` (refund_pending -> refunded |
 *    refund_failed, or review); GET /late-payments lists them.
 *  - callback_receipts.outcome gains the value `conflict` (the column has no check).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payment_conflicts', (t) => {
    t.text('id').primary(); // cfl_...
    t.text('payment_id').notNullable().references('payments.id');
    t.text('order_id').notNullable();
    t.text('result_status').notNullable();
    t.text('payment_status').notNullable();
    t.text('provider').notNullable();
    t.text('receipt_id');
    t.text('reference');
    t.text('resolution').notNullable();
    t.text('refund_id');
    t.text('detail');
    // the workflow that e-mails and applies the policy: the first to claim the row
    t.text('handled_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['payment_id', 'result_status']);
    t.index(['created_at', 'id']);
    t.check("result_status IN ('success','failed')");
    t.check("resolution IN ('recorded','review','refund_pending','refunded','refund_failed')");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('payment_conflicts');
}
