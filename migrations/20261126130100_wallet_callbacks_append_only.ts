import type { Knex } from 'knex';

/**
 * wallet_callbacks becomes append-only, one row per post of the public wallet handler: a post
 * never replaces another (it was keyed by order id, so a later post overwrote the record). A
 * row id is the key, order_id an index, and an update is refused by a trigger.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE wallet_callbacks DROP CONSTRAINT wallet_callbacks_pkey;
    ALTER TABLE wallet_callbacks ADD COLUMN id bigserial PRIMARY KEY;
    CREATE INDEX wallet_callbacks_order_id_index ON wallet_callbacks (order_id, id);
    CREATE FUNCTION wallet_callbacks_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'wallet_callbacks is append-only';
    END $$;
    CREATE TRIGGER wallet_callbacks_no_update BEFORE UPDATE ON wallet_callbacks
      FOR EACH ROW EXECUTE FUNCTION wallet_callbacks_append_only();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS wallet_callbacks_no_update ON wallet_callbacks;
    DROP FUNCTION IF EXISTS wallet_callbacks_append_only();
    DELETE FROM wallet_callbacks w USING wallet_callbacks later WHERE later.order_id = w.order_id AND later.id > w.id;
    DROP INDEX IF EXISTS wallet_callbacks_order_id_index;
    ALTER TABLE wallet_callbacks DROP COLUMN id;
    ALTER TABLE wallet_callbacks ADD PRIMARY KEY (order_id);
  `);
}
