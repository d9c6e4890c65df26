/**
 * `npm run bench:hotpaths [-- --seconds S --rounds R --connections C --only REGEX --profile DIR --with-worker]`
 *
 * Talat's cheapest answers next to their ceiling, in one run on this machine: bare Koa answering
 * the same bytes from the same process. Rejections (a bad API key -> 401, a bad callback
 * signature -> 401, a key over its limit -> 429) against bare Koa's fixed 401 (the bad signature
 * also against bare Koa that first reads the POST's body, what any refusal of a body costs more);
 * the catalog tree
 * and the product list against bare Koa serving the very bytes Talat sends. Talat logs at `info`
 * with its own logger (src/logger.ts: redaction, the log-context mixin, batched writes) into
 * /dev/null, as it would in production. Own Postgres and Temporal on loopback (bench/support.ts), C
 * connections (default 16), autocannon in a worker thread. Each Talat scenario runs R rounds
 * (default 3) of S seconds (default 3) in turn with its bare Koa ceiling, so that a change of the
 * machine's load (other processes) hits both alike; the ratio is of the mean rates.
 *
 * The process runs what the gateway role (`npm run gateway`) runs: the gateway and a Temporal
 * client, no worker. `--with-worker` also runs the workers in it, as `npm start` does. Either way
 * Node 20's promise hooks are on for the whole process (every `await` costs more, bare Koa's too):
 * the Temporal client's call context is an AsyncLocalStorage that its connect already runs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import Koa from 'koa';
import { createApp } from '../src/app/app';
import { createApiKey } from '../src/http/middleware/api-key';
import { seedCatalog, isCatalogEmpty } from '../src/db/seed';
import { createLogger, createLogOutput } from '../src/logger';
import { flagArg, headerLine, intArg, loadAverage, mainThreadCpuMs, profiled, runBench, say } from './support';

const args = () => ({
  seconds: intArg('--seconds', 3, 60),
  rounds: intArg('--rounds', 3, 20),
  connections: intArg('--connections', 16, 256),
  /** `--only REGEX`: only the scenarios whose name matches (e.g. to profile one path) */
  only: process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined,
});

