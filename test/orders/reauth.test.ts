/**
 * A card order finalised above its authorisation, through HTTP on the real stack: a new
 * authorisation of the difference on the card on file (sandbox: approved, or declined when it
 * ends in .96 THB), then both captured; declined: the first captured in full, the order `short`
 * with an alert and the paid webhook. Repeated and concurrent finalize authorise and capture once.
 */
import { capturingLogger, createTestStack, uniq, waitFor, type TestStack } from '../support/stack';
import { holdCard } from './support';
import { newKey, request } from '../payments/support';
import { registerEndpoint, startReceiver, type Receiver } from '../webhooks/helpers';

let stack: TestStack;
let receiver: Receiver;
let key: string;
const log = capturingLogger('error');
beforeAll(async () => {
  stack = await createTestStack({ logger: log.logger });
  receiver = await startReceiver(200);
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] })).key;
  await registerEndpoint(stack, key, { url: `${receiver.url}/reauth` });
});
afterAll(async () => {
  await stack.close();
  await receiver.stop();
});

const api = () => request(stack.app.callback());
const adjust = (orderId: string, amount: number) =>
  api()
    .post(`/orders/${orderId}/adjustments`)
    .set('X-API-Key', key)
    .send({ lines: [{ description: 'Salmon weighed more', amount, reason: 'weight' }] });
const finalize = (orderId: string) => api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key).send();
const orderOf = async (orderId: string) => (await api().get(`/orders/${orderId}`).set('X-API-Key', key)).body.body;
/** every charge of the order at the sandbox provider, with its captures and voids */
async function chargesOf(firstChargeId: string) {
  const charges = await stack
    .db('sim_card_charges')
    .where({ id: firstChargeId })
    .orWhereRaw("metadata->>'sourceCharge' = ?", [firstChargeId])
    .orderBy('created_at');
  return Promise.all(
    charges.map(async (c) => ({
      amount: Number(c.amount_satang),
      ops: (await stack.db('sim_card_captures').where({ charge_id: c.id }).orderBy('created_at')).map(
        (o) => `${o.kind} ${Number(o.amount_satang)}`,
      ),
    })),
  );
}

async function authorisedCard(estimate: number) {
  const { orderId, chargeId } = await holdCard(stack, key, estimate, 'ou');
  await waitFor(async () => (await orderOf(orderId)).status === 'open', 20_000, 'order open');
  return { orderId, chargeId };
}

it('above the authorisation: a new authorisation of the difference, both captured; GET /orders shows both', async () => {
  const { orderId, chargeId } = await authorisedCard(50); // 55 authorised
  await adjust(orderId, 8.5); // final 58.5: 3.5 above
  const fin = await finalize(orderId);
  expect(fin.status).toBe(200);
  expect(fin.body.body).toMatchObject({
    status: 'settled',
    authorizedAmount: 55,
    capturedAmount: 58.5,
    paidAmount: 58.5,
    finalAmount: 58.5,
  });
  const [first, second] = fin.body.body.authorizations;
  expect(first).toMatchObject({ chargeId, purpose: 'estimate', amount: 55, capturedAmount: 55, status: 'captured' });
  expect(second).toMatchObject({
    chargeId: expect.stringMatching(/^chrg_test_/),
    purpose: 'difference',
    amount: 3.5,
    capturedAmount: 3.5,
    status: 'captured',
    failureReason: null,
  });
  expect(await chargesOf(chargeId)).toEqual([
    { amount: 5500, ops: ['capture 5500'] },
    { amount: 350, ops: ['capture 350'] },
  ]);
  expect((await orderOf(orderId)).authorizations).toEqual(fin.body.body.authorizations);
  const st = (await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body;
  expect(st).toMatchObject({ status: 'paid', amount: 58.5 });
  // no card data on the new charge's request: the sandbox copies the token of the first charge
  const again = await finalize(orderId);
  expect(again.body.body).toMatchObject({ status: 'settled', capturedAmount: 58.5 });
  expect(await chargesOf(chargeId)).toHaveLength(2);
});

it('the new authorisation declined: the first captured in full, the order short, an alert and the paid webhook', async () => {
  const { orderId, chargeId } = await authorisedCard(40); // 44 authorised
  await adjust(orderId, 4.96); // final 44.96: 0.96 above, declined in the sandbox
  const fin = await finalize(orderId);
  expect(fin.status).toBe(200);
  expect(fin.body.body).toMatchObject({ status: 'short', capturedAmount: 44, paidAmount: 44, finalAmount: 44.96 });
  expect(fin.body.body.statusReason).toMatch(/declined.*0\.96 THB short/);
  expect(fin.body.body.authorizations[1]).toMatchObject({
    purpose: 'difference',
    chargeId: null,
    amount: 0.96,
    status: 'declined',
    capturedAmount: 0,
  });
  expect(await chargesOf(chargeId)).toEqual([{ amount: 4400, ops: ['capture 4400'] }]);
  const hook = await waitFor(
    async () => receiver.log.find((r) => r.body.includes(orderId) && JSON.parse(r.body).data.status === 'paid'),
    20_000,
    'paid webhook',
  );
  expect(JSON.parse(hook.body).data).toMatchObject({ orderId, status: 'paid', amount: 44 });
  expect(log.lines).toContainEqual(expect.objectContaining({ alert: 'order_settlement', orderId }));
  expect(JSON.stringify(log.lines)).not.toContain('tok_test_visa');
  const late = await adjust(orderId, 1);
  expect(late.status).toBe(409);
  const again = await finalize(orderId);
  expect(again.body.body).toMatchObject({ status: 'short', capturedAmount: 44 });
  expect(await chargesOf(chargeId)).toHaveLength(1);
});

it('concurrent and repeated finalize above the authorisation: one new authorisation, each captured once', async () => {
  const { orderId, chargeId } = await authorisedCard(100); // 110 authorised
  await adjust(orderId, 25); // 125: 15 above
  const all = await Promise.all([finalize(orderId), finalize(orderId), finalize(orderId)]);
  for (const r of all) expect(r.body.body).toMatchObject({ status: 'settled', capturedAmount: 125 });
  expect(await stack.db('order_card_holds').where({ order_id: orderId })).toHaveLength(1);
  expect(await chargesOf(chargeId)).toEqual([
    { amount: 11000, ops: ['capture 11000'] },
    { amount: 1500, ops: ['capture 1500'] },
  ]);
});

it('the sandbox provider authorises on the card on file once per Idempotency-Key, and refuses an unknown charge', async () => {
  const { orderId, chargeId } = await authorisedCard(10);
  const input = {
    sourceChargeId: chargeId,
    orderId,
    amountSatang: 700,
    mode: 'sandbox' as const,
    idempotencyKey: uniq('k'),
  };
  const one = await stack.activities.chargeCardOnFile(input);
  const two = await stack.activities.chargeCardOnFile(input);
  expect(two.id).toBe(one.id);
  const copy = await stack.db('sim_card_charges').where({ id: one.id }).first();
  const orig = await stack.db('sim_card_charges').where({ id: chargeId }).first();
  expect(copy).toMatchObject({ token: orig.token, capture: false, amount_satang: '700' });
  await expect(
    stack.activities.chargeCardOnFile({ ...input, sourceChargeId: 'chrg_nope', idempotencyKey: uniq('k') }),
  ).rejects.toThrow(/no charge/);
});
