import type { Knex } from 'knex';

/**
 * Customer approvals of costlier substitutions (docs/orders.md): one row per adjustment line with
 * reason `substitution` above ORDER_APPROVAL_THRESHOLD, written when the order's workflow applies
 * the adjustment; `requested` is the customer's decision as the gateway recorded it from the
 * signed link, `status` what the workflow made of it; `counted` whether the line is in the final amount.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('order_approvals', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.order_id');
    t.text('adjustment_id').notNullable().references('order_adjustments.id');
    t.integer('line_index').notNullable();
    t.text('description').notNullable();
    t.bigInteger('amount_satang').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.text('requested');
    t.boolean('counted');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('decided_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['adjustment_id', 'line_index']);
    t.index(['order_id', 'status']);
    t.check("status IN ('pending','approved','declined','timed_out')");
    t.check("requested IS NULL OR requested IN ('approve','decline')");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('order_approvals');
}
