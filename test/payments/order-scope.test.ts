/**
 * Order ids are unique per account and mode (docs/concepts.md): two merchants, and one merchant in
 * sandbox and live, use the same order id end to end (create, callback paid, webhooks, checkstatus,
 * refund); another key reads nothing of them; a callback that names only a shared order id is
 * refused, one that names a QR reference pays its own; orders (capture=false) are scoped too; the
 * migration keeps existing rows.
 */
import { migrationSource, type Db } from '../../src/db/knex';
import { freshDatabase, migrateDownThrough } from '../support/migrations';
import { createTestStack, uniq, waitFor, type TestStack } from '../support/stack';
import { fieldSigned, headerSigned, post } from '../callbacks/helpers';
import { newKey, request, storedRef1 } from './support';
import { orderReference } from '../../src/domain/promptpay';
import { registerEndpoint, startReceiver, type Receiver } from '../webhooks/helpers';

let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack();
});
const receivers: Receiver[] = [];
afterAll(async () => {
  await stack.close();
  for (const r of receivers) await r.stop();
});

const api = () => request(stack.app.callback());
const qr = (key: string, orderId: string, amount = 120.5) =>
  api().post('/qrpayment').set('X-API-Key', key).send({ orderId, userId: 'u-1', amount, customerId: 'c-1' });
const status = (key: string, orderId: string) => api().get(`/checkstatus/${orderId}`).set('X-API-Key', key);

describe('the same order id in two accounts and two modes', () => {
  it('creates three payments, each paid by its own callback and read only by its own key', async () => {
    const merchantA = await newKey(stack.db, { mode: 'live' });
    const merchantB = await newKey(stack.db, { mode: 'live' });
    const sandboxA = await newKey(stack.db, { mode: 'sandbox' });
    await stack.db('api_keys').where({ id: sandboxA.id }).update({ account_id: merchantA.id });
    const outsider = await newKey(stack.db, { mode: 'live' });
    const orderId = uniq('ORD-2001');
    const created = [];
    for (const k of [merchantA, merchantB, sandboxA]) {
      const res = await qr(k.key, orderId);
      expect(res.status).toBe(200);
      created.push(res.body.body.paymentId as string);
    }
    expect(new Set(created).size).toBe(3);
    const rows = await stack.db('payments').where({ order_id: orderId }).orderBy('created_at');
    expect(new Set(rows.map((r) => r.workflow_id)).size).toBe(3);
    for (const r of rows) expect(r.workflow_id).toBe(`payment-${r.id}`);

    // the QR provider names our payment id: each callback reaches its own payment
    for (const paymentId of created) {
      const cb = await post(
        stack.app,
        '/qrcallback',
        fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 120.5, orderId }),
      );
      expect(cb.status).toBe(200);
    }
    const keys = [merchantA, merchantB, sandboxA];
    for (const [i, k] of keys.entries()) {
      const seen = await waitFor(async () => {
        const res = await status(k.key, orderId);
        return res.body.body?.status === 'paid' ? res : undefined;
      }, 15_000);
      expect(seen.body.body.paymentId).toBe(created[i]);
      expect(seen.body.body.mode).toBe(i === 2 ? 'sandbox' : 'live');
    }
    // a key with no payment of that order reads none of theirs
    const foreign = await status(outsider.key, orderId);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain(created[0]);
  });

  it('a second key of the same account gets a 409 that says what conflicts', async () => {
    const first = await newKey(stack.db);
    const second = await newKey(stack.db);
    await stack.db('api_keys').where({ id: second.id }).update({ account_id: first.id });
    const orderId = uniq('ORD-2002');
    expect((await qr(first.key, orderId)).status).toBe(200);
    const again = await qr(second.key, orderId);
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).toMatch(/another API key of your account in this mode/);
    // the same key with another amount: the amount is what conflicts
    const other = await qr(first.key, orderId, 99);
    expect(other.status).toBe(409);
    expect(JSON.stringify(other.body)).toMatch(/already has a payment of 120\.50 THB by qr/);
  });

  it('a callback that names only an order id two accounts use is refused; one naming a QR reference pays its own', async () => {
    const a = await newKey(stack.db);
    const b = await newKey(stack.db);
    const aLive = await newKey(stack.db, { mode: 'live' });
    await stack.db('api_keys').where({ id: aLive.id }).update({ account_id: a.id });
    const orderId = uniq('ORD-2003');
    const ids: string[] = [];
    for (const k of [a, b, aLive]) {
      const res = await qr(k.key, orderId);
      expect(res.status).toBe(200);
      ids.push(res.body.body.paymentId);
    }
    // the development card test form names the order alone
    const res = await post(
      stack.app,
      '/callback',
      headerSigned(stack.config, 'CARD', 'form', {
        orderId,
        status: 'success',
        amount: '120.50',
        transactionId: 't-1',
      }),
    );
    expect(res.status).toBe(409);
    expect(JSON.stringify(res.body)).toMatch(/used by 3 payments .*send the paymentId/);
    expect(await stack.db('callback_receipts').where({ order_id: orderId })).toHaveLength(0);
    // each QR carries its payment's own reference (Ref1, tag 62): a bank callback naming only it
    // (and the shared order id) pays that payment and no other
    const refs = await Promise.all(ids.map((id) => storedRef1(stack.db, id)));
    expect(new Set([...refs, orderReference(orderId)]).size).toBe(4);
    for (const [i, k] of [a, b, aLive].entries()) {
      const byRef = await post(
        stack.app,
        '/qrcallback',
        fieldSigned(stack.config, 'QR', { paymentId: refs[i], status: 'success', amount: 120.5, orderId }),
      );
      expect(byRef.status).toBe(200);
      await waitFor(async () => (await stack.db('payments').where({ id: ids[i] }).first()).status === 'paid');
      const rows = await stack.db('payments').where({ order_id: orderId }).orderBy('id');
      expect(rows.filter((r) => r.status === 'paid').map((r) => r.id)).toEqual(ids.slice(0, i + 1).sort());
      const mine = await status(k.key, orderId);
      expect([mine.status, mine.body.body.paymentId, mine.body.body.status]).toEqual([200, ids[i], 'paid']);
    }
    const receipts = await stack.db('callback_receipts').where({ order_id: orderId, provider: 'qr' });
    expect(receipts.map((r) => r.payment_id).sort()).toEqual([...ids].sort());
  });
});

