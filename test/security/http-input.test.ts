/**
 * Bad input on the public and signed doors: a NUL inside a JSON-string body (which the input rule
 * cannot see before the handler parses it) is a clear 400 and never reaches Postgres; the 409 of a
 * taken order id says nothing about who took it; a signed result without an amount settles only
 * the amount Talat recorded, and a different amount is refused.
 */
import request from 'supertest';
import { useTestStack } from '../support/servers';
import { uniq, waitFor } from '../support/stack';
import { callbackError, cardPayment, headerSigned, post } from '../callbacks/helpers';
import { newKey } from '../payments/support';

const stack = useTestStack();

const walletRaw = (raw: string) =>
  request(stack.app.callback()).post('/wallet/callback').set('Content-Type', 'application/json').send(raw);

describe('a NUL inside a JSON-string field of a wallet post', () => {
  const inner = (orderId: string) =>
    JSON.stringify({ orderId: `${orderId}\u0000x`, paymentId: 'pay_1', success: true, userId: 'u-1' });
  it.each([
    ['the body is a JSON string', (orderId: string) => JSON.stringify(inner(orderId))],
    ['`body` is a JSON string', (orderId: string) => JSON.stringify({ body: inner(orderId) })],
  ])('%s: 400 INVALID_INPUT, nothing written', async (_name, make) => {
    const orderId = uniq('ord');
    const res = await walletRaw(make(orderId));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(callbackError('INVALID_INPUT', 400));
    expect(res.body.body.message).toMatch(/NUL/);
    expect(await stack.db('callback_errors').where('order_id', 'like', `${orderId}%`)).toEqual([]);
    expect(await stack.db('wallet_callbacks').where('order_id', 'like', `${orderId}%`)).toEqual([]);
  });
});

it('a signed bank-app callback with a NUL inside its JSON-string body: 400, not 500', async () => {
  const p = await cardPayment(stack, { amount: 21.5 });
  const body = JSON.stringify(
    JSON.stringify({ orderId: p.orderId, paymentId: p.paymentId, success: true, userId: 'u-1', message: 'a\u0000b' }),
  );
  const res = await post(stack.app, '/bankappcallback', headerSigned(stack.config, 'BANKAPP', 'json', body));
  expect(res.status).toBe(400);
  expect(res.body).toEqual(callbackError('INVALID_INPUT', 400));
});

describe('signed card-network callbacks and the amount', () => {
  it('without an amount: pays the amount Talat recorded', async () => {
    const p = await cardPayment(stack, { amount: 33.25 });
    const sent = headerSigned(stack.config, 'CARDNET', 'json', {
      orderId: p.orderId,
      paymentId: p.paymentId,
      success: true,
      userId: 'u-1',
    });
    expect((await post(stack.app, '/cardnetcallback', sent)).status).toBe(200);
    const row = await waitFor(
      async () => {
        const r = await stack.db('payments').where({ order_id: p.orderId }).first();
        return r.status === 'paid' ? r : undefined;
      },
      20_000,
      'paid',
    );
    expect(row.amount_satang).toBe('3325');
  });
  it('with another amount: 400 INVALID_INPUT, the payment stays pending', async () => {
    const p = await cardPayment(stack, { amount: 33.25 });
    const sent = headerSigned(stack.config, 'CARDNET', 'json', {
      orderId: p.orderId,
      paymentId: p.paymentId,
      success: true,
      userId: 'u-1',
      amount: 0.01,
    });
    const res = await post(stack.app, '/cardnetcallback', sent);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(callbackError('INVALID_INPUT', 400));
    expect((await stack.db('payments').where({ order_id: p.orderId }).first()).status).toBe('pending');
  });
});

it("another merchant's order id is a payment of its own: nothing of the first leaks; a conflict of one's own says what", async () => {
  const a = (await newKey(stack.db)).key;
  const b = (await newKey(stack.db)).key;
  const qr = (key: string, orderId: string, amount: number) =>
    request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u-1', customerId: 'c-1', amount });
  const ofA = uniq('ord');
  const ofB = uniq('ord');
  const first = await qr(a, ofA, 10);
  expect(first.status).toBe(200);
  expect((await qr(b, ofB, 10)).status).toBe(200);
  // order ids are unique per account and mode: B's ofA is B's own payment, not A's
  const other = await qr(b, ofA, 11);
  expect(other.status).toBe(200);
  expect(other.body.body.paymentId).not.toBe(first.body.body.paymentId);
  expect(other.body.body.amount).toBe(11);
  expect(JSON.stringify(other.body)).not.toContain(first.body.body.paymentId);
  // a conflict of B's own order id says what conflicts
  const own = await qr(b, ofB, 11);
  expect(own.status).toBe(409);
  expect(own.body.body.error).toMatch(/already has a payment of 10\.00 THB by qr/);
  expect(own.body.body.details).toMatchObject({ orderId: ofB });
});
