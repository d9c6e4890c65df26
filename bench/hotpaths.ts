/**
 * `npm run bench:hotpaths [-- --seconds S --connections C]`
 *
 * Talat's cheapest answers next to their ceiling, in one run on this machine: bare Koa answering
 * the same bytes from the same process. Rejections (a bad API key -> 401, a bad callback
 * signature -> 401, a key over its limit -> 429) against bare Koa's fixed 401; the catalog tree
 * and the product list against bare Koa serving the very bytes Talat sends. Talat logs at `info`
 * (to /dev/null), as it would in production. Own Postgres and Temporal on loopback (bench/support.ts),
 * S seconds per scenario (default 8), C connections (default 16), autocannon in a worker thread.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import Koa from 'koa';
import pino from 'pino';
import { createApp } from '../src/http/app';
import { createApiKey } from '../src/http/middleware/api-key';
import { seedCatalog, isCatalogEmpty } from '../src/db/seed';
import { headerLine, intArg, loadAverage, runBench, say } from './support';

const args = () => ({ seconds: intArg('--seconds', 8, 60), connections: intArg('--connections', 16, 256) });

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
  { taskQueue: 'bench-hot', scopes: ['payments:read'] },
  args,
  async (opts, stack) => {
    const { db, config, temporal } = stack;
    if (await isCatalogEmpty(db)) await seedCatalog(db);
    const load = loadAverage();
    const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
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
      if (ctx.path === '/tree') {
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

    const run = async (name: string, o: autocannon.Options) => {
      say(name);
      const r = await autocannon({
        workers: 1,
        connections: opts.connections,
        duration: opts.seconds,
        timeout: 30,
        ...o,
      });
      return {
        name,
        rate: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        statuses: `${r['2xx']} 2xx, ${r.non2xx} other`,
      };
    };
    const badSig = JSON.stringify({
      paymentId: 'pay_x',
      status: 'success',
      amount: 1,
      orderId: 'o',
      timestamp: new Date().toISOString(),
      signature: '00'.repeat(32),
    });
    const rows = [
      await run('bare Koa: fixed 401', { url: `${koa.base}/401` }),
      await run('Talat: bad API key -> 401', {
        url: `${talat.base}/checkstatus/ORD-1`,
        headers: { 'x-api-key': 'tk_nope' },
      }),
      await run('Talat: bad callback signature -> 401', {
        url: `${talat.base}/qrcallback`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: badSig,
      }),
      await run('Talat: key over its limit -> 429', {
        url: `${tight.base}/checkstatus/ORD-1`,
        headers: { 'x-api-key': limitedKey },
      }),
      await run('bare Koa: catalog tree bytes', { url: `${koa.base}/tree` }),
      await run('Talat: catalog tree', { url: `${talat.base}/api/v2/catalog-tree/catalog-tree` }),
      await run('bare Koa: product list bytes', { url: `${koa.base}/list` }),
      await run('Talat: product list', { url: `${talat.base}/api/product/productlist/onlineData` }),
    ];
    await Promise.all([talat.close(), tight.close(), koa.close()]);

    const ceiling = (name: string) => rows.find((r) => r.name === name)!.rate;
    const ratioOf = (r: (typeof rows)[number]) =>
      r.name.startsWith('bare')
        ? ''
        : (
            r.rate /
            ceiling(
              r.name.includes('catalog')
                ? 'bare Koa: catalog tree bytes'
                : r.name.includes('product')
                  ? 'bare Koa: product list bytes'
                  : 'bare Koa: fixed 401',
            )
          ).toFixed(2);
    process.stdout.write(
      [
        '',
        headerLine('hot paths', opts.connections, load),
        `${'scenario'.padEnd(38)}${'req/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'x bare'.padStart(8)}   answers`,
        ...rows.map(
          (r) =>
            `${r.name.padEnd(38)}${r.rate.toFixed(0).padStart(9)}${String(r.p50).padStart(8)}${String(r.p99).padStart(8)}${ratioOf(r).padStart(8)}   ${r.statuses}`,
        ),
        '',
      ].join('\n'),
    );
  },
);
