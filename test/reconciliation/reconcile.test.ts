/**
 * Reconciliation on the real stack (Postgres, Temporal, the object store, an SMTP sink):
 * generated days of thousands of lines of each provider mixing every outcome, each line and
 * each unsettled item classified as generated, exactly once; the same day run again and the same
 * file arriving twice change nothing; a late file is waited for; a malformed one imports nothing;
 * the digest and the alert e-mails; the operator API (who may use it, pages, CSV, resolving);
 * the order's timeline and the metrics.
 */
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import {
  RECONCILIATION_WORKFLOW,
  reconciliationRunId,
  settlementKey,
  type ReconciliationInput,
  type ReconciliationResult,
  type SettlementProvider,
} from '../../src/reconciliation';
import { taskQueueOf } from '../../src/domain/temporal';
import { createSettlementStore, type SettlementStore } from '../../src/reconciliation/files';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { createTestStack, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paymentError, request } from '../payments/support';
import { generateDay, settlementEnv, type GeneratedDay } from './generate';

let stack: TestStack;
let smtp: SmtpSink;
let store: SettlementStore;
let operator: string;
const tag = randomUUID().slice(0, 6);

beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await createTestStack({
    env: {
      ...settlementEnv(smtp.url),
    },
  });
  store = createSettlementStore(stack.config);
  operator = (await newKey(stack.db, { scopes: ['reconciliation:read', 'reconciliation:manage'] })).key;
}, 120_000);
afterAll(async () => {
  await stack.close();
  await smtp.stop();
});

const api = () => request(stack.app.callback());
const run = (provider: SettlementProvider, date: string, opts: Partial<ReconciliationInput> = {}) =>
  stack.client.workflow.start(RECONCILIATION_WORKFLOW, {
    taskQueue: taskQueueOf('background', stack.taskQueue),
    workflowId: uniq(`recon-${provider}-${date}`),
    args: [{ provider, mode: 'sandbox', date, fileWaitSeconds: 0, filePollSeconds: 1, ...opts }],
  });
const reconcile = async (provider: SettlementProvider, date: string, opts: Partial<ReconciliationInput> = {}) =>
  (await (await run(provider, date, opts)).result()) as ReconciliationResult;

type Row = { id: string; line_no: number | null; outcome: string; expected: boolean; item_id: string | null };
const rowsOf = (provider: SettlementProvider, date: string): Promise<Row[]> =>
  stack
    .db('reconciliation_lines')
    .where({ run_id: reconciliationRunId(provider, 'sandbox', date) })
    .orderBy('id')
    .select('id', 'line_no', 'outcome', 'expected', 'item_id');

/** Every line once with its generated outcome, every unsettled item once, nothing else. */
function expectClassified(day: GeneratedDay, rows: Row[]) {
  const lines = rows.filter((r) => r.line_no !== null);
  expect(lines).toHaveLength(day.lines.size);
  expect(new Map(lines.map((r) => [r.line_no, { outcome: r.outcome, expected: r.expected }]))).toEqual(day.lines);
  const unsettled = rows.filter((r) => r.line_no === null);
  expect(unsettled.every((r) => r.outcome === 'unsettled')).toBe(true);
  expect(new Map(unsettled.map((r) => [r.item_id, r.expected]))).toEqual(day.unsettled);
}

const days: Partial<Record<SettlementProvider, GeneratedDay>> = {};
const DATES: Record<SettlementProvider, string> = { card: '2025-03-11', promptpay: '2025-03-12', bank: '2025-03-13' };

