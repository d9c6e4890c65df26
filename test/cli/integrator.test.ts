/**
 * The integrator's loop, spawned as typed against a gateway, worker and sandbox simulators on
 * loopback: `talat webhooks endpoints create|list|rotate`, `talat listen --forward-to` (prints
 * each webhook with its signature check, forwards it, removes its endpoint on Ctrl-C) and
 * `talat trigger payment.paid|payment.failed|payment.expired|payment.refunded` (real sandbox
 * payments; `refund` still works), and the orders' `payment.authorized` (`--finalize`: captured)
 * and `payment.partially_refunded`. listen numbers each attempt and prints the dead letters.
 */
import { createApp } from '../../src/app/app';
import { startCallbackSimulator, type CallbackSimulator } from '../../src/simulators/callbacks';
import { verifyWebhook } from '../../src/webhooks/signing';
import { serveApp } from '../support/servers';
import { createTestStack, testLogger, type TestStack } from '../support/stack';
import { apiKey, startReceiver, type Receiver } from '../webhooks/helpers';
import { start, talat, waitForOutput } from './support';

jest.setTimeout(240_000);

let stack: TestStack;
let gateway: Awaited<ReturnType<typeof serveApp>>;
let simulator: CallbackSimulator;
let api: Record<string, string>;
beforeAll(async () => {
  // a QR payment without a callback expires after 4 s here (the sandbox's .03 amounts)
  stack = await createTestStack({ env: { QR_EXPIRY_S: '4' } });
  gateway = await serveApp(stack.app);
  simulator = startCallbackSimulator({
    db: stack.db,
    config: stack.config,
    logger: testLogger,
    gatewayUrl: gateway.url,
    since: new Date(),
    pollMs: 200,
    quickDelayMs: 200,
  });
  const key = await apiKey(stack);
  api = { TALAT_API_URL: gateway.url, TALAT_API_KEY: key.key };
});
afterAll(async () => {
  await simulator?.stop();
  await gateway?.close();
  await stack?.close();
});

describe('talat webhooks endpoints', () => {
  it('create shows the secret once, list shows the endpoint, rotate a new secret; an unknown id exits 1', async () => {
    const created = await talat(
      ['webhooks', 'endpoints', 'create', '--url', 'http://127.0.0.1:9/hooks', '--events', 'payment.paid', '--json'],
      api,
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const ep = JSON.parse(created.stdout) as { id: string; secret: string; eventTypes: string[] };
    expect(ep).toMatchObject({ id: expect.stringMatching(/^ep_/), secret: expect.stringMatching(/^whsec_/) });
    expect(ep.eventTypes).toEqual(['payment.paid']);

    const listed = await talat(['webhooks', 'endpoints', 'list'], api);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`^${ep.id}  sandbox  http://127.0.0.1:9/hooks  payment.paid  enabled$`, 'm'),
    );
    expect(listed.stdout).not.toContain('whsec_');

    const rotated = await talat(['webhooks', 'endpoints', 'rotate', ep.id], api);
    expect(rotated.code).toBe(0);
    const secret = rotated.stdout.trim().split('\n').at(-1)!;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(ep.secret);

    const unknown = await talat(['webhooks', 'endpoints', 'rotate', 'ep_nope'], api);
    expect(unknown).toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /^talat webhooks endpoints rotate: POST \/webhooks\/endpoints\/ep_nope\/rotate-secret answered 404 NOT_FOUND/,
      ),
    });
    const badUrl = await talat(['webhooks', 'endpoints', 'create', '--url', 'http://10.0.0.1/x'], api);
    expect(badUrl).toMatchObject({ code: 1, stderr: expect.stringContaining('answered 400') });
    const noKey = await talat(['webhooks', 'endpoints', 'list'], { TALAT_API_URL: gateway.url });
    expect(noKey).toMatchObject({ code: 2, stderr: expect.stringContaining('an API key is needed') });
  });
});

