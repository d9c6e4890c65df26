/**
 * The operator's reconciliation API (docs/reconciliation.md), for keys with the operator scopes
 * reconciliation:read (GETs) and reconciliation:manage (POSTs); a key sees the runs of its mode.
 *   GET  /reconciliation/{provider}/{date}                  summary and exceptions (cursor pages)
 *   GET  /reconciliation/{provider}/{date}/export.csv       every row of the day as CSV
 *   POST /reconciliation/{provider}/{date}/exceptions/{id}/resolve   {resolution, note}
 *   POST /reconciliation/{provider}/{date}/run              reconcile that day again now
 *   GET  /reconciliation/{provider}/schedule                the provider's schedule
 *   POST /reconciliation/{provider}/schedule/{pause|unpause|trigger}
 */
import Router from '@koa/router';
import { stringify } from 'csv-stringify/sync';
import type { Client } from '@temporalio/client';
import type { AppDeps } from '../http/deps';
import { AppError, ErrorCode } from '../domain/errors';
import { satangToThb } from '../domain/money';
import {
  isCalendarDay,
  OUTCOMES,
  RECONCILIATION_WORKFLOW,
  reconciliationRunId,
  reconciliationScheduleId,
  reconciliationWorkflowId,
  RESOLUTIONS,
  SETTLEMENT_PROVIDERS,
  type ReconciliationInput,
} from './index';
import { taskQueueOf } from '../domain/temporal';
import { apiErrors, guards, rateLimitHeaders, security } from '../http/guards';
import { requireApiKey } from '../http/middleware/api-key';
import { registry, z } from '../http/openapi';
import { afterCursor, pageFields, pageOf, PageQuery } from '../http/pagination';
import { validate } from '../http/validate';
import { TEMPORAL_CALL_TIMEOUT_MS, withinDeadline } from '../temporal/calls';
import { bindReconciliationMetrics } from './metrics';
import { getRun, linesQuery, resolveException, type LineRow } from './repository';

const Provider = z.enum(SETTLEMENT_PROVIDERS);
const Day = z.string().refine(isCalendarDay, 'a calendar day YYYY-MM-DD');
const DayParams = z.object({ provider: Provider, date: Day.openapi({ example: '2026-11-21' }) });
const ProviderParams = z.object({ provider: Provider });
const ExceptionParams = DayParams.extend({
  id: z.string().min(1).max(120).openapi({ example: 'rcn_promptpay_sandbox_2026-11-21:000017' }),
});
const ExceptionsQuery = PageQuery.extend({
  outcome: z
    .enum(['exceptions', 'all', ...OUTCOMES])
    .default('exceptions')
    .openapi({ description: 'exceptions (default: every outcome but matched and fee), all, or one outcome' }),
  state: z.enum(['open', 'resolved', 'all']).default('all'),
}).strict();
const ResolveIn = registry.register(
  'ReconciliationResolveIn',
  z
    .object({ resolution: z.enum(RESOLUTIONS), note: z.string().trim().min(1).max(2000) })
    .strict()
    .openapi({ example: { resolution: 'written_off', note: 'bank fee adjustment confirmed by phone, ticket 4471' } }),
);
const NoteIn = z
  .object({ note: z.string().trim().max(500).optional() })
  .strict()
  .openapi({ example: { note: 'provider settlement files late during the bank holiday' } });

