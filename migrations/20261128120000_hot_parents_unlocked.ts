/**
 * Issue 41: a paid payment no longer locks the rows every payment of a key shares. The foreign
 * keys payments -> api_keys and webhook_deliveries -> webhook_endpoints made each insert lock the
 * key's (or endpoint's) one row FOR KEY SHARE: a WAL record each, and a MultiXact whenever two
 * payments of a key overlapped. Their guarantee is kept another way: neither table ever loses a
 * row or changes an id (a revoked key and a deleted endpoint keep theirs), which a trigger now
 * enforces, and each insert takes its id from a row it has just read (the verified key, the
 * endpoint selected in the same statement).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments DROP CONSTRAINT payments_api_key_id_foreign;
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_foreign;
    CREATE FUNCTION rows_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN RETURN NEW; END IF;
      RAISE EXCEPTION '% % refused: its rows are never deleted nor renumbered (payments and deliveries name them)', TG_TABLE_NAME, lower(TG_OP)
        USING ERRCODE = 'restrict_violation';
    END $$;
    CREATE TRIGGER api_keys_kept BEFORE DELETE OR UPDATE OF id ON api_keys
      FOR EACH ROW EXECUTE FUNCTION rows_kept();
    CREATE TRIGGER webhook_endpoints_kept BEFORE DELETE OR UPDATE OF id ON webhook_endpoints
      FOR EACH ROW EXECUTE FUNCTION rows_kept();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS webhook_endpoints_kept ON webhook_endpoints;
    DROP TRIGGER IF EXISTS api_keys_kept ON api_keys;
    DROP FUNCTION IF EXISTS rows_kept();
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_foreign
      FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id);
    ALTER TABLE payments ADD CONSTRAINT payments_api_key_id_foreign
      FOREIGN KEY (api_key_id) REFERENCES api_keys(id);
  `);
}
