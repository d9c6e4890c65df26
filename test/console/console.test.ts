/**
 * The console over HTTP on the real stack: sign-in (a session, never the key), CSRF on every
 * change, the idle timeout and sign-out, scopes, another merchant's objects, the payments list
 * and an order (timeline, refund with confirmation, idempotent, audited), payment links and
 * webhooks through their slices' services. The browser walk is browser.test.ts.
 */
import request from 'supertest';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { gatewayWith, newKey, paidQr } from '../payments/support';
import { csrfIn, signIn } from './support';

let stack: TestStack;
let a: { key: string; id: string };
let b: { key: string; id: string };
const SCOPES = ['payments:write', 'payments:read', 'webhooks:manage'];
beforeAll(async () => {
  stack = await createTestStack();
  a = await newKey(stack.db, { scopes: SCOPES, name: 'Shop A staff' });
  b = await newKey(stack.db, { scopes: SCOPES, name: 'Shop B staff' });
});
afterAll(async () => {
  await stack.close();
});
const app = () => request(stack.app.callback());

describe('sign-in and the session', () => {
  it('a key becomes a session: HttpOnly, SameSite=Strict cookie; the table holds the key id, never the key', async () => {
    const c = await signIn(stack.app, a.key);
    expect(c.setCookie).toMatch(/^talat_console=[\w-]{43}; Path=\/console; HttpOnly; SameSite=Strict$/);
    const rows = await stack.db('console_sessions').where({ api_key_id: a.id });
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(a.key);
    expect(JSON.stringify(rows)).not.toContain(c.cookie.split('=')[1]); // only its hash
    const page = await c.get('/console/payments');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.text).toContain('Shop A staff');
  });

  it('a wrong key, or a sign-in form not from the console, makes no session', async () => {
    const page = await app().get('/console/sign-in');
    expect(page.text).toContain('name="apiKey"');
    const pre = /talat_console_pre=([^;]+)/.exec(String(page.headers['set-cookie']))![1];
    const bad = await app()
      .post('/console/sign-in')
      .set('Cookie', `talat_console_pre=${pre}`)
      .type('form')
      .send({ apiKey: 'tk_test_' + 'x'.repeat(40), csrf: csrfIn(page.text) });
    expect(bad.status).toBe(401);
    expect(String(bad.headers['set-cookie'])).not.toMatch(/talat_console=[\w-]{43}/);
    const forged = await app().post('/console/sign-in').type('form').send({ apiKey: a.key, csrf: 'x' });
    expect(forged.status).toBe(403);
  });

  it('without a session: pages redirect to sign-in, changes are refused', async () => {
    const res = await app().get('/console/payments');
    expect([res.status, res.headers.location]).toEqual([303, '/console/sign-in']);
    const root = await app().get('/console');
    expect([root.status, root.headers.location]).toEqual([303, '/console/overview']);
    expect((await app().post('/console/links').type('form').send({ amount: '1', description: 'x' })).status).toBe(401);
  });

  it("a change without the CSRF token (or with another session's) is refused and changes nothing", async () => {
    const c = await signIn(stack.app, a.key);
    const other = await signIn(stack.app, a.key);
    const before = await stack.db('payment_links').where({ api_key_id: a.id }).count<{ count: string }[]>();
    const none = await c.post('/console/links', { amount: '5', description: 'no csrf' }, { csrf: null });
    expect(none.status).toBe(403);
    const foreign = csrfIn((await other.get('/console/links')).text);
    expect((await c.post('/console/links', { amount: '5', description: 'x' }, { csrf: foreign })).status).toBe(403);
    const after = await stack.db('payment_links').where({ api_key_id: a.id }).count<{ count: string }[]>();
    expect(after).toEqual(before);
  });

  it('idle for longer than the timeout, the session is over; sign-out ends it at once', async () => {
    const c = await signIn(stack.app, a.key);
    const later = gatewayWith(stack, {}, { clock: () => Date.now() + 31 * 60_000 });
    const res = await request(later.callback()).get('/console/payments').set('Cookie', c.cookie);
    expect([res.status, res.headers.location]).toEqual([303, '/console/sign-in?expired=1']);
    expect((await c.get('/console/payments')).status).toBe(303); // ended for good
    const d = await signIn(stack.app, a.key);
    expect((await d.post('/console/sign-out', {})).status).toBe(303);
    expect((await d.get('/console/payments')).status).toBe(303);
  });

  it("a revoked key's session ends", async () => {
    const k = await newKey(stack.db, { scopes: SCOPES });
    const c = await signIn(stack.app, k.key);
    await stack.db('api_keys').where({ id: k.id }).update({ revoked_at: new Date() });
    expect((await c.get('/console/payments')).status).toBe(303);
  });
});