const Row = registry.register(
  'ReconciliationLine',
  z
    .object({
      id: z.string(),
      lineNo: z
        .number()
        .int()
        .nullable()
        .openapi({ description: 'line of the file; null: a Talat item no line settled' }),
      outcome: z.enum(OUTCOMES),
      expected: z.boolean().openapi({ description: 'a late payment or conflict Talat had already recorded' }),
      kind: z.enum(['payment', 'refund', 'fee']),
      reference: z.string().nullable(),
      amount: z.number().openapi({ description: 'THB settled (unsettled: Talat amount)' }),
      talatAmount: z.number().nullable(),
      paymentId: z.string().nullable(),
      refundId: z.string().nullable(),
      orderId: z.string().nullable(),
      txnAt: z.string().nullable(),
      detail: z.string().nullable(),
      resolution: z.enum(RESOLUTIONS).nullable(),
      resolutionNote: z.string().nullable(),
      resolvedAt: z.string().nullable(),
    })
    .openapi({
      example: {
        id: 'rcn_promptpay_sandbox_2026-11-21:000017',
        lineNo: 17,
        outcome: 'amount_mismatch',
        expected: false,
        kind: 'payment',
        reference: 'ORD2001DNN960PGFI',
        amount: 120,
        talatAmount: 120.5,
        paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
        refundId: null,
        orderId: 'ORD-2001',
        txnAt: '2026-11-21T08:00:01.000Z',
        detail: 'settled 120.00 THB, Talat recorded 120.50 THB',
        resolution: 'accepted',
        resolutionNote: 'the bank kept a 0.50 THB fee, confirmed by phone',
        resolvedAt: '2026-11-22T09:12:40.551Z',
      },
    }),
);
const Summary = z.object({
  lines: z.number().int(),
  exceptions: z.number().int(),
  expected: z.number().int(),
  byOutcome: z.record(z.number().int()),
  amounts: z.record(z.number()).openapi({ description: 'THB by outcome' }),
});
const Run = registry.register(
  'ReconciliationRun',
  z
    .object({
      id: z.string(),
      provider: Provider,
      mode: z.enum(['live', 'sandbox']),
      date: z.string(),
      status: z.enum(['waiting_file', 'completed', 'file_missing', 'malformed']),
      fileKey: z.string(),
      error: z.string().nullable().openapi({ description: 'malformed: the line and what is wrong with it' }),
      completedAt: z.string().nullable(),
      summary: Summary.nullable(),
    })
    .openapi({
      example: {
        id: 'rcn_promptpay_sandbox_2026-11-21',
        provider: 'promptpay',
        mode: 'sandbox',
        date: '2026-11-21',
        status: 'completed',
        fileKey: 'promptpay/2026-11-21.csv',
        error: null,
        completedAt: '2026-11-22T00:05:12.331Z',
        summary: {
          lines: 212,
          exceptions: 1,
          expected: 0,
          byOutcome: { matched: 208, fee: 3, amount_mismatch: 1, unknown: 0, unsettled: 0, duplicate: 0 },
          amounts: { matched: 31480.25, fee: 42.5, amount_mismatch: 120, unknown: 0, unsettled: 0, duplicate: 0 },
        },
      },
    }),
);
const RunPage = registry.register('ReconciliationDay', z.object({ run: Run, rows: z.array(Row), ...pageFields }));
const ScheduleOut = registry.register(
  'ReconciliationSchedule',
  z
    .object({
      scheduleId: z.string(),
      paused: z.boolean(),
      note: z.string().nullable(),
      nextRuns: z.array(z.string()),
      recentRuns: z.array(z.object({ scheduledAt: z.string(), workflowId: z.string() })),
    })
    .openapi({
      example: {
        scheduleId: 'reconciliation-promptpay-live',
        paused: false,
        note: 'created by Talat at start-up',
        nextRuns: ['2026-11-22T23:00:00.000Z', '2026-11-23T23:00:00.000Z', '2026-11-24T23:00:00.000Z'],
        recentRuns: [
          {
            scheduledAt: '2026-11-21T23:00:00.000Z',
            workflowId: 'reconciliation-promptpay-live-2026-11-21',
          },
        ],
      },
    }),
);

