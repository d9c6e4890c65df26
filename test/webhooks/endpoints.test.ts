/**
 * Webhook endpoints like Svix's, on the real stack: the eventTypes filter and the disabled flag,
 * secret rotation (both signatures for 24 h, verified with the official standardwebhooks
 * library), the attempts list with cursor pagination, resending a message and recovering every
 * failed message since a time in a background workflow.
 */
import request from 'supertest';
import { paymentWorkflowIdOf } from '../../src/payments';
import { webhookRecoverWorkflowId } from '../../src/webhooks';
import { fieldSigned, post, waitFor } from '../callbacks/helpers';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { apiKey, registerEndpoint, startReceiver, verifiesWithStandardWebhooks, type Receiver } from './helpers';

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

/** A QR payment of `key` settled by a signed QR callback; resolves once its delivery workflow ended. */
async function paidQr(key: string, status: 'success' | 'failed' = 'success') {
  const orderId = uniq('ord');
  const created = await api()
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount: 42.5, customerId: 'c-1' });
  expect(created.status).toBe(200);
  const paymentId = created.body.body.paymentId as string;
  await waitFor(() => stack.db('payments').where({ id: paymentId }).first());
  const cb = await post(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId, status, amount: 42.5, orderId }),
  );
  expect(cb.status).toBe(200);
  await stack.client.workflow.getHandle(paymentWorkflowIdOf(paymentId)).result();
  // the payment workflow made the first attempts itself; wait until none of its deliveries is still pending (retries)
  await waitFor(
    async () =>
      (await stack.db('webhook_deliveries').where({ payment_id: paymentId, state: 'pending' })).length === 0
        ? true
        : undefined,
    30_000,
    'deliveries settled',
  );
  return { orderId, paymentId };
}

const verifies = verifiesWithStandardWebhooks;

