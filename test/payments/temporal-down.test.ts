/**
 * The whole stack (the gateway's client and the workers) reaches the tests' Temporal through a
 * TCP relay, which is then made to hang (connections accepted, nothing answered) or to refuse,
 * and comes back: a creation is a 503 in its envelope within the gateway's bound and leaves no
 * payments row; once Temporal answers again, creations are started again and get paid.
 */
import net from 'node:net';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { fieldSigned, post, resultOf } from '../callbacks/helpers';
import { newKey, paymentError, paymentWorkflowIdOfOrder, request, rowOf } from './support';

/** A TCP relay to `target` that can be told to hang (accept, never answer) or to refuse. */
async function relay(target: number) {
  const sockets = new Set<net.Socket>();
  let mode: 'forward' | 'hang' = 'forward';
  let server: net.Server | undefined;
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  };
  const cut = () => sockets.forEach((s) => s.destroy());
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = net.createServer((c) => {
        track(c);
        if (mode === 'hang') return;
        const up = net.connect(target, '127.0.0.1');
        track(up);
        c.pipe(up).pipe(c);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server!.address() as net.AddressInfo).port));
    });
  const port = await listen(0);
  return {
    port,
    hang() {
      mode = 'hang';
      cut(); // the connections are gone; every reconnection is accepted and never answered
    },
    async refuse() {
      const closed = new Promise((r) => server!.close(r));
      cut();
      await closed;
    },
    async restore() {
      mode = 'forward';
      cut();
      if (!server!.listening) await listen(port);
    },
    async close() {
      const closed = server!.listening ? new Promise((r) => server!.close(r)) : Promise.resolve();
      cut();
      await closed;
    },
  };
}

let stack: TestStack;
let link: Awaited<ReturnType<typeof relay>>;
let key: string;
beforeAll(async () => {
  const [, port] = process.env.TALAT_TEST_TEMPORAL_ADDRESS!.split(':');
  link = await relay(Number(port));
  stack = await createTestStack({ temporalAddress: `127.0.0.1:${link.port}` });
  key = (await newKey(stack.db)).key;
});
afterAll(async () => {
  await link?.restore(); // the workers drain through it
  await stack?.close();
  await link?.close();
});

const createQr = (orderId: string) =>
  request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount: 3, customerId: 'c' });

/** the probe decides within PROBE_AFTER_MS + 2 s; a little room for a loaded machine */
const BOUND_MS = 5_000;

describe.each([
  ['hangs (connections accepted, never answered)', () => link.hang()],
  ['refuses connections', () => link.refuse()],
])('Temporal %s', (_name, goDown) => {
  beforeAll(async () => {
    await link.restore();
    await goDown();
  });

  it('POST /qrpayment -> 503 in its envelope within bounds, and no payments row', async () => {
    const orderId = uniq('temporal-down');
    const started = Date.now();
    const res = await createQr(orderId);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(paymentError('SERVICE_UNAVAILABLE', { service: 'temporal' }));
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(await rowOf(stack.db, orderId)).toBeUndefined();
  });

  it('Temporal back: a creation is started and paid', async () => {
    await link.restore();
    const orderId = uniq('temporal-back');
    const deadline = Date.now() + 30_000;
    let res = await createQr(orderId);
    while (res.status === 503 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      res = await createQr(orderId);
    }
    expect(res.status).toBe(200);
    const paymentId = res.body.body.paymentId as string;
    const cb = await post(
      stack.app,
      '/qrcallback',
      fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 3, orderId }),
    );
    expect(cb.status).toBe(200);
    await expect(resultOf(stack, await paymentWorkflowIdOfOrder(stack, orderId))).resolves.toMatchObject({
      status: 'paid',
    });
  }, 60_000);
});
