import type { Knex } from 'knex';

/**
 * A payment's status change is announced on the channel `payment_status` (payload
 * `<payment id> <status>`), delivered at commit to every session that LISTENs: the hosted
 * checkout page's live updates (src/payments/checkout/hub.ts) come from it, not from polling.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notify_payment_status() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('payment_status', NEW.id || ' ' || NEW.status);
      RETURN NULL;
    END $$;
    CREATE TRIGGER payments_status_notify AFTER UPDATE OF status ON payments
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
      EXECUTE FUNCTION notify_payment_status();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS payments_status_notify ON payments;
    DROP FUNCTION IF EXISTS notify_payment_status();
  `);
}
