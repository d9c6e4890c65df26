/**
 * The gateway's write before a QR or card payment's workflow starts (createPendingPayment): the
 * payments row and its `created` history event in ONE statement, no BEGIN/COMMIT round trips, so
 * POST /qrpayment costs Postgres one round trip (was four: BEGIN, INSERT, INSERT, COMMIT). And the
 * order's row still decides: one row and one `created` event per order, however many ask at once.
 */
import type { Db } from '../../src/db/knex';
import { createPendingPayment, insertPayment, type NewPayment } from '../../src/payments/repository';
import { statementsOf, uniq, workerDb } from '../support/stack';
import { eventsOf, rowOf } from './support';

let db: Db;
beforeAll(async () => {
  db = await workerDb();
});
afterAll(() => db.destroy());

const newPayment = (orderId: string, over: Partial<NewPayment> = {}): NewPayment => ({
  paymentId: uniq('pay'),
  orderId,
  userId: 'u-1',
  method: 'qr',
  amountSatang: 12_345,
  mode: 'sandbox',
  workflowId: `payment-${orderId}`,
  customerId: 'c-1',
  expiresAt: new Date(Date.now() + 600_000).toISOString(),
  details: { qr: { payload: 'P', crc: 'ABCD', ref1: 'R1' } },
  ...over,
});

it("writes a new order's row and its created event in one statement, without a transaction", async () => {
  const input = newPayment(uniq('one-statement'));
  const { sql, result } = await statementsOf(db, () => createPendingPayment(db, input));
  expect(sql).toHaveLength(1);
  expect(sql.join(';')).not.toMatch(/\b(BEGIN|COMMIT)\b/i);

  expect(result.created).toBe(true);
  expect(result.payment).toMatchObject({
    id: input.paymentId,
    orderId: input.orderId,
    status: 'pending',
    method: 'qr',
    mode: 'sandbox',
    amountSatang: 12_345,
    apiKeyId: null,
    details: { qr: { payload: 'P', crc: 'ABCD', ref1: 'R1' } },
  });
  expect(result.payment.expiresAt?.toISOString()).toBe(input.expiresAt);
  expect((await rowOf(db, input.orderId)).id).toBe(input.paymentId);
  expect(await eventsOf(db, input.paymentId)).toEqual(['pending']);
});

it('an order that has a row gets that row back (created: false), in one statement, and no second event', async () => {
  const orderId = uniq('existing');
  const first = newPayment(orderId);
  await createPendingPayment(db, first);
  const { sql, result: again } = await statementsOf(db, () =>
    createPendingPayment(db, newPayment(orderId, { amountSatang: 99_900 })),
  );
  expect(sql).toHaveLength(1);
  expect(again.created).toBe(false);
  expect(again.payment).toMatchObject({ id: first.paymentId, amountSatang: 12_345 });
  expect(await eventsOf(db, first.paymentId)).toEqual(['pending']);
});

it('many requests for one order at once: one of them creates it, all get its row, one created event', async () => {
  const orderId = uniq('race');
  const results = await Promise.all(Array.from({ length: 12 }, () => createPendingPayment(db, newPayment(orderId))));
  const created = results.filter((r) => r.created);
  expect(created).toHaveLength(1);
  const id = created[0].payment.id;
  expect(results.map((r) => r.payment.id)).toEqual(results.map(() => id));
  expect(await db('payments').where({ order_id: orderId }).count<{ count: string }[]>('* as count')).toEqual([
    { count: '1' },
  ]);
  expect(await eventsOf(db, id)).toEqual(['pending']);
});

it('an order whose row another request commits while this one waits gets that row (the statement began before it)', async () => {
  const orderId = uniq('waits');
  const first = newPayment(orderId);
  const trx = await db.transaction();
  await createPendingPayment(trx, first); // written, not committed: the next insert of the order waits
  const second = createPendingPayment(db, newPayment(orderId));
  await new Promise((r) => setTimeout(r, 200));
  await trx.commit();
  const r = await second;
  expect(r.created).toBe(false);
  expect(r.payment.id).toBe(first.paymentId);
  expect(await eventsOf(db, first.paymentId)).toEqual(['pending']);
});

it("insertPayment (the activities' write) is idempotent on the payment id: one row, one event", async () => {
  const input = newPayment(uniq('activity'));
  await insertPayment(db, input);
  await insertPayment(db, input);
  expect((await rowOf(db, input.orderId)).id).toBe(input.paymentId);
  expect(await eventsOf(db, input.paymentId)).toEqual(['pending']);
});
