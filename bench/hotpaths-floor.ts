/**
 * `npx tsx bench/hotpaths-floor.ts`
 *
 * The floor of bench:hotpaths' rejections: what a rejected request must do whatever the code
 * around it (the contract's envelope and headers, the metrics, the access log line of Talat's own
 * logger, one write per line and then batched as in production), added one piece at
 * a time to a one-middleware bare Koa app that decides nothing (no key lookup, no rate limit, no
 * router), each as the main thread's CPU time per request (autocannon in a worker thread, 16
 * connections, 3 s each), then all again with Node's promise hooks on, as they are in Talat's
 * gateway (the Temporal client's call context is an AsyncLocalStorage). Figures on a shared
 * machine are noisy: compare the lines of one run.
 */
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AsyncLocalStorage } from 'node:async_hooks';
import autocannon from 'autocannon';
import Koa from 'koa';
import { Counter, Histogram, Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import { createLogger, createLogOutput } from '../src/logger';

/** CPU time (user + system) of this process's main thread so far, in ms (Linux: /proc) */
const cpu = () => {
  const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const g = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(g[11]) + Number(g[12])) * 1000) / 100;
};
const reg = new Registry();
const c = new Counter({ name: 'c', help: 'c', labelNames: ['method', 'route', 'status'], registers: [reg] });
const h = new Histogram({
  name: 'h',
  help: 'h',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [reg],
});
// Talat's own logger (redaction, the log-context mixin) into /dev/null: batched as in production,
// and one write per line as with LOG_BUFFER=off
const loggers = {
  batched: createLogger('info', createLogOutput({ dest: '/dev/null' })),
  perLine: createLogger('info', createLogOutput({ dest: '/dev/null', buffered: false })),
};
const body = JSON.stringify({
  statusCode: 401,
  body: { error: 'Invalid API key', code: 'UNAUTHORIZED', details: { reason: 'invalid' } },
});

type Level = { headers: boolean; log: false | keyof typeof loggers; metrics: boolean; json: boolean };
function app(l: Level) {
  const k = new Koa();
  k.use(async (ctx) => {
    const start = process.hrtime.bigint();
    if (l.headers) {
      ctx.set('X-Request-Id', `req_${randomUUID().replace(/-/g, '')}`);
      ctx.set('X-RateLimit-Limit', '10000000');
      ctx.set('X-RateLimit-Remaining', '9999999');
      ctx.set('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000)));
    }
    ctx.status = 401;
    if (l.json) ctx.body = JSON.parse(body);
    else {
      ctx.type = 'application/json';
      ctx.body = Buffer.from(body);
    }
    const ns = Number(process.hrtime.bigint() - start);
    if (l.metrics) {
      const labels = { method: ctx.method, route: '/checkstatus/:orderId', status: '401' };
      c.inc(labels);
      h.observe(labels, ns / 1e9);
    }
    if (l.log)
      loggers[l.log].info(
        { requestId: 'req_x', method: ctx.method, path: ctx.path, status: ctx.status, ms: 0.1 },
        'request',
      );
  });
  return k;
}
async function measure(name: string, k: Koa) {
  const s = http.createServer(k.callback());
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/checkstatus/ORD-1`;
  await autocannon({ url, connections: 16, duration: 1, workers: 1 });
  const c0 = cpu();
  const r = await autocannon({ url, connections: 16, duration: 3, workers: 1 });
  const us = ((cpu() - c0) * 1000) / r.requests.total;
  s.close();
  return { name, us };
}
(async () => {
  const rows: { name: string; us: number }[] = [];
  const levels: [string, Level][] = [
    ['bare fixed 401 buffer', { headers: false, log: false, metrics: false, json: false }],
    ['+ request id and rate-limit headers', { headers: true, log: false, metrics: false, json: false }],
    ['+ JSON body serialised by Koa', { headers: true, log: false, metrics: false, json: true }],
    ['+ metrics (counter + histogram)', { headers: true, log: false, metrics: true, json: true }],
    [
      "+ access log line (Talat's logger, LOG_BUFFER=off)",
      { headers: true, log: 'perLine', metrics: true, json: true },
    ],
    ["+ access log line (Talat's logger, batched)", { headers: true, log: 'batched', metrics: true, json: true }],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [n, l] of levels) rows.push(await measure(n, app(l)));
    if (round === 0) {
      // promise hooks on, as the Temporal client's call context does in the gateway
      const als = new AsyncLocalStorage();
      als.run({}, () => undefined);
      levels.forEach((x) => (x[0] = x[0] + ' [promise hooks on]'));
    }
  }
  for (const r of rows) console.log(`${r.name.padEnd(70)} ${r.us.toFixed(1)} us/req`);
  console.log(`load average ${os.loadavg()[0].toFixed(1)}`);
})();