describe('payments, an order, a refund', () => {
  it('lists own payments only, newest first, with filters and search by order id', async () => {
    const mine = await paidQr(stack, a.key, 100, 'con');
    const theirs = await paidQr(stack, b.key, 100, 'con');
    const c = await signIn(stack.app, a.key);
    const list = await c.get('/console/payments?status=paid&method=qr');
    expect(list.text).toContain(mine.orderId);
    expect(list.text).not.toContain(theirs.orderId);
    expect((await c.get('/console/payments?status=failed')).text).not.toContain(mine.orderId);
    const search = await c.get(`/console/payments?order=${mine.orderId}`);
    expect(search.headers.location).toBe(`/console/orders/${mine.orderId}`);
    const other = await c.get(`/console/orders/${theirs.orderId}`);
    expect(other.status).toBe(404);
    expect(other.text).not.toContain('100.00');
    expect(
      (await c.post(`/console/orders/${theirs.orderId}/refund`, { amount: '1', confirm: 'yes', idem: 'i'.repeat(20) }))
        .status,
    ).toBe(404);
  });

  it('refunds part of an order with confirmation, once per form, audited in its timeline', async () => {
    const paid = await paidQr(stack, a.key, 300, 'con');
    const c = await signIn(stack.app, a.key);
    const page = await c.get(`/console/orders/${paid.orderId}`);
    expect(page.text).toContain('payment.status_changed');
    const idem = /name="idem" value="([^"]+)"/.exec(page.text)![1];
    const csrf = csrfIn(page.text);
    const unconfirmed = await c.post(`/console/orders/${paid.orderId}/refund`, { amount: '20.50', idem }, { csrf });
    expect(unconfirmed.status).toBe(400);
    const form = { amount: '20.50', reason: 'one item missing', confirm: 'yes', idem };
    const first = await c.post(`/console/orders/${paid.orderId}/refund`, form, { csrf });
    expect(first.status).toBe(200);
    expect(first.text).toContain('Refund succeeded: 20.50 THB.');
    const again = await c.post(`/console/orders/${paid.orderId}/refund`, form, { csrf }); // a double submit
    expect(again.status).toBe(200);
    const refunds = await request(stack.app.callback()).get(`/checkstatus/${paid.orderId}`).set('X-API-Key', a.key);
    expect(refunds.body.body.refunds).toHaveLength(1);
    expect(refunds.body.body.refundedAmount).toBe(20.5);
    const after = await c.get(`/console/orders/${paid.orderId}`);
    expect(after.text).toContain('console.refund');
    expect(after.text).toContain('Shop A staff');
    const audit = await stack.db('console_audit').where({ order_id: paid.orderId });
    expect(audit.map((x: { action: string; api_key_id: string }) => [x.action, x.api_key_id])).toEqual([
      ['refund', a.id],
      ['refund', a.id],
    ]);
  });

  it('a read-only key sees no refund form and cannot refund, nor open the webhooks', async () => {
    const ro = await newKey(stack.db, { scopes: ['payments:read'] });
    const c = await signIn(stack.app, ro.key);
    const res = await c.post(`/console/orders/${uniq('any')}/refund`, {
      amount: '1',
      confirm: 'yes',
      idem: 'i'.repeat(20),
    });
    expect(res.status).toBe(403);
    expect((await c.get('/console/webhooks')).status).toBe(403);
    expect((await c.get('/console/payments')).text).not.toContain('/console/webhooks');
  });
});

