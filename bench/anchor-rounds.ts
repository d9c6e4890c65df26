/**
 * What bench/anchor.ts runs on either stack (the dev server of `npm start`, or the cluster): the
 * load driver (bench/anchor-driver.cjs, a child process of its own), alternating rounds of Talat
 * and the minimal app, the counters read around each round, and the report with the ratios.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client as PgClient } from 'pg';
import { signPayload } from '../src/callbacks/verify';
import { operationCounts } from '../src/stack/temporal';
import { minimalSignature } from './minimal/app';
import { percentile } from './steady';
import { benchPaymentIds, say } from './support';

export type Side = 'minimal' | 'talat';
interface Req {
  url: string;
  headers: Record<string, string>;
  body: string;
}
interface Payment {
  orderId: string;
  create: Req;
  callback: Req;
}
interface RoundResult {
  errors: number;
  firstError: string;
  create: number[];
  callback: number[];
  webhook: number[];
  seconds: number;
}
/** CPU ms so far by part: the apps' processes, Postgres, Temporal (every service) */
export interface Cpu {
  app: number;
  postgres: number;
  temporal: number;
}
export interface PgCounters {
  xacts: number;
  rows: number;
  walBytes: number;
}

/** One stack with both apps on it. */
export interface AnchorTarget {
  talat: { base: string; key: string; accountId: string; callbackSecret: string; identitySecret: string };
  minimal: { base: string; callbackSecret: string };
  /** statements sent so far by each app's client, when counted */
  statements?: (side: Side) => Promise<number>;
  cpu: () => Cpu;
  /** CPU ms so far of the apps' process by thread kind (dev server: both apps in this process) */
  threads?: () => Map<string, number>;
  pg: () => Promise<PgCounters>;
  /** pg_stat_statements of the apps' database, when its Postgres preloads it */
  perStatement?: PerStatement;
  /** rows written per table of the apps' database (pg_stat_user_tables), when read */
  tables?: () => Promise<TableRows>;
  /** Temporal's persistence requests so far by operation (its services' metrics), when read */
  temporalOps?: () => Promise<Map<string, number>>;
  /** "N events, M workflow tasks" of one workflow's history */
  history: (side: Side, workflowId: string) => Promise<string>;
  /** a CPU profile of this process's main thread around each measured round (`--cpu-profile DIR`) */
  profile?: { start(): Promise<void>; stop(name: string): Promise<void> };
}

/** The persistence requests of the Temporal services whose metrics are on `ports`, by operation. */
export const persistenceRequestsOf = (ports: number[]) => () => operationCounts(ports, 'persistence_requests');

/** Per table: rows inserted, updated (of which HOT: no index entry written), deleted. */
export type TableRows = Map<string, { ins: number; upd: number; hot: number; del: number }>;

/** pg_stat_user_tables through `stats`: the rows each table of its database has had written. */
export const tableRowsOf = (stats: PgClient) => async (): Promise<TableRows> => {
  const r = await stats.query(
    `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables`,
  );
  type Row = { relname: string; n_tup_ins: string; n_tup_upd: string; n_tup_hot_upd: string; n_tup_del: string };
  return new Map(
    (r.rows as Row[]).map((x) => [
      x.relname,
      { ins: Number(x.n_tup_ins), upd: Number(x.n_tup_upd), hot: Number(x.n_tup_hot_upd), del: Number(x.n_tup_del) },
    ]),
  );
};

interface PerStatement {
  reset(): Promise<void>;
  read(): Promise<{ query: string; calls: number; ms: number; planMs: number }[]>;
}

/** pg_stat_statements through `stats` (its database's statements), or undefined when not preloaded. */
export async function perStatementOf(stats: PgClient): Promise<PerStatement | undefined> {
  try {
    await stats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await stats.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
  } catch (e) {
    say(`no per-statement figures (pg_stat_statements: ${(e as Error).message})`);
    return undefined;
  }
  return {
    reset: async () => void (await stats.query('SELECT pg_stat_statements_reset()')),
    read: async () => {
      const r = await stats.query(
        `SELECT query, calls, total_exec_time, total_plan_time FROM pg_stat_statements
          WHERE query NOT ILIKE '%pg_stat%' AND query NOT ILIKE '%pg_current_wal%'`,
      );
      type Row = { query: string; calls: string; total_exec_time: number; total_plan_time: number };
      return (r.rows as Row[]).map((row) => ({
        query: row.query.replace(/\s+/g, ' ').trim(),
        calls: Number(row.calls),
        ms: Number(row.total_exec_time),
        planMs: Number(row.total_plan_time),
      }));
    },
  };
}

