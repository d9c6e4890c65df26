/**
 * `npm run bench:checkout [-- --pages 1000 --idle-seconds 30 --singles 100]`
 *
 * What open hosted checkout pages cost the gateway (docs/checkout.md "Cost of open pages"): the
 * gateway of runBench (own Postgres and Temporal dev server on loopback, no worker, as the gateway
 * role runs) and N pages' event streams held open by a child process (bench/checkout-pages.cjs:
 * their CPU and memory are not the gateway's), on N pending QR payments written as POST
 * /qrpayment writes them. Prints: connections (TCP to the gateway, Postgres sessions that LISTEN),
 * the gateway's memory and main-thread CPU per second idle with and without the pages (the idle
 * window spans a keep-alive round), Postgres's CPU idle, the time from one UPDATE of all N
 * payments' status to the last page's event, single changes' delivery times, and what the status
 * trigger adds to a status UPDATE (sequential UPDATEs with the trigger on and off, alternated,
 * one page listening).
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { signCheckoutToken } from '../src/checkout/token';
import { newId } from '../src/ids';
import { insertPayment } from '../src/payments/repository';
import { cpuSnapshot, type CpuSnapshot } from './proc-cpu';
import { intArg, loadAverage, runBench, say } from './support';

const args = () => ({
  pages: intArg('--pages', 1000, 10_000),
  idleSeconds: intArg('--idle-seconds', 30, 300),
  singles: intArg('--singles', 100, 1000),
});

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gc = () => (globalThis as { gc?: () => void }).gc?.();

runBench(
  `bench-checkout-${process.pid}`,
  { taskQueue: 'bench-checkout', scopes: ['payments:read'], worker: false },
  args,
  async (opts, stack) => {
    const { db, config, base, dataDir } = stack;
    const pgDir = path.join(dataDir, 'pg');
    const load = loadAverage();

    const newPayments = async (n: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = newId('pay');
        await insertPayment(db, {
          paymentId: id,
          orderId: newId('ord'),
          userId: 'u-bench',
          method: 'qr',
          amountSatang: 10_000 + i,
          mode: 'sandbox',
          workflowId: `wf-${id}`,
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
          details: { qr: { payload: '00020101021229370016A000000677010111011300668012345675802TH53037646304ABCD' } },
        });
        ids.push(id);
      }
      return ids;
    };
    const urlOf = (id: string) =>
      `${base}/checkout/${signCheckoutToken(config.identity.secret, id, Date.now() + 3_600_000)}/events`;

    const child = fork(path.join(__dirname, 'checkout-pages.cjs'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ask = <T>(m: object): Promise<T> =>
      new Promise((resolve, reject) => {
        child.once('message', (r: T & { error?: string }) => (r.error ? reject(new Error(r.error)) : resolve(r)));
        child.send(m);
      });
    const sockets = async () => {
      const r = await db.raw(
        "select count(*) filter (where query = 'LISTEN payment_status')::int as listen, count(*)::int as all from pg_stat_activity where datname = current_database()",
      );
      return r.rows[0] as { listen: number; all: number };
    };
    const idle = async (seconds: number) => {
      const a: CpuSnapshot = cpuSnapshot(pgDir);
      const t = Date.now();
      await sleep(seconds * 1000);
      const b: CpuSnapshot = cpuSnapshot(pgDir);
      const s = (Date.now() - t) / 1000;
      return { node: (b.node - a.node) / s, postgres: (b.postgres - a.postgres) / s };
    };
    const memory = () => {
      gc();
      const m = process.memoryUsage();
      return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
    };

    try {
      say(`writing ${opts.pages + opts.singles} pending QR payments`);
      const ids = await newPayments(opts.pages);
      const singles = await newPayments(opts.singles);
      const lines: string[] = [];
      const out = (l: string) => {
        lines.push(l);
        say(l);
      };

      say(`idle ${opts.idleSeconds} s without pages`);
      await sleep(1000);
      const m0 = memory();
      const idle0 = await idle(opts.idleSeconds);
      const s0 = await sockets();

      say(`opening ${opts.pages} pages`);
      const opened = await ask<{ opened: number; ms: number }>({ open: ids.map(urlOf) });
      const m1 = memory();
      const s1 = await sockets();
      say(`idle ${opts.idleSeconds} s with ${opts.pages} pages open`);
      const idle1 = await idle(opts.idleSeconds);
      const m2 = memory();

      // one statement turns every payment paid: N notifications at one commit, one event per page
      const c0 = cpuSnapshot(pgDir);
      const t0 = Date.now();
      await db('payments').whereIn('id', ids).update({ status: 'paid', updated_at: db.fn.now() });
      const committed = Date.now();
      let arrivals: number[] = [];
      for (let i = 0; i < 100 && arrivals.length < opts.pages; i++) {
        await sleep(50);
        arrivals = arrivals.concat((await ask<{ arrivals: number[] }>({ report: true })).arrivals);
      }
      const c1 = cpuSnapshot(pgDir);
      const lat = arrivals.map((a) => a - t0);

      // single changes, one at a time, to pages of their own
      await ask({ open: singles.map(urlOf) });
      const single: number[] = [];
      for (const id of singles) {
        const t = Date.now();
        await db('payments').where({ id }).update({ status: 'failed', updated_at: db.fn.now() });
        let got: number[] = [];
        while (got.length === 0) got = (await ask<{ arrivals: number[] }>({ report: true })).arrivals;
        single.push(got[0] - t);
      }

      // the trigger's own cost on a status UPDATE, one page open (the LISTEN session is there):
      // 6 rounds of 300 sequential UPDATEs, trigger on and off in turn
      await ask({ open: (await newPayments(1)).map(urlOf) });
      const trig = { on: [] as number[], off: [] as number[], pgon: [] as number[], pgoff: [] as number[] };
      for (const round of ['on', 'off', 'on', 'off', 'on', 'off'] as const) {
        const batch = await newPayments(300);
        await db.raw(`ALTER TABLE payments ${round === 'on' ? 'ENABLE' : 'DISABLE'} TRIGGER payments_status_notify`);
        const a = cpuSnapshot(pgDir);
        const t = process.hrtime.bigint();
        for (const id of batch)
          await db.raw("UPDATE payments SET status = 'paid', updated_at = now() WHERE id = ? AND status = 'pending'", [
            id,
          ]);
        trig[round].push(Number(process.hrtime.bigint() - t) / 1e6 / batch.length);
        const b = cpuSnapshot(pgDir);
        trig[`pg${round}`].push((b.postgres - a.postgres) / batch.length);
      }
      await db.raw('ALTER TABLE payments ENABLE TRIGGER payments_status_notify');

      out(`Talat checkout pages benchmark — ${opts.pages} pages, load average before ${load}`);
      out(`pages opened: ${opened.opened} in ${opened.ms} ms (50 at a time)`);
      out(
        `connections: gateway TCP +${opened.opened}; Postgres sessions ${s0.all} -> ${s1.all}, of them LISTEN ${s0.listen} -> ${s1.listen}`,
      );
      out(
        `gateway memory: rss ${mib(m0.rss)} -> ${mib(m1.rss)} open -> ${mib(m2.rss)} after idle; heap ${mib(m0.heap)} -> ${mib(m1.heap)} -> ${mib(m2.heap)}; ` +
          `external ${mib(m0.external)} -> ${mib(m2.external)}; per page ${((m2.rss - m0.rss) / opts.pages / 1024).toFixed(1)} KiB rss, ${((m2.heap - m0.heap) / opts.pages / 1024).toFixed(1)} KiB heap`,
      );
      out(
        `idle CPU per second: gateway main thread ${idle0.node.toFixed(2)} ms without pages, ${idle1.node.toFixed(2)} ms with ${opts.pages}; ` +
          `postgres ${idle0.postgres.toFixed(2)} -> ${idle1.postgres.toFixed(2)} ms; polls of Postgres or Temporal by the pages: 0`,
      );
      out(
        `one UPDATE of ${opts.pages} payments' status (commit after ${committed - t0} ms): ${lat.length} events; ` +
          `p50 ${pct(lat, 50)} ms, p99 ${pct(lat, 99)} ms, last ${Math.max(...lat)} ms after the statement was sent; ` +
          `CPU: gateway main ${(c1.node - c0.node).toFixed(0)} ms, postgres ${(c1.postgres - c0.postgres).toFixed(0)} ms`,
      );
      out(
        `single changes (${single.length}, one at a time): p50 ${pct(single, 50)} ms, p99 ${pct(single, 99)} ms, max ${Math.max(...single)} ms from UPDATE sent to event`,
      );
      const avg = (xs: number[]) => pct(xs, 50); // the median round
      out(
        `status UPDATE (sequential; median of 3 rounds of 300 each) with the notify trigger: ${avg(trig.on).toFixed(3)} ms wall, ` +
          `${avg(trig.pgon).toFixed(3)} ms postgres CPU; without: ${avg(trig.off).toFixed(3)} ms, ${avg(trig.pgoff).toFixed(3)} ms`,
      );
      process.stdout.write(lines.join('\n') + '\n');
    } finally {
      child.send({ close: true });
    }
  },
);
