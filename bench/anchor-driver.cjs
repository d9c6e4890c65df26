// The load of bench/anchor.ts, in a child process of its own (its CPU is not the apps'): the
// webhook receiver, and rounds of payments at C concurrent, each created, paid by its pre-signed
// callback and its webhook awaited; per payment the create, callback and callback->webhook times.
const http = require('node:http');
/* global Buffer, performance, setTimeout, clearTimeout, fetch */

const arrivals = new Map();
const waiting = new Map();
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      const orderId = JSON.parse(Buffer.concat(chunks).toString('utf8')).data?.orderId;
      if (orderId && !arrivals.has(orderId)) {
        arrivals.set(orderId, performance.now());
        waiting.get(orderId)?.();
      }
    } catch {
      /* not ours */
    }
    res.writeHead(200).end('ok');
  });
});

const arrival = (orderId, ms) =>
  arrivals.has(orderId)
    ? Promise.resolve(arrivals.get(orderId))
    : new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no webhook for ${orderId} within ${ms} ms`)), ms);
        waiting.set(orderId, () => {
          clearTimeout(t);
          resolve(arrivals.get(orderId));
        });
      });

async function post(r) {
  const t = performance.now();
  const res = await fetch(r.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...r.headers },
    body: r.body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${r.url}: ${res.status} ${text.slice(0, 200)}`);
  return performance.now() - t;
}

async function round({ payments, c }) {
  let next = 0;
  let errors = 0;
  let firstError = '';
  const create = [];
  const callback = [];
  const webhook = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < payments.length) {
        const p = payments[next++];
        try {
          create.push(await post(p.create));
          callback.push(await post(p.callback));
          const done = performance.now();
          webhook.push((await arrival(p.orderId, 60_000)) - done);
        } catch (e) {
          errors++;
          firstError ||= e.message;
        }
      }
    }),
  );
  return { errors, firstError, create, callback, webhook, seconds: (performance.now() - t0) / 1000 };
}

process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  if (m.type === 'round') round(m).then((r) => process.send({ type: 'done', ...r }));
  if (m.type === 'stop') receiver.close(() => process.exit(0));
});
receiver.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: receiver.address().port }));
