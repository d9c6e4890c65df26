/**
 * Webhook management through the payment API, and who receives which event, on the real stack:
 * the endpoints of the key that created the payment; payments made without a key go to endpoints
 * registered with publicPayments in that mode.
 */
import { DEFAULT_RETRY_SCHEDULE_S } from '../../src/webhooks';
import request from 'supertest';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { cardPayment, fieldSigned, post, resultOf, waitFor } from '../callbacks/helpers';
import { apiKey, deliveriesSettled, registerEndpoint, startReceiver, type Receiver } from './helpers';

let stack: TestStack;
let receiver: Receiver;
beforeAll(async () => {
  stack = await createTestStack();
  receiver = await startReceiver(200);
});
afterAll(async () => {
  await stack.close();
  await receiver.stop();
});

const api = () => request(stack.app.callback());
const paymentError = (code: string, status: number) => ({
  statusCode: status,
  body: { error: expect.any(String), code, details: expect.any(Object) },
});

describe('endpoint registration', () => {
  it('registers, lists without the secret, removes; the secret is sealed at rest', async () => {
    const key = await apiKey(stack);
    const res = await api()
      .post('/webhooks/endpoints')
      .set('X-API-Key', key.key)
      .send({ url: receiver.url, description: 'orders' });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const ep = res.body.body;
    expect(res.body).toEqual({
      statusCode: 201,
      body: {
        id: expect.stringMatching(/^ep_/),
        url: receiver.url,
        description: 'orders',
        publicPayments: false,
        mode: 'sandbox',
        eventTypes: null,
        disabled: false,
        retrySchedule: [...DEFAULT_RETRY_SCHEDULE_S],
        createdAt: expect.any(String),
        secret: expect.stringMatching(/^whsec_/),
      },
    });
    const row = await stack.db('webhook_endpoints').where({ id: ep.id }).first();
    expect(row.api_key_id).toBe(key.id);
    expect(JSON.stringify(row)).not.toContain(ep.secret.slice(6));

    const list = await api().get('/webhooks/endpoints').set('X-API-Key', key.key);
    expect(list.body).toEqual({
      statusCode: 200,
      body: { endpoints: [{ ...ep, secret: undefined }], hasMore: false, nextCursor: null },
    });
    expect(JSON.stringify(list.body)).not.toContain('whsec_');

    const other = await apiKey(stack);
    expect((await api().get('/webhooks/endpoints').set('X-API-Key', other.key)).body.body.endpoints).toEqual([]);
    const foreign = await api().delete(`/webhooks/endpoints/${ep.id}`).set('X-API-Key', other.key);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(paymentError('NOT_FOUND', 404));

    const del = await api().delete(`/webhooks/endpoints/${ep.id}`).set('X-API-Key', key.key);
    expect(del.body).toEqual({ statusCode: 200, body: { id: ep.id, deleted: true } });
    expect((await api().get('/webhooks/endpoints').set('X-API-Key', key.key)).body.body.endpoints).toEqual([]);
    expect((await api().delete(`/webhooks/endpoints/${ep.id}`).set('X-API-Key', key.key)).status).toBe(404);
  });

  it('401 UNAUTHORIZED without a key, 403 FORBIDDEN without the webhooks:manage scope', async () => {
    const none = await api().get('/webhooks/endpoints');
    expect(none.status).toBe(401);
    expect(none.body).toEqual(paymentError('UNAUTHORIZED', 401));
    const weak = await apiKey(stack, ['payments:write']);
    for (const res of [
      await api().get('/webhooks/endpoints').set('X-API-Key', weak.key),
      await api().post('/webhooks/endpoints').set('X-API-Key', weak.key).send({ url: receiver.url }),
      await api().get('/webhooks/dead-letters').set('X-API-Key', weak.key),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(paymentError('FORBIDDEN', 403));
    }
  });

  it.each([
    [{}, 'MISSING_FIELD', 'url'],
    [{ url: 'ftp://x.example/hook' }, 'INVALID_INPUT', 'url'],
    [{ url: 'https://x.example/hook', extra: 1 }, 'INVALID_INPUT', 'extra'],
    [{ url: 'https://x.example/hook', publicPayments: 'yes' }, 'INVALID_INPUT', 'publicPayments'],
  ])('400 for %p', async (body, code, field) => {
    const key = await apiKey(stack);
    const res = await api().post('/webhooks/endpoints').set('X-API-Key', key.key).send(body);
    expect(res.status).toBe(400);
    expect(res.body.body).toMatchObject({ code, details: { field } });
  });
});

it('every callback and webhook endpoint is described in /openapi.json', async () => {
  const doc = (await api().get('/openapi.json')).body;
  for (const path of [
    '/callback',
    '/cardnetcallback',
    '/bankappcallback',
    '/qrcallback',
    '/walletcallback',
    '/wallet/callback',
    '/webhooks/endpoints',
    '/webhooks/dead-letters/{id}/replay',
  ])
    expect(doc.paths[path]?.post).toBeDefined();
  expect(doc.paths['/webhooks/endpoints'].get).toBeDefined();
  expect(doc.paths['/webhooks/endpoints/{id}'].delete).toBeDefined();
  expect(doc.paths['/webhooks/dead-letters'].get).toBeDefined();
  expect(doc.paths['/qrcallback'].post.responses['401'].content['application/json'].schema).toBeDefined();
  expect(doc.components.schemas.HandlerFormCallback.properties).toHaveProperty('success');
});

describe('who receives payment.status.updated', () => {
  it("the endpoints of the key that created the payment, signed with each endpoint's secret", async () => {
    const key = await apiKey(stack);
    const a = await registerEndpoint(stack, key.key, { url: `${receiver.url}/a` });
    const b = await registerEndpoint(stack, key.key, { url: `${receiver.url}/b` });
    const bystander = await apiKey(stack);
    await registerEndpoint(stack, bystander.key, { url: `${receiver.url}/bystander`, publicPayments: true });

    const orderId = uniq('ord');
    const created = await api()
      .post('/qrpayment')
      .set('X-API-Key', key.key)
      .send({ orderId, userId: 'u-1', amount: 120.25, customerId: 'c-1' });
    expect(created.status).toBe(200);
    const paymentId = created.body.body.paymentId;
    await waitFor(() => stack.db('payments').where({ id: paymentId }).first());
    const cb = await post(
      stack.app,
      '/qrcallback',
      fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 120.25, orderId }),
    );
    expect(cb.status).toBe(200);

    const got = await waitFor(
      async () => {
        const mine = receiver.log.filter((r) => r.body.includes(orderId));
        return mine.length >= 2 ? mine : undefined;
      },
      15_000,
      'two webhooks',
    );
    await deliveriesSettled(stack, paymentId, 'paid');
    const mine = receiver.log.filter((r) => r.body.includes(orderId));
    expect(mine.map((r) => r.path).sort()).toEqual(['/hooks/a', '/hooks/b']);
    const toA = got.find((r) => r.headers['webhook-signature'] && receiver.verified(r, a.secret))!;
    const toB = got.find((r) => receiver.verified(r, b.secret))!;
    expect(toA).toBeDefined();
    expect(toB).toBeDefined();
    expect(toA.headers['webhook-id']).not.toBe(toB.headers['webhook-id']);
    expect(receiver.verified(toA, b.secret)).toBe(false);
    expect(JSON.parse(toA.body)).toEqual({
      event: 'payment.status.updated',
      type: 'payment.paid',
      data: { orderId, status: 'paid', amount: 120.25, timestamp: expect.any(String), paymentId, mode: 'sandbox' },
    });
    expect(toA.headers['content-type']).toBe('application/json');
  });

  it('payments without a key go to publicPayments endpoints of the same mode only; removed endpoints get nothing', async () => {
    const sandboxKey = await apiKey(stack);
    const liveKey = await apiKey(stack, ['webhooks:manage'], 'live');
    const pub = await registerEndpoint(stack, sandboxKey.key, { url: `${receiver.url}/public`, publicPayments: true });
    const gone = await registerEndpoint(stack, sandboxKey.key, { url: `${receiver.url}/gone`, publicPayments: true });
    await registerEndpoint(stack, sandboxKey.key, { url: `${receiver.url}/private` });
    await registerEndpoint(stack, liveKey.key, { url: `${receiver.url}/live`, publicPayments: true });
    await api().delete(`/webhooks/endpoints/${gone.id}`).set('X-API-Key', sandboxKey.key);

    const p = await cardPayment(stack); // public, sandbox outside production
    await post(
      stack.app,
      '/qrcallback',
      fieldSigned(stack.config, 'QR', {
        paymentId: p.paymentId,
        status: 'failed',
        amount: p.amount,
        orderId: p.orderId,
      }),
    );
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'failed' });
    const first = await waitFor(async () => receiver.log.find((r) => r.body.includes(p.orderId)), 15_000, 'webhook');
    await deliveriesSettled(stack, p.paymentId, 'failed');
    // other tests' publicPayments endpoints in sandbox mode may receive it too; these four are ours
    const paths = receiver.log.filter((r) => r.body.includes(p.orderId)).map((r) => r.path);
    expect(paths.filter((x) => x === '/hooks/public')).toHaveLength(1);
    expect(paths).not.toEqual(expect.arrayContaining(['/hooks/gone']));
    expect(paths).not.toEqual(expect.arrayContaining(['/hooks/private']));
    expect(paths).not.toEqual(expect.arrayContaining(['/hooks/live']));
    const toPublic = receiver.log.find((r) => r.body.includes(p.orderId) && r.path === '/hooks/public')!;
    expect(receiver.verified(toPublic, pub.secret)).toBe(true);
    expect(JSON.parse(first.body).data).toMatchObject({ orderId: p.orderId, status: 'failed' });
  });
});
