/**
 * The callback processor's claim and its races, on Postgres with a stand-in Temporal client (it
 * counts the signals; nothing else touches the database, so the statements counted are the
 * callback's own):
 *  - a first callback claims its receipt in its lookup: 2 statements (the lookup that claims, the
 *    finish), no BEGIN/COMMIT; a duplicate costs 1;
 *  - a receipt inserted by a concurrent first delivery after the lookup's snapshot was taken (the
 *    lookup cannot see it, its INSERT meets it): a duplicate that waits, never an error and never
 *    a second delivery;
 *  - a gateway that died after claiming: a retry within the lease gets a prompt 503 with
 *    Retry-After (no long wait), one after the lease takes the delivery over.
 * The clock is the database's: a receipt's age is set by its created_at, so nothing sleeps for seconds.
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../../src/db/knex';
import { createApp, type GatewayApp } from '../../src/app/app';
import {
  callbackPayment,
  paymentMatches,
  paymentMatchesSql,
  type Receipt,
  type StoredResponse,
} from '../../src/callbacks/receipts';
import { processCallback, type ProcessorDeps } from '../../src/callbacks/processor';
import { AfterAnswer } from '../../src/http/after-answer';
import { orderReference, paymentReference } from '../../src/domain/promptpay';
import { createPendingPayment, type Payment } from '../../src/payments/repository';
import { resultDelivery } from '../../src/payments/workflow-client';
import { statementsOf, testConfig, testLogger, uniq, waitFor, workerDb } from '../support/stack';
import { callbackError, fieldSigned, post } from './helpers';

let db: Db;
beforeAll(async () => {
  db = await workerDb();
});
afterAll(() => db.destroy());

const config = testConfig();

/** A Temporal client that takes every signal (after `delayMs`) and counts them per workflow. */
function temporalStandIn(delayMs = 0) {
  const signals: string[] = [];
  const client = {
    workflow: {
      getHandle: (workflowId: string) => ({
        signal: async () => {
          if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
          signals.push(workflowId);
        },
      }),
      start: async () => {
        throw new Error('no conflicts expected here');
      },
    },
    withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn(),
  } as unknown as Client;
  return { client, signalsOf: (workflowId: string) => signals.filter((w) => w === workflowId).length };
}

async function pendingQrPayment(method: Payment['method'] = 'qr'): Promise<Payment> {
  const orderId = uniq('claim');
  const { payment } = await createPendingPayment(db, {
    paymentId: uniq('pay'),
    orderId,
    userId: 'u-1',
    method,
    amountSatang: 12_345,
    mode: 'sandbox',
    workflowId: `payment-${orderId}`,
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
  });
  return payment;
}

const qrCallback = (p: Payment) =>
  fieldSigned(config, 'QR', { paymentId: p.id, status: 'success', amount: 123.45, orderId: p.orderId });

const receiptsOf = (p: Payment) => db('callback_receipts').where({ payment_id: p.id });

/** A receipt claimed by a delivery that never finished (its gateway died `ageMs` ago). */
const unfinishedReceipt = (p: Payment, ageMs: number, id = uniq('evt'), q: Db = db) =>
  q('callback_receipts')
    .insert({
      id,
      provider: 'qr',
      payment_id: p.id,
      order_id: p.orderId,
      status: 'success',
      source_ip: '127.0.0.1',
      request: '{}',
      created_at: db.raw(`now() - ? * interval '1 millisecond'`, [ageMs]),
    })
    .then(() => id);

const finishReceipt = (id: string, body: unknown) =>
  db('callback_receipts')
    .where({ id })
    .update({ outcome: 'signalled', response_status: 200, response_body: JSON.stringify(body) });

const appWith = (client: Client): GatewayApp =>
  createApp({ config, db, temporal: { client, taskQueue: 'claim-test-unpolled' }, logger: testLogger });

