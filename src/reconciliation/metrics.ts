/**
 * Reconciliation's Prometheus gauges, read from Postgres when /metrics is scraped (the runs are
 * written by whichever worker ran them): rows and THB by provider and outcome of each provider's
 * latest completed day, and the exceptions still open over every day.
 */
import { Gauge } from 'prom-client';
import type { Db } from '../db/knex';
import { registry } from '../metrics';

let source: Db | undefined;
/** Where the gauges read from (the gateway's database); the last app built wins. */
export const bindReconciliationMetrics = (db: Db): void => {
  source = db;
};

const latest = async () => {
  if (!source) return [];
  const r = await source.raw(
    `SELECT l.provider, l.outcome, count(*)::int AS n, coalesce(sum(l.amount_satang), 0)::bigint AS satang
       FROM reconciliation_lines l
       JOIN (SELECT DISTINCT ON (provider) id FROM reconciliation_runs WHERE status = 'completed'
              ORDER BY provider, settlement_date DESC) r ON r.id = l.run_id
      GROUP BY l.provider, l.outcome`,
  );
  return r.rows as { provider: string; outcome: string; n: number; satang: string }[];
};

new Gauge({
  name: 'talat_reconciliation_lines',
  help: "Rows of each provider's latest reconciled settlement day by outcome (matched, unknown, unsettled, amount_mismatch, duplicate, fee)",
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
  async collect() {
    const rows = await latest().catch(() => []);
    this.reset();
    for (const r of rows) this.set({ provider: r.provider, outcome: r.outcome }, r.n);
  },
});
new Gauge({
  name: 'talat_reconciliation_amount_thb',
  help: "THB of each provider's latest reconciled settlement day by outcome",
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
  async collect() {
    const rows = await latest().catch(() => []);
    this.reset();
    for (const r of rows) this.set({ provider: r.provider, outcome: r.outcome }, Number(r.satang) / 100);
  },
});
new Gauge({
  name: 'talat_reconciliation_open_exceptions',
  help: 'Reconciliation exceptions no operator resolved yet, by provider (every day)',
  labelNames: ['provider'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    if (!source) return;
    const rows = await source('reconciliation_lines')
      .whereNotIn('outcome', ['matched', 'fee'])
      .whereNull('resolution')
      .groupBy('provider')
      .select('provider', source.raw('count(*)::int AS n'))
      .catch(() => []);
    for (const r of rows as { provider: string; n: number }[]) this.set({ provider: r.provider }, r.n);
  },
});