describe('two merchants and two modes, one order id: webhooks and refunds', () => {
  it("each merchant's webhook carries its own payment, and each refund refunds its own", async () => {
    const a = await newKey(stack.db);
    const b = await newKey(stack.db);
    const aLive = await newKey(stack.db, { mode: 'live' });
    await stack.db('api_keys').where({ id: aLive.id }).update({ account_id: a.id });
    const hooks = { a: await startReceiver(), b: await startReceiver() };
    receivers.push(hooks.a, hooks.b);
    await registerEndpoint(stack, a.key, { url: hooks.a.url });
    await registerEndpoint(stack, b.key, { url: hooks.b.url });
    const orderId = uniq('ORD-2004');
    const ids: Record<'a' | 'b' | 'aLive', string> = { a: '', b: '', aLive: '' };
    for (const [name, k] of [
      ['a', a],
      ['b', b],
      ['aLive', aLive],
    ] as const) {
      const res = await qr(k.key, orderId, 50);
      expect(res.status).toBe(200);
      ids[name] = res.body.body.paymentId as string;
      const cb = await post(
        stack.app,
        '/qrcallback',
        fieldSigned(stack.config, 'QR', { paymentId: ids[name], status: 'success', amount: 50, orderId }),
      );
      expect(cb.status).toBe(200);
    }
    const paidHook = (r: Receiver, paymentId: string) =>
      waitFor(
        async () =>
          r.log.map((x) => JSON.parse(x.body)).find((e) => e.data?.paymentId === paymentId && e.data.status === 'paid'),
        20_000,
        `paid webhook of ${paymentId}`,
      );
    expect((await paidHook(hooks.a, ids.a)).data).toMatchObject({ orderId, mode: 'sandbox' });
    expect((await paidHook(hooks.b, ids.b)).data).toMatchObject({ orderId, mode: 'sandbox' });
    // a receiver gets its own merchant's payments only (the live key registered no endpoint)
    const seen = (r: Receiver) => new Set(r.log.map((x) => JSON.parse(x.body).data?.paymentId));
    expect([...seen(hooks.a)]).toEqual([ids.a]);
    expect([...seen(hooks.b)]).toEqual([ids.b]);
    for (const [k, id] of [
      [a, ids.a],
      [b, ids.b],
      [aLive, ids.aLive],
    ] as const)
      await waitFor(async () => {
        const body = (await status(k.key, orderId)).body.body;
        return body?.status === 'paid' && body.paymentId === id ? true : undefined;
      }, 15_000);

    // B refunds part of its payment: only B's payment changes, whatever A's are
    const refundB = await api().post('/refund').set('X-API-Key', b.key).send({ orderId, amount: 20 });
    expect(refundB.status).toBe(200);
    expect(refundB.body.body).toMatchObject({ orderId, paymentId: ids.b, status: 'succeeded', amount: 20 });
    // A refunds its sandbox payment in full
    const refundA = await api().post('/refund').set('X-API-Key', a.key).send({ orderId });
    expect(refundA.status).toBe(200);
    expect(refundA.body.body).toMatchObject({ paymentId: ids.a, status: 'succeeded', amount: 50 });
    const rows = Object.fromEntries((await stack.db('payments').where({ order_id: orderId })).map((r) => [r.id, r]));
    expect(rows[ids.a]).toMatchObject({ status: 'refunded' });
    expect(rows[ids.b]).toMatchObject({ status: 'paid' });
    expect(Number(rows[ids.b].refunded_satang)).toBe(2000);
    expect(rows[ids.aLive]).toMatchObject({ status: 'paid' });
    expect(Number(rows[ids.aLive].refunded_satang)).toBe(0);
    const refunds = await stack.db('refunds').where({ order_id: orderId });
    expect(refunds.map((r) => r.payment_id).sort()).toEqual([ids.a, ids.b].sort());
    // each refund's webhook goes to its own merchant
    const refundHook = (r: Receiver, paymentId: string, st: string) =>
      waitFor(
        async () =>
          r.log.map((x) => JSON.parse(x.body)).find((e) => e.data?.paymentId === paymentId && e.data.status === st),
        20_000,
        `${st} webhook of ${paymentId}`,
      );
    await refundHook(hooks.b, ids.b, 'partially_refunded');
    await refundHook(hooks.a, ids.a, 'refunded');
    expect([...seen(hooks.a)]).toEqual([ids.a]);
    expect([...seen(hooks.b)]).toEqual([ids.b]);
    // a key with no payment of that order refunds nothing
    const outsider = await newKey(stack.db);
    expect((await api().post('/refund').set('X-API-Key', outsider.key).send({ orderId })).status).toBe(404);
  });
});

