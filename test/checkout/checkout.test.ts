/**
 * The hosted checkout over HTTP on the real stack: checkoutUrl and returnUrl at creation, the
 * page and its doors (a tampered, expired or borrowed token is refused), the QR image, the
 * assets, and the live status events fed by LISTEN/NOTIFY. The browser tests are browser.test.ts.
 */
import pg from 'pg';
import request from 'supertest';
import { qrImage } from '../../src/qr-image';
import { signCheckoutToken, verifyCheckoutToken } from '../../src/checkout/token';
import { chooseLang } from '../../src/checkout/page';
import { ConfigError, loadConfig } from '../../src/config';
import { capturingLogger, createTestStack, waitFor, type TestStack } from '../support/stack';
import { gatewayWith, newKey, paymentError, rowOf, storedRef1 } from '../payments/support';
import { openEvents, qrCallback, qrPayment, serve } from './support';

let stack: TestStack;
let key: string;
const log = capturingLogger();
let server: Awaited<ReturnType<typeof serve>>;
beforeAll(async () => {
  stack = await createTestStack({
    env: { SHOP_ORIGIN: 'https://shop.example,http://localhost:5173' },
    logger: log.logger,
  });
  ({ key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
  server = await serve(stack.app);
});
afterAll(async () => {
  await server.close();
  await stack.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  request(stack.app.callback()).get(path).set(headers);

describe('POST /qrpayment: checkoutUrl and returnUrl', () => {
  it('returns a signed checkoutUrl on PUBLIC_BASE_URL and keeps an allowed returnUrl', async () => {
    const p = await qrPayment(stack.app, key, { returnUrl: 'https://shop.example/orders/1?x=1' });
    expect(p.checkoutUrl).toMatch(/^http:\/\/127\.0\.0\.1:3000\/checkout\/pay_[0-9a-f]{32}\.[0-9a-z]+\.[\w-]{22}$/);
    expect(verifyCheckoutToken(stack.config.identity.secret, p.token, Date.now())).toEqual({
      ok: true,
      paymentId: p.paymentId,
    });
    expect((await rowOf(stack.db, p.orderId)).details.returnUrl).toBe('https://shop.example/orders/1?x=1');
    const page = await get(`/checkout/${p.token}`);
    expect(page.text).toContain('href="https://shop.example/orders/1?x=1"');
  });

  it.each([
    ['another origin', 'https://evil.example/orders/1'],
    ['another port of the shop', 'https://shop.example:8443/orders/1'],
    ['http instead of https', 'http://shop.example/orders/1'],
    ['not http(s)', 'javascript:alert(1)'],
  ])('refuses a returnUrl on %s with 400 and writes nothing', async (_, returnUrl) => {
    const orderId = `ord-ret-${Math.random().toString(36).slice(2, 10)}`;
    const res = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u-1', customerId: 'c-1', amount: 10, returnUrl });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError('INVALID_INPUT'));
    expect(await rowOf(stack.db, orderId)).toBeUndefined();
  });
});

describe('CHECKOUT_RETURN_ORIGINS', () => {
  it('defaults to the origins of SHOP_ORIGIN, and must list origins when set', () => {
    const origins = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }).checkout.returnOrigins;
    expect(origins({ SHOP_ORIGIN: 'https://shop.example/, https://m.shop.example/app' })).toEqual([
      'https://shop.example',
      'https://m.shop.example',
    ]);
    expect(origins({ CHECKOUT_RETURN_ORIGINS: 'https://a.example,https://b.example:8443/' })).toEqual([
      'https://a.example',
      'https://b.example:8443',
    ]);
    for (const bad of ['https://a.example/path', 'a.example', '*']) {
      const load = () => loadConfig({ NODE_ENV: 'test', CHECKOUT_RETURN_ORIGINS: bad });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/CHECKOUT_RETURN_ORIGINS: .* is not an origin/);
    }
  });
});

describe('GET /checkout/{token}', () => {
  it('shows the amount, merchant, reference and countdown in English or Thai, with a strict CSP', async () => {
    const p = await qrPayment(stack.app, key, { amount: 123.5 });
    const en = await get(`/checkout/${p.token}`, { 'Accept-Language': 'en-US,en;q=0.9' });
    expect(en.status).toBe(200);
    expect(en.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(en.headers['content-security-policy']).toContain("default-src 'none'");
    expect(en.headers['content-security-policy']).toContain("script-src 'self'");
    expect(en.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(en.headers['referrer-policy']).toBe('no-referrer');
    expect(en.headers['cache-control']).toBe('no-store');
    expect(en.text).toContain('<html lang="en">');
    expect(en.text).toContain('Pay with PromptPay');
    expect(en.text).toContain('SALA MARKET');
    expect(en.text).toMatch(/id="amount">[^<]*123\.50</);
    expect(en.text).toContain(`<dt>Order reference</dt><dd id="order">${p.orderId}</dd>`);
    expect(en.text).toContain(
      `<dt>Payment reference</dt><dd id="reference">${await storedRef1(stack.db, p.paymentId)}</dd>`,
    );
    expect(en.text).toMatch(/id="countdown" role="timer"[^>]*>1[45]:[0-5]\d</);
    expect(en.text).toContain('role="status" aria-live="polite"');
    expect(en.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"]*\.(js|css|svg|png|woff2?)/); // nothing third-party
    const th = await get(`/checkout/${p.token}`, { 'Accept-Language': 'th-TH,th;q=0.9,en;q=0.5' });
    expect(th.text).toContain('<html lang="th">');
    expect(th.text).toContain('ชำระเงินด้วยพร้อมเพย์');
    expect(th.headers['content-language']).toBe('th');
    // switchable: ?lang= wins over Accept-Language, and the page links to the other language
    const switched = await get(`/checkout/${p.token}?lang=en`, { 'Accept-Language': 'th' });
    expect(switched.text).toContain('<html lang="en">');
    expect(th.text).toContain('<a href="?lang=en" hreflang="en" lang="en">English</a>');
  });

  it('chooses the language by Accept-Language weight, English when neither is asked for', () => {
    expect(chooseLang(undefined, 'th;q=0.4, en;q=0.8')).toBe('en');
    expect(chooseLang(undefined, 'fr, th;q=0.5')).toBe('th');
    expect(chooseLang(undefined, 'fr, de')).toBe('en');
    expect(chooseLang(undefined, '')).toBe('en');
    expect(chooseLang('th', 'en')).toBe('th');
    expect(chooseLang(['th', 'en'], 'en')).toBe('en');
  });

  it('refuses a tampered token, another payment under this tag, a foreign key, and an expired link', async () => {
    const mine = await qrPayment(stack.app, key);
    const other = await qrPayment(stack.app, key);
    const [id, exp, tag] = mine.token.split('.');
    const flip = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
    const refused = [
      `${other.paymentId}.${exp}.${tag}`, // another order's id with this link's tag
      `${id}.${(parseInt(exp, 36) + 86400).toString(36)}.${tag}`, // a later expiry
      `${id}.${exp}.${flip(tag)}`,
      signCheckoutToken('another-secret-of-at-least-32-characters!!', mine.paymentId, Date.now() + 60_000),
      id,
      'assets',
    ];
    for (const token of refused) {
      for (const path of [`/checkout/${token}`, `/checkout/${token}/qr.png`, `/checkout/${token}/events`]) {
        const res = await get(path);
        expect([path, res.status]).toEqual([path, 404]);
        expect(res.text).not.toContain(await storedRef1(stack.db, mine.paymentId));
        expect(res.text).not.toContain(await storedRef1(stack.db, other.paymentId));
      }
    }
    // the same link an hour after the payment expired (QR_EXPIRY_S 900 s): 410 Gone
    const later = gatewayWith(stack, {}, { clock: () => Date.now() + (900 + 3600 + 5) * 1000 });
    const gone = await request(later.callback()).get(`/checkout/${mine.token}`).set('Accept-Language', 'en');
    expect(gone.status).toBe(410);
    expect(gone.text).toContain('This payment link has expired.');
    expect((await request(later.callback()).get(`/checkout/${mine.token}/events`)).status).toBe(410);
    // and within that hour it still opens
    const soon = gatewayWith(stack, {}, { clock: () => Date.now() + (900 + 3000) * 1000 });
    expect((await request(soon.callback()).get(`/checkout/${mine.token}`)).status).toBe(200);
  });

  it('serves the payment QR as a PNG and its assets from this origin', async () => {
    const p = await qrPayment(stack.app, key);
    const png = await get(`/checkout/${p.token}/qr.png`).buffer(true);
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect(`data:image/png;base64,${(png.body as Buffer).toString('base64')}`).toBe(qrImage(p.payload));
    for (const [file, type] of [
      ['checkout.js', 'application/javascript; charset=utf-8'],
      ['checkout.css', 'text/css; charset=utf-8'],
      ['thai-qr-payment.svg', 'image/svg+xml'],
    ]) {
      const res = await get(`/checkout/assets/${file}`).buffer(true);
      expect([file, res.status, res.headers['content-type']]).toEqual([file, 200, type]);
    }
    expect((await get('/checkout/assets/..%2Fpage.ts')).status).toBe(404);
    expect((await get('/checkout/assets/toString')).status).toBe(404);
  });
});

describe('GET /checkout/{token}/events', () => {
  it('sends the status at once, then the change the callback makes, and ends on a final status', async () => {
    const p = await qrPayment(stack.app, key);
    const events = await openEvents(`${server.base}/checkout/${p.token}/events`);
    try {
      expect(events.status).toBe(200);
      expect(await events.next()).toBe('pending');
      const sent = Date.now();
      expect((await qrCallback(stack, p, 'success')).status).toBe(200);
      expect(await events.next(5000)).toBe('paid');
      expect(Date.now() - sent).toBeLessThan(1000);
      await events.ended; // the server ends the stream on a final status
      // a page opened afterwards gets the final status and the end at once
      const again = await openEvents(`${server.base}/checkout/${p.token}/events`);
      expect(await again.next()).toBe('paid');
      await again.ended;
    } finally {
      events.close();
    }
  });

  it('delivers one change to every open page of the payment, over one LISTEN connection', async () => {
    const p = await qrPayment(stack.app, key);
    const pages = await Promise.all(
      Array.from({ length: 5 }, () => openEvents(`${server.base}/checkout/${p.token}/events`)),
    );
    try {
      for (const page of pages) expect(await page.next()).toBe('pending');
      const listeners = await stack.db.raw(
        "select count(*)::int as n from pg_stat_activity where query = 'LISTEN payment_status' and datname = current_database()",
      );
      expect(listeners.rows[0].n).toBe(1);
      expect((await qrCallback(stack, p, 'failed')).status).toBe(200);
      for (const page of pages) expect(await page.next()).toBe('failed');
    } finally {
      pages.forEach((page) => page.close());
    }
  });

  it('announces status changes only of a payment a page has watched (no NOTIFY for the others)', async () => {
    const seen: string[] = [];
    const conn = (stack.db.client as { config: { connection: string | pg.ClientConfig } }).config.connection;
    const listen = new pg.Client(typeof conn === 'string' ? { connectionString: conn } : conn);
    await listen.connect();
    listen.on('notification', (n) => seen.push(n.payload ?? ''));
    try {
      await listen.query('LISTEN payment_status');
      const unwatched = await qrPayment(stack.app, key);
      const watched = await qrPayment(stack.app, key);
      const page = await openEvents(`${server.base}/checkout/${watched.token}/events`);
      expect(await page.next()).toBe('pending');
      expect((await stack.db('payments').where({ id: watched.paymentId }).first()).status_watched).toBe(true);
      page.close();
      expect((await qrCallback(stack, unwatched, 'success')).status).toBe(200);
      await waitForRow(unwatched.paymentId, 'paid');
      // the page has left: the payment stays watched, its change is still announced
      expect((await qrCallback(stack, watched, 'failed')).status).toBe(200);
      await waitFor(async () => seen.length > 0, 10_000, 'the watched payment announced');
      expect(seen).toEqual([`${watched.paymentId} failed`]);
      expect((await stack.db('payments').where({ id: unwatched.paymentId }).first()).status_watched).toBe(false);
    } finally {
      await listen.end();
    }
  });

  it('refuses a 21st open page of one payment (429), and takes one again when a page leaves', async () => {
    const p = await qrPayment(stack.app, key);
    const url = `${server.base}/checkout/${p.token}/events`;
    const pages = await Promise.all(Array.from({ length: 20 }, () => openEvents(url)));
    try {
      for (const page of pages) expect(await page.next()).toBe('pending');
      const extra = await openEvents(url);
      expect(extra.status).toBe(429);
      await extra.ended;
      pages.pop()!.close();
      // the server notices the closed page: a new one is taken
      const again = await waitForStatus(url, 200);
      expect(await again.next()).toBe('pending');
      again.close();
    } finally {
      pages.forEach((page) => page.close());
    }
  });

  it('ends the open streams when the LISTEN connection is lost; a reconnect reads the status afresh', async () => {
    const p = await qrPayment(stack.app, key);
    const url = `${server.base}/checkout/${p.token}/events`;
    const page = await openEvents(url);
    expect(await page.next()).toBe('pending');
    await stack.db.raw(
      "select pg_terminate_backend(pid) from pg_stat_activity where query = 'LISTEN payment_status' and datname = current_database()",
    );
    await page.ended; // the browser's EventSource reconnects after the stream's retry (3 s)
    // the change made while no page listened is not lost: the reconnect sends the status now
    expect((await qrCallback(stack, p, 'success')).status).toBe(200);
    await waitForRow(p.paymentId, 'paid');
    const again = await openEvents(url);
    expect(await again.next()).toBe('paid');
    await again.ended;
  });
});

/** An event stream of `url` once the server answers it with `status` (it may take a moment to see a page leave). */
async function waitForStatus(url: string, status: number) {
  for (let i = 0; ; i++) {
    const s = await openEvents(url);
    if (s.status === status || i === 40) return s;
    s.close();
    await new Promise((r) => setTimeout(r, 50));
  }
}

const waitForRow = (paymentId: string, status: string) =>
  waitFor(async () => (await stack.db('payments').where({ id: paymentId }).first())?.status === status, 10_000, status);

describe('/openapi.json', () => {
  it('documents the page, its QR and its events, with no API key asked', async () => {
    const doc = (await get('/openapi.json')).body as { paths: Record<string, { get?: { security?: unknown[] } }> };
    for (const p of ['/checkout/{token}', '/checkout/{token}/qr.png', '/checkout/{token}/events'])
      expect(doc.paths[p]?.get?.security).toEqual([]);
  });
});

describe('the access log', () => {
  it("masks the link's token: it opens the payment's page", async () => {
    const p = await qrPayment(stack.app, key);
    for (const path of [`/checkout/${p.token}`, `/checkout/${p.token}/qr.png`, '/checkout/assets/checkout.css'])
      expect((await get(path)).status).toBe(200);
    const paths = log.lines.filter((l) => l.msg === 'request').map((l) => l.path);
    expect(paths).toEqual(
      expect.arrayContaining(['/checkout/[token]', '/checkout/[token]/qr.png', '/checkout/assets/checkout.css']),
    );
    expect(log.raw.join('')).not.toContain(p.token);
  });
});
