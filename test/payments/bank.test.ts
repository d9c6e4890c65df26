/**
 * The bank routes through bankRequestWorkflow on the real stack: the sandbox simulator end to
 * end, and a scripted live bank for retries (5xx retried, 4xx not), credentials and outages.
 */
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { bankUser, startFakeBank, type FakeBank } from './fake-bank';
import { gatewayWith, newKey, paymentError, request } from './support';

let stack: TestStack;
let live: FakeBank;
let sandboxKey: string;
let liveKey: string;
let liveKeyId: string;
beforeAll(async () => {
  live = await startFakeBank();
  stack = await createTestStack({
    env: { BANK_API_URL: `${live.url}/`, BANK_API_KEY: 'bank-secret-key', PROVIDER_TIMEOUT_MS: '2000' },
  });
  sandboxKey = (await newKey(stack.db, { scopes: ['bank:write', 'bank:read'] })).key;
  ({ key: liveKey, id: liveKeyId } = await newKey(stack.db, { scopes: ['bank:write', 'bank:read'], mode: 'live' }));
});
afterAll(async () => {
  await stack.close();
  await live.close();
});

const post = (path: string, body: object, key = sandboxKey) =>
  request(stack.app.callback()).post(path).set('X-API-Key', key).send(body);
const get = (path: string, key = sandboxKey) => request(stack.app.callback()).get(path).set('X-API-Key', key);

describe('sandbox (bank simulator)', () => {
  it('creates a user and an order and reads them back', async () => {
    const userId = uniq('u');
    const created = await post('/bank/createuser', {
      userId,
      name: 'Somchai Jaidee',
      email: 'somchai@example.com',
      phone: '+66 81 234 5678',
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      statusCode: 200,
      body: {
        userId,
        bankUserId: expect.stringMatching(/^usr_/),
        name: 'Somchai Jaidee',
        email: 'somchai@example.com',
        phone: '+66 81 234 5678',
        status: 'active',
        createdAt: expect.any(String),
      },
    });
    const again = await post('/bank/createuser', {
      userId,
      name: 'Somchai Jaidee',
      email: 'somchai@example.com',
      phone: '+66 81 234 5678',
    });
    expect(again.body.body).toEqual(created.body.body);

    const orderId = uniq('o');
    const order = await post('/bank/createorder', { orderId, userId, amount: 1250.75, description: 'groceries' });
    expect(order.status).toBe(200);
    expect(order.body.body).toEqual({
      orderId,
      bankOrderId: expect.stringMatching(/^ord_/),
      userId,
      amount: 1250.75,
      currency: 'THB',
      description: 'groceries',
      status: 'created',
      createdAt: expect.any(String),
    });

    const read = await get(`/bank/user/${userId}`);
    expect(read.status).toBe(200);
    expect(read.body.body).toMatchObject({
      userId,
      bankUserId: created.body.body.bankUserId,
      orders: [{ orderId, amount: 1250.75, status: 'created' }],
    });
  });

  it('409 CONFLICT for the same user or order with other details', async () => {
    const userId = uniq('u');
    await post('/bank/createuser', { userId, name: 'A' });
    const user = await post('/bank/createuser', { userId, name: 'B' });
    expect(user.status).toBe(409);
    expect(user.body).toEqual(paymentError('CONFLICT', { userId, service: 'bank', bankCode: 'user_exists' }));
    const orderId = uniq('o');
    await post('/bank/createorder', { orderId, userId, amount: 10 });
    const order = await post('/bank/createorder', { orderId, userId, amount: 11 });
    expect(order.status).toBe(409);
    expect(order.body).toEqual(paymentError('CONFLICT', { orderId, bankCode: 'order_exists' }));
  });

  it('404 NOT_FOUND for an unknown user, to read or to order for', async () => {
    const userId = uniq('nobody');
    const read = await get(`/bank/user/${userId}`);
    expect(read.status).toBe(404);
    expect(read.body).toEqual(paymentError('NOT_FOUND', { userId, service: 'bank', bankCode: 'user_not_found' }));
    const order = await post('/bank/createorder', { orderId: uniq('o'), userId, amount: 10 });
    expect(order.status).toBe(404);
    expect(order.body).toEqual(paymentError('NOT_FOUND', { userId, bankCode: 'user_not_found' }));
  });

  it.each([
    ['/bank/createuser', { name: 'x' }, 'MISSING_FIELD', 'userId'],
    ['/bank/createuser', { userId: 'u' }, 'MISSING_FIELD', 'name'],
    ['/bank/createuser', { userId: 'u', name: 'x', email: 'not-an-email' }, 'INVALID_INPUT', 'email'],
    ['/bank/createuser', { userId: 'u', name: 'x', role: 'admin' }, 'INVALID_INPUT', 'role'],
    ['/bank/createorder', { orderId: 'o', userId: 'u' }, 'MISSING_FIELD', 'amount'],
    ['/bank/createorder', { orderId: 'o', userId: 'u', amount: '12.345' }, 'INVALID_INPUT', 'amount'],
    ['/bank/createorder', { orderId: 'o o', userId: 'u', amount: 1 }, 'INVALID_INPUT', 'orderId'],
  ])('%s %p -> %s naming %s, nothing sent to the bank', async (path, body, code, field) => {
    live.requests.length = 0;
    const res = await post(path, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError(code, { field }));
    const res2 = await post(path, body, liveKey);
    expect(res2.status).toBe(400);
    expect(live.requests).toHaveLength(0);
  });

  it('400 INVALID_INPUT for a malformed user id in the path', async () => {
    const res = await get('/bank/user/bad%20id');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError('INVALID_INPUT', { field: 'userId' }));
  });
});

