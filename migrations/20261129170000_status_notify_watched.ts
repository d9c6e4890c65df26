/**
 * Issue 41: a status change is announced on `payment_status` only for a payment a checkout page
 * has watched (`status_watched`, set by the page's event stream once its LISTEN is on). The
 * trigger's WHEN decides without calling PL/pgSQL, so an unwatched payment's change costs no
 * function call and no NOTIFY. A payment stays watched once it has been.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments ADD COLUMN status_watched boolean NOT NULL DEFAULT false;
    DROP TRIGGER payments_status_notify ON payments;
    CREATE TRIGGER payments_status_notify AFTER UPDATE OF status ON payments
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status_watched)
      EXECUTE FUNCTION notify_payment_status();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER payments_status_notify ON payments;
    CREATE TRIGGER payments_status_notify AFTER UPDATE OF status ON payments
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
      EXECUTE FUNCTION notify_payment_status();
    ALTER TABLE payments DROP COLUMN status_watched;
  `);
}