const ok = <T extends z.ZodTypeAny>(status: number, body: T, description: string) => ({
  [status]: {
    description,
    headers: rateLimitHeaders,
    content: { 'application/json': { schema: z.object({ statusCode: z.literal(status), body }) } },
  },
});
const common = { tags: ['reconciliation'], security };
const base = '/reconciliation/{provider}';
for (const [method, path, summary, request, responses] of [
  [
    'get',
    `${base}/{date}`,
    'A settlement day: summary and rows (exceptions by default)',
    { params: DayParams, query: ExceptionsQuery },
    { ...ok(200, RunPage, 'one page'), ...apiErrors([400, 401, 403, 404, 429]) },
  ],
  [
    'get',
    `${base}/{date}/export.csv`,
    'Every row of the day as CSV',
    { params: DayParams },
    {
      200: {
        description: 'CSV',
        content: {
          'text/csv': {
            schema: { type: 'string' },
            example:
              'line_no,outcome,reference,amount,talat_amount,order_id,detail\n17,amount_mismatch,ORD2001DNN960PGFI,120.00,120.50,ORD-2001,settled 120.00 THB\n',
          },
        },
      },
      ...apiErrors([400, 401, 403, 404, 429]),
    },
  ],
  [
    'post',
    `${base}/{date}/exceptions/{id}/resolve`,
    'Close an exception with a note',
    { params: ExceptionParams, body: { content: { 'application/json': { schema: ResolveIn } } } },
    { ...ok(200, Row, 'the resolved row'), ...apiErrors([400, 401, 403, 404, 409, 429]) },
  ],
  [
    'post',
    `${base}/{date}/run`,
    'Reconcile the day now (again): a workflow',
    { params: DayParams },
    {
      ...ok(
        202,
        z
          .object({ workflowId: z.string() })
          .openapi({ example: { workflowId: 'reconciliation-promptpay-live-2026-11-21' } }),
        'started',
      ),
      ...apiErrors([400, 401, 403, 429, 503]),
    },
  ],
  [
    'get',
    `${base}/schedule`,
    "The provider's daily schedule",
    { params: ProviderParams },
    { ...ok(200, ScheduleOut, 'the schedule'), ...apiErrors([400, 401, 403, 404, 429, 503]) },
  ],
  [
    'post',
    `${base}/schedule/pause`,
    'Pause the schedule',
    { params: ProviderParams, body: { content: { 'application/json': { schema: NoteIn } } } },
    { ...ok(200, ScheduleOut, 'paused'), ...apiErrors([400, 401, 403, 404, 429, 503]) },
  ],
  [
    'post',
    `${base}/schedule/unpause`,
    'Unpause the schedule',
    { params: ProviderParams, body: { content: { 'application/json': { schema: NoteIn } } } },
    { ...ok(200, ScheduleOut, 'running'), ...apiErrors([400, 401, 403, 404, 429, 503]) },
  ],
  [
    'post',
    `${base}/schedule/trigger`,
    'Run the schedule now (reconciles yesterday)',
    { params: ProviderParams },
    { ...ok(202, ScheduleOut, 'triggered'), ...apiErrors([400, 401, 403, 404, 429, 503]) },
  ],
] as const)
  registry.registerPath({ ...common, method, path, summary, request, responses } as Parameters<
    typeof registry.registerPath
  >[0]);

const iso = (d: unknown) => (d ? new Date(d as string).toISOString() : null);
const rowOut = (r: LineRow) => ({
  id: r.id,
  lineNo: (r.line_no as number | null) ?? null,
  outcome: r.outcome,
  expected: Boolean(r.expected),
  kind: r.kind as 'payment',
  reference: (r.reference as string | null) ?? null,
  amount: satangToThb(Number(r.amount_satang)),
  talatAmount: r.talat_amount_satang == null ? null : satangToThb(Number(r.talat_amount_satang)),
  paymentId: (r.payment_id as string | null) ?? null,
  refundId: r.kind === 'refund' ? ((r.item_id as string | null) ?? null) : null,
  orderId: (r.order_id as string | null) ?? null,
  txnAt: iso(r.txn_at),
  detail: (r.detail as string | null) ?? null,
  resolution: (r.resolution as 'accepted' | null) ?? null,
  resolutionNote: (r.resolution_note as string | null) ?? null,
  resolvedAt: iso(r.resolved_at),
});

