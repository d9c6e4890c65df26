/**
 * What bench:engine and bench:bulkhead share: payments offered at a steady rate, and the
 * workflow-task schedule-to-start of the payment workflows read back from their histories.
 *
 * Schedule-to-start is measured per workflow task: WorkflowTaskScheduled -> WorkflowTaskStarted,
 * by the server's event times. A task that timed out unstarted (e.g. on a worker's sticky queue)
 * and was scheduled again counts from its first WorkflowTaskScheduled: that is the wait the
 * payment saw. Every workflow task of every payment workflow counts (the first one at start, the
 * ones a signal or the expiry timer schedule), and p99 is taken across all of them. A task still
 * unstarted when its history is read counts with its wait so far (a lower bound), and is counted
 * apart (`unstarted`): leaving it out would hide the longest waits.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = {
  WorkflowTaskScheduled: 5,
  WorkflowTaskStarted: 6,
  WorkflowTaskTimedOut: 8,
  WorkflowTaskFailed: 9,
} as const;

export const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const tsMs = (t: temporal.api.history.v1.IHistoryEvent['eventTime']) =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** `rate` calls per second of `create(i)` for `seconds`, each on its own schedule (an open loop). */
export async function offerSteadily(
  rate: number,
  seconds: number,
  create: (i: number) => Promise<void>,
): Promise<{ offered: number; errors: number; firstError: string; seconds: number }> {
  const offered = rate * seconds;
  const inflight: Promise<void>[] = [];
  const t0 = performance.now();
  let errors = 0;
  let firstError = '';
  for (let i = 0; i < offered; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    inflight.push(
      create(i).catch((e: Error) => {
        errors++;
        firstError ||= e.message;
      }),
    );
  }
  await Promise.all(inflight);
  return { offered, errors, firstError, seconds: (performance.now() - t0) / 1000 };
}

/** Schedule-to-start (ms) of every workflow task of the given workflows, and how many histories were read. */
export async function scheduleToStart(
  client: Client,
  workflowIds: string[],
): Promise<{
  s2s: number[];
  histories: number;
  unstarted: number;
  firstError: string;
  /** schedule-to-start by the task's place in its workflow: [first tasks, second tasks, later ones] */
  byOrdinal: [number[], number[], number[]];
  /** workflow tasks that timed out or failed (each is scheduled again: one more task, one more wait) */
  timedOut: number;
  failed: number;
  /** the failed ones by cause (e.g. UNHANDLED_COMMAND: a signal came while the task was completing) */
  failCauses: Record<string, number>;
  /** the timed-out ones by type (SCHEDULE_TO_START: unpolled on a worker's sticky queue; START_TO_CLOSE: polled, not completed in time) */
  timeoutTypes: Record<string, number>;
  /** when the tasks that timed out had been scheduled, in s after the first task of all: [earliest, latest] */
  timedOutWindow?: [number, number];
}> {
  const s2s: number[] = [];
  const byOrdinal: [number[], number[], number[]] = [[], [], []];
  let timedOut = 0;
  let failed = 0;
  const failCauses: Record<string, number> = {};
  const timeoutTypes: Record<string, number> = {};
  const timedOutScheduled: number[] = [];
  let firstScheduled = Infinity;
  const tally = (into: Record<string, number>, name: string) => (into[name] = (into[name] ?? 0) + 1);
  let histories = 0;
  let unstarted = 0;
  let firstError = '';
  for (const id of workflowIds) {
    let events: temporal.api.history.v1.IHistoryEvent[];
    try {
      events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
      histories++;
    } catch (e) {
      firstError ||= (e as Error).message;
      continue;
    }
    let scheduled: number | undefined;
    let ordinal = 0;
    for (const e of events) {
      if (e.eventType === EventType.WorkflowTaskScheduled) {
        scheduled ??= tsMs(e.eventTime);
        firstScheduled = Math.min(firstScheduled, scheduled);
      } else if (e.eventType === EventType.WorkflowTaskStarted && scheduled !== undefined) {
        const wait = tsMs(e.eventTime) - scheduled;
        s2s.push(wait);
        byOrdinal[Math.min(ordinal++, 2)].push(wait);
        scheduled = undefined;
      } else if (e.eventType === EventType.WorkflowTaskTimedOut) {
        timedOut++;
        if (scheduled !== undefined) timedOutScheduled.push(scheduled);
        const type = e.workflowTaskTimedOutEventAttributes?.timeoutType;
        const name = (type != null && temporal.api.enums.v1.TimeoutType[type]) || String(type);
        tally(timeoutTypes, name.replace('TIMEOUT_TYPE_', ''));
      } else if (e.eventType === EventType.WorkflowTaskFailed) {
        failed++;
        const cause = e.workflowTaskFailedEventAttributes?.cause;
        const name = (cause != null && temporal.api.enums.v1.WorkflowTaskFailedCause[cause]) || String(cause);
        tally(failCauses, name.replace('WORKFLOW_TASK_FAILED_CAUSE_', ''));
      }
    }
    if (scheduled !== undefined) {
      s2s.push(Date.now() - scheduled);
      unstarted++;
    }
  }
  const timedOutWindow: [number, number] | undefined = timedOutScheduled.length
    ? [
        (Math.min(...timedOutScheduled) - firstScheduled) / 1000,
        (Math.max(...timedOutScheduled) - firstScheduled) / 1000,
      ]
    : undefined;
  return {
    s2s,
    histories,
    unstarted,
    firstError,
    byOrdinal,
    timedOut,
    failed,
    failCauses,
    timeoutTypes,
    timedOutWindow,
  };
}

/** One line: p50, p99 and max of schedule-to-start, with the counts. */
export function s2sSummary(s2s: number[], histories: number, unstarted = 0): string {
  const f = (n: number) => `${n.toFixed(1)} ms`;
  return `p50 ${f(percentile(s2s, 50))}  p99 ${f(percentile(s2s, 99))}  max ${f(s2s.length ? Math.max(...s2s) : NaN)}  (${s2s.length} tasks of ${histories} workflows, ${unstarted} not started yet: counted with their wait so far)`;
}

/** One line: p99 of the first, second and later workflow tasks of each workflow, and the tasks that timed out or failed. */
export function s2sBreakdown(
  r: Pick<Awaited<ReturnType<typeof scheduleToStart>>, 'byOrdinal' | 'timedOut' | 'failed'> & {
    failCauses?: Record<string, number>;
    timeoutTypes?: Record<string, number>;
    timedOutWindow?: [number, number];
  },
): string {
  const f = (xs: number[], name: string) =>
    `${name} p50/p90/p99 ${[50, 90, 99].map((p) => percentile(xs, p).toFixed(0)).join('/')} ms (${xs.length})`;
  const [first, second, later] = r.byOrdinal;
  const named = (counts: Record<string, number> | undefined) => {
    const s = Object.entries(counts ?? {})
      .map(([c, n]) => `${c} ${n}`)
      .join(', ');
    return s ? ` (${s})` : '';
  };
  const window = r.timedOutWindow
    ? ` scheduled ${r.timedOutWindow[0].toFixed(1)}-${r.timedOutWindow[1].toFixed(1)} s into the run`
    : '';
  return `${f(first, '1st task')}, ${f(second, '2nd')}, ${f(later, 'later')}; ${r.timedOut} timed out${named(r.timeoutTypes)}${window}, ${r.failed} failed${named(r.failCauses)}`;
}
