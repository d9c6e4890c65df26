/**
 * Orders scoped like payments (docs/concepts.md): an order is keyed by its payment's id
 * (orders.payment_id, the primary key) and unique per (account_id, mode, order_id); its workflow
 * id is stored (existing rows keep order-<orderId>). Each order table keys on order_payment_id
 * (backfilled through order_id); a top-up's order id is unique per scope through its payment.
 * Down refuses while two orders share an order id.
 */
import type { Knex } from 'knex';

const CHILDREN = ['order_adjustments', 'order_finalizations', 'order_approvals', 'order_topups', 'order_card_holds'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE orders ADD COLUMN account_id text, ADD COLUMN workflow_id text;
    UPDATE orders o SET account_id = k.account_id FROM api_keys k WHERE k.id = o.api_key_id;
    UPDATE orders SET account_id = COALESCE(account_id, api_key_id), workflow_id = 'order-' || order_id;
    ALTER TABLE orders ALTER COLUMN account_id SET NOT NULL, ALTER COLUMN workflow_id SET NOT NULL;
  `);
  for (const t of CHILDREN)
    await knex.raw(`
      ALTER TABLE ${t} ADD COLUMN order_payment_id text;
      UPDATE ${t} c SET order_payment_id = o.payment_id FROM orders o WHERE o.order_id = c.order_id;
      ALTER TABLE ${t} ALTER COLUMN order_payment_id SET NOT NULL;
      ALTER TABLE ${t} DROP CONSTRAINT ${t}_order_id_foreign;
    `);
  await knex.raw(`
    ALTER TABLE orders DROP CONSTRAINT orders_pkey;
    ALTER TABLE orders ADD CONSTRAINT orders_pkey PRIMARY KEY (payment_id);
    CREATE UNIQUE INDEX orders_scoped_order ON orders (account_id, mode, order_id);
    CREATE UNIQUE INDEX orders_workflow_id ON orders (workflow_id);
    CREATE INDEX orders_order_id ON orders (order_id);
    ALTER TABLE order_finalizations DROP CONSTRAINT order_finalizations_order_id_unique;
    ALTER TABLE order_finalizations ADD CONSTRAINT order_finalizations_order_unique UNIQUE (order_payment_id);
    ALTER TABLE order_topups DROP CONSTRAINT order_topups_topup_order_id_unique;
    CREATE INDEX order_adjustments_order ON order_adjustments (order_payment_id, created_at);
    CREATE INDEX order_approvals_order ON order_approvals (order_payment_id, status);
    CREATE INDEX order_topups_order ON order_topups (order_payment_id);
    CREATE INDEX order_card_holds_order ON order_card_holds (order_payment_id);
  `);
  for (const t of CHILDREN)
    await knex.raw(
      `ALTER TABLE ${t} ADD CONSTRAINT ${t}_order_payment_id_foreign
         FOREIGN KEY (order_payment_id) REFERENCES orders (payment_id)`,
    );
}

export async function down(knex: Knex): Promise<void> {
  const shared = await knex('orders').select('order_id').groupBy('order_id').havingRaw('count(*) > 1').first();
  if (shared) throw new Error(`orders ${shared.order_id} share an order id: the global order id cannot come back`);
  for (const t of CHILDREN) await knex.raw(`ALTER TABLE ${t} DROP CONSTRAINT ${t}_order_payment_id_foreign`);
  await knex.raw(`
    DROP INDEX order_card_holds_order, order_topups_order, order_approvals_order, order_adjustments_order;
    ALTER TABLE order_topups ADD CONSTRAINT order_topups_topup_order_id_unique UNIQUE (topup_order_id);
    ALTER TABLE order_finalizations DROP CONSTRAINT order_finalizations_order_unique;
    ALTER TABLE order_finalizations ADD CONSTRAINT order_finalizations_order_id_unique UNIQUE (order_id);
    DROP INDEX orders_order_id, orders_workflow_id, orders_scoped_order;
    ALTER TABLE orders DROP CONSTRAINT orders_pkey;
    ALTER TABLE orders ADD CONSTRAINT orders_pkey PRIMARY KEY (order_id);
  `);
  for (const t of CHILDREN)
    await knex.raw(`
      ALTER TABLE ${t} ADD CONSTRAINT ${t}_order_id_foreign FOREIGN KEY (order_id) REFERENCES orders (order_id);
      ALTER TABLE ${t} DROP COLUMN order_payment_id;
    `);
  await knex.raw('ALTER TABLE orders DROP COLUMN workflow_id, DROP COLUMN account_id');
}
