/**
 * One provider's day reconciled: the file read from the object store and parsed whole (a
 * malformed file imports nothing: the run says which line), then classified and written in one
 * transaction under the provider's advisory lock, so a retried or repeated run (a worker killed
 * mid-way, the same file twice) leaves every line classified exactly once. Then the operator is
 * told: a digest e-mail when the day has exceptions (once per distinct result), an alert for
 * payments not settled past their window (the alert throttle folds repeats).
 */
import { createHash } from 'node:crypto';
import type { AlertThrottle } from '../alerts';
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';
import {
  reconciliationRunId,
  SETTLEMENT_DELAY_DAYS,
  settlementKey,
  type ReconciliationResult,
  type SettlementProvider,
} from './index';
import type { Notifier } from '../notifier';
import { classifyLines } from './classify';
import type { SettlementStore } from './files';
import { parseSettlementFile, SettlementFileError } from './parsers';
import {
  claimsElsewhere,
  completeRun,
  countsOf,
  getRun,
  itemsOf,
  replaceRows,
  saveRun,
  type RunKey,
} from './repository';

export interface DayInput {
  provider: SettlementProvider;
  mode: Mode;
  date: string;
  workflowId?: string;
}

const keyOf = (d: DayInput): RunKey => ({ ...d, runId: reconciliationRunId(d.provider, d.mode, d.date) });

/** Whether the day's file is there; records the run as waiting (or missing, when `gaveUp`) when not. */
export async function fileArrived(
  deps: { db: Db; store: SettlementStore },
  d: DayInput & { gaveUp?: boolean },
): Promise<boolean> {
  const fileKey = settlementKey(d.provider, d.date);
  if (await deps.store.exists(fileKey)) return true;
  await saveRun(deps.db, keyOf(d), {
    status: d.gaveUp ? 'file_missing' : 'waiting_file',
    fileKey,
    workflowId: d.workflowId,
    error: d.gaveUp ? `no file ${fileKey} in the settlements bucket` : null,
  });
  return false;
}

export async function reconcileDay(
  deps: { db: Db; store: SettlementStore },
  d: DayInput,
  heartbeat: () => void = () => undefined,
): Promise<ReconciliationResult> {
  const k = keyOf(d);
  const fileKey = settlementKey(d.provider, d.date);
  const file = await deps.store.get(fileKey);
  if (!file) {
    await saveRun(deps.db, k, { status: 'file_missing', fileKey, workflowId: d.workflowId, error: `no ${fileKey}` });
    return { status: 'file_missing', runId: k.runId, date: d.date, error: `no ${fileKey}` };
  }
  let lines;
  try {
    lines = parseSettlementFile(d.provider, d.date, file.text);
  } catch (e) {
    if (!(e instanceof SettlementFileError)) throw e;
    await saveRun(deps.db, k, {
      status: 'malformed',
      fileKey,
      workflowId: d.workflowId,
      error: e.message,
      sha256: file.sha256,
    });
    return { status: 'malformed', runId: k.runId, date: d.date, error: `${fileKey} ${e.message}` };
  }
  heartbeat();
  const counts = await deps.db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`talat:reconciliation:${d.provider}`]);
    await saveRun(trx, k, { status: 'waiting_file', fileKey, workflowId: d.workflowId, error: null });
    const items = await itemsOf(trx, d.provider, d.mode, lines);
    const claimed = await claimsElsewhere(
      trx,
      d.provider,
      k.runId,
      [...items.values()].map((i) => i.id),
    );
    heartbeat();
    const rows = classifyLines(
      lines,
      (kind, ref) => items.get(`${kind}:${ref}`),
      (kind, id) => claimed.get(`${kind}:${id}`),
    );
    await replaceRows(trx, k, rows, heartbeat);
    const c = await countsOf(trx, k.runId);
    await completeRun(trx, k.runId, c, file.sha256);
    return c;
  });
  return { status: 'completed', runId: k.runId, date: d.date, ...counts };
}

const thb = (satang: number) => (satang / 100).toFixed(2);

/**
 * The e-mails of a finished run: the digest when it has exceptions (not again for the same
 * result), the alert when Talat items are unsettled past the provider's window.
 */
export async function reportRun(
  deps: { db: Db; notifier: Notifier; alerts: AlertThrottle; apiBase: string },
  runId: string,
): Promise<{ digest: boolean; alert: boolean }> {
  const run = await getRun(deps.db, runId);
  if (!run) return { digest: false, alert: false };
  const subject = `${run.provider} ${run.settlement_date} (${run.mode})`;
  const link = `${deps.apiBase}/reconciliation/${run.provider}/${run.settlement_date}`;
  if (run.status !== 'completed') {
    const sent = await deps.alerts.alert(`reconciliation:${run.status}:${runId}`, {
      subject: `[Talat] Reconciliation ${subject}: ${run.status === 'malformed' ? 'malformed file' : 'no file'}`,
      text: `${run.error ?? ''}\nNothing was imported. ${link}\n`,
    });
    return { digest: false, alert: sent === 'sent' };
  }
  const s = run.summary as Required<typeof run.summary>;
  let digest = false;
  const fingerprint = createHash('sha256').update(JSON.stringify(s)).digest('hex').slice(0, 16);
  if (s.exceptions > 0 && run.digest_sent_for !== fingerprint) {
    const rows = await deps
      .db('reconciliation_lines')
      .where({ run_id: runId })
      .whereNotIn('outcome', ['matched', 'fee'])
      .orderBy('id')
      .limit(20)
      .select('outcome', 'reference', 'amount_satang', 'order_id', 'detail', 'expected');
    const by = Object.entries(s.byOutcome)
      .filter(([, n]) => n > 0)
      .map(
        ([o, n]) => `  ${o.padEnd(16)} ${String(n).padStart(7)}  ${thb(s.amountSatang[o as 'fee']).padStart(14)} THB`,
      );
    await deps.notifier.sendAdminEmail({
      subject: `[Talat] Reconciliation ${subject}: ${s.exceptions} exception${s.exceptions === 1 ? '' : 's'}`,
      text: [
        `${s.lines} settlement lines; ${s.exceptions} exceptions, ${s.expected} of them expected (late payments, conflicts).`,
        '',
        ...by,
        '',
        'First exceptions:',
        ...rows.map(
          (r) =>
            `  ${r.outcome}${r.expected ? ' (expected)' : ''}  ${r.reference ?? '-'}  ${thb(Number(r.amount_satang))} THB  ${r.order_id ?? ''}  ${r.detail ?? ''}`,
        ),
        '',
        `All of them, and how to resolve each: GET ${link} (CSV: ${link}/export.csv)`,
        '',
      ].join('\n'),
    });
    await deps.db('reconciliation_runs').where({ id: runId }).update({ digest_sent_for: fingerprint });
    digest = true;
  }
  const unsettled = await deps
    .db('reconciliation_lines')
    .where({ run_id: runId, outcome: 'unsettled', expected: false })
    .whereNull('resolution')
    .count<{ n: string }[]>('id as n');
  let alert = false;
  const n = Number(unsettled[0].n);
  if (n > 0)
    alert =
      (await deps.alerts.alert(`reconciliation:unsettled:${run.provider}:${run.mode}`, {
        subject: `[Talat] Alert: ${n} ${run.provider} item${n === 1 ? '' : 's'} not settled ${SETTLEMENT_DELAY_DAYS[run.provider]} day(s) after (${subject})`,
        text: `Talat recorded them as paid or refunded; no settlement file of ${run.provider} has them.\n${link}?outcome=unsettled\n`,
      })) === 'sent';
  return { digest, alert };
}
