/**
 * The reconciliation slice's face and contract: what other slices, the workflows and the toolkit may
 * use of it. Pure (no I/O): its Temporal names, ids, signals, updates, inputs and outputs, and
 * the types and pure helpers others share. Names in recorded histories (test/replay) never change.
 */
import type { Mode } from '../domain/mode';

// ---- model ----

/**
 * Reconciliation's shared names (docs/reconciliation.md): the settlement providers, the outcome
 * of a settlement line, the settlement calendar (Bangkok days, each provider's delay) and the
 * workflow's input and result. Pure: the workflow, the activities and the gateway all read it.
 */
/** Who sends Talat a daily settlement file: the card acquirer, the PromptPay acquirer, the partner bank. */
export const SETTLEMENT_PROVIDERS = ['card', 'promptpay', 'bank'] as const;
export type SettlementProvider = (typeof SETTLEMENT_PROVIDERS)[number];

/**
 * Settlement days after the transaction's Bangkok day by which its line must have arrived: a
 * card capture of day T is settled in the file of T+1; PromptPay and bank refunds the same day.
 */
export const SETTLEMENT_DELAY_DAYS: Record<SettlementProvider, number> = { card: 1, promptpay: 0, bank: 0 };

/**
 * What one settlement line (or one Talat item no line settled) is:
 *  - matched: a payment or refund of Talat, same amount, settled once;
 *  - unknown: settled but not a paid payment / succeeded refund of Talat;
 *  - unsettled: Talat's, due in this file (after the provider's delay), settled by no file;
 *  - amount_mismatch: Talat's, settled for another amount;
 *  - duplicate: an item another line already settled;
 *  - fee: the provider's fee (not an exception).
 */
export const OUTCOMES = ['matched', 'unknown', 'unsettled', 'amount_mismatch', 'duplicate', 'fee'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const isException = (o: Outcome): boolean => o !== 'matched' && o !== 'fee';

/** How an operator closes an exception. */
export const RESOLUTIONS = ['accepted', 'refunded', 'written_off'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const BANGKOK_OFFSET_MS = 7 * 3_600_000;

/** The Bangkok calendar day (YYYY-MM-DD) of an instant. */
export const bangkokDayOf = (at: Date): string => new Date(at.getTime() + BANGKOK_OFFSET_MS).toISOString().slice(0, 10);
/** YYYY-MM-DD plus `days` (negative: back). */
export const addDays = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
/** The instant a Bangkok day starts. */
export const bangkokDayStart = (day: string): Date => new Date(Date.parse(`${day}T00:00:00Z`) - BANGKOK_OFFSET_MS);
/** A real calendar day (2026-02-30 is not). */
export const isCalendarDay = (day: string): boolean =>
  ISO_DATE.test(day) && new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) === day;

/** The object key of a provider's file of a day in the settlements bucket. */
export const settlementKey = (provider: SettlementProvider, day: string): string => `${provider}/${day}.csv`;
/** One run (and its rows) per provider, mode and settlement day. */
export const reconciliationRunId = (provider: SettlementProvider, mode: Mode, day: string): string =>
  `rcn_${provider}_${mode}_${day}`;
/** The schedule of a provider's daily run, and the workflow id of a run started for one day. */
export const reconciliationScheduleId = (provider: SettlementProvider, mode: Mode): string =>
  `reconciliation-${provider}-${mode}`;
export const reconciliationWorkflowId = (provider: SettlementProvider, mode: Mode, day: string): string =>
  `reconciliation-${provider}-${mode}-${day}`;

export const RECONCILIATION_WORKFLOW = 'reconcileSettlementWorkflow';

export interface ReconciliationInput {
  provider: SettlementProvider;
  mode: Mode;
  /** the settlement day; absent (a scheduled run): the Bangkok day before the scheduled time */
  date?: string;
  /** how long to wait for a file that is not there yet, and how often to look */
  fileWaitSeconds: number;
  filePollSeconds: number;
}

/** Counts only: the lines themselves stay in Postgres, out of the workflow's history. */
export interface ReconciliationCounts {
  lines: number;
  byOutcome: Record<Outcome, number>;
  amountSatang: Record<Outcome, number>;
  exceptions: number;
  expected: number;
}

export type ReconciliationResult =
  | ({ status: 'completed'; runId: string; date: string } & ReconciliationCounts)
  | { status: 'file_missing' | 'malformed'; runId: string; date: string; error: string };

export type ReconciliationWorkflow = (input: ReconciliationInput) => Promise<ReconciliationResult>;

/** ApplicationFailure type of a file the parser refused (non-retryable: the file must be replaced). */
export const MALFORMED_FILE = 'SettlementFileMalformed';