/** The processor as routes.ts wires it, for one QR callback of `p`. */
function qrDelivery(deps: ProcessorDeps, p: Payment) {
  const claim = { sourceIp: '127.0.0.1', request: { orderId: p.orderId }, paymentRef: p.id, amountSatang: 12_345 };
  const respond = (): StoredResponse => ({ status: 200, body: { delivered: p.orderId } });
  return {
    lookup: () => callbackPayment(deps, { orderId: p.orderId }, 'qr', 'success', claim),
    process: (receipt: Receipt | null | undefined) =>
      processCallback(deps, { provider: 'qr', payment: p, receipt, status: 'success', ...claim, respond }),
  };
}

const depsWith = (client: Client, over: Partial<ProcessorDeps> = {}): ProcessorDeps => ({
  db,
  client,
  logger: testLogger,
  taskQueue: 'claim-test-unpolled',
  signingKey: config.results.signingKey,
  deliverResult: resultDelivery({ config, temporal: { client, taskQueue: 'claim-test-unpolled' } }),
  afterAnswer: new AfterAnswer(testLogger),
  ...over,
});

describe('round trips', () => {
  it('a first callback costs Postgres 2 statements: the lookup that claims its receipt, and the finish after the answer', async () => {
    const temporal = temporalStandIn();
    const app = appWith(temporal.client);
    const p = await pendingQrPayment();
    const { sql, result: res } = await statementsOf(db, async () => {
      const answer = await post(app, '/qrcallback', qrCallback(p));
      await app.idle();
      return answer;
    });
    expect(res.status).toBe(200);
    expect(res.body.body).toEqual({ message: 'Callback processed', orderId: p.orderId, status: 'success' });
    expect(sql).toHaveLength(2);
    expect(sql.join(';')).not.toMatch(/\b(BEGIN|COMMIT)\b/i);
    expect(sql[0]).toMatch(/INSERT INTO callback_receipts/);
    expect(sql[1]).toMatch(/^\s*UPDATE callback_receipts/);
    expect(temporal.signalsOf(p.workflowId)).toBe(1);
    expect(await receiptsOf(p)).toEqual([
      expect.objectContaining({ outcome: 'signalled', response_status: 200, source_ip: expect.any(String) }),
    ]);

    // its duplicate: the lookup finds the finished receipt, 1 statement, no signal
    const again = await statementsOf(db, () => post(app, '/qrcallback', qrCallback(p)));
    expect(again.result.text).toBe(res.text);
    expect(again.sql).toHaveLength(1);
    expect(temporal.signalsOf(p.workflowId)).toBe(1);
  });

  it('the answer waits for neither the signal nor the finish: answered once the receipt is committed; a duplicate meanwhile waits for both', async () => {
    const temporal = temporalStandIn();
    // holds the signal and the finish instead of running them, until the test lets them go
    const held: (() => Promise<unknown>)[] = [];
    const afterAnswer = new (class extends AfterAnswer {
      override run(_what: Record<string, unknown>, work: () => Promise<unknown>): void {
        held.push(work);
      }
    })(testLogger);
    const deps = depsWith(temporal.client, { afterAnswer });
    const p = await pendingQrPayment();
    const d = qrDelivery(deps, p);
    const first = await d.process((await d.lookup())?.receipt);
    expect(first).toEqual({ response: { status: 200, body: { delivered: p.orderId } }, duplicate: false });
    expect(temporal.signalsOf(p.workflowId)).toBe(0);
    expect(held).toHaveLength(1);
    // what the signal carries is in the committed receipt: the redelivery can send it from the table alone
    expect(await receiptsOf(p)).toEqual([expect.objectContaining({ outcome: null })]);

    const duplicate = d.lookup().then((found) => d.process(found?.receipt));
    await new Promise((r) => setTimeout(r, 100));
    await held[0]();
    await expect(duplicate).resolves.toEqual({ response: first.response, duplicate: true });
    expect(await receiptsOf(p)).toEqual([expect.objectContaining({ outcome: 'signalled', response_status: 200 })]);
    expect(temporal.signalsOf(p.workflowId)).toBe(1);
  });

  it('a callback the route refuses (amount, payment id) claims nothing', async () => {
    const temporal = temporalStandIn();
    const app = appWith(temporal.client);
    const p = await pendingQrPayment();
    const wrongAmount = fieldSigned(config, 'QR', {
      paymentId: p.id,
      status: 'success',
      amount: 123.46,
      orderId: p.orderId,
    });
    const wrongPayment = fieldSigned(config, 'QR', {
      paymentId: 'pay_someone_else',
      status: 'success',
      amount: 123.45,
      orderId: p.orderId,
    });
    const a = await statementsOf(db, () => post(app, '/qrcallback', wrongAmount));
    expect(a.result.status).toBe(400);
    expect(a.sql).toHaveLength(1); // the lookup; no claim to release
    const b = await statementsOf(db, () => post(app, '/qrcallback', wrongPayment));
    expect(b.result.status).toBe(404);
    expect(b.sql).toHaveLength(1);
    expect(await receiptsOf(p)).toEqual([]);
    expect(temporal.signalsOf(p.workflowId)).toBe(0);
  });
});

