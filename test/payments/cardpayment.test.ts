/**
 * POST /cardpayment on the real stack: the charge is created by an activity at the card provider
 * (the sandbox simulator, or a live provider at CARD_PROVIDER_URL), its id is kept as provider_ref,
 * refused charges fail the payment, a charge decided at once settles it, a silent provider expires it.
 */
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { startFakeBank, type FakeBank } from './fake-bank';
import { eventsOf, gatewayWith, newKey, paymentError, request, rowOf, webhookWitness } from './support';
import { paymentHandle } from './support';

let stack: TestStack;
let provider: FakeBank; // a scripted live card provider
beforeAll(async () => {
  provider = await startFakeBank();
  stack = await createTestStack({
    env: {
      CARD_PROVIDER_URL: provider.url,
      CARD_PROVIDER_KEY: 'sk_live_test_123',
      PUBLIC_BASE_URL: 'https://pay.talat.example',
    },
  });
});
afterAll(async () => {
  await stack.close();
  await provider.close();
});

const pay = (body: object, key?: string) => {
  const req = request(stack.app.callback()).post('/cardpayment').type('form');
  return (key ? req.set('X-API-Key', key) : req).send(body);
};

describe('sandbox (public, simulators on)', () => {
  it('creates the charge at the simulator and keeps its id as provider_ref', async () => {
    const orderId = uniq('card');
    const res = await pay({
      orderId,
      userId: 'u-1',
      amount: '250.50',
      token: 'tok_visa_4242',
      callback: 'https://shop.example/thanks',
    });
    expect(res.status).toBe(200);
    const { paymentId, chargeId } = res.body.body;
    expect(res.body.body).toMatchObject({
      status: 'pending',
      chargeId: expect.stringMatching(/^chrg_test_/),
      authorizeUri: null,
    });
    const row = await rowOf(stack.db, orderId);
    expect(row).toMatchObject({
      id: paymentId,
      provider_ref: chargeId,
      mode: 'sandbox',
      api_key_id: null,
      callback_url: 'https://shop.example/thanks',
    });
    const charge = await stack.db('sim_card_charges').where({ id: chargeId }).first();
    expect(charge).toMatchObject({
      amount_satang: '25050',
      currency: 'THB',
      idempotency_key: paymentId,
      return_uri: 'https://pay.talat.example/callback',
      metadata: { orderId, paymentId },
    });
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });

  it('a declined card fails the payment at once and emits the webhook', async () => {
    const witness = await webhookWitness(stack);
    const orderId = uniq('card');
    const res = await pay({ orderId, userId: 'u', amount: '10', token: 'tok_declined' });
    expect(res.status).toBe(200);
    expect(res.body.body).toMatchObject({
      status: 'failed',
      chargeId: null,
      failureReason: expect.stringMatching(/declined/),
    });
    const handle = await paymentHandle(stack, orderId);
    await expect(handle.result()).resolves.toMatchObject({ status: 'failed' });
    const row = await rowOf(stack.db, orderId);
    expect(row.status).toBe('failed');
    expect(await eventsOf(stack.db, row.id)).toEqual(['pending', 'failed']);
    expect((await handle.describe()).searchAttributes).toMatchObject({ PaymentStatus: ['failed'] });
    await witness.received(orderId, 'failed');
    await witness.stop();

    // asking again returns the ended payment from its record
    const again = await pay({ orderId, userId: 'u', amount: '10', token: 'tok_declined' });
    expect(again.body.body).toMatchObject({
      paymentId: row.id,
      status: 'failed',
      failureReason: expect.stringMatching(/declined/),
    });
  });

  it('a sandbox key owns the payment', async () => {
    const k = await newKey(stack.db, { scopes: ['payments:write'] });
    const orderId = uniq('card');
    const res = await pay({ orderId, userId: 'u', amount: '1', token: 'tok_visa' }, k.key);
    expect(res.status).toBe(200);
    expect(await rowOf(stack.db, orderId)).toMatchObject({ api_key_id: k.id, mode: 'sandbox' });
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });

  it('a key without payments:write is refused even on the public endpoint', async () => {
    const k = await newKey(stack.db, { scopes: ['payments:read'] });
    const res = await pay({ orderId: uniq('card'), userId: 'u', amount: '1', token: 'tok_visa' }, k.key);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(paymentError('FORBIDDEN', { requiredScope: 'payments:write' }));
  });
});

