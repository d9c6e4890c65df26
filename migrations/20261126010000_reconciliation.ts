import type { Knex } from 'knex';

/**
 * Reconciliation (docs/reconciliation.md):
 *  - reconciliation_runs: one per provider, mode and settlement day (rcn_<provider>_<mode>_<day>),
 *    its status and counts; re-running a day updates it;
 *  - reconciliation_lines: one row per settlement line (id <run>:<line>) and per Talat item no
 *    line settled (<run>:u:<item>), its outcome and the operator's resolution. A payment or
 *    refund is claimed (matched or amount_mismatch) by at most one line of a provider;
 *  - indexes on the QR payments' Ref1 (PromptPay lines name it), on paid events and succeeded
 *    refunds by time (the items a day was due to settle).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('reconciliation_runs', (t) => {
    t.text('id').primary();
    t.text('provider').notNullable();
    t.text('mode').notNullable();
    t.date('settlement_date').notNullable();
    t.text('status').notNullable(); // waiting_file | completed | file_missing | malformed
    t.text('file_key').notNullable();
    t.text('file_sha256');
    t.text('error');
    t.jsonb('summary').notNullable().defaultTo('{}');
    t.text('workflow_id');
    t.text('digest_sent_for'); // the summary's fingerprint the digest e-mail was sent for
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['provider', 'mode', 'settlement_date']);
    t.check("status IN ('waiting_file','completed','file_missing','malformed')");
  });
  await knex.schema.createTable('reconciliation_lines', (t) => {
    t.text('id').primary();
    t.text('run_id').notNullable().references('reconciliation_runs.id');
    t.text('provider').notNullable();
    t.integer('line_no'); // null: a Talat item no line settled
    t.text('outcome').notNullable();
    t.boolean('expected').notNullable().defaultTo(false);
    t.text('kind').notNullable(); // payment | refund | fee
    t.text('reference');
    t.bigInteger('amount_satang').notNullable(); // settled (or, unsettled, Talat's)
    t.bigInteger('talat_amount_satang');
    t.text('item_id'); // pay_... or re_...
    t.text('payment_id');
    t.text('order_id');
    t.timestamp('txn_at', { useTz: true });
    t.text('detail');
    t.text('resolution');
    t.text('resolution_note');
    t.text('resolved_by');
    t.timestamp('resolved_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['run_id', 'created_at', 'id']);
    t.index(['payment_id']);
    t.index(['item_id']);
    t.check("outcome IN ('matched','unknown','unsettled','amount_mismatch','duplicate','fee')");
    t.check("kind IN ('payment','refund','fee')");
    t.check("resolution IS NULL OR resolution IN ('accepted','refunded','written_off')");
  });
  await knex.raw(
    "CREATE UNIQUE INDEX reconciliation_lines_one_claim ON reconciliation_lines (provider, kind, item_id) WHERE outcome IN ('matched','amount_mismatch')",
  );
  await knex.raw("CREATE INDEX payments_qr_ref1 ON payments ((details->'qr'->>'ref1')) WHERE method = 'qr'");
  // the money of a day: what a provider was due to settle
  await knex.raw("CREATE INDEX payment_events_paid_at ON payment_events (created_at) WHERE to_status = 'paid'");
  await knex.raw("CREATE INDEX refunds_succeeded_at ON refunds (updated_at) WHERE status = 'succeeded'");
}

export async function down(knex: Knex): Promise<void> {
  for (const i of ['payments_qr_ref1', 'payment_events_paid_at', 'refunds_succeeded_at'])
    await knex.raw(`DROP INDEX IF EXISTS ${i}`);
  await knex.schema.dropTableIfExists('reconciliation_lines');
  await knex.schema.dropTableIfExists('reconciliation_runs');
}
