/**
 * Order ids are scoped per account and mode (docs/concepts.md): api_keys.account_id (backfilled with
 * the key's own id; a new key without one gets its id), payments.account_id (the key's account;
 * NULL for a keyless card payment) and UNIQUE (account_id, mode, order_id) in place of the global
 * UNIQUE (order_id). Down refuses while two payments share an order id.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE api_keys ADD COLUMN account_id text;
    UPDATE api_keys SET account_id = id WHERE account_id IS NULL;
    ALTER TABLE api_keys ALTER COLUMN account_id SET NOT NULL;
    CREATE INDEX api_keys_account ON api_keys (account_id);
    CREATE FUNCTION api_keys_own_account() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.account_id := COALESCE(NEW.account_id, NEW.id); RETURN NEW; END $$;
    CREATE TRIGGER api_keys_own_account BEFORE INSERT ON api_keys
      FOR EACH ROW EXECUTE FUNCTION api_keys_own_account();
    ALTER TABLE payments ADD COLUMN account_id text;
    UPDATE payments p SET account_id = k.account_id FROM api_keys k WHERE k.id = p.api_key_id;
    ALTER TABLE payments DROP CONSTRAINT payments_order_id_unique;
    CREATE UNIQUE INDEX payments_scoped_order ON payments (account_id, mode, order_id) NULLS NOT DISTINCT;
    CREATE INDEX payments_order_id ON payments (order_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX payments_order_id;
    DROP INDEX payments_scoped_order;
    ALTER TABLE payments ADD CONSTRAINT payments_order_id_unique UNIQUE (order_id);
    ALTER TABLE payments DROP COLUMN account_id;
    DROP TRIGGER api_keys_own_account ON api_keys;
    DROP FUNCTION api_keys_own_account();
    DROP INDEX api_keys_account;
    ALTER TABLE api_keys DROP COLUMN account_id;
  `);
}
