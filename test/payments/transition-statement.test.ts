/**
 * A payment's transition (applyTransition: the settle step's write): the guarded update of the
 * payments row and its history event in ONE statement, no BEGIN/COMMIT round trips (was four:
 * BEGIN, UPDATE, INSERT, COMMIT). Still guarded: a transition from a status the row no longer has
 * writes nothing and tells what the row says; of two racing transitions exactly one is applied,
 * and both tell the winner's status.
 */
import type { Db } from '../../src/db/knex';
import { applyTransition, applyTransitionIfAgrees, insertPayment } from '../../src/payments/repository';
import { statementsOf, uniq, workerDb } from '../support/stack';
import { eventsOf } from './support';

let db: Db;
beforeAll(async () => {
  db = await workerDb();
});
afterAll(() => db.destroy());

async function pendingPayment(): Promise<string> {
  const orderId = uniq('transition');
  const paymentId = uniq('pay');
  await insertPayment(db, {
    paymentId,
    orderId,
    userId: 'u-1',
    method: 'qr',
    amountSatang: 500,
    mode: 'sandbox',
    workflowId: `payment-${orderId}`,
    customerId: 'c-1',
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
  });
  return paymentId;
}

const statusOf = async (id: string) => (await db('payments').where({ id }).first('status')).status as string;

it('applies a transition and writes its event in one statement, without a transaction', async () => {
  const id = await pendingPayment();
  const { sql, result: now } = await statementsOf(db, () =>
    applyTransition(db, { paymentId: id, from: 'pending', to: 'paid', reason: 'QR: success' }),
  );
  expect(sql).toHaveLength(1);
  expect(sql.join(';')).not.toMatch(/\b(BEGIN|COMMIT)\b/i);
  expect(now).toBe('paid');
  expect(await statusOf(id)).toBe('paid');
  expect(await eventsOf(db, id)).toEqual(['pending', 'paid']);
  const ev = await db('payment_events').where({ payment_id: id, to_status: 'paid' }).first();
  expect(ev).toMatchObject({ from_status: 'pending', reason: 'QR: success' });
});

it('a transition from a status the row no longer has writes nothing and tells the row status', async () => {
  const id = await pendingPayment();
  await applyTransition(db, { paymentId: id, from: 'pending', to: 'expired', reason: 'expired' });
  const now = await applyTransition(db, { paymentId: id, from: 'pending', to: 'paid', reason: 'QR: success' });
  expect(now).toBe('expired');
  expect(await statusOf(id)).toBe('expired');
  expect(await eventsOf(db, id)).toEqual(['pending', 'expired']);
  // the same transition again (a retried step): a no-op that tells the status it had set
  expect(await applyTransition(db, { paymentId: id, from: 'pending', to: 'expired', reason: 'expired' })).toBe(
    'expired',
  );
  expect(await eventsOf(db, id)).toEqual(['pending', 'expired']);
});

it('of two racing transitions exactly one is applied, and both tell its status', async () => {
  for (let i = 0; i < 10; i++) {
    const id = await pendingPayment();
    // the row locked by a transaction that expires it; the paid transition waits for that lock
    const trx = await db.transaction();
    await trx('payments').where({ id, status: 'pending' }).update({ status: 'expired' });
    await trx('payment_events').insert({ payment_id: id, from_status: 'pending', to_status: 'expired', reason: 'x' });
    const racing = applyTransition(db, { paymentId: id, from: 'pending', to: 'paid', reason: 'QR: success' });
    await new Promise((r) => setTimeout(r, 30));
    await trx.commit();
    expect(await racing).toBe('expired');
    expect(await statusOf(id)).toBe('expired');
    expect(await eventsOf(db, id)).toEqual(['pending', 'expired']);
  }
});

it("the settle step's fast path transitions only a row that agrees with every fact, in one statement", async () => {
  const id = await pendingPayment();
  const row = await db('payments').where({ id }).first();
  const facts = {
    workflowId: row.workflow_id as string,
    orderId: row.order_id as string,
    amountSatang: 500,
    mode: 'sandbox',
    apiKeyId: undefined,
  };
  const paid = { paymentId: id, from: 'pending' as const, to: 'paid' as const, reason: 'QR: success' };
  // each fact wrong in turn: nothing written
  for (const wrong of [
    { workflowId: 'payment-other' },
    { orderId: 'other' },
    { amountSatang: 501 },
    { mode: 'live' },
    { apiKeyId: 'key_other' },
  ])
    expect(await applyTransitionIfAgrees(db, paid, { ...facts, ...wrong })).toBe(false);
  expect(await statusOf(id)).toBe('pending');
  expect(await eventsOf(db, id)).toEqual(['pending']);
  const { sql, result } = await statementsOf(db, () => applyTransitionIfAgrees(db, paid, facts));
  expect(result).toBe(true);
  expect(sql).toHaveLength(1);
  expect(await eventsOf(db, id)).toEqual(['pending', 'paid']);
  // again (a retried step): no match, the caller's slow path decides
  expect(await applyTransitionIfAgrees(db, paid, facts)).toBe(false);
  expect(await eventsOf(db, id)).toEqual(['pending', 'paid']);
});
