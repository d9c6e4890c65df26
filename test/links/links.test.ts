/**
 * Payment links on the real stack: the API (create, Idempotency-Key, list with payments, read,
 * deactivate) and its owner checks, and the link page: TH/EN, strict CSP, a visit that makes a
 * QR payment through the payment service and redirects to the hosted checkout, "already paid",
 * reusable links, expiry, deactivation and the signed webhook of a link's payment.
 */
import request from 'supertest';
import { linkIdOfOrder } from '../../src/links';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { gatewayWith, newKey, paymentError, rowOf, webhookWitness } from '../payments/support';
import { resultAware } from '../payments/support';

let stack: TestStack;
let key: string;
let keyId: string;
let other: string;
beforeAll(async () => {
  stack = await createTestStack();
  ({ key, id: keyId } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
  ({ key: other } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
});
afterAll(async () => {
  await stack.close();
});

const api = () => request(stack.app.callback());
const create = async (body: Record<string, unknown>, k = key) => {
  const res = await api().post('/payment-links').set('X-API-Key', k).send(body);
  expect(res.status).toBe(201);
  return res.body.body as { id: string; url: string; status: string; payments: unknown[] };
};
const pathOf = (url: string) => new URL(url).pathname;
/** The button: POST /l/{code}; the Location of its 303 (the checkout page's path). */
const visit = async (url: string, app = stack.app) => {
  const res = await request(app.callback()).post(pathOf(url));
  return res;
};
const pay = async (orderId: string) => {
  const row = await waitFor(() => rowOf(stack.db, orderId));
  const handle = resultAware(stack, stack.client.workflow.getHandle(String(row.workflow_id)));
  await handle.signal('paymentResult', provenResult(stack.config, row.id, { status: 'success', provider: 'qr' }));
  await handle.result();
};

describe('the API', () => {
  it('creates a link with a short unguessable url; Idempotency-Key replays the first answer', async () => {
    const idem = uniq('idem');
    const body = { amount: 350.25, description: 'Mango box, 2 kg' };
    const a = await api().post('/payment-links').set('X-API-Key', key).set('Idempotency-Key', idem).send(body);
    const b = await api().post('/payment-links').set('X-API-Key', key).set('Idempotency-Key', idem).send(body);
    expect(a.status).toBe(201);
    expect(a.body.body).toMatchObject({
      amount: 350.25,
      currency: 'THB',
      description: 'Mango box, 2 kg',
      reusable: false,
      status: 'active',
      mode: 'sandbox',
      expiresAt: null,
      payments: [],
    });
    expect(a.body.body.url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/l\/[A-Za-z0-9_-]{22}$/);
    expect(b.body.body.id).toBe(a.body.body.id);
    const c = await api()
      .post('/payment-links')
      .set('X-API-Key', key)
      .set('Idempotency-Key', idem)
      .send({ ...body, amount: 1 });
    expect(c.status).toBe(422);
  });

  it.each([
    ['no amount', { description: 'x' }, 'MISSING_FIELD'],
    ['a negative amount', { amount: -1, description: 'x' }, 'INVALID_INPUT'],
    ['three decimals', { amount: 1.234, description: 'x' }, 'INVALID_INPUT'],
    ['no description', { amount: 1 }, 'MISSING_FIELD'],
    ['a description too long', { amount: 1, description: 'x'.repeat(201) }, 'INVALID_INPUT'],
    ['an expiry in the past', { amount: 1, description: 'x', expiresAt: '2020-01-01T00:00:00Z' }, 'INVALID_INPUT'],
    ['an expiry that is not a time', { amount: 1, description: 'x', expiresAt: 'tomorrow' }, 'INVALID_INPUT'],
    ['an unknown field', { amount: 1, description: 'x', metadata: {} }, 'INVALID_INPUT'],
  ])('refuses %s with a 400', async (_, body, code) => {
    const res = await api().post('/payment-links').set('X-API-Key', key).send(body);
    expect([res.status, res.body]).toEqual([400, paymentError(code)]);
  });

  it('owner checks: no key, a read-only key, another merchant', async () => {
    const link = await create({ amount: 10, description: 'owned' });
    expect((await api().post('/payment-links').send({ amount: 1, description: 'x' })).status).toBe(401);
    expect((await api().get('/payment-links')).status).toBe(401);
    expect((await api().get(`/payment-links/${link.id}`)).status).toBe(401);
    expect((await api().post(`/payment-links/${link.id}/deactivate`)).status).toBe(401);
    const readOnly = (await newKey(stack.db, { scopes: ['payments:read'] })).key;
    const ro = await api().post('/payment-links').set('X-API-Key', readOnly).send({ amount: 1, description: 'x' });
    expect(ro.status).toBe(403);
    expect((await api().post(`/payment-links/${link.id}/deactivate`).set('X-API-Key', readOnly)).status).toBe(403);
    const listed = await api().get('/payment-links?limit=200').set('X-API-Key', other);
    expect(listed.status).toBe(200);
    expect(listed.body.body.links.map((l: { id: string }) => l.id)).not.toContain(link.id);
    const read = await api().get(`/payment-links/${link.id}`).set('X-API-Key', other);
    expect([read.status, read.body]).toEqual([404, paymentError('NOT_FOUND')]);
    const off = await api().post(`/payment-links/${link.id}/deactivate`).set('X-API-Key', other);
    expect(off.status).toBe(404);
    expect((await api().get(`/payment-links/${link.id}`).set('X-API-Key', key)).body.body.status).toBe('active');
  });

  it('lists own links newest first with cursor pages', async () => {
    const k = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
    const ids = [];
    for (const n of [1, 2, 3]) ids.push((await create({ amount: n, description: `n${n}` }, k)).id);
    const first = await api().get('/payment-links?limit=2').set('X-API-Key', k);
    expect(first.body.body.links.map((l: { id: string }) => l.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.body.hasMore).toBe(true);
    const next = await api()
      .get(`/payment-links?limit=2&starting_after=${first.body.body.nextCursor}`)
      .set('X-API-Key', k);
    expect(next.body.body.links.map((l: { id: string }) => l.id)).toEqual([ids[0]]);
    expect(next.body.body.hasMore).toBe(false);
  });
});

describe('the link page', () => {
  it('is Thai or English, with a strict CSP and nothing from another origin', async () => {
    const link = await create({ amount: 99.5, description: 'ทุเรียน <b>1</b> ลูก' });
    const en = await api().get(pathOf(link.url));
    expect(en.status).toBe(200);
    expect(en.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(en.headers['cache-control']).toBe('no-store');
    expect(en.text).toContain('<html lang="en">');
    expect(en.text).toContain('Pay with PromptPay');
    expect(en.text).toContain('ทุเรียน &lt;b&gt;1&lt;/b&gt; ลูก'); // escaped
    expect(en.text).toMatch(/THB\s99\.50/);
    expect(en.text).not.toMatch(/<script/);
    for (const m of en.text.matchAll(/(?:src|href|action)="([^"]*)"/g)) expect(m[1]).toMatch(/^[/?]/);
    const th = await api().get(pathOf(link.url)).set('Accept-Language', 'th-TH,th;q=0.9,en;q=0.5');
    expect(th.text).toContain('<html lang="th">');
    expect(th.text).toContain('ชำระด้วยพร้อมเพย์');
    expect(
      (
        await api()
          .get(`${pathOf(link.url)}?lang=en`)
          .set('Accept-Language', 'th')
      ).text,
    ).toContain('<html lang="en">');
  });

  it('an unknown or malformed code is 404', async () => {
    for (const p of ['/l/AAAAAAAAAAAAAAAAAAAAAA', '/l/x', '/l/..%2F..']) expect((await api().get(p)).status).toBe(404);
    expect((await api().post('/l/AAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
  });

  it('a single-use link: the visit makes a QR payment and goes to its checkout; once paid, "already paid"', async () => {
    const link = await create({ amount: 120.5, description: 'Weekly box' });
    const first = await visit(link.url);
    expect(first.status).toBe(303);
    expect(first.headers.location).toMatch(/^\/checkout\/pay_[0-9a-f]{32}\.[0-9a-z]+\.[\w-]{22}$/);
    const checkout = await api().get(first.headers.location);
    expect(checkout.status).toBe(200);
    expect(checkout.text).toMatch(/THB\s120\.50/);
    const orderId = `${link.id}-1`;
    const row = await waitFor(() => rowOf(stack.db, orderId));
    expect(row).toMatchObject({ method: 'qr', amount_satang: '12050', api_key_id: keyId, mode: 'sandbox' });
    expect(linkIdOfOrder(orderId)).toBe(link.id);
    // a second visit while that payment is open: the same payment, not another one
    const again = await visit(link.url);
    expect(again.headers.location).toBe(first.headers.location);
    await pay(orderId);
    const page = await api().get(pathOf(link.url));
    expect([page.status, page.text]).toEqual([200, expect.stringContaining('already been paid')]);
    expect(page.text).not.toContain('<form');
    const late = await visit(link.url);
    expect([late.status, late.text]).toEqual([200, expect.stringContaining('already been paid')]);
    const listed = (await api().get(`/payment-links/${link.id}`).set('X-API-Key', key)).body.body;
    expect(listed).toMatchObject({
      status: 'paid',
      payments: [{ orderId, paymentId: row.id, status: 'paid', amount: 120.5 }],
    });
  });

  it("another key's payment of the link's order id is not the link's (order ids are per account and mode)", async () => {
    const link = await create({ amount: 30, description: 'Shared order id' });
    const orderId = `${link.id}-1`;
    // another merchant pays first under the order id the link's first visit will use
    const theirs = await api()
      .post('/qrpayment')
      .set('X-API-Key', other)
      .send({ orderId, userId: 'u', amount: 30, customerId: 'c' });
    expect(theirs.status).toBe(200);
    await pay(orderId);
    const page = await api().get(pathOf(link.url));
    expect([page.status, page.text]).toEqual([200, expect.not.stringContaining('already been paid')]);
    const first = await visit(link.url);
    expect(first.status).toBe(303);
    const mine = await waitFor(() => stack.db('payments').where({ order_id: orderId, api_key_id: keyId }).first());
    expect(mine.id).not.toBe(theirs.body.body.paymentId);
    const listed = (await api().get(`/payment-links/${link.id}`).set('X-API-Key', key)).body.body;
    expect(listed).toMatchObject({ status: 'active', payments: [{ orderId, paymentId: mine.id, status: 'pending' }] });
  });

  it('a reusable link makes a payment per visit; a deactivated one takes no more (410)', async () => {
    const link = await create({ amount: 20, description: 'Donation', reusable: true });
    const a = await visit(link.url);
    const b = await visit(link.url);
    expect([a.status, b.status]).toEqual([303, 303]);
    expect(a.headers.location).not.toBe(b.headers.location);
    await pay(`${link.id}-1`);
    expect((await visit(link.url)).status).toBe(303); // paid once, still open to the next payer
    const off = await api().post(`/payment-links/${link.id}/deactivate`).set('X-API-Key', key);
    expect(off.body.body).toMatchObject({ status: 'deactivated', deactivatedAt: expect.any(String) });
    expect(off.body.body.payments.map((p: { orderId: string }) => p.orderId)).toEqual([
      `${link.id}-1`,
      `${link.id}-2`,
      `${link.id}-3`,
    ]);
    const page = await api().get(pathOf(link.url)).set('Accept-Language', 'th');
    expect([page.status, page.text]).toEqual([410, expect.stringContaining('ถูกปิดใช้งานแล้ว')]);
    expect((await visit(link.url)).status).toBe(410);
  });

  it('past its expiry the link is 410 and makes nothing', async () => {
    const link = await create({
      amount: 5,
      description: 'Flash sale',
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const later = gatewayWith(stack, {}, { clock: () => Date.now() + 120_000 });
    const page = await request(later.callback()).get(pathOf(link.url));
    expect([page.status, page.text]).toEqual([410, expect.stringContaining('has expired')]);
    expect((await visit(link.url, later)).status).toBe(410);
    expect((await api().get(`/payment-links/${link.id}`).set('X-API-Key', key)).body.body.payments).toEqual([]);
  });

  it("a revoked owner key's link takes no payment", async () => {
    const owner = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
    const link = await create({ amount: 5, description: 'old key' }, owner.key);
    await stack.db('api_keys').where({ id: owner.id }).update({ revoked_at: new Date() });
    const res = await visit(link.url);
    expect([res.status, res.text]).toEqual([410, expect.stringContaining('cannot take payments')]);
  });

  it("a link's payment fires the owner's signed payment webhook, its order id naming the link", async () => {
    const owner = await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] });
    const witness = await webhookWitness(stack, owner);
    try {
      const link = await create({ amount: 42, description: 'webhook' }, owner.key);
      expect((await visit(link.url)).status).toBe(303);
      await pay(`${link.id}-1`);
      const event = await witness.received(`${link.id}-1`, 'paid');
      expect(linkIdOfOrder(event.data.orderId)).toBe(link.id);
    } finally {
      await witness.stop();
    }
  });
});