describe('payment links and webhooks in the console', () => {
  it('creates, lists and deactivates links through the links service; the other merchant sees none', async () => {
    const c = await signIn(stack.app, a.key);
    const desc = uniq('Mango box');
    const created = await c.post('/console/links', { amount: '350', description: desc }, { from: '/console/links' });
    expect(created.status).toBe(200);
    expect(created.text).toContain(desc);
    const id = (await stack.db('payment_links').where({ description: desc }).first()).id as string;
    const theirs = await signIn(stack.app, b.key);
    expect((await theirs.get('/console/links')).text).not.toContain(desc);
    expect((await theirs.post(`/console/links/${id}/deactivate`, {}, { from: '/console/links' })).status).toBe(404);
    const off = await c.post(`/console/links/${id}/deactivate`, {}, { from: '/console/links' });
    expect(off.text).toContain('Deactivated.');
    const audit = await stack.db('console_audit').where({ api_key_id: a.id, action: 'link.deactivate' });
    expect(audit.map((x: { detail: { linkId: string } }) => x.detail.linkId)).toContain(id);
  });

  it('webhook endpoints: the destination policy, rotate, disable; another merchant gets 404', async () => {
    const c = await signIn(stack.app, a.key);
    const bad = await c.post(
      '/console/webhooks/endpoints',
      { url: 'http://10.0.0.1/hook' },
      { from: '/console/webhooks' },
    );
    expect(bad.status).toBe(400);
    const created = await c.post(
      '/console/webhooks/endpoints',
      { url: 'http://127.0.0.1:9/hooks/talat', description: 'orders' },
      { from: '/console/webhooks' },
    );
    expect(created.text).toMatch(/whsec_/);
    const ep = await stack.db('webhook_endpoints').where({ api_key_id: a.id, description: 'orders' }).first();
    const theirs = await signIn(stack.app, b.key);
    expect(
      (await theirs.post(`/console/webhooks/endpoints/${ep.id}/rotate`, {}, { from: '/console/webhooks' })).status,
    ).toBe(404);
    expect(
      (await theirs.post(`/console/webhooks/endpoints/${ep.id}/disable`, {}, { from: '/console/webhooks' })).status,
    ).toBe(404);
    expect(
      (await c.post(`/console/webhooks/endpoints/${ep.id}/disable`, {}, { from: '/console/webhooks' })).status,
    ).toBe(200);
    expect((await stack.db('webhook_endpoints').where({ id: ep.id }).first()).disabled).toBe(true);
    expect(
      (await theirs.post('/console/webhooks/dead-letters/dlq_nothing/replay', {}, { from: '/console/webhooks' }))
        .status,
    ).toBe(404);
  });

  it('the overview draws its charts as SVG', async () => {
    const c = await signIn(stack.app, a.key);
    const res = await c.get('/console/overview');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/<svg id="chart-count"/);
    expect(res.text).toMatch(/<svg id="chart-success"/);
    expect(res.text).not.toMatch(/<script|style="/);
  });

  it("the overview's open items count unresolved reconciliation exceptions, for a key that may read them", async () => {
    const operator = await newKey(stack.db, { scopes: ['payments:read', 'reconciliation:read'], name: 'Ops' });
    const count = async (key: string) => {
      const res = await (await signIn(stack.app, key)).get('/console/overview');
      expect(res.status).toBe(200);
      return /<span id="open-exceptions">(\d+)<\/span>/.exec(res.text)?.[1];
    };
    const before = Number(await count(operator.key));
    // an exception of a sandbox run (the mode of both keys), then one resolved: only the first counts
    const run = uniq('rcn_console');
    await stack.db('reconciliation_runs').insert({
      id: run,
      provider: 'card',
      mode: 'sandbox',
      settlement_date: `20${String(Math.floor(Math.random() * 80) + 10)}-01-0${Math.floor(Math.random() * 9) + 1}`,
      status: 'completed',
      file_key: `${run}.csv`,
    });
    const line = { run_id: run, provider: 'card', outcome: 'unknown', kind: 'payment', amount_satang: 100 };
    await stack.db('reconciliation_lines').insert([
      { ...line, id: `${run}:1` },
      { ...line, id: `${run}:2`, resolution: 'accepted' },
    ]);
    expect(Number(await count(operator.key))).toBe(before + 1);
    expect(await count(a.key)).toBeUndefined(); // a merchant key without reconciliation:read
  });

  it('Thai by Accept-Language or ?lang=th', async () => {
    const c = await signIn(stack.app, a.key);
    const th = await request(stack.app.callback()).get('/console/payments?lang=th').set('Cookie', c.cookie);
    expect(th.text).toContain('<html lang="th">');
    expect(th.text).toContain('การชำระเงิน');
  });
});