it('the claim checks the payment id as paymentMatches does (the route refuses what it does not claim)', async () => {
  const qr = await pendingQrPayment();
  const card = await pendingQrPayment('card');
  await db('payments').where({ id: card.id }).update({ provider_ref: 'chrg_claim_1' });
  const cardRow = { ...card, providerRef: 'chrg_claim_1' };
  // a QR payment made since order ids are scoped: its stored reference, not its order's
  const scoped = await pendingQrPayment();
  const ref1 = paymentReference(`pay_${'c1a1'.repeat(8)}`);
  await db('payments')
    .where({ id: scoped.id })
    .update({ details: { qr: { ref1 } } });
  const scopedRow = { ...scoped, details: { qr: { ref1 } } };
  const cases: [Payment, string][] = [
    [qr, qr.id],
    [qr, orderReference(qr.orderId)],
    [scopedRow, ref1],
    [scopedRow, orderReference(scoped.orderId)],
    [qr, ref1],
    [qr, 'pay_other'],
    [qr, card.id],
    [cardRow, card.id],
    [cardRow, 'chrg_claim_1'],
    [cardRow, orderReference(card.orderId)],
    [cardRow, 'chrg_other'],
  ];
  for (const [p, given] of cases) {
    const m = paymentMatchesSql(given, p.orderId);
    const { rows } = await db.raw<{ rows: { matches: boolean | null }[] }>(
      `SELECT (${m.sql}) AS matches FROM payments p WHERE p.id = ?`,
      [...m.bindings, p.id],
    );
    expect([given, rows[0].matches === true]).toEqual([given, paymentMatches(p, given)]);
  }
  expect([paymentMatches(scopedRow, ref1), paymentMatches(scopedRow, orderReference(scoped.orderId))]).toEqual([
    true,
    false,
  ]);
});