export const CALLBACK_SECRET = 'minimal-callback-secret';
export const MINIMAL_HOOK_SECRET = 'minimal-webhook-secret';
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** The load and the webhook receiver in a child process; resolves with it and the receiver's URL. */
export async function startDriver(): Promise<{
  hookUrl: string;
  request: <T>(msg: object, type: string) => Promise<T>;
  stop(): void;
}> {
  const driver: ChildProcess = fork(path.join(__dirname, 'anchor-driver.cjs'), [], { stdio: 'inherit' });
  const next = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const on = (m: { type: string } & T) => {
        if (m.type !== type) return;
        driver.off('message', on);
        resolve(m);
      };
      driver.on('message', on);
    });
  const { port } = await next<{ port: number }>('ready');
  return {
    hookUrl: `http://127.0.0.1:${port}/hooks`,
    request: <T>(msg: object, type: string) => {
      const answer = next<T>(type);
      driver.send(msg);
      return answer;
    },
    stop: () => driver.send({ type: 'stop' }),
  };
}

/** Rounds of each side (alternating, after a warm-up), then the report's lines. */
export async function runRounds(
  t: AnchorTarget,
  driver: Awaited<ReturnType<typeof startDriver>>,
  opts: { payments: number; connections: number; rounds: number },
  header: string[],
): Promise<string[]> {
  const prefix = `anc-${process.pid}-`;
  let seq = 0;
  const payment = (side: Side): Payment => {
    const orderId = `${prefix}${side}-${seq++}`;
    if (side === 'minimal') {
      const cb = JSON.stringify({ orderId, status: 'success', amount: 123.45 });
      return {
        orderId,
        create: { url: `${t.minimal.base}/payments`, headers: {}, body: JSON.stringify({ orderId, amount: 123.45 }) },
        callback: {
          url: `${t.minimal.base}/callback`,
          headers: { 'x-signature': minimalSignature(t.minimal.callbackSecret, cb) },
          body: cb,
        },
      };
    }
    const signed = signPayload(t.talat.callbackSecret, {
      paymentId: benchPaymentIds(t.talat.identitySecret, t.talat.accountId, orderId).paymentId,
      status: 'success',
      amount: 123.45,
      orderId,
      timestamp: new Date().toISOString(),
    });
    return {
      orderId,
      create: {
        url: `${t.talat.base}/qrpayment`,
        headers: { 'x-api-key': t.talat.key },
        body: JSON.stringify({ orderId, userId: 'u-bench', amount: 123.45, customerId: 'c-bench' }),
      },
      callback: { url: `${t.talat.base}/qrcallback`, headers: {}, body: JSON.stringify(signed) },
    };
  };
  const round = (side: Side, n: number, c: number) =>
    driver.request<RoundResult>({ type: 'round', payments: Array.from({ length: n }, () => payment(side)), c }, 'done');

  // at the rounds' concurrency, so the pools, each connection's prepared statements and the
  // workers' caches are as full as in the rounds (at 4 concurrent, the first round filled them)
  const warm = Math.max(10, 3 * opts.connections);
  say(`warm-up: ${warm} payments per side at ${opts.connections} concurrent, not measured`);
  for (const side of ['minimal', 'talat'] as const) {
    const r = await round(side, warm, opts.connections);
    if (r.errors) throw new Error(`warm-up ${side}: ${r.firstError}`);
  }
  await sleep(11_000);

  const per = Math.ceil(opts.payments / opts.rounds);
  const zero = () => ({ app: 0, postgres: 0, temporal: 0, statements: 0, xacts: 0, rows: 0, walBytes: 0, paid: 0 });
  const totals = {
    minimal: { ...zero(), rates: [] as number[], cpus: [] as number[], results: [] as RoundResult[] },
    talat: { ...zero(), rates: [] as number[], cpus: [] as number[], results: [] as RoundResult[] },
  };
  const statementsSeen: Record<Side, Map<string, { calls: number; ms: number; planMs: number }>> = {
    minimal: new Map(),
    talat: new Map(),
  };
  const tablesSeen: Record<Side, TableRows> = { minimal: new Map(), talat: new Map() };
  const opsSeen: Record<Side, Map<string, number>> = { minimal: new Map(), talat: new Map() };
  const threadsSeen: Record<Side, Map<string, number>> = { minimal: new Map(), talat: new Map() };
  for (let k = 0; k < opts.rounds; k++)
    for (const side of ['minimal', 'talat'] as const) {
      say(`round ${k + 1}/${opts.rounds}: ${side}, ${per} payments at ${opts.connections} concurrent`);
      const pg0 = await t.pg();
      const tables0 = await t.tables?.();
      const ops0 = await t.temporalOps?.();
      const st0 = (await t.statements?.(side)) ?? 0;
      await t.perStatement?.reset();
      await t.profile?.start();
      const threads0 = t.threads?.();
      const cpu0 = t.cpu();
      const r = await round(side, per, opts.connections);
      const cpu1 = t.cpu();
      for (const [kind, ms] of t.threads?.() ?? [])
        threadsSeen[side].set(kind, (threadsSeen[side].get(kind) ?? 0) + ms - (threads0?.get(kind) ?? 0));
      await t.profile?.stop(`${side}-round-${k + 1}`);
      const st1 = (await t.statements?.(side)) ?? 0;
      await sleep(11_000); // pg_stat_database: the backends' counters reach it when idle (PGSTAT_IDLE_INTERVAL 10 s)
      const pg1 = await t.pg();
      const tables1 = await t.tables?.();
      for (const [op, n] of (await t.temporalOps?.()) ?? [])
        opsSeen[side].set(op, (opsSeen[side].get(op) ?? 0) + n - (ops0?.get(op) ?? 0));
      for (const [name, v] of tables1 ?? []) {
        const was = tables0?.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
        const seen = tablesSeen[side].get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
        for (const k of ['ins', 'upd', 'hot', 'del'] as const) seen[k] += v[k] - was[k];
        tablesSeen[side].set(name, seen);
      }
      for (const row of (await t.perStatement?.read()) ?? []) {
        const seen = statementsSeen[side].get(row.query) ?? { calls: 0, ms: 0, planMs: 0 };
        seen.calls += row.calls;
        seen.ms += row.ms;
        seen.planMs += row.planMs;
        statementsSeen[side].set(row.query, seen);
      }
      if (r.errors) say(`  ${r.errors} errors, first: ${r.firstError}`);
      const s = totals[side];
      const paid = r.webhook.length;
      s.paid += paid;
      s.rates.push(paid / r.seconds);
      s.results.push(r);
      let roundCpu = 0;
      for (const part of ['app', 'postgres', 'temporal'] as const) {
        s[part] += cpu1[part] - cpu0[part];
        roundCpu += cpu1[part] - cpu0[part];
      }
      s.cpus.push(roundCpu / Math.max(1, paid));
      s.statements += st1 - st0;
      for (const c of ['xacts', 'rows', 'walBytes'] as const) s[c] += pg1[c] - pg0[c];
      say(`  ${paid} paid in ${r.seconds.toFixed(1)} s: ${(paid / r.seconds).toFixed(1)} paid/s`);
    }

  const lastOf = (side: Side) => `${prefix}${side}-${seq - (side === 'talat' ? 1 : per + 1)}`;
  const historyOf = {
    minimal: await t.history('minimal', `minimal-${lastOf('minimal')}`),
    talat: await t.history(
      'talat',
      benchPaymentIds(t.talat.identitySecret, t.talat.accountId, lastOf('talat')).workflowId,
    ),
  };
  const f = (n: number, d = 1) => n.toFixed(d);
  const lines = [...header, `${opts.payments} QR payments per side in ${opts.rounds} alternating rounds of ${per}`];
  const rate = (s: Side) => totals[s].paid / totals[s].results.reduce((a, r) => a + r.seconds, 0);
  const all = (s: Side, k: 'create' | 'callback' | 'webhook') => totals[s].results.flatMap((r) => r[k]);
  for (const side of ['minimal', 'talat'] as const) {
    const s = totals[side];
    const p = (k: 'create' | 'callback' | 'webhook') =>
      `${f(percentile(all(side, k), 50))}/${f(percentile(all(side, k), 99))}`;
    const perPaid = (v: number, d = 2) => f(v / Math.max(1, s.paid), d);
    const sorted = [...s.rates].sort((a, b) => a - b);
    lines.push(
      `${side.padEnd(8)} paid/s ${f(rate(side))} (rounds ${s.rates.map((x) => f(x)).join(', ')}; median ${f(sorted[Math.floor(sorted.length / 2)])}); ` +
        `p50/p99 ms create ${p('create')}, callback ${p('callback')}, callback->webhook ${p('webhook')}`,
      `${''.padEnd(8)} CPU ms per paid: app processes ${perPaid(s.app)}, postgres ${perPaid(s.postgres)}, temporal ${perPaid(s.temporal)}, total ${perPaid(s.app + s.postgres + s.temporal)}`,
      `${''.padEnd(8)} Postgres per paid: statements ${t.statements ? perPaid(s.statements, 1) : 'n/a'} (client-counted), transactions ${perPaid(s.xacts, 1)}, rows written ${perPaid(s.rows, 1)}, WAL ${perPaid(s.walBytes / 1024, 1)} KiB; Temporal: ${historyOf[side]} (one payment)`,
    );
  }
  if (t.perStatement)
    for (const side of ['minimal', 'talat'] as const) {
      const paid = Math.max(1, totals[side].paid);
      const rows = [...statementsSeen[side]].sort((a, b) => b[1].calls - a[1].calls);
      const calls = rows.reduce((n, [, v]) => n + v.calls, 0);
      const ms = rows.reduce((n, [, v]) => n + v.ms, 0);
      const planMs = rows.reduce((n, [, v]) => n + v.planMs, 0);
      lines.push(
        `${side}: pg_stat_statements per paid payment: ${f(calls / paid, 1)} statements, ${f(ms / paid, 3)} ms executing, ${f(planMs / paid, 3)} ms planning (the round's whole database: its background work too)`,
        ...rows
          .filter(([, v]) => v.calls / paid >= 0.05)
          .slice(0, 15)
          .map(
            ([q, v]) =>
              `  ${f(v.calls / paid, 2).padStart(6)} calls ${f(v.ms / paid, 3).padStart(7)} ms ${f(v.planMs / paid, 3).padStart(6)} plan  ${q.slice(0, 100)}`,
          ),
      );
    }
  if (t.tables)
    for (const side of ['minimal', 'talat'] as const) {
      const paid = Math.max(1, totals[side].paid);
      const written = [...tablesSeen[side]]
        .filter(([, v]) => (v.ins + v.upd + v.del) / paid >= 0.05)
        .sort((a, b) => b[1].ins + b[1].upd + b[1].del - (a[1].ins + a[1].upd + a[1].del));
      lines.push(
        `${side}: rows written per paid payment by table (pg_stat_user_tables; + inserted, ~ updated, of them HOT with no index entry written, - deleted): ` +
          written
            .map(
              ([name, v]) =>
                `${name} ${[v.ins && `+${f(v.ins / paid, 2)}`, v.upd && `~${f(v.upd / paid, 2)} (HOT ${f(v.hot / paid, 2)})`, v.del && `-${f(v.del / paid, 2)}`].filter(Boolean).join(' ')}`,
            )
            .join(', '),
      );
    }
  if (t.threads)
    for (const side of ['minimal', 'talat'] as const) {
      const paid = Math.max(1, totals[side].paid);
      const kinds = [...threadsSeen[side]].filter(([, ms]) => ms / paid >= 0.05).sort((a, b) => b[1] - a[1]);
      lines.push(
        `${side}: the apps' process CPU ms per paid payment by thread (the round's, whichever app ran it): ` +
          kinds.map(([kind, ms]) => `${kind} ${f(ms / paid, 2)}`).join(', '),
      );
    }
  if (t.temporalOps)
    for (const side of ['minimal', 'talat'] as const) {
      const paid = Math.max(1, totals[side].paid);
      const ops = [...opsSeen[side]].filter(([, n]) => n / paid >= 0.05).sort((a, b) => b[1] - a[1]);
      lines.push(
        `${side}: Temporal persistence requests per paid payment (its services' metrics, the 11 s after each round too): ` +
          `${f(ops.reduce((n, [, v]) => n + v, 0) / paid, 1)}: ${ops.map(([op, n]) => `${op} ${f(n / paid, 2)}`).join(', ')}`,
      );
    }
  const ratio = (a: number, b: number) => (b ? (a / b).toFixed(2) : 'n/a');
  const per1 = (s: Side, v: number) => v / Math.max(1, totals[s].paid);
  const cpuPer = (s: Side) => per1(s, totals[s].app + totals[s].postgres + totals[s].temporal);
  const p99 = (k: 'create' | 'callback' | 'webhook') =>
    ratio(percentile(all('talat', k), 99), percentile(all('minimal', k), 99));
  // each round of Talat against the anchor's round just before it: the spread a run's ratio hides
  const pairs = (k: 'rates' | 'cpus') => totals.talat[k].map((v, i) => v / totals.minimal[k][i]).sort((a, b) => a - b);
  const spread = (xs: number[]) =>
    `median ${f(xs[Math.floor(xs.length / 2)], 2)} (${f(xs[0], 2)}-${f(xs[xs.length - 1], 2)})`;
  lines.push(
    `talat/minimal round by round (${opts.rounds} pairs): paid/s ${spread(pairs('rates'))}, CPU per paid ${spread(pairs('cpus'))}`,
  );
  lines.push(
    `talat/minimal: paid/s ${ratio(rate('talat'), rate('minimal'))}, CPU per paid (every part) ${ratio(cpuPer('talat'), cpuPer('minimal'))}x, ` +
      `postgres CPU per paid ${ratio(per1('talat', totals.talat.postgres), per1('minimal', totals.minimal.postgres))}x, ` +
      `p99 create ${p99('create')}x, callback ${p99('callback')}x, webhook ${p99('webhook')}x`,
  );
  return lines;
}
