/**
 * Scale-out: two gateway processes and one separate worker process (src/roles) on one Temporal
 * server and one Postgres. A payment created through gateway A and paid by a callback through
 * gateway B is paid once, with one webhook, and visible from both; duplicates split across the
 * gateways change nothing; the rate-limit counters are shared; SIGTERM drains and exits 0.
 */
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { fieldSigned, receiptsOf, resultOf, signalsOf, waitFor, type Sent } from '../callbacks/helpers';
import { apiKey, startReceiver, type Receiver } from '../webhooks/helpers';
import { roleEnv, startRole, type RoleProcess } from '../support/roles';

jest.setTimeout(300_000);

let stack: TestStack;
let receiver: Receiver;
let a: RoleProcess;
let b: RoleProcess;
let worker: RoleProcess;

beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  receiver = await startReceiver(200);
  const env = roleEnv(stack.taskQueue);
  // one at a time: three tsx start-ups at once are slow on a shared 2-core machine
  worker = await startRole('worker', env);
  a = await startRole('gateway', env);
  b = await startRole('gateway', env);
});

afterAll(async () => {
  await Promise.all([a, b, worker].filter(Boolean).map((p) => p.stop()));
  await receiver?.stop();
  await stack?.close();
});

const send = (base: string, path: string, init: { method?: string; key?: string; body?: unknown; sent?: Sent } = {}) =>
  fetch(`${base}${path}`, {
    method: init.method ?? (init.body || init.sent ? 'POST' : 'GET'),
    headers: {
      ...(init.key ? { 'X-API-Key': init.key } : {}),
      ...(init.body || init.sent ? { 'Content-Type': 'application/json' } : {}),
      ...(init.sent?.headers ?? {}),
    },
    body: init.sent ? init.sent.raw : init.body ? JSON.stringify(init.body) : undefined,
  }).then(async (r) => ({
    status: r.status,
    headers: r.headers,
    body: (await r.json()) as { statusCode: number; body: Record<string, unknown> },
  }));

it('each role answers /healthz and /readyz', async () => {
  for (const base of [a.base, b.base, worker.base]) {
    expect((await send(base, '/healthz')).status).toBe(200);
    const ready = await send(base, '/readyz');
    expect({ base, status: ready.status }).toEqual({ base, status: 200 });
  }
  expect((await send(worker.base, '/readyz')).body).toMatchObject({
    status: 'ready',
    checks: { postgres: 'ok', temporal: 'ok', worker: 'RUNNING' },
  });
});

it('created through A, paid through B: paid once, one webhook, visible from both; 50 duplicates over both change nothing', async () => {
  const key = await apiKey(stack);
  const endpoint = await send(a.base, '/webhooks/endpoints', { key: key.key, body: { url: receiver.url } });
  expect(endpoint.status).toBe(201);

  const orderId = uniq('ord');
  const created = await send(a.base, '/qrpayment', {
    key: key.key,
    body: { orderId, userId: 'u-1', amount: 42.5, customerId: 'c-1' },
  });
  expect(created.status).toBe(200);
  const paymentId = created.body.body.paymentId as string;
  const row = await waitFor(() => stack.db('payments').where({ id: paymentId }).first(), 20_000, 'payment recorded');

  const callback = fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 42.5, orderId });
  const first = await send(b.base, '/qrcallback', { sent: callback });
  expect(first.status).toBe(200);
  await expect(resultOf(stack, row.workflow_id)).resolves.toMatchObject({ status: 'paid' });
  const hooks = () => receiver.log.filter((r) => r.body.includes(orderId));
  await waitFor(async () => hooks().length > 0, 30_000, 'the webhook');

  for (const base of [a.base, b.base]) {
    const status = await send(base, `/checkstatus/${orderId}`, { key: key.key });
    expect({ base, status: status.status, paymentStatus: status.body.body.status }).toEqual({
      base,
      status: 200,
      paymentStatus: 'paid',
    });
  }

  const duplicates = await Promise.all(
    Array.from({ length: 50 }, (_, i) => send(i % 2 ? a.base : b.base, '/qrcallback', { sent: callback })),
  );
  for (const d of duplicates) expect({ status: d.status, body: d.body }).toEqual({ status: 200, body: first.body });

  await new Promise((r) => setTimeout(r, 1500)); // a second webhook, if any, would have gone out by now
  expect(await receiptsOf(stack, paymentId)).toHaveLength(1);
  expect(await signalsOf(stack, row.workflow_id)).toBe(1);
  expect(hooks()).toHaveLength(1);
  expect(receiver.verified(hooks()[0], (endpoint.body.body as { secret: string }).secret)).toBe(true);
});

it('the same callback racing through both gateways at once is recorded and signalled once', async () => {
  const key = await apiKey(stack);
  const orderId = uniq('ord');
  const created = await send(b.base, '/qrpayment', {
    key: key.key,
    body: { orderId, userId: 'u-2', amount: 19, customerId: 'c-2' },
  });
  expect(created.status).toBe(200);
  const paymentId = created.body.body.paymentId as string;
  const row = await waitFor(() => stack.db('payments').where({ id: paymentId }).first(), 20_000, 'payment recorded');
  const callback = fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 19, orderId });
  const all = await Promise.all(
    Array.from({ length: 20 }, (_, i) => send(i % 2 ? a.base : b.base, '/qrcallback', { sent: callback })),
  );
  expect([...new Set(all.map((r) => `${r.status} ${JSON.stringify(r.body)}`))]).toEqual([
    `200 ${JSON.stringify(all[0].body)}`,
  ]);
  await expect(resultOf(stack, row.workflow_id)).resolves.toMatchObject({ status: 'paid' });
  expect(await receiptsOf(stack, paymentId)).toHaveLength(1);
  expect(await signalsOf(stack, row.workflow_id)).toBe(1);
});

it('the rate-limit counters are shared: X-RateLimit-Remaining counts down across both gateways', async () => {
  const key = await apiKey(stack);
  const seen: { remaining: number; reset: string }[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await send(i % 2 ? a.base : b.base, `/checkstatus/${uniq('none')}`, { key: key.key });
    seen.push({
      remaining: Number(r.headers.get('x-ratelimit-remaining')),
      reset: r.headers.get('x-ratelimit-reset') ?? '',
    });
  }
  // consecutive requests in one window (same X-RateLimit-Reset), each through the other gateway
  const sameWindow = seen
    .slice(1)
    .map((s, i) => ({ prev: seen[i], s }))
    .filter(({ prev, s }) => prev.reset === s.reset);
  expect(sameWindow.length).toBeGreaterThanOrEqual(3);
  for (const { prev, s } of sameWindow) expect(s.remaining).toBe(prev.remaining - 1);
});

it('SIGTERM: each role drains and exits 0', async () => {
  const codes = await Promise.all([a.stop(), b.stop(), worker.stop()]);
  expect(codes).toEqual([0, 0, 0]);
});