describe('a concurrent first delivery', () => {
  /** Until a statement of this database waits for a lock (the lookup's INSERT waiting for `trx`'s row). */
  const untilWaitingForLock = () =>
    waitFor(
      async () =>
        (
          await db.raw<{ rows: unknown[] }>(
            `SELECT 1 FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO callback_receipts%'`,
          )
        ).rows.length > 0,
      10_000,
      'the lookup waiting for the concurrent insert',
    );

  it('whose receipt commits after the lookup began: a duplicate that waits and gets its response, no second delivery', async () => {
    const temporal = temporalStandIn();
    const deps = depsWith(temporal.client);
    const p = await pendingQrPayment();
    const d = qrDelivery(deps, p);
    // the other delivery's claim: written, not committed, when this callback's lookup starts
    const trx = await db.transaction();
    const id = await unfinishedReceipt(p, 0, uniq('evt'), trx as unknown as Db);
    const lookup = d.lookup();
    await untilWaitingForLock();
    await trx.commit();
    const found = await lookup;
    // its snapshot predates the receipt, and its INSERT did nothing: neither seen nor claimed
    expect(found?.receipt).toBeUndefined();

    const processed = d.process(found?.receipt);
    await new Promise((r) => setTimeout(r, 100));
    await finishReceipt(id, { first: 'delivery' });
    await expect(processed).resolves.toEqual({
      response: { status: 200, body: { first: 'delivery' } },
      duplicate: true,
    });
    expect(await receiptsOf(p)).toEqual([expect.objectContaining({ id })]);
    expect(temporal.signalsOf(p.workflowId)).toBe(0);
  });

  it('whose claim is rolled back while the lookup waits: the lookup claims the receipt and delivers it', async () => {
    const temporal = temporalStandIn();
    const deps = depsWith(temporal.client);
    const p = await pendingQrPayment();
    const d = qrDelivery(deps, p);
    const trx = await db.transaction();
    await unfinishedReceipt(p, 0, uniq('evt'), trx as unknown as Db);
    const lookup = d.lookup();
    await untilWaitingForLock();
    await trx.rollback();
    const found = await lookup;
    expect(found?.receipt).toMatchObject({ claimed: true });
    const { response, duplicate } = await d.process(found?.receipt);
    expect(duplicate).toBe(false);
    expect(response).toEqual({ status: 200, body: { delivered: p.orderId } });
    await deps.afterAnswer.idle(); // the finish runs after the answer
    expect(await receiptsOf(p)).toEqual([expect.objectContaining({ id: found?.receipt?.id, outcome: 'signalled' })]);
    expect(temporal.signalsOf(p.workflowId)).toBe(1);
  });

  it('30 identical callbacks at once, lookup and delivery each: one receipt, one signal, one response for all', async () => {
    const temporal = temporalStandIn(30);
    const deps = depsWith(temporal.client);
    const p = await pendingQrPayment();
    const d = qrDelivery(deps, p);
    const results = await Promise.all(Array.from({ length: 30 }, async () => d.process((await d.lookup())?.receipt)));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => JSON.stringify(r.response))).size).toBe(1);
    expect(await receiptsOf(p)).toHaveLength(1);
    expect(temporal.signalsOf(p.workflowId)).toBe(1);
  });
});