export function reconciliationRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db' | 'temporal'>): Router {
  const r = new Router({ prefix: '/reconciliation' });
  const { limited } = guards(deps);
  const read = requireApiKey('reconciliation:read');
  const manage = requireApiKey('reconciliation:manage');
  const { db } = deps;
  const client: Client = deps.temporal.client;
  bindReconciliationMetrics(db);

  const runOf = async (provider: z.infer<typeof Provider>, mode: 'live' | 'sandbox', date: string) => {
    const run = await getRun(db, reconciliationRunId(provider, mode, date));
    if (!run)
      throw new AppError(ErrorCode.NOT_FOUND, `No reconciliation of ${provider} for ${date}`, { provider, date });
    return run;
  };
  const temporal = <T>(fn: () => Promise<T>) => withinDeadline(client, TEMPORAL_CALL_TIMEOUT_MS, fn);
  const scheduleOf = async (provider: z.infer<typeof Provider>, mode: 'live' | 'sandbox') => {
    const handle = client.schedule.getHandle(reconciliationScheduleId(provider, mode));
    const d = await temporal(() => handle.describe()).catch((e: Error) => {
      if (e.name === 'ScheduleNotFoundError')
        throw new AppError(ErrorCode.NOT_FOUND, `No ${mode} reconciliation schedule for ${provider}`, { provider });
      throw e;
    });
    return {
      handle,
      out: {
        scheduleId: d.scheduleId,
        paused: d.state.paused,
        note: d.state.note ?? null,
        nextRuns: d.info.nextActionTimes.slice(0, 3).map((t) => t.toISOString()),
        recentRuns: d.info.recentActions.slice(-5).map((a) => ({
          scheduledAt: a.scheduledAt.toISOString(),
          workflowId: a.action.workflow.workflowId,
        })),
      },
    };
  };

  // the schedule's routes first: /{provider}/schedule is not a day
  r.get('/:provider/schedule', limited, read, async (ctx) => {
    const { provider } = validate(ProviderParams, ctx.params);
    ctx.body = { statusCode: 200, body: (await scheduleOf(provider, ctx.state.apiKey!.mode)).out };
  });
  r.post('/:provider/schedule/:action', limited, manage, async (ctx) => {
    const { provider, action } = validate(
      ProviderParams.extend({ action: z.enum(['pause', 'unpause', 'trigger']) }),
      ctx.params,
    );
    const { note } = validate(NoteIn, ctx.request.body);
    const mode = ctx.state.apiKey!.mode;
    const { handle } = await scheduleOf(provider, mode);
    const by = `${note ?? action} (key ${ctx.state.apiKey!.id})`;
    await temporal(() =>
      action === 'pause' ? handle.pause(by) : action === 'unpause' ? handle.unpause(by) : handle.trigger(),
    );
    ctx.status = action === 'trigger' ? 202 : 200;
    ctx.body = { statusCode: ctx.status, body: (await scheduleOf(provider, mode)).out };
  });

  r.get('/:provider/:date', limited, read, async (ctx) => {
    const { provider, date } = validate(DayParams, ctx.params);
    const q = validate(ExceptionsQuery, ctx.query);
    const run = await runOf(provider, ctx.state.apiKey!.mode, date);
    const outcomes =
      q.outcome === 'all'
        ? undefined
        : q.outcome === 'exceptions'
          ? OUTCOMES.filter((o) => o !== 'matched' && o !== 'fee')
          : [q.outcome];
    const query = linesQuery(db, run.id, { outcomes, state: q.state });
    afterCursor(query, { alias: 'l', table: 'reconciliation_lines', cursor: q.starting_after, order: 'asc' });
    const page = await pageOf(query, q.limit, rowOut);
    const s = run.status === 'completed' ? run.summary : undefined;
    ctx.body = {
      statusCode: 200,
      body: {
        run: {
          id: run.id,
          provider: run.provider,
          mode: run.mode,
          date: run.settlement_date,
          status: run.status,
          fileKey: run.file_key,
          error: run.error,
          completedAt: iso(run.completed_at),
          summary:
            s && s.byOutcome && s.amountSatang
              ? {
                  lines: s.lines,
                  exceptions: s.exceptions,
                  expected: s.expected,
                  byOutcome: s.byOutcome,
                  amounts: Object.fromEntries(Object.entries(s.amountSatang).map(([o, v]) => [o, satangToThb(v)])),
                }
              : null,
        },
        rows: page.items,
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      },
    };
  });

  r.get('/:provider/:date/export.csv', limited, read, async (ctx) => {
    const { provider, date } = validate(DayParams, ctx.params);
    const run = await runOf(provider, ctx.state.apiKey!.mode, date);
    const rows = (await linesQuery(db, run.id, {}).orderByRaw('l.line_no NULLS LAST, l.id')) as LineRow[];
    const cols = [
      'id',
      'lineNo',
      'outcome',
      'expected',
      'kind',
      'reference',
      'amount',
      'talatAmount',
      'paymentId',
      'refundId',
      'orderId',
      'txnAt',
      'detail',
      'resolution',
      'resolutionNote',
      'resolvedAt',
    ] as const;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="reconciliation-${provider}-${run.mode}-${date}.csv"`);
    ctx.body = stringify([cols as unknown as string[], ...rows.map(rowOut).map((o) => cols.map((c) => o[c]))], {
      // a cell a spreadsheet would run as a formula (=, +, @) is written as text
      cast: { boolean: (b) => String(b), string: (v) => (/^[=+@\t\r]/.test(v) ? `'${v}` : v) },
    });
  });

  r.post('/:provider/:date/exceptions/:id/resolve', limited, manage, async (ctx) => {
    const { provider, date, id } = validate(ExceptionParams, ctx.params);
    const body = validate(ResolveIn, ctx.request.body);
    ctx.body = {
      statusCode: 200,
      body: await resolveDayException(
        db,
        { provider, mode: ctx.state.apiKey!.mode, date },
        id,
        body,
        ctx.state.apiKey!.id,
      ),
    };
  });

  r.post('/:provider/:date/run', limited, manage, async (ctx) => {
    const { provider, date } = validate(DayParams, ctx.params);
    validate(NoteIn, ctx.request.body);
    const mode = ctx.state.apiKey!.mode;
    const workflowId = reconciliationWorkflowId(provider, mode, date);
    // the operator asks for now: no file now is a missing file
    const input: ReconciliationInput = { provider, mode, date, fileWaitSeconds: 0, filePollSeconds: 1 };
    await temporal(() =>
      client.workflow.start(RECONCILIATION_WORKFLOW, {
        taskQueue: taskQueueOf('background', deps.temporal.taskQueue),
        workflowId,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      }),
    );
    ctx.status = 202;
    ctx.body = { statusCode: 202, body: { workflowId } };
  });
  return r;
}