describe('live (BANK_API_URL)', () => {
  // a user the live key created at the bank before (bank users belong to the key that created them)
  const ownedUser = async (userId = uniq('u')) => {
    await stack
      .db('bank_user_owners')
      .insert({ mode: 'live', user_id: userId, api_key_id: liveKeyId })
      .onConflict()
      .ignore();
    return userId;
  };
  it('sends our credentials and an Idempotency-Key; retries a 5xx', async () => {
    const userId = uniq('u');
    live.requests.length = 0;
    live.answers.push(
      { status: 502, body: { message: 'gateway' } },
      { status: 500, body: {} },
      { status: 201, body: bankUser(userId, 'Malee') },
    );
    const res = await post('/bank/createuser', { userId, name: 'Malee' }, liveKey);
    expect(res.status).toBe(200);
    expect(res.body.body).toMatchObject({ userId, name: 'Malee', bankUserId: `usr_${userId}` });
    expect(live.requests).toHaveLength(3);
    for (const r of live.requests) {
      expect(r).toMatchObject({ method: 'POST', path: '/v1/users', body: { userId, name: 'Malee' } });
      expect(r.headers.authorization).toBe('Bearer bank-secret-key');
      expect(r.headers['idempotency-key']).toBe(`user-${userId}`);
    }
  });

  it('does not retry a 4xx: one call, and the answer maps to INVALID_INPUT', async () => {
    live.requests.length = 0;
    live.answers.push({ status: 422, body: { code: 'invalid_request', message: 'phone is not Thai', field: 'phone' } });
    const res = await post('/bank/createuser', { userId: uniq('u'), name: 'x', phone: '+1 555 0100' }, liveKey);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      paymentError('INVALID_INPUT', { field: 'phone', service: 'bank', bankCode: 'invalid_request' }),
    );
    expect(live.requests).toHaveLength(1);
  });

  it('orders carry the amount in satang', async () => {
    await ownedUser('u-1');
    live.requests.length = 0;
    const orderId = uniq('o');
    live.answers.push({
      status: 201,
      body: {
        orderId,
        bankOrderId: 'ord_live_1',
        userId: 'u-1',
        amountSatang: 19999,
        currency: 'THB',
        description: null,
        status: 'created',
        createdAt: '2026-11-22T08:00:00.000Z',
      },
    });
    const res = await post('/bank/createorder', { orderId, userId: 'u-1', amount: 199.99 }, liveKey);
    expect(res.body.body).toMatchObject({ orderId, bankOrderId: 'ord_live_1', amount: 199.99 });
    expect(live.requests[0]).toMatchObject({
      path: '/v1/orders',
      body: { orderId, userId: 'u-1', amountSatang: 19999, currency: 'THB' },
    });
    expect(live.requests[0].headers['idempotency-key']).toBe(`order-${orderId}`);
  });

  it('503 SERVICE_UNAVAILABLE when the bank keeps failing (after 3 attempts)', async () => {
    live.requests.length = 0;
    const res = await get(`/bank/user/${await ownedUser()}`, liveKey);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(paymentError('SERVICE_UNAVAILABLE', { service: 'bank' }));
    expect(live.requests).toHaveLength(3);
  });

  it('503 SERVICE_UNAVAILABLE when the bank cannot be reached (connections dropped)', async () => {
    live.requests.length = 0;
    const userId = await ownedUser();
    live.drop = true;
    try {
      const res = await get(`/bank/user/${userId}`, liveKey);
      expect(res.status).toBe(503);
      expect(res.body).toEqual(paymentError('SERVICE_UNAVAILABLE', { service: 'bank' }));
      expect(live.requests).toHaveLength(3); // every attempt reached the socket and got no answer
    } finally {
      live.drop = false;
    }
  });

  it('503 SERVICE_UNAVAILABLE and no workflow when live mode has no BANK_API_URL', async () => {
    await ownedUser('u-1');
    const bare = gatewayWith(stack, {});
    const res = await request(bare.callback()).get('/bank/user/u-1').set('X-API-Key', liveKey);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(
      paymentError('SERVICE_UNAVAILABLE', { service: 'bank', reason: 'BANK_API_URL is not configured' }),
    );
  });
});
