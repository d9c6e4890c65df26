/**
 * GET /payments/{orderId}/timeline: a paid QR payment's story in one call, in time order (creation,
 * the sandbox provider's callback, the status change, the webhook delivery and attempt), with the
 * link to its workflow in Temporal Web; the visibility rules of /checkstatus.
 */
import http from 'node:http';
import { listenLocal, useTestStack } from '../support/servers';
import { uniq } from '../support/stack';
import { fieldSigned, post } from '../callbacks/helpers';
import { newKey, request, rowOf, waitFor } from '../payments/support';

const stack = useTestStack();
let key: { id: string; key: string };
let hook: Awaited<ReturnType<typeof listenLocal>>;
beforeAll(async () => {
  key = await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] });
  hook = await listenLocal(http.createServer((_req, res) => res.writeHead(204).end()));
  const url = `${hook.url}/hook`;
  const ep = await request(stack.app.callback()).post('/webhooks/endpoints').set('X-API-Key', key.key).send({ url });
  expect(ep.status).toBeLessThan(300);
});
afterAll(() => hook.close());

const timeline = (orderId: string, k = key.key) =>
  request(stack.app.callback())
    .get(`/payments/${encodeURIComponent(orderId)}/timeline`)
    .set('X-API-Key', k);

describe('GET /payments/{orderId}/timeline', () => {
  it("tells a paid QR payment's whole story in time order", async () => {
    const orderId = uniq('tl');
    const created = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 42.5, customerId: 'c' });
    expect(created.status).toBe(200);
    await waitFor(() => rowOf(stack.db, orderId));
    // the QR provider's callback, signed as it signs it
    const paid = await post(
      stack.app,
      '/qrcallback',
      fieldSigned(stack.config, 'QR', {
        paymentId: created.body.body.paymentId,
        status: 'success',
        amount: 42.5,
        orderId,
      }),
    );
    expect(paid.status).toBe(200);
    const res = await waitFor(
      async () => {
        const t = await timeline(orderId);
        return t.status === 200 && t.body.body.entries.some((e: { type: string }) => e.type === 'webhook.attempt')
          ? t
          : undefined;
      },
      30_000,
      'a timeline with a webhook attempt',
    ).catch(async (e) => {
      const t = await timeline(orderId);
      throw new Error(`${e.message}: ${t.status} ${JSON.stringify(t.body)}`);
    });
    const body = res.body.body;
    expect(body).toMatchObject({
      orderId,
      paymentId: created.body.body.paymentId,
      status: 'paid',
      workflowId: `payment-${created.body.body.paymentId}`,
    });
    expect(body.temporalWebUrl).toMatch(
      new RegExp(`/namespaces/default/workflows/payment-${created.body.body.paymentId}$`),
    );
    const types = body.entries.map((e: { type: string }) => e.type);
    expect(types[0]).toBe('payment.created');
    expect(types).toEqual(
      expect.arrayContaining(['callback.received', 'payment.status_changed', 'webhook.delivery', 'webhook.attempt']),
    );
    const ats = body.entries.map((e: { at: string }) => e.at);
    expect([...ats].sort()).toEqual(ats);
    expect(body.entries.find((e: { type: string }) => e.type === 'callback.received').details).toMatchObject({
      provider: 'qr',
      status: 'success',
      receiptId: expect.stringMatching(/^evt_/),
      sourceIp: expect.any(String),
    });
    expect(body.entries.find((e: { type: string }) => e.type === 'payment.status_changed').details).toMatchObject({
      from: 'pending',
      to: 'paid',
    });
    expect(body.entries.find((e: { type: string }) => e.type === 'webhook.attempt').details).toMatchObject({
      attempt: 1,
      statusCode: 204,
      durationMs: expect.any(Number),
    });
  });

  it('is visible to the keys that see it in /checkstatus only; needs payments:read', async () => {
    const orderId = uniq('tl');
    await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u', amount: 10, customerId: 'c' });
    await waitFor(async () => (await timeline(orderId)).status === 200);
    const other = await newKey(stack.db, { scopes: ['payments:read'] });
    expect((await timeline(orderId, other.key)).status).toBe(404);
    const writer = await newKey(stack.db, { scopes: ['payments:write'] });
    expect((await timeline(orderId, writer.key)).status).toBe(403);
    expect((await timeline(uniq('none'))).status).toBe(404);
  });

  it('an order id two merchants (and a live key) use: each key sees its own payment only', async () => {
    const orderId = uniq('tl-shared');
    const keys = [
      key,
      await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }),
      await newKey(stack.db, { scopes: ['payments:write', 'payments:read'], mode: 'live' }),
    ];
    const ids: string[] = [];
    for (const k of keys) {
      const res = await request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', k.key)
        .send({ orderId, userId: 'u', amount: 11, customerId: 'c' });
      expect(res.status).toBe(200);
      ids.push(res.body.body.paymentId);
    }
    expect(new Set(ids).size).toBe(3);
    for (const [i, k] of keys.entries()) {
      const t = await waitFor(async () => {
        const r = await timeline(orderId, k.key);
        return r.status === 200 ? r : undefined;
      });
      expect([t.body.body.paymentId, t.body.body.workflowId]).toEqual([ids[i], `payment-${ids[i]}`]);
      expect(JSON.stringify(t.body.body.entries)).not.toMatch(new RegExp(ids.filter((_, j) => j !== i).join('|')));
    }
  });
});