describe('eventTypes and disabled', () => {
  it('an endpoint receives only its event types; a disabled one receives nothing; PATCH changes both', async () => {
    const key = await apiKey(stack);
    const all = await registerEndpoint(stack, key.key, { url: `${receiver.url}/all` });
    const failedOnly = await registerEndpoint(stack, key.key, {
      url: `${receiver.url}/failed-only`,
      eventTypes: ['payment.failed'],
    });
    const off = await registerEndpoint(stack, key.key, { url: `${receiver.url}/off`, disabled: true });
    expect(failedOnly).toMatchObject({ eventTypes: ['payment.failed'], disabled: false });
    expect(off).toMatchObject({ eventTypes: null, disabled: true });

    const paid = await paidQr(key.key);
    const paths = () => receiver.log.filter((r) => r.body.includes(paid.orderId)).map((r) => r.path);
    expect(paths()).toEqual(['/hooks/all']);
    expect(
      verifies(
        receiver.log.find((r) => r.body.includes(paid.orderId))!,
        all.secret,
      ),
    ).toBe(true);

    const patched = await api()
      .patch(`/webhooks/endpoints/${off.id}`)
      .set('X-API-Key', key.key)
      .send({ disabled: false, eventTypes: ['payment.status.updated'] });
    expect(patched.status).toBe(200);
    expect(patched.body.body).toMatchObject({ id: off.id, disabled: false, eventTypes: ['payment.status.updated'] });
    await api().patch(`/webhooks/endpoints/${all.id}`).set('X-API-Key', key.key).send({ disabled: true });
    expect((await api().get(`/webhooks/endpoints/${all.id}`).set('X-API-Key', key.key)).body.body).toMatchObject({
      disabled: true,
    });

    const failed = await paidQr(key.key, 'failed');
    const got = receiver.log
      .filter((r) => r.body.includes(failed.orderId))
      .map((r) => r.path)
      .sort();
    expect(got).toEqual(['/hooks/failed-only', '/hooks/off']);

    const bad = await api()
      .patch(`/webhooks/endpoints/${off.id}`)
      .set('X-API-Key', key.key)
      .send({ eventTypes: ['payment.nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.body).toMatchObject({ code: 'INVALID_INPUT' });
    const other = await apiKey(stack);
    expect(
      (await api().patch(`/webhooks/endpoints/${off.id}`).set('X-API-Key', other.key).send({ disabled: true })).status,
    ).toBe(404);
  });
});

describe('secret rotation', () => {
  it('returns a new secret once; for 24 h both signatures are sent and each verifies with standardwebhooks; then only the new one', async () => {
    const key = await apiKey(stack);
    const ep = await registerEndpoint(stack, key.key, { url: `${receiver.url}/rotating` });
    const rotated = await api().post(`/webhooks/endpoints/${ep.id}/rotate-secret`).set('X-API-Key', key.key);
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const { secret, previousSecretExpiresAt } = rotated.body.body;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(ep.secret);
    expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    expect(
      JSON.stringify((await api().get(`/webhooks/endpoints/${ep.id}`).set('X-API-Key', key.key)).body),
    ).not.toContain('whsec_');

    const during = await paidQr(key.key);
    const msg = receiver.log.find((r) => r.body.includes(during.orderId))!;
    expect(String(msg.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(msg, secret)).toBe(true);
    expect(verifies(msg, ep.secret)).toBe(true);

    // the overlap has passed
    await stack
      .db('webhook_endpoints')
      .where({ id: ep.id })
      .update({ previous_secret_expires_at: new Date(Date.now() - 1000) });
    const after = await paidQr(key.key);
    const later = receiver.log.find((r) => r.body.includes(after.orderId))!;
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(later, secret)).toBe(true);
    expect(verifies(later, ep.secret)).toBe(false);
  });
});

describe('attempts, resend, recover', () => {
  let failing: Receiver;
  beforeAll(async () => {
    failing = await startReceiver(500);
  });
  afterAll(() => failing.stop());

  it('lists attempts with status/after filters and cursor pagination; resends one message; recovers every failed one since a time', async () => {
    const key = await apiKey(stack);
    const ep = await registerEndpoint(stack, key.key, { url: failing.url });
    const since = new Date(Date.now() - 1000).toISOString();
    const payments = await Promise.all([paidQr(key.key), paidQr(key.key), paidQr(key.key)]);
    // each message: the first attempt and the retries after 1 s, 2 s, 4 s, then the dead letter
    const messages = await stack.db('webhook_deliveries').where({ endpoint_id: ep.id }).orderBy('created_at');
    expect(messages.map((m: { state: string }) => m.state)).toEqual(['dead', 'dead', 'dead']);

    const list = (q: string) => api().get(`/webhooks/endpoints/${ep.id}/attempts${q}`).set('X-API-Key', key.key);
    const all = await list('?limit=200');
    expect(all.status).toBe(200);
    expect(all.body.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(all.body.body.attempts).toHaveLength(12);
    expect(all.body.body.attempts[0]).toMatchObject({
      id: expect.stringMatching(/^att_/),
      endpointId: ep.id,
      status: 'failed',
      statusCode: 500,
      kind: 'automatic',
    });
    // pages of 5, newest first, no overlap, same items as the whole list
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await list(`?limit=5${cursor ? `&starting_after=${cursor}` : ''}`);
      seen.push(...page.body.body.attempts.map((a: { id: string }) => a.id));
      cursor = page.body.body.nextCursor;
      expect(page.body.body.hasMore).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual(all.body.body.attempts.map((a: { id: string }) => a.id));
    expect((await list('?status=succeeded')).body.body.attempts).toEqual([]);
    expect(
      (await list(`?after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.body.attempts,
    ).toEqual([]);
    expect((await list('?status=maybe')).status).toBe(400);

    // resend one message once the receiver is back
    failing.status = 200;
    const first = messages[0];
    const resent = await api().post(`/webhooks/messages/${first.id}/resend`).set('X-API-Key', key.key);
    expect(resent.status).toBe(200);
    expect(resent.body.body).toEqual({ messageId: first.id, attempt: { ok: true, statusCode: 200 } });
    const delivered = failing.log.filter((r) => r.status === 200);
    expect(delivered).toHaveLength(1);
    expect(delivered[0].headers['webhook-id']).toBe(first.id);
    expect(verifies(delivered[0], ep.secret)).toBe(true);
    expect((await list('?status=succeeded')).body.body.attempts).toEqual([
      expect.objectContaining({ messageId: first.id, kind: 'resend', attempt: 5, status: 'succeeded' }),
    ]);
    expect((await stack.db('webhook_dead_letters').where({ delivery_id: first.id }).first()).status).toBe('delivered');

    // recover: the two still failed are resent in the background
    const rec = await api().post(`/webhooks/endpoints/${ep.id}/recover`).set('X-API-Key', key.key).send({ since });
    expect(rec.status).toBe(202);
    expect(rec.body.body).toEqual({ endpointId: ep.id, since, workflowId: webhookRecoverWorkflowId(ep.id) });
    await expect(stack.client.workflow.getHandle(webhookRecoverWorkflowId(ep.id)).result()).resolves.toEqual({
      resent: 2,
      delivered: 2,
      failed: 0,
    });
    const states = await stack.db('webhook_deliveries').where({ endpoint_id: ep.id }).pluck('state');
    expect(states).toEqual(['delivered', 'delivered', 'delivered']);
    for (const p of payments)
      expect(failing.log.some((r) => r.status === 200 && r.body.includes(p.orderId))).toBe(true);
    expect((await list('?status=succeeded')).body.body.attempts.map((a: { kind: string }) => a.kind).sort()).toEqual([
      'recover',
      'recover',
      'resend',
    ]);

    // nothing failed since: a second recovery resends nothing
    await api().post(`/webhooks/endpoints/${ep.id}/recover`).set('X-API-Key', key.key).send({ since });
    await expect(stack.client.workflow.getHandle(webhookRecoverWorkflowId(ep.id)).result()).resolves.toEqual({
      resent: 0,
      delivered: 0,
      failed: 0,
    });

    // another key sees none of it
    const other = await apiKey(stack);
    expect((await api().post(`/webhooks/messages/${first.id}/resend`).set('X-API-Key', other.key)).status).toBe(404);
    expect((await api().get(`/webhooks/endpoints/${ep.id}/attempts`).set('X-API-Key', other.key)).status).toBe(404);
    expect(
      (await api().post(`/webhooks/endpoints/${ep.id}/recover`).set('X-API-Key', key.key).send({ since: 'yesterday' }))
        .status,
    ).toBe(400);
  }, 60_000);

  it('lists endpoints with cursor pagination', async () => {
    const key = await apiKey(stack);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await registerEndpoint(stack, key.key, { url: `${receiver.url}/p${i}` })).id);
    const p1 = await api().get('/webhooks/endpoints?limit=2').set('X-API-Key', key.key);
    expect(p1.body.body.endpoints.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect(p1.body.body).toMatchObject({ hasMore: true, nextCursor: ids[1] });
    const p2 = await api().get(`/webhooks/endpoints?limit=2&starting_after=${ids[1]}`).set('X-API-Key', key.key);
    expect(p2.body.body).toEqual({
      endpoints: [expect.objectContaining({ id: ids[2] })],
      hasMore: false,
      nextCursor: null,
    });
  });
});

it('the new webhook endpoints are described in /openapi.json', async () => {
  const doc = (await api().get('/openapi.json')).body;
  expect(doc.paths['/webhooks/endpoints/{id}'].patch).toBeDefined();
  expect(doc.paths['/webhooks/endpoints/{id}/rotate-secret'].post).toBeDefined();
  expect(doc.paths['/webhooks/endpoints/{id}/attempts'].get).toBeDefined();
  expect(doc.paths['/webhooks/endpoints/{id}/recover'].post).toBeDefined();
  expect(doc.paths['/webhooks/messages/{msgId}/resend'].post).toBeDefined();
});