type DayRef = { provider: string; mode: 'live' | 'sandbox'; date: string };
const runOfDay = async (db: AppDeps['db'], d: DayRef) => {
  const day = validate(DayParams, { provider: d.provider, date: d.date });
  const run = await getRun(db, reconciliationRunId(day.provider, d.mode, day.date));
  if (!run) throw new AppError(ErrorCode.NOT_FOUND, `No reconciliation of ${d.provider} for ${d.date}`, d);
  return run;
};

/** A day's run and its first `limit` exceptions (not matched, not fee): the console's read. */
export async function dayExceptions(db: AppDeps['db'], d: DayRef, limit = 200) {
  const run = await runOfDay(db, d);
  const outcomes = OUTCOMES.filter((o) => o !== 'matched' && o !== 'fee');
  const rows = (await linesQuery(db, run.id, { outcomes }).orderBy('l.id').limit(limit)) as LineRow[];
  return { status: run.status, summary: run.summary ?? null, rows: rows.map(rowOut) };
}

/** Resolve one open exception of a day with a note (404 unknown, 409 not open): the route's and the console's. */
export async function resolveDayException(
  db: AppDeps['db'],
  d: DayRef,
  id: string,
  body: z.infer<typeof ResolveIn>,
  by: string,
) {
  const run = await runOfDay(db, d);
  const input = validate(ResolveIn, body);
  const row = await resolveException(db, run.id, id, { ...input, by });
  if (!row) {
    const found = await linesQuery(db, run.id, {}).where('l.id', id).first();
    if (!found) throw new AppError(ErrorCode.NOT_FOUND, `No row ${id} in ${run.id}`, { id });
    throw new AppError(
      ErrorCode.CONFLICT,
      found.resolution
        ? `${id} is already resolved (${found.resolution})`
        : `${id} is ${found.outcome}: not an exception`,
      { id, outcome: found.outcome, resolution: found.resolution },
    );
  }
  return rowOut(row);
}
