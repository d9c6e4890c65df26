/**
 * Migration 20261128094000_paid_orders_per_payment on a database with rows: paid_orders keyed by
 * (order id, payment id), so two payments of one order id have a row each; down refuses while an
 * order id has two rows, and restores the key on order id alone once it has one.
 */
import { migrationSource, type Db } from '../../src/db/knex';
import { freshDatabase } from '../support/migrations';

let db: Db;
beforeAll(async () => {
  db = await freshDatabase('paid_orders_mig');
});
afterAll(() => db.destroy());

const MIGRATION = '20261128094000_paid_orders_per_payment';
const applied = async () =>
  ((await db.migrate.list({ migrationSource }))[0] as ({ name: string } | string)[]).map((m) =>
    typeof m === 'string' ? m : m.name,
  );
const row = (paymentId: string) => ({
  order_id: 'ORD-1',
  payment_id: paymentId,
  user_id: 'u',
  amount_satang: 100,
  status: 'confirmed',
  reason: 'payment confirmed paid',
  source: 'wallet',
  workflow_id: `paid-order-${paymentId}`,
  body: '{}',
});

it('keys paid_orders by (order id, payment id); down refuses while an order id has two rows', async () => {
  await db.migrate.latest({ migrationSource });
  while ((await applied()).some((n) => n.startsWith(MIGRATION))) await db.migrate.down({ migrationSource });
  await db('paid_orders').insert(row('pay_a'));
  await expect(db('paid_orders').insert(row('pay_b'))).rejects.toThrow(/paid_orders_pkey/);

  await db.migrate.latest({ migrationSource });
  await db('paid_orders').insert(row('pay_b'));
  await expect(db('paid_orders').insert(row('pay_b'))).rejects.toThrow(/paid_orders_pkey/);
  expect(await db('paid_orders').where({ order_id: 'ORD-1' }).orderBy('payment_id').pluck('payment_id')).toEqual([
    'pay_a',
    'pay_b',
  ]);

  const undo = async () => {
    while ((await applied()).some((n) => n.startsWith(MIGRATION))) await db.migrate.down({ migrationSource });
  };
  await expect(undo()).rejects.toThrow(/order id ORD-1 has rows of two payments/);
  await db('paid_orders').where({ payment_id: 'pay_b' }).delete();
  await undo();
  await expect(db('paid_orders').insert(row('pay_c'))).rejects.toThrow(/paid_orders_pkey/);
});