describe('live (CARD_PROVIDER_URL)', () => {
  it('calls the provider with our key, the amount in satang and the payment id as Idempotency-Key', async () => {
    const k = await newKey(stack.db, { scopes: ['payments:write'], mode: 'live' });
    const orderId = uniq('card');
    provider.requests.length = 0;
    provider.answers.push({
      status: 200,
      body: { object: 'charge', id: 'chrg_live_1', status: 'pending', authorize_uri: 'https://3ds.example/a/1' },
    });
    const res = await pay({ orderId, userId: 'u', amount: '1234.56', token: 'tokn_live_x' }, k.key);
    expect(res.status).toBe(200);
    expect(res.body.body).toMatchObject({
      status: 'pending',
      chargeId: 'chrg_live_1',
      authorizeUri: 'https://3ds.example/a/1',
    });
    expect(provider.requests).toHaveLength(1);
    const sent = provider.requests[0];
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/charges',
      body: { amount: 123456, currency: 'THB', card: 'tokn_live_x', return_uri: 'https://pay.talat.example/callback' },
    });
    expect(sent.headers.authorization).toBe('Bearer sk_live_test_123');
    expect(sent.headers['idempotency-key']).toBe(res.body.body.paymentId);
    expect(await rowOf(stack.db, orderId)).toMatchObject({
      provider_ref: 'chrg_live_1',
      mode: 'live',
      details: { charge: { authorizeUri: 'https://3ds.example/a/1' } },
    });
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });

  it('a charge the provider decides at once settles the payment without a callback', async () => {
    const k = await newKey(stack.db, { scopes: ['payments:write'], mode: 'live' });
    const orderId = uniq('card');
    provider.answers.push({ status: 200, body: { id: 'chrg_live_2', status: 'successful' } });
    const res = await pay({ orderId, userId: 'u', amount: '5', token: 'tokn_x' }, k.key);
    expect(res.body.body).toMatchObject({ status: 'paid', chargeId: 'chrg_live_2' });
    expect((await rowOf(stack.db, orderId)).status).toBe('paid');
  });

  it('a provider 5xx is retried; a 4xx is not', async () => {
    const k = await newKey(stack.db, { scopes: ['payments:write'], mode: 'live' });
    provider.requests.length = 0;
    provider.answers.push(
      { status: 503, body: { message: 'busy' } },
      { status: 200, body: { id: 'chrg_live_3', status: 'pending' } },
    );
    const retried = await pay({ orderId: uniq('card'), userId: 'u', amount: '5', token: 'tokn_x' }, k.key);
    expect(retried.body.body).toMatchObject({ status: 'pending', chargeId: 'chrg_live_3' });
    expect(provider.requests).toHaveLength(2);

    provider.requests.length = 0;
    provider.answers.push({ status: 400, body: { code: 'invalid_card', message: 'bad token' } });
    const refused = await pay({ orderId: uniq('card'), userId: 'u', amount: '5', token: 'tokn_bad' }, k.key);
    expect(refused.body.body).toMatchObject({ status: 'failed', failureReason: expect.stringContaining('bad token') });
    expect(provider.requests).toHaveLength(1);
    await (await paymentHandle(stack, retried.body.body.orderId)).terminate('test cleanup');
  });
});

describe('not configured', () => {
  it('503 SERVICE_UNAVAILABLE and nothing started when live mode has no CARD_PROVIDER_URL', async () => {
    const bare = gatewayWith(stack, { SIMULATORS: 'off' }); // public card payments are live then
    const orderId = uniq('card');
    const res = await request(bare.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId, userId: 'u', amount: '5', token: 'tok' });
    expect(res.status).toBe(503);
    expect(res.body).toEqual(
      paymentError('SERVICE_UNAVAILABLE', { service: 'card-provider', reason: 'CARD_PROVIDER_URL is not configured' }),
    );
    expect(await rowOf(stack.db, orderId)).toBeUndefined();
    // a sandbox key while the simulators are off
    const k = await newKey(stack.db, { scopes: ['payments:write'] });
    const sandbox = await request(bare.callback())
      .post('/cardpayment')
      .type('form')
      .set('X-API-Key', k.key)
      .send({ orderId, userId: 'u', amount: '5', token: 'tok' });
    expect(sandbox.status).toBe(503);
    expect(sandbox.body).toEqual(paymentError('SERVICE_UNAVAILABLE', { reason: 'simulators are off' }));
  });
});

describe('timeout', () => {
  it('expires when the provider never reports a result', async () => {
    const quick = gatewayWith(stack, { CARD_PAYMENT_TIMEOUT_S: '1' }); // the timeout travels in the workflow input
    const witness = await webhookWitness(stack);
    const orderId = uniq('card');
    const res = await request(quick.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId, userId: 'u', amount: '5', token: 'tok_visa' });
    expect(res.body.body.status).toBe('pending');
    const handle = await paymentHandle(stack, orderId);
    await expect(handle.result()).resolves.toMatchObject({ status: 'expired' });
    const row = await rowOf(stack.db, orderId);
    expect(row.status).toBe('expired');
    expect(await eventsOf(stack.db, row.id)).toEqual(['pending', 'expired']);
    await witness.received(orderId, 'expired');
    await witness.stop();
  });
});
