/**
 * Object-level authorisation of the bank routes: a bank user and their orders belong to the key
 * (merchant) that created them. Another merchant's key gets the answers of an unknown user
 * (404 NOT_FOUND), cannot order for that user, and cannot read the user back by creating it again.
 */
import { useTestStack } from '../support/servers';
import { uniq } from '../support/stack';
import { newKey, paymentError, request } from '../payments/support';

const stack = useTestStack();
let a: string;
let b: string;
beforeAll(async () => {
  a = (await newKey(stack.db, { scopes: ['bank:write', 'bank:read'] })).key;
  b = (await newKey(stack.db, { scopes: ['bank:write', 'bank:read'] })).key;
});

const post = (path: string, body: object, key?: string) => {
  const req = request(stack.app.callback()).post(path);
  if (key) req.set('X-API-Key', key);
  return req.send(body);
};
const get = (path: string, key?: string) => {
  const req = request(stack.app.callback()).get(path);
  return key ? req.set('X-API-Key', key) : req;
};

const details = { name: 'Somchai Jaidee', email: 'somchai@example.com', phone: '+66 81 234 5678' };

async function usersOfA() {
  const userId = uniq('u');
  expect((await post('/bank/createuser', { userId, ...details }, a)).status).toBe(200);
  const orderId = uniq('o');
  expect((await post('/bank/createorder', { orderId, userId, amount: 12.5 }, a)).status).toBe(200);
  return { userId, orderId };
}

it("another merchant's GET /bank/user/{userId} answers as for a user that does not exist", async () => {
  const { userId } = await usersOfA();
  const unknown = uniq('u');
  const never = await get(`/bank/user/${unknown}`, b);
  const other = await get(`/bank/user/${userId}`, b);
  expect(other.status).toBe(404);
  expect(other.body).toEqual(paymentError('NOT_FOUND', { userId }));
  // the same answer, but for the id: nothing tells B that A's user exists
  expect(JSON.stringify(other.body).split(userId).join('X')).toBe(JSON.stringify(never.body).split(unknown).join('X'));
  expect(JSON.stringify(other.body)).not.toContain('Somchai');
  // A still reads its own user and order
  expect((await get(`/bank/user/${userId}`, a)).body.body).toMatchObject({ userId, name: details.name });
});

it("another merchant cannot create orders for A's user", async () => {
  const { userId } = await usersOfA();
  const res = await post('/bank/createorder', { orderId: uniq('o'), userId, amount: 99 }, b);
  expect(res.status).toBe(404);
  expect(res.body).toEqual(paymentError('NOT_FOUND', { userId }));
  const orders = (await get(`/bank/user/${userId}`, a)).body.body.orders as { amount: number }[];
  expect(orders.map((o) => o.amount)).toEqual([12.5]);
});

it("another merchant cannot read A's user by creating it again with the same details", async () => {
  const { userId } = await usersOfA();
  const res = await post('/bank/createuser', { userId, ...details }, b);
  expect(res.status).toBe(409);
  expect(res.body).toEqual(paymentError('CONFLICT', { userId }));
  expect(JSON.stringify(res.body)).not.toMatch(/usr_|Somchai/);
});

it("another merchant cannot take A's bank order id", async () => {
  const { orderId } = await usersOfA();
  const bUser = uniq('u');
  expect((await post('/bank/createuser', { userId: bUser, name: 'B user' }, b)).status).toBe(200);
  const res = await post('/bank/createorder', { orderId, userId: bUser, amount: 12.5 }, b);
  expect(res.status).toBe(409);
  expect(JSON.stringify(res.body)).not.toContain('ord_');
});

it('no key: 401 on every bank route', async () => {
  expect((await post('/bank/createuser', { userId: uniq('u'), ...details })).status).toBe(401);
  expect((await post('/bank/createorder', { orderId: uniq('o'), userId: uniq('u'), amount: 1 })).status).toBe(401);
  expect((await get(`/bank/user/${uniq('u')}`)).status).toBe(401);
});