describe('reconciliation of generated days', () => {
  it.each(['card', 'promptpay', 'bank'] as const)(
    '%s: thousands of lines, every outcome, each line classified as generated, exactly once',
    async (provider) => {
      const date = DATES[provider];
      const day = await generateDay(stack.db, provider, date, 2000, `${tag}${provider[0]}`);
      days[provider] = day;
      expect(day.lines.size).toBeGreaterThanOrEqual(1800);
      for (const o of ['matched', 'unknown', 'unsettled', 'amount_mismatch', 'duplicate', 'fee'] as const)
        expect(day.counts[o]).toBeGreaterThan(0);
      await store.put(settlementKey(provider, date), day.text);
      const started = Date.now();
      const r = await reconcile(provider, date);
      const seconds = (Date.now() - started) / 1000;
      // the figure the docs quote (measured on the shared 2-core machine)
      console.log(`${provider}: ${day.lines.size} lines reconciled in ${seconds.toFixed(2)} s (workflow end to end)`);
      expect(r).toMatchObject({ status: 'completed', byOutcome: day.counts, lines: day.lines.size });
      expectClassified(day, await rowsOf(provider, date));
    },
  );

  it('the same day again, and the same file arriving twice, give the same rows (not twice the rows)', async () => {
    const { card } = days as Required<typeof days>;
    const before = await rowsOf('card', card.date);
    const again = await reconcile('card', card.date);
    expect(again).toMatchObject({ status: 'completed', byOutcome: card.counts });
    await store.put(settlementKey('card', card.date), card.text);
    await reconcile('card', card.date);
    const after = await rowsOf('card', card.date);
    expect(after).toEqual(before);
  });

  it('a file arriving late is waited for, then reconciled', async () => {
    const date = '2025-03-21';
    const day = await generateDay(stack.db, 'promptpay', date, 200, `${tag}late`);
    const handle = await run('promptpay', date, { fileWaitSeconds: 120, filePollSeconds: 1 });
    const runId = reconciliationRunId('promptpay', 'sandbox', date);
    await waitFor(
      async () => (await stack.db('reconciliation_runs').where({ id: runId }).first())?.status === 'waiting_file',
      20_000,
      'the run waiting for its file',
    );
    await store.put(settlementKey('promptpay', date), day.text);
    expect(await handle.result()).toMatchObject({ status: 'completed', byOutcome: day.counts });
    expectClassified(day, await rowsOf('promptpay', date));
  });

  it('a malformed file imports nothing and says which line; its fixed version then reconciles', async () => {
    const date = '2025-03-22';
    const day = await generateDay(stack.db, 'bank', date, 300, `${tag}bad`);
    const lines = day.text.split('\r\n');
    lines[150] = lines[150].replace(' DR', ' XX');
    await store.put(settlementKey('bank', date), lines.join('\r\n'));
    const r = await reconcile('bank', date);
    expect(r).toEqual(
      expect.objectContaining({ status: 'malformed', error: expect.stringMatching(/line 151: amount/) }),
    );
    expect(await rowsOf('bank', date)).toEqual([]);
    await waitFor(
      async () => smtp.messages.find((m) => m.subject.includes('bank 2025-03-22') && /malformed/.test(m.subject)),
      20_000,
      'the malformed-file alert',
    );
    await store.put(settlementKey('bank', date), day.text);
    expect(await reconcile('bank', date)).toMatchObject({ status: 'completed', byOutcome: day.counts });
    expectClassified(day, await rowsOf('bank', date));
  });

  it('a day without a file ends as file_missing', async () => {
    expect(await reconcile('card', '2025-03-23')).toMatchObject({ status: 'file_missing' });
    const res = await api().get('/reconciliation/card/2025-03-23').set('X-API-Key', operator);
    expect(res.body.body.run).toMatchObject({ status: 'file_missing', error: expect.stringMatching(/no file/) });
  });

  it('e-mails a digest of a day with exceptions (once) and alerts on items unsettled past the window', async () => {
    const digest = await waitFor(
      async () =>
        smtp.messages.find((m) => m.subject.includes(`card ${DATES.card} (sandbox)`) && /exceptions/.test(m.subject)),
      20_000,
      'the digest',
    );
    expect(digest.text).toMatch(/amount_mismatch/);
    expect(digest.text).toMatch(/\(expected\)|expected/);
    expect(smtp.messages.filter((m) => m.subject === digest.subject)).toHaveLength(1); // run three times, sent once
    const alert = smtp.messages.find((m) => /Alert: \d+ card items? not settled 1 day/.test(m.subject));
    expect(alert).toBeDefined();
  });
});