async function listen(app: Koa): Promise<{ base: string; close: () => Promise<void> }> {
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

runBench(
  `bench-hot-${process.pid}`,
  { taskQueue: 'bench-hot', scopes: ['payments:read'], worker: flagArg('--with-worker') },
  args,
  async (opts, stack) => {
    const { db, config, temporal } = stack;
    if (await isCatalogEmpty(db)) await seedCatalog(db);
    const load = loadAverage();
    // production's logger (redaction, the log-context mixin, batched writes) into /dev/null
    const logger = createLogger('info', createLogOutput({ dest: '/dev/null' }));
    // Talat as `npm start` runs it (logging on), and a second gateway whose limits are 1/s and 1/min
    const talat = await listen(
      createApp({ config, db, temporal: { client: temporal.client, taskQueue: 'bench-hot' }, logger }),
    );
    const tight = await listen(
      createApp({
        config: { ...config, payments: { ...config.payments, rateLimit: { perSecond: 1, perMinute: 1 } } },
        db,
        temporal: { client: temporal.client, taskQueue: 'bench-hot' },
        logger,
      }),
    );
    const { key: limitedKey } = await createApiKey(db, {
      name: 'bench-limited',
      scopes: ['payments:read'],
      mode: 'sandbox',
    });

    const fetchBytes = async (path: string) => {
      const res = await fetch(talat.base + path);
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      return {
        body: Buffer.from(await res.arrayBuffer()),
        type: res.headers.get('content-type') ?? 'application/json',
      };
    };
    const tree = await fetchBytes('/api/v2/catalog-tree/catalog-tree');
    const list = await fetchBytes('/api/product/productlist/onlineData');
    const unauthorized = Buffer.from(
      JSON.stringify({ statusCode: 401, body: { error: 'Unauthorized', code: 'UNAUTHORIZED', details: {} } }),
    );

    // the ceiling: bare Koa, same process, fixed bytes
    const bare = new Koa();
    bare.use(async (ctx) => {
      if (ctx.path === '/401-after-body') {
        // the least a refusal of a POST must do more than a GET's: read the body it was sent
        for await (const _ of ctx.req) void _;
        ctx.status = 401;
        ctx.type = 'application/json';
        ctx.body = unauthorized;
      } else if (ctx.path === '/tree') {
        ctx.type = tree.type;
        ctx.body = tree.body;
      } else if (ctx.path === '/list') {
        ctx.type = list.type;
        ctx.body = list.body;
      } else {
        ctx.status = 401;
        ctx.type = 'application/json';
        ctx.body = unauthorized;
      }
    });
    const koa = await listen(bare);

    type Row = {
      name: string;
      rate: number;
      p50: number;
      p99: number;
      ok: number;
      other: number;
      /** CPU time of the main thread (where Koa runs) over the run, and the requests answered */
      cpuMs: number;
      requests: number;
      ratio?: number;
      cpuRatio?: number;
    };
    const once = async (name: string, o: autocannon.Options, round: number): Promise<Row> => {
      const cpu0 = mainThreadCpuMs();
      const r = await profiled(`${name} ${round}`, () =>
        autocannon({ workers: 1, connections: opts.connections, duration: opts.seconds, timeout: 30, ...o }),
      );
      return {
        name,
        rate: r.requests.total / r.duration,
        p50: r.latency.p50,
        p99: r.latency.p99,
        ok: r['2xx'],
        other: r.non2xx,
        cpuMs: mainThreadCpuMs() - cpu0,
        requests: r.requests.total,
      };
    };
    /** rounds of the ceiling and the scenario taken in turn, so a change of load hits both alike */
    const pair = async (ceiling: [string, autocannon.Options], scenario: [string, autocannon.Options]) => {
      if (opts.only && !new RegExp(opts.only).test(scenario[0])) return [];
      say(`${scenario[0]} (${opts.rounds} rounds of ${opts.seconds} s, in turn with ${ceiling[0]})`);
      const c: Row[] = [];
      const t: Row[] = [];
      // a warm-up of each, not counted: the JIT, the pools, the caches
      await once(ceiling[0], { ...ceiling[1], duration: 1 }, 0);
      await once(scenario[0], { ...scenario[1], duration: 1 }, 0);
      for (let i = 1; i <= opts.rounds; i++) {
        c.push(await once(ceiling[0], ceiling[1], i));
        t.push(await once(scenario[0], scenario[1], i));
      }
      const merge = (rs: Row[]): Row => ({
        name: rs[0].name,
        rate: rs.reduce((a, r) => a + r.rate, 0) / rs.length,
        p50: [...rs.map((r) => r.p50)].sort((a, b) => a - b)[Math.floor(rs.length / 2)],
        p99: Math.max(...rs.map((r) => r.p99)),
        ok: rs.reduce((a, r) => a + r.ok, 0),
        other: rs.reduce((a, r) => a + r.other, 0),
        cpuMs: rs.reduce((a, r) => a + r.cpuMs, 0),
        requests: rs.reduce((a, r) => a + r.requests, 0),
      });
      const cm = merge(c);
      const tm = merge(t);
      return [cm, { ...tm, ratio: tm.rate / cm.rate, cpuRatio: cm.cpuMs / cm.requests / (tm.cpuMs / tm.requests) }];
    };
    const badSig = JSON.stringify({
      paymentId: 'pay_x',
      status: 'success',
      amount: 1,
      orderId: 'o',
      timestamp: new Date().toISOString(),
      signature: '00'.repeat(32),
    });
    const bare401: [string, autocannon.Options] = ['bare Koa: fixed 401', { url: `${koa.base}/401` }];
    const rows = [
      ...(await pair(bare401, [
        'Talat: bad API key -> 401',
        { url: `${talat.base}/checkstatus/ORD-1`, headers: { 'x-api-key': 'tk_nope' } },
      ])),
      ...(await pair(bare401, [
        'Talat: bad callback signature -> 401',
        {
          url: `${talat.base}/qrcallback`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: badSig,
        },
      ])),
      ...(await pair(
        [
          'bare Koa: reads the body, fixed 401',
          {
            url: `${koa.base}/401-after-body`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: badSig,
          },
        ],
        [
          'Talat: bad signature (vs a body read)',
          {
            url: `${talat.base}/qrcallback`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: badSig,
          },
        ],
      )),
      ...(await pair(bare401, [
        'Talat: key over its limit -> 429',
        { url: `${tight.base}/checkstatus/ORD-1`, headers: { 'x-api-key': limitedKey } },
      ])),
      ...(await pair(
        ['bare Koa: catalog tree bytes', { url: `${koa.base}/tree` }],
        ['Talat: catalog tree', { url: `${talat.base}/api/v2/catalog-tree/catalog-tree` }],
      )),
      ...(await pair(
        ['bare Koa: product list bytes', { url: `${koa.base}/list` }],
        ['Talat: product list', { url: `${talat.base}/api/product/productlist/onlineData` }],
      )),
    ];
    await Promise.all([talat.close(), tight.close(), koa.close()]);

    process.stdout.write(
      [
        '',
        headerLine('hot paths', opts.connections, load) + `, after ${loadAverage()}`,
        flagArg('--with-worker')
          ? 'the workers run in this process, as in `npm start` (--with-worker)'
          : 'no worker in this process, as the gateway role (`npm run gateway`) runs',
        `each Talat scenario: ${opts.rounds} rounds of ${opts.seconds} s in turn with its bare Koa ceiling (measured again for each)`,
        `x bare: the rate's ratio; cpu x bare: bare Koa's main-thread CPU per request over Talat's (what the rate ratio tends to on an idle machine, where that thread is the bottleneck)`,
        `${'scenario'.padEnd(38)}${'req/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'x bare'.padStart(8)}${'cpu us/req'.padStart(12)}${'cpu x bare'.padStart(12)}   answers`,
        ...rows.map(
          (r) =>
            `${(r.ratio === undefined ? '  ' : '') + r.name.padEnd(r.ratio === undefined ? 36 : 38)}${r.rate.toFixed(0).padStart(9)}${String(r.p50).padStart(8)}${String(r.p99).padStart(8)}${(r.ratio === undefined ? '' : r.ratio.toFixed(2)).padStart(8)}${((1000 * r.cpuMs) / r.requests).toFixed(0).padStart(12)}${(r.cpuRatio === undefined ? '' : r.cpuRatio.toFixed(2)).padStart(12)}   ${r.ok} 2xx, ${r.other} other`,
        ),
        '',
      ].join('\n'),
    );
  },
);