describe('a gateway that died after claiming (the receipt stays unfinished)', () => {
  it("the provider's retry within the lease gets a prompt 503 SERVICE_UNAVAILABLE with Retry-After, and changes nothing", async () => {
    const temporal = temporalStandIn();
    const app = appWith(temporal.client);
    const p = await pendingQrPayment();
    const id = await unfinishedReceipt(p, 5_000); // claimed 5 s ago, of the 30 s lease
    const started = Date.now();
    const res = await post(app, '/qrcallback', qrCallback(p));
    expect(Date.now() - started).toBeLessThan(1_000); // was: a wait of 11 s, then the 503
    expect(res.status).toBe(503);
    expect(res.body).toEqual(callbackError('SERVICE_UNAVAILABLE', 503));
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(24);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(25);
    expect(await receiptsOf(p)).toEqual([expect.objectContaining({ id, outcome: null })]);
    expect(temporal.signalsOf(p.workflowId)).toBe(0);

    // after the lease (the receipt 31 s old), the retry takes the delivery over with the same receipt
    await db('callback_receipts')
      .where({ id })
      .update({ created_at: db.raw(`now() - interval '31 seconds'`) });
    const retry = await post(app, '/qrcallback', qrCallback(p));
    expect(retry.status).toBe(200);
    expect(retry.body.body).toEqual({ message: 'Callback processed', orderId: p.orderId, status: 'success' });
    await app.idle();
    expect(await receiptsOf(p)).toEqual([expect.objectContaining({ id, outcome: 'signalled', response_status: 200 })]);
    expect(temporal.signalsOf(p.workflowId)).toBe(1);
  });

  it('CALLBACK_DELIVERY_LEASE_S and CALLBACK_DUPLICATE_WAIT_MS reach the callback routes', async () => {
    const temporal = temporalStandIn();
    const app = createApp({
      config: testConfig({ CALLBACK_DELIVERY_LEASE_S: '60', CALLBACK_DUPLICATE_WAIT_MS: '8000' }),
      db,
      temporal: { client: temporal.client, taskQueue: 'claim-test-unpolled' },
      logger: testLogger,
    });
    const p = await pendingQrPayment();
    const id = await unfinishedReceipt(p, 9_000); // claimed 9 s ago: past the wait, within the 60 s lease
    const res = await post(app, '/qrcallback', qrCallback(p));
    expect(res.status).toBe(503);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(50);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(51);
    // 31 s old: over the default lease, not over this one
    await db('callback_receipts')
      .where({ id })
      .update({ created_at: db.raw(`now() - interval '31 seconds'`) });
    expect((await post(app, '/qrcallback', qrCallback(p))).status).toBe(503);
    expect(temporal.signalsOf(p.workflowId)).toBe(0);

    // 3 s old: past the default wait of 2 s (a prompt 503), within this one of 8 s: the retry waits,
    // looking at the receipt, and answers with its response once the delivery finishes
    const q = await pendingQrPayment();
    const running = await unfinishedReceipt(q, 3_000);
    let looks = 0;
    const onQuery = (x: { sql: string }) => void (/callback_receipts/.test(x.sql) && looks++);
    db.on('query', onQuery);
    try {
      const retry = post(app, '/qrcallback', qrCallback(q)).then((r) => r); // sent now (supertest sends on then)
      await waitFor(async () => looks >= 3, 5_000, 'the retry looking at the receipt it waits for');
      await db('callback_receipts')
        .where({ id: running })
        .update({ outcome: 'signalled', response_status: 200, response_body: JSON.stringify({ first: true }) });
      const answered = await retry;
      expect({ status: answered.status, body: answered.body }).toEqual({ status: 200, body: { first: true } });
    } finally {
      db.off('query', onQuery);
    }
  });

  it('a duplicate waits for a delivery under way only while it is younger than duplicateWaitMs', async () => {
    const temporal = temporalStandIn();
    const deps = depsWith(temporal.client, { duplicateWaitMs: 300 });
    const p = await pendingQrPayment();
    const d = qrDelivery(deps, p);
    // the clock starts before the claim: the receipt's age counts from its insert, however long
    // that took on a busy machine (started after it, the wait looked up to the insert's time short)
    const started = Date.now();
    await unfinishedReceipt(p, 0); // claimed just now, never finished
    const found = await d.lookup();
    expect(found?.receipt).toMatchObject({ stale: false });
    await expect(d.process(found?.receipt)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      headers: { 'Retry-After': '30' },
    });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(2_000);
    expect(temporal.signalsOf(p.workflowId)).toBe(0);
  });

  it('with an injected lease: a receipt older than it is taken over (same id, one signal); a younger one is not', async () => {
    const temporal = temporalStandIn();
    const deps = depsWith(temporal.client, { deliveryLeaseMs: 400, duplicateWaitMs: 100 });
    const p = await pendingQrPayment();
    const d = qrDelivery(deps, p);
    const id = await unfinishedReceipt(p, 200);
    await expect(d.process((await d.lookup())?.receipt)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      headers: { 'Retry-After': '1' },
    });
    await db('callback_receipts')
      .where({ id })
      .update({ created_at: db.raw(`now() - interval '500 milliseconds'`) });
    const found = await d.lookup();
    expect(found?.receipt).toMatchObject({ id, stale: true });
    await expect(d.process(found?.receipt)).resolves.toEqual({
      response: { status: 200, body: { delivered: p.orderId } },
      duplicate: false,
    });
    await deps.afterAnswer.idle();
    expect(await receiptsOf(p)).toEqual([expect.objectContaining({ id, outcome: 'signalled' })]);
    expect(temporal.signalsOf(p.workflowId)).toBe(1);
  });
});
