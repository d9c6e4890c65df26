/**
 * Idempotency-Key on the payment POSTs (IETF draft semantics), on the real stack:
 * same key and body -> the first response replayed; another body -> 422; in flight -> 409;
 * a 5xx releases the key; keys are scoped per API key.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { bankUser, startFakeBank, type FakeBank } from './fake-bank';
import { newKey, paymentError, request } from './support';
import { paymentHandle } from './support';

let stack: TestStack;
let bank: FakeBank;
beforeAll(async () => {
  bank = await startFakeBank();
  stack = await createTestStack({ env: { BANK_API_URL: bank.url, PROVIDER_TIMEOUT_MS: '2000' } });
});
afterAll(async () => {
  await stack.close();
  await bank.close();
});

describe('POST /qrpayment with Idempotency-Key', () => {
  it('replays the first response for the same key and body, and refuses another body with 422', async () => {
    const { key } = await newKey(stack.db, { scopes: ['payments:write'] });
    const idem = uniq('idem');
    const body = { orderId: uniq('qr'), userId: 'u', amount: 12.5, customerId: 'c' };
    const post = (b: object, k = idem) =>
      request(stack.app.callback()).post('/qrpayment').set('X-API-Key', key).set('Idempotency-Key', k).send(b);

    const first = await post(body);
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // same body with keys in another order: the same request
    const replay = await post({ customerId: 'c', amount: 12.5, userId: 'u', orderId: body.orderId });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);

    const otherOrder = uniq('qr');
    const reused = await post({ ...body, orderId: otherOrder });
    expect(reused.status).toBe(422);
    expect(reused.body).toEqual(paymentError('IDEMPOTENCY_KEY_REUSED', { idempotencyKey: idem }));
    expect(reused.body.statusCode).toBe(422);
    await expect((await paymentHandle(stack, otherOrder)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // a quoted structured-field string is the same key
    expect((await post(body, `"${idem}"`)).headers['idempotent-replayed']).toBe('true');
    await (await paymentHandle(stack, body.orderId)).terminate('test cleanup');
  });

  it('replays a 4xx answer too, and scopes keys per API key', async () => {
    const a = await newKey(stack.db, { scopes: ['payments:write'] });
    const b = await newKey(stack.db, { scopes: ['payments:write'] });
    const idem = uniq('idem');
    const bad = { orderId: uniq('qr'), userId: 'u', amount: -1, customerId: 'c' };
    const first = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', a.key)
      .set('Idempotency-Key', idem)
      .send(bad);
    expect(first.status).toBe(400);
    const again = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', a.key)
      .set('Idempotency-Key', idem)
      .send(bad);
    expect(again.status).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.body).toEqual(paymentError('INVALID_INPUT', { field: 'amount' }));

    // the same key string under another API key is another key
    const good = { orderId: uniq('qr'), userId: 'u', amount: 1, customerId: 'c' };
    const other = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', b.key)
      .set('Idempotency-Key', idem)
      .send(good);
    expect(other.status).toBe(200);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    await (await paymentHandle(stack, good.orderId)).terminate('test cleanup');
  });

  it('rejects a malformed key with INVALID_INPUT naming the header', async () => {
    const { key } = await newKey(stack.db, { scopes: ['payments:write'] });
    const res = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .set('Idempotency-Key', 'x'.repeat(256))
      .send({ orderId: uniq('qr'), userId: 'u', amount: 1, customerId: 'c' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError('INVALID_INPUT', { field: 'Idempotency-Key' }));
  });
});

describe('POST /cardpayment (public) with Idempotency-Key', () => {
  it('replays the same payment', async () => {
    const idem = uniq('idem');
    const body = { orderId: uniq('card'), userId: 'u', amount: '99.00', token: 'tok_visa' };
    const first = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .set('Idempotency-Key', idem)
      .send(body);
    const again = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .set('Idempotency-Key', idem)
      .send(body);
    expect(first.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    const changed = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .set('Idempotency-Key', idem)
      .send({ ...body, amount: '98.00' });
    expect(changed.status).toBe(422);
    await (await paymentHandle(stack, body.orderId)).terminate('test cleanup');
  });
});

describe('in flight, and released by a 5xx (live bank)', () => {
  it('409 CONFLICT while the first request runs; then its response is replayed; the bank is called once', async () => {
    const { key } = await newKey(stack.db, { scopes: ['bank:write'], mode: 'live' });
    const idem = uniq('idem');
    const userId = uniq('user');
    const body = { userId, name: 'Somchai' };
    const post = (b: object) =>
      request(stack.app.callback()).post('/bank/createuser').set('X-API-Key', key).set('Idempotency-Key', idem).send(b);
    bank.requests.length = 0;
    bank.answers.push({ status: 201, body: bankUser(userId) });
    bank.hold = true;
    const arrived = bank.arrived();
    const first = post(body).then((r) => r); // starts the request
    await arrived; // the bank has it: the first request is in flight

    const during = await post(body);
    expect(during.status).toBe(409);
    expect(during.body).toEqual(paymentError('CONFLICT', { idempotencyKey: idem, reason: 'in_flight' }));
    expect(during.headers['retry-after']).toBe('1');
    const otherBody = await post({ ...body, name: 'Somsak' });
    expect(otherBody.status).toBe(422);

    bank.release();
    const done = await first;
    expect(done.status).toBe(200);
    expect(done.body.body).toMatchObject({ userId, bankUserId: `usr_${userId}`, name: 'Somchai' });
    const replay = await post(body);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(done.body);
    expect(bank.requests.filter((r) => r.path === '/v1/users')).toHaveLength(1);
  });

  it('a 503 releases the key: the same request runs again', async () => {
    const { key } = await newKey(stack.db, { scopes: ['bank:write'], mode: 'live' });
    const idem = uniq('idem');
    const body = { userId: uniq('user'), name: 'Somchai' };
    bank.requests.length = 0;
    bank.answers.length = 0; // fallback: 500 on every attempt
    const post = () =>
      request(stack.app.callback())
        .post('/bank/createuser')
        .set('X-API-Key', key)
        .set('Idempotency-Key', idem)
        .send(body);
    const first = await post();
    expect(first.status).toBe(503);
    expect(first.body).toEqual(paymentError('SERVICE_UNAVAILABLE', { service: 'bank' }));
    const attempts = bank.requests.length;
    expect(attempts).toBe(3); // Temporal retried the 5xx, up to 3 attempts
    bank.answers.push({ status: 201, body: bankUser(body.userId) });
    const second = await post();
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(bank.requests.length).toBe(attempts + 1);
  });
});