describe('orders (capture=false) are scoped the same way (test/orders/order-scope.test.ts end to end)', () => {
  it("another account's authorisation of an order id is its own order; another key of the account is a 409 that says so", async () => {
    const a = await newKey(stack.db);
    const b = await newKey(stack.db);
    const a2 = await newKey(stack.db);
    await stack.db('api_keys').where({ id: a2.id }).update({ account_id: a.id });
    const orderId = uniq('ORD-2005');
    const authorize = (key: string) =>
      api()
        .post('/cardpayment')
        .type('form')
        .set('X-API-Key', key)
        .send({ orderId, userId: 'u', amount: '100', token: 'tok_test', capture: 'false' });
    expect((await authorize(a.key)).status).toBe(200);
    expect((await authorize(b.key)).status).toBe(200);
    const sameAccount = await authorize(a2.key);
    expect(sameAccount.status).toBe(409);
    expect(sameAccount.body.body.error).toMatch(/another API key of your account in this mode/);
    const orders = await stack.db('orders').where({ order_id: orderId }).orderBy('created_at');
    expect(orders.map((o) => o.api_key_id)).toEqual([a.id, b.id]);
    for (const o of orders) expect(o.workflow_id).toBe(`order-${o.payment_id}`);
    expect(await stack.db('payments').where({ order_id: orderId }).pluck('api_key_id')).toHaveLength(2);
  });
});

describe('migration 20261128090000_order_id_scope on a database with rows', () => {
  let db: Db;
  beforeAll(async () => {
    db = await freshDatabase('order_scope_mig');
  });
  afterAll(() => db.destroy());

  it('backfills accounts and replaces the global unique order id with (account, mode, order id)', async () => {
    await db.migrate.latest({ migrationSource });
    // back to the schema before it (later migrations undone first)
    await migrateDownThrough(db, '20261128090000_order_id_scope');
    const row = (id: string, key: string | null, mode = 'live') => ({
      id,
      order_id: 'ORD-OLD',
      user_id: 'u',
      method: 'qr',
      amount_satang: 100,
      mode,
      api_key_id: key,
      workflow_id: 'payment-ORD-OLD',
    });
    await db('api_keys').insert({
      id: 'key_old',
      name: 'old',
      prefix: 'tk_live_x',
      key_hash: 'h1',
      scopes: ['payments:write'],
    });
    await db('payments').insert(row('pay_old', 'key_old'));
    await expect(db('payments').insert(row('pay_dup', null))).rejects.toThrow(/payments_order_id_unique/);

    await db.migrate.up({ migrationSource });
    expect((await db('api_keys').where({ id: 'key_old' }).first()).account_id).toBe('key_old');
    const old = await db('payments').where({ id: 'pay_old' }).first();
    expect(old.account_id).toBe('key_old');
    expect(old.workflow_id).toBe('payment-ORD-OLD');
    // a new key is its own account; the same order id in another account or mode is allowed
    await db('api_keys').insert({
      id: 'key_new',
      name: 'new',
      prefix: 'tk_live_y',
      key_hash: 'h2',
      scopes: ['payments:write'],
    });
    expect((await db('api_keys').where({ id: 'key_new' }).first()).account_id).toBe('key_new');
    await db('payments').insert({ ...row('pay_b', 'key_new'), account_id: 'key_new' });
    await db('payments').insert({ ...row('pay_c', 'key_old', 'sandbox'), account_id: 'key_old' });
    await db('payments').insert(row('pay_keyless', null));
    await expect(db('payments').insert({ ...row('pay_d', 'key_old'), account_id: 'key_old' })).rejects.toThrow(
      /payments_scoped_order/,
    );
    await expect(db('payments').insert(row('pay_keyless2', null))).rejects.toThrow(/payments_scoped_order/);
  });
});
