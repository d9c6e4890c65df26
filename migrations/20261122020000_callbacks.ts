import type { Knex } from 'knex';

/**
 * Callback API records:
 *  - callback_receipts: every accepted callback of the IP-restricted endpoints, one row per
 *    (provider, payment, status); the unique key is the duplicate detector and the row keeps the
 *    first response, which every duplicate delivery gets back;
 *  - wallet_callbacks, cardnet_callbacks, bankapp_callbacks: the handler-form record stores of
 *    SPEC.md ("Wallet callback record"), keyed by order id;
 *  - callback_errors: the error log of the wallet handler, keyed by order and payment ids;
 *  - paid_orders: the outcome of paid-order processing, one row per order.
 */
const HANDLER_STORES = ['wallet_callbacks', 'cardnet_callbacks', 'bankapp_callbacks'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('callback_receipts', (t) => {
    t.text('id').primary(); // evt_...
    t.text('provider').notNullable();
    t.text('payment_id').notNullable().references('payments.id');
    t.text('order_id').notNullable();
    t.text('status').notNullable(); // success | failed | unprocessed
    t.text('source_ip').notNullable();
    t.jsonb('request').notNullable();
    t.integer('response_status');
    t.jsonb('response_body');
    t.text('response_location');
    t.text('outcome'); // signalled | payment_closed | recorded
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['provider', 'payment_id', 'status']);
    t.index(['order_id']);
    t.check("provider IN ('card','cardnet','bankapp','qr','wallet')");
  });

  for (const table of HANDLER_STORES) {
    await knex.schema.createTable(table, (t) => {
      t.text('order_id').primary();
      t.text('payment_id').notNullable();
      t.boolean('success').notNullable();
      t.text('user_id').notNullable();
      t.text('message').notNullable().defaultTo('');
      t.bigInteger('amount_satang').notNullable().defaultTo(0);
      t.jsonb('event');
      t.jsonb('body');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['payment_id']);
      t.check('amount_satang >= 0');
    });
  }

  await knex.schema.createTable('callback_errors', (t) => {
    t.bigIncrements('id').primary();
    t.text('source').notNullable(); // wallet
    t.text('order_id');
    t.text('payment_id');
    t.text('error').notNullable();
    t.jsonb('request');
    t.text('request_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['order_id', 'payment_id']);
  });

  await knex.schema.createTable('paid_orders', (t) => {
    t.text('order_id').primary();
    t.text('payment_id').notNullable();
    t.text('user_id').notNullable();
    t.bigInteger('amount_satang').notNullable();
    t.text('status').notNullable(); // confirmed | rejected
    t.text('reason').notNullable();
    t.text('source').notNullable(); // wallet
    t.text('workflow_id').notNullable();
    t.jsonb('body').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("status IN ('confirmed','rejected')");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('paid_orders');
  await knex.schema.dropTableIfExists('callback_errors');
  for (const table of [...HANDLER_STORES].reverse()) await knex.schema.dropTableIfExists(table);
  await knex.schema.dropTableIfExists('callback_receipts');
}