describe('the operator API', () => {
  const path = () => `/reconciliation/card/${DATES.card}`;

  it('refuses no key (401), a merchant key without the operator scope (403), and shows nothing to the other mode (404)', async () => {
    const merchant = (await newKey(stack.db)).key; // every merchant scope
    const reader = (await newKey(stack.db, { scopes: ['reconciliation:read'] })).key;
    const live = (await newKey(stack.db, { scopes: ['reconciliation:read', 'reconciliation:manage'], mode: 'live' }))
      .key;
    expect((await api().get(path())).status).toBe(401);
    const forbidden = await api().get(path()).set('X-API-Key', merchant);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual(paymentError('FORBIDDEN', { requiredScope: 'reconciliation:read' }));
    expect((await api().get(`${path()}/export.csv`).set('X-API-Key', merchant)).status).toBe(403);
    const resolve = `${path()}/exceptions/x/resolve`;
    expect((await api().post(resolve).send({ resolution: 'accepted', note: 'n' })).status).toBe(401);
    expect(
      (await api().post(resolve).set('X-API-Key', merchant).send({ resolution: 'accepted', note: 'n' })).status,
    ).toBe(403);
    expect(
      (await api().post(resolve).set('X-API-Key', reader).send({ resolution: 'accepted', note: 'n' })).status,
    ).toBe(403);
    expect((await api().post('/reconciliation/card/schedule/pause').set('X-API-Key', reader).send({})).status).toBe(
      403,
    );
    expect((await api().post(`${path()}/run`).set('X-API-Key', merchant).send({})).status).toBe(403);
    expect((await api().get(path()).set('X-API-Key', live)).status).toBe(404);
  });

  it.each([
    ['/reconciliation/paypal/2025-03-11', 'INVALID_INPUT'],
    ['/reconciliation/card/2025-02-30', 'INVALID_INPUT'],
    ['/reconciliation/card/20250311', 'INVALID_INPUT'],
    ['/reconciliation/card/2025-03-11?outcome=lost', 'INVALID_INPUT'],
    ['/reconciliation/card/2025-03-11?limit=0', 'INVALID_INPUT'],
    ['/reconciliation/card/2025-03-11?colour=red', 'INVALID_INPUT'],
    ['/reconciliation/card/2024-01-01', 'NOT_FOUND'],
  ])('GET %s -> %s in the error envelope', async (url, code) => {
    const res = await api().get(url).set('X-API-Key', operator);
    expect(res.body).toEqual(paymentError(code));
  });

  it('summary and every exception across cursor pages; the CSV has every row', async () => {
    const day = days.card!;
    const first = await api().get(`${path()}?limit=200`).set('X-API-Key', operator);
    expect(first.status).toBe(200);
    const { run } = first.body.body;
    expect(run).toMatchObject({
      status: 'completed',
      date: DATES.card,
      mode: 'sandbox',
      summary: { byOutcome: day.counts },
    });
    const exceptions = day.lines.size + day.unsettled.size - day.counts.matched - day.counts.fee;
    expect(run.summary.exceptions).toBe(exceptions);
    const seen = new Set<string>();
    let page = first.body.body;
    for (;;) {
      for (const r of page.rows) {
        expect(['matched', 'fee']).not.toContain(r.outcome);
        seen.add(r.id);
      }
      if (!page.hasMore) break;
      page = (await api().get(`${path()}?limit=200&starting_after=${page.nextCursor}`).set('X-API-Key', operator)).body
        .body;
    }
    expect(seen.size).toBe(exceptions);

    const csv = await api().get(`${path()}/export.csv`).set('X-API-Key', operator);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const records = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(records).toHaveLength(day.lines.size + day.unsettled.size);
    expect(records.filter((r) => r.outcome === 'duplicate')).toHaveLength(day.counts.duplicate);
  });

  it('resolves an exception with a note, once; refuses a bad body, a matched row and an unknown one', async () => {
    const rows = await rowsOf('card', DATES.card);
    const x = rows.find((r) => r.outcome === 'amount_mismatch')!;
    const matched = rows.find((r) => r.outcome === 'matched')!;
    const url = (id: string) => `${path()}/exceptions/${id}/resolve`;
    const post = (id: string, body: unknown) =>
      api()
        .post(url(id))
        .set('X-API-Key', operator)
        .send(body as object);
    expect((await post(x.id, { resolution: 'forgiven', note: 'n' })).body).toEqual(paymentError('INVALID_INPUT'));
    expect((await post(x.id, { resolution: 'accepted' })).body).toEqual(paymentError('MISSING_FIELD'));
    expect((await post(x.id, { resolution: 'accepted', note: '  ' })).body).toEqual(paymentError('INVALID_INPUT'));
    expect((await post(x.id, { resolution: 'accepted', note: 'n', extra: 1 })).body).toEqual(
      paymentError('INVALID_INPUT'),
    );
    const ok = await post(x.id, { resolution: 'written_off', note: 'the acquirer kept 10 THB; written off' });
    expect(ok.status).toBe(200);
    expect(ok.body.body).toMatchObject({
      id: x.id,
      resolution: 'written_off',
      resolutionNote: expect.stringMatching(/kept/),
    });
    expect((await post(x.id, { resolution: 'accepted', note: 'again' })).body).toEqual(paymentError('CONFLICT'));
    expect((await post(matched.id, { resolution: 'accepted', note: 'n' })).body).toEqual(paymentError('CONFLICT'));
    expect((await post('rcn_card_sandbox_2025-03-11:999999', { resolution: 'accepted', note: 'n' })).body).toEqual(
      paymentError('NOT_FOUND'),
    );
    // a note that a spreadsheet would run as a formula is exported as text
    const other = rows.find((r) => r.outcome === 'unknown')!;
    expect((await post(other.id, { resolution: 'accepted', note: '=HYPERLINK("x")' })).status).toBe(200);
    const csv = await api().get(`${path()}/export.csv`).set('X-API-Key', operator);
    const exported = (parse(csv.text, { columns: true }) as Record<string, string>[]).find((r) => r.id === other.id);
    expect(exported?.resolutionNote).toBe('\'=HYPERLINK("x")');
    // a resolution survives the day being run again
    await reconcile('card', DATES.card);
    const open = await api().get(`${path()}?state=resolved`).set('X-API-Key', operator);
    expect(open.body.body.rows.map((r: { id: string }) => r.id)).toContain(x.id);
  });

  it("each exception is in its order's timeline; the gauges are in /metrics", async () => {
    const orderId = days.card!.exceptionOrderId;
    const key = (await newKey(stack.db, { scopes: ['payments:read'] })).key;
    const t = await api().get(`/payments/${orderId}/timeline`).set('X-API-Key', key);
    expect(t.status).toBe(200);
    expect(t.body.body.entries).toContainEqual(
      expect.objectContaining({
        type: 'reconciliation.exception',
        details: expect.objectContaining({ provider: 'card', outcome: 'unknown', expected: true }),
      }),
    );
    const m = await api().get('/metrics');
    expect(m.text).toMatch(/talat_reconciliation_lines\{provider="card",outcome="matched"\} [1-9]/);
    expect(m.text).toMatch(/talat_reconciliation_amount_thb\{provider="bank",outcome="amount_mismatch"\} [1-9]/);
    expect(m.text).toMatch(/talat_reconciliation_open_exceptions\{provider="promptpay"\} [1-9]/);
  });
});
