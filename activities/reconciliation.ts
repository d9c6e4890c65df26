/**
 * Reconciliation's activities (src/reconciliation/service.ts does the work): they read the file
 * and write the rows, so the workflow's history holds counts, never settlement lines.
 */
import { Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';
import { createAlertThrottle, type AlertThrottle } from '../src/alerts';
import { createNotifier, type Notifier } from '../src/notifier';
import type { ReconciliationResult } from '../src/reconciliation';
import { createSettlementStore } from '../src/reconciliation/files';
import { fileArrived, reconcileDay, reportRun, type DayInput } from '../src/reconciliation/service';

export function createReconciliationActivities(deps: { db: Db; config: Config; logger: Logger }) {
  const store = createSettlementStore(deps.config);
  let told: { notifier: Notifier; alerts: AlertThrottle } | undefined;
  const tell = () => {
    if (told) return told;
    const notifier = createNotifier(deps);
    const alerts = createAlertThrottle({
      notifier,
      logger: deps.logger,
      windowMs: deps.config.alertWindowSeconds * 1000,
    });
    return (told = { notifier, alerts });
  };
  const beat = () => {
    try {
      Context.current().heartbeat();
    } catch {
      // called outside an activity (tests, the bench)
    }
  };
  return {
    async settlementFileArrived(d: DayInput & { gaveUp?: boolean }): Promise<boolean> {
      return fileArrived({ db: deps.db, store }, d);
    },
    async reconcileSettlementDay(d: DayInput): Promise<ReconciliationResult> {
      const r = await reconcileDay({ db: deps.db, store }, d, beat);
      deps.logger.info({ provider: d.provider, date: d.date, mode: d.mode, result: r }, 'reconciliation run');
      return r;
    },
    async reportReconciliation(runId: string): Promise<{ digest: boolean; alert: boolean }> {
      return reportRun({ db: deps.db, ...tell(), apiBase: deps.config.publicBaseUrl }, runId);
    },
  };
}
