import type { Knex } from 'knex';

/**
 * The refund ledger (POST /refund writes the row before any money moves):
 *  - refunds.idempotency_key / requested_satang: the Idempotency-Key of the request and the
 *    amount it asked for (null: the rest), unique per API key for as long as the row exists, so
 *    a key reused after the 24 h idempotency retention finds its refund instead of making another;
 *  - trigger refunds_within_amount: with the payment row locked, pending + succeeded refunds of a
 *    payment never exceed its amount, whoever writes the rows (any retry, crash or second writer).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.text('idempotency_key');
    t.bigInteger('requested_satang');
  });
  await knex.raw(
    'CREATE UNIQUE INDEX refunds_idempotency_key ON refunds (api_key_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
  await knex.raw(`
    CREATE FUNCTION refunds_within_amount() RETURNS trigger AS $$
    DECLARE
      paid bigint;
      counted bigint;
    BEGIN
      IF NEW.status = 'failed' THEN RETURN NEW; END IF;
      SELECT amount_satang INTO paid FROM payments WHERE id = NEW.payment_id FOR UPDATE;
      SELECT COALESCE(SUM(amount_satang), 0) INTO counted FROM refunds
        WHERE payment_id = NEW.payment_id AND status IN ('pending', 'succeeded') AND id <> NEW.id;
      IF counted + NEW.amount_satang > paid THEN
        RAISE EXCEPTION 'refunds of payment % would exceed the amount paid (% + % > % satang)',
          NEW.payment_id, counted, NEW.amount_satang, paid
          USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_within_amount';
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE TRIGGER refunds_within_amount BEFORE INSERT OR UPDATE OF amount_satang, status, payment_id ON refunds
    FOR EACH ROW EXECUTE FUNCTION refunds_within_amount()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS refunds_within_amount ON refunds');
  await knex.raw('DROP FUNCTION IF EXISTS refunds_within_amount()');
  await knex.raw('DROP INDEX IF EXISTS refunds_idempotency_key');
  await knex.schema.alterTable('refunds', (t) => {
    t.dropColumn('idempotency_key');
    t.dropColumn('requested_satang');
  });
}
