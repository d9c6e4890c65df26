/**
 * `npm run bench:anchor [-- --payments N --connections C --rounds K]`
 *
 * Talat against the minimal anchor (bench/minimal/app.ts, issue 41), in one run on the dev-server
 * topology of `npm start` (embedded Postgres, Temporal dev server on a SQLite file, the workers in
 * the gateway's process, eager starts): N QR payments per side (default 200) at C concurrent
 * (default 16), in K alternating rounds per side (default 2: minimal, Talat, minimal, Talat), each
 * created, paid by a signed callback and its webhook received. The load and the webhook receiver
 * run in a child process (bench/anchor-driver.cjs). Prints per side paid/s, p50/p99 of create,
 * callback and callback->webhook, CPU ms per paid payment of the apps' process, Postgres and
 * Temporal, and per paid payment Postgres statements (counted by each app's client), transactions
 * and rows written (pg_stat_database, read 11 s after a round: its counters flush late) and WAL,
 * and with pg_stat_statements (preloaded in the benchmark's Postgres) each statement's calls and
 * execution ms per paid payment, reset before each round.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { signPayload } from '../src/callbacks/verify';
import { orderPaymentId } from '../src/ids';
import { paymentWorkflowId } from '../src/payments';
import { minimalSignature, startMinimal } from './minimal/app';
import { cpuSnapshot } from './proc-cpu';
import { percentile } from './steady';
import { headerLine, intArg, loadAverage, runBench, say, type Stack } from './support';

const args = () => ({
  payments: intArg('--payments', 200, 5000),
  connections: intArg('--connections', 16, 256),
  rounds: intArg('--rounds', 2, 10),
});

type Side = 'minimal' | 'talat';
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
interface Counters {
  appCpu: number;
  postgresCpu: number;
  temporalCpu: number;
  statements: number;
  xacts: number;
  rows: number;
  walBytes: number;
}

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));
const CALLBACK_SECRET = 'minimal-callback-secret';

runBench(
  `bench-anchor-${process.pid}`,
  {
    taskQueue: 'bench-anchor',
    scopes: ['payments:write', 'payments:read', 'webhooks:manage'],
    temporalFile: true,
    eagerStart: true,
    statStatements: true,
    env: { CALLBACK_MAX_AGE_S: '3600', QR_EXPIRY_S: '600', WEBHOOK_ALLOW_LOOPBACK: 'on' },
  },
  args,
  async (opts, stack: Stack) => {
    const { base, key, config, db } = stack;
    const load = loadAverage();
    const driver: ChildProcess = fork(path.join(__dirname, 'anchor-driver.cjs'), [], { stdio: 'inherit' });
    const fromDriver = <T>(type: string) =>
      new Promise<T>((resolve) => {
        const on = (m: { type: string } & T) => {
          if (m.type !== type) return;
          driver.off('message', on);
          resolve(m);
        };
        driver.on('message', on);
      });
    const { port } = await fromDriver<{ port: number }>('ready');
    const hookUrl = `http://127.0.0.1:${port}/hooks`;

    const reg = await fetch(`${base}/webhooks/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ url: hookUrl, publicPayments: true }),
    });
    if (reg.status !== 201) throw new Error(`webhook endpoint: ${reg.status} ${await reg.text()}`);
    say('starting the minimal app (bundling its workflow) on the same Postgres and Temporal');
    const minimal = await startMinimal({
      databaseUrl: config.database.url!,
      temporalAddress: stack.temporal.address,
      taskQueue: 'bench-anchor-minimal',
      callbackSecret: CALLBACK_SECRET,
      webhook: { url: hookUrl, secret: 'minimal-webhook-secret' },
    });
    let talatStatements = 0;
    db.on('query', () => talatStatements++);
    const stats = new PgClient({ connectionString: config.database.url! });
    await stats.connect();

    const prefix = `anc-${process.pid}-`;
    let seq = 0;
    const payment = (side: Side): Payment => {
      const orderId = `${prefix}${side}-${seq++}`;
      if (side === 'minimal') {
        const cb = JSON.stringify({ orderId, status: 'success', amount: 123.45 });
        return {
          orderId,
          create: { url: `${minimal.base}/payments`, headers: {}, body: JSON.stringify({ orderId, amount: 123.45 }) },
          callback: {
            url: `${minimal.base}/callback`,
            headers: { 'x-signature': minimalSignature(CALLBACK_SECRET, cb) },
            body: cb,
          },
        };
      }
      const signed = signPayload(config.callbacks.providers.QR.secret, {
        paymentId: orderPaymentId(config.identity.secret, orderId),
        status: 'success',
        amount: 123.45,
        orderId,
        timestamp: new Date().toISOString(),
      });
      return {
        orderId,
        create: {
          url: `${base}/qrpayment`,
          headers: { 'x-api-key': key },
          body: JSON.stringify({ orderId, userId: 'u-bench', amount: 123.45, customerId: 'c-bench' }),
        },
        callback: { url: `${base}/qrcallback`, headers: {}, body: JSON.stringify(signed) },
      };
    };
    const runRound = async (side: Side, n: number, c: number): Promise<RoundResult> => {
      const payments = Array.from({ length: n }, () => payment(side));
      const done = fromDriver<RoundResult>('done');
      driver.send({ type: 'round', payments, c });
      return done;
    };
    const pgCounters = async () => {
      const r = await stats.query(
        `SELECT xact_commit + xact_rollback AS xacts, tup_inserted + tup_updated + tup_deleted AS rows,
                pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal
           FROM pg_stat_database WHERE datname = current_database()`,
      );
      const row = r.rows[0] as { xacts: string; rows: string; wal: string };
      return { xacts: Number(row.xacts), rows: Number(row.rows), walBytes: Number(row.wal) };
    };
    // pg_stat_statements (preloaded when this Postgres ships it): per statement, both apps' database
    const perStatement = await stats
      .query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
      .then(() => stats.query('SELECT 1 FROM pg_stat_statements LIMIT 1'))
      .then(
        () => true,
        (e: Error) => (say(`no per-statement figures (pg_stat_statements: ${e.message})`), false),
      );
    const statementsSeen: Record<Side, Map<string, { calls: number; ms: number }>> = {
      minimal: new Map(),
      talat: new Map(),
    };
    const resetStatements = async () => {
      if (perStatement) await stats.query('SELECT pg_stat_statements_reset()');
    };
    const noteStatements = async (side: Side) => {
      if (!perStatement) return;
      const r = await stats.query(
        `SELECT query, calls, total_exec_time FROM pg_stat_statements
          WHERE query NOT ILIKE '%pg_stat%' AND query NOT ILIKE '%pg_current_wal%'`,
      );
      for (const row of r.rows as { query: string; calls: string; total_exec_time: number }[]) {
        const text = row.query.replace(/\s+/g, ' ').trim();
        const seen = statementsSeen[side].get(text) ?? { calls: 0, ms: 0 };
        seen.calls += Number(row.calls);
        seen.ms += Number(row.total_exec_time);
        statementsSeen[side].set(text, seen);
      }
    };
    const cpu = () => {
      const s = cpuSnapshot(path.join(stack.dataDir, 'pg'));
      const u = process.cpuUsage();
      return { appCpu: (u.user + u.system) / 1000, postgresCpu: s.postgres, temporalCpu: s.temporal };
    };

    say('warm-up: 10 payments per side, not measured');
    for (const side of ['minimal', 'talat'] as const) {
      const r = await runRound(side, 10, 4);
      if (r.errors) throw new Error(`warm-up ${side}: ${r.firstError}`);
    }
    await sleep(11_000);

    const per = Math.ceil(opts.payments / opts.rounds);
    const totals: Record<Side, Counters & { paid: number; rates: number[]; results: RoundResult[] }> = {
      minimal: {
        appCpu: 0,
        postgresCpu: 0,
        temporalCpu: 0,
        statements: 0,
        xacts: 0,
        rows: 0,
        walBytes: 0,
        paid: 0,
        rates: [],
        results: [],
      },
      talat: {
        appCpu: 0,
        postgresCpu: 0,
        temporalCpu: 0,
        statements: 0,
        xacts: 0,
        rows: 0,
        walBytes: 0,
        paid: 0,
        rates: [],
        results: [],
      },
    };
    for (let k = 0; k < opts.rounds; k++)
      for (const side of ['minimal', 'talat'] as const) {
        say(`round ${k + 1}/${opts.rounds}: ${side}, ${per} payments at ${opts.connections} concurrent`);
        const pg0 = await pgCounters();
        const st0 = side === 'talat' ? talatStatements : minimal.statements();
        await resetStatements();
        const cpu0 = cpu();
        const r = await runRound(side, per, opts.connections);
        const cpu1 = cpu();
        const st1 = side === 'talat' ? talatStatements : minimal.statements();
        await sleep(11_000); // pg_stat_database: the backends' counters reach it when idle (PGSTAT_IDLE_INTERVAL 10 s)
        const pg1 = await pgCounters();
        await noteStatements(side);
        if (r.errors) say(`  ${r.errors} errors, first: ${r.firstError}`);
        const t = totals[side];
        const paid = r.webhook.length;
        t.paid += paid;
        t.rates.push(paid / r.seconds);
        t.results.push(r);
        t.appCpu += cpu1.appCpu - cpu0.appCpu;
        t.postgresCpu += cpu1.postgresCpu - cpu0.postgresCpu;
        t.temporalCpu += cpu1.temporalCpu - cpu0.temporalCpu;
        t.statements += st1 - st0;
        t.xacts += pg1.xacts - pg0.xacts;
        t.rows += pg1.rows - pg0.rows;
        t.walBytes += pg1.walBytes - pg0.walBytes;
        say(`  ${paid} paid in ${r.seconds.toFixed(1)} s: ${(paid / r.seconds).toFixed(1)} paid/s`);
      }

    const events = async (workflowId: string) => {
      const { events: e } = await stack.temporal.client.workflow.getHandle(workflowId).fetchHistory();
      return `${e?.length ?? 0} events, ${(e ?? []).filter((x) => x.workflowTaskCompletedEventAttributes).length} workflow tasks`;
    };
    const lastOf = (side: Side) => `${prefix}${side}-${seq - (side === 'talat' ? 1 : per + 1)}`;
    const historyOf = {
      minimal: await events(`minimal-${lastOf('minimal')}`),
      talat: await events(paymentWorkflowId(lastOf('talat'))),
    };

    const f = (n: number, d = 1) => n.toFixed(d);
    const lines = [
      headerLine('anchor (Talat against the minimal app)', opts.connections, load),
      `${opts.payments} QR payments per side in ${opts.rounds} alternating rounds of ${per}; dev-server topology (npm start: SQLite-file Temporal dev server, embedded Postgres, workers in the app's process, Talat with eager starts)`,
    ];
    for (const side of ['minimal', 'talat'] as const) {
      const t = totals[side];
      const all = (k: 'create' | 'callback' | 'webhook') => t.results.flatMap((r) => r[k]);
      const p = (k: 'create' | 'callback' | 'webhook') => `${f(percentile(all(k), 50))}/${f(percentile(all(k), 99))}`;
      const perPaid = (v: number, d = 2) => f(v / Math.max(1, t.paid), d);
      const sorted = [...t.rates].sort((a, b) => a - b);
      lines.push(
        `${side.padEnd(8)} paid/s ${f(t.paid / t.results.reduce((a, r) => a + r.seconds, 0))} (rounds ${t.rates.map((x) => f(x)).join(', ')}; median ${f(sorted[Math.floor(sorted.length / 2)])}); ` +
          `p50/p99 ms create ${p('create')}, callback ${p('callback')}, callback->webhook ${p('webhook')}`,
        `${''.padEnd(8)} CPU ms per paid: app process ${perPaid(t.appCpu)}, postgres ${perPaid(t.postgresCpu)}, temporal ${perPaid(t.temporalCpu)}, total ${perPaid(t.appCpu + t.postgresCpu + t.temporalCpu)}`,
        `${''.padEnd(8)} Postgres per paid: statements ${perPaid(t.statements, 1)} (client-counted), transactions ${perPaid(t.xacts, 1)}, rows written ${perPaid(t.rows, 1)}, WAL ${perPaid(t.walBytes / 1024, 1)} KiB; Temporal: ${historyOf[side]} (one payment)`,
      );
    }
    if (perStatement)
      for (const side of ['minimal', 'talat'] as const) {
        const paid = Math.max(1, totals[side].paid);
        const rows = [...statementsSeen[side]].sort((a, b) => b[1].calls - a[1].calls);
        const calls = rows.reduce((n, [, v]) => n + v.calls, 0);
        const ms = rows.reduce((n, [, v]) => n + v.ms, 0);
        lines.push(
          `${side}: pg_stat_statements per paid payment: ${f(calls / paid, 1)} statements, ${f(ms / paid, 3)} ms executing (the round's whole database: its background work too)`,
          ...rows
            .filter(([, v]) => v.calls / paid >= 0.05)
            .slice(0, 15)
            .map(
              ([q, v]) =>
                `  ${f(v.calls / paid, 2).padStart(6)} calls ${f(v.ms / paid, 3).padStart(7)} ms  ${q.slice(0, 110)}`,
            ),
        );
      }
    const ratio = (a: number, b: number) => (b ? (a / b).toFixed(2) : 'n/a');
    const rate = (s: Side) => totals[s].paid / totals[s].results.reduce((a, r) => a + r.seconds, 0);
    const cpuPer = (s: Side) =>
      (totals[s].appCpu + totals[s].postgresCpu + totals[s].temporalCpu) / Math.max(1, totals[s].paid);
    lines.push(
      `talat/minimal: paid/s ${ratio(rate('talat'), rate('minimal'))}, CPU per paid (all three) ${ratio(cpuPer('talat'), cpuPer('minimal'))}x, ` +
        `postgres CPU per paid ${ratio(totals.talat.postgresCpu / totals.talat.paid, totals.minimal.postgresCpu / totals.minimal.paid)}x`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);

    driver.send({ type: 'stop' });
    await stats.end();
    await minimal.stop();
  },
);