describe('talat listen and talat trigger', () => {
  let receiver: Receiver;
  let listen: ReturnType<typeof start>;
  let ready: { endpointId: string; secret: string };
  beforeAll(async () => {
    receiver = await startReceiver();
    listen = start(process.execPath, ['bin/talat', 'listen', '--forward-to', receiver.url, '--json'], api);
    ready = JSON.parse((await waitForOutput(listen.stdout, /^\{"ready":true.*\}$/m))[0]);
  });
  afterAll(async () => {
    if (listen.child.exitCode === null) listen.child.kill('SIGKILL');
    await receiver?.stop();
  });

  /** The lines listen printed for `orderId`. */
  const linesOf = (orderId: string) =>
    listen
      .stdout()
      .split('\n')
      .filter((l) => l.includes(`"orderId":"${orderId}"`))
      .map(
        (l) =>
          JSON.parse(l) as {
            event?: string;
            type?: string;
            signature: string;
            attempt?: number;
            state?: string;
            data: { status: string };
            forwarded: { status: number };
          },
      )
      .filter((l) => l.event !== 'order.updated');
  /** The order events listen printed for `orderId`, their types. */
  const orderTypesOf = (orderId: string) =>
    listen
      .stdout()
      .split('\n')
      .filter((l) => l.includes(`"orderId":"${orderId}"`) && l.includes('"order.updated"'))
      .map((l) => JSON.parse(l) as { type: string; signature: string; forwarded: { status: number } });

  it.each([
    ['payment.paid', ['paid']],
    ['payment.failed', ['failed']],
    ['payment.expired', ['expired']],
    ['payment.refunded', ['paid', 'refunded']],
    ['refund', ['paid', 'refunded']],
  ])('trigger %s: the payment reaches it; listen prints the signed event and forwards it', async (event, statuses) => {
    const r = await talat(['trigger', event, '--json', '--timeout', '30'], api);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 0,
      stderr: expect.stringContaining('created QR payment'),
    });
    const payment = JSON.parse(r.stdout) as { orderId: string; status: string };
    expect(payment.status).toBe(statuses.at(-1));
    await waitForOutput(
      () =>
        linesOf(payment.orderId)
          .map((l) => l.data.status)
          .join(','),
      new RegExp(statuses.join(',')),
      30_000,
    );
    for (const line of linesOf(payment.orderId))
      expect(line).toMatchObject({ attempt: 1, signature: 'valid', forwarded: { status: 200 } });
    // forwarded as it came: the handler verifies it with the session's secret
    const got = receiver.log.filter((x) => x.body.includes(payment.orderId));
    expect(got.map((x) => JSON.parse(x.body).data.status)).toEqual(statuses);
    for (const x of got) expect(verifyWebhook(ready.secret, x.headers, x.body)).toBe(true);
  });

  it.each([
    ['payment.authorized', [], ['authorized'], 'created card authorisation'],
    ['payment.authorized', ['--finalize'], ['authorized', 'paid'], 'created card authorisation'],
    ['payment.partially_refunded', [], ['paid', 'partially_refunded'], 'created QR payment'],
  ])('trigger %s %j (orders): listen prints the signed events %j', async (event, extra, statuses, created) => {
    const r = await talat(['trigger', event, ...extra, '--json', '--timeout', '30'], api);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringContaining(created) });
    const out = JSON.parse(r.stdout) as { orderId: string; status: string; amount: number; order?: unknown };
    if (event === 'payment.authorized' && !extra.length)
      expect(out).toMatchObject({ status: 'authorized', amount: 110 });
    if (extra.length)
      expect(out).toMatchObject({ status: 'paid', amount: 87.5, order: { status: 'settled', capturedAmount: 87.5 } });
    if (event === 'payment.partially_refunded')
      expect(out).toMatchObject({ status: 'paid', order: { finalAmount: 100, refundedAmount: 20 } });
    await waitForOutput(
      () =>
        linesOf(out.orderId)
          .map((l) => l.data.status)
          .join(','),
      new RegExp(`^${statuses.join(',')}$`),
      30_000,
    );
    for (const line of linesOf(out.orderId))
      expect(line).toMatchObject({ signature: 'valid', forwarded: { status: 200 } });
  });

  it.each([
    ['order.settled', ['order.adjusted', 'order.released', 'order.settled'], 'settled'],
    ['order.topup_paid', ['order.adjusted', 'order.topup_pending', 'order.topup_paid', 'order.settled'], 'settled'],
    ['order.topup_pending', ['order.adjusted', 'order.topup_pending'], 'awaiting_topup'],
  ])('trigger %s: listen prints the order events %j, signed', async (event, types, status) => {
    const r = await talat(['trigger', event, '--json', '--timeout', '30'], api);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('created') });
    const out = JSON.parse(r.stdout) as { orderId: string; order: { status: string } };
    expect(out.order.status).toBe(status);
    await waitForOutput(
      () =>
        orderTypesOf(out.orderId)
          .map((l) => l.type)
          .join(','),
      new RegExp(`^${types.join(',')}`),
      30_000,
    );
    for (const line of orderTypesOf(out.orderId))
      expect(line).toMatchObject({ signature: 'valid', forwarded: { status: 200 } });
  });

  it('trigger --finalize goes with payment.authorized only (exit 2)', async () => {
    const r = await talat(['trigger', 'payment.paid', '--finalize'], api);
    expect(r).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--finalize goes with payment.authorized only'),
    });
  });

  it('trigger refuses a live key (exit 2) and an unknown event (exit 2)', async () => {
    const live = await apiKey(stack, ['payments:write', 'payments:read'], 'live');
    const [withLive, unknown] = await Promise.all([
      talat(['trigger', 'payment.paid'], { ...api, TALAT_API_KEY: live.key }),
      talat(['trigger', 'payment.lost'], api),
    ]);
    expect(withLive).toMatchObject({ code: 2, stderr: expect.stringContaining('sandbox payments only') });
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown event "payment.lost"') });
  });

  it('a handler that keeps failing: listen numbers the attempts 1 to 4, then prints the dead letter, retrying', async () => {
    receiver.status = 503;
    try {
      const r = await talat(['trigger', 'payment.paid', '--json', '--timeout', '30'], api);
      expect(r.code).toBe(0);
      const { orderId } = JSON.parse(r.stdout) as { orderId: string };
      const dead = await waitForOutput(
        () =>
          linesOf(orderId)
            .map((l) => (l.state ? `dead:${l.state}` : `attempt:${l.attempt}:${l.forwarded.status}`))
            .join(','),
        /attempt:1:503,attempt:2:503,attempt:3:503,attempt:4:503,dead:retrying/,
        30_000,
      );
      expect(dead[0]).toBeTruthy();
      expect(linesOf(orderId).at(-1)).toMatchObject({
        deadLetter: expect.stringMatching(/^dlq_/),
        attempts: 4,
        state: 'retrying',
        nextAttemptAt: expect.any(String),
      });
    } finally {
      receiver.status = 200;
    }
  });

  it('Ctrl-C removes the endpoint listen registered and exits 0', async () => {
    const row = () => stack.db('webhook_endpoints').where({ id: ready.endpointId }).first();
    expect((await row()).deleted_at).toBeNull();
    listen.child.kill('SIGINT');
    const r = await listen.done;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`removed webhook endpoint ${ready.endpointId}`);
    expect((await row()).deleted_at).not.toBeNull();
  });
});

describe('talat listen on a gateway that refuses loopback endpoints', () => {
  it('exits 1 and says how to allow them', async () => {
    const urlPolicy = { requireHttps: false, allowLoopback: false };
    const strict = createApp({
      config: { ...stack.config, webhooks: { ...stack.config.webhooks, urlPolicy } },
      db: stack.db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
    });
    const served = await serveApp(strict);
    try {
      const r = await talat(['listen'], { ...api, TALAT_API_URL: served.url });
      expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining('WEBHOOK_ALLOW_LOOPBACK=on') });
    } finally {
      await served.close();
    }
  });
});
