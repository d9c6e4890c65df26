/**
 * The hosted checkout page in a real browser: Debian's Chromium headless (/usr/bin/chromium, which
 * scripts/provision.sh --tests installs; playwright-core downloads nothing), on a real HTTP server over the
 * test stack. The QR on screen decodes to the payment's payload; a signed callback (or the expiry)
 * turns the open page paid, failed or expired within a second, without a reload. Screenshots go to
 * CHECKOUT_SCREENSHOTS (docs/images for docs/checkout.md), else to a temporary folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import jsQR from 'jsqr';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { createTestStack, type TestStack } from '../support/stack';
import { gatewayWith, newKey } from '../payments/support';
import { openEvents, qrCallback, qrPayment, serve, type QrCreated } from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// the closed network's usual errors (update checks, sync, QUIC) are switched off; playwright gives
// every launch a fresh profile folder of its own (its --user-data-dir), removed at close
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SHOTS = process.env.CHECKOUT_SCREENSHOTS
  ? path.resolve(process.env.CHECKOUT_SCREENSHOTS)
  : fs.mkdtempSync(path.join(os.tmpdir(), 'checkout-shots-'));
const PHONE = { width: 390, height: 844 };

let stack: TestStack;
let key: string;
let server: Awaited<ReturnType<typeof serve>>;
let browser: Browser;
beforeAll(async () => {
  stack = await createTestStack({ env: { SHOP_ORIGIN: 'https://shop.example' } });
  ({ key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
  server = await serve(stack.app);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  fs.mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.close();
});

const contexts: BrowserContext[] = [];
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});

/** The payment's page on a phone-sized screen in `locale`, its event stream open (or `live` as given). */
async function open(base: string, p: QrCreated, locale = 'en-US', live = 'open'): Promise<Page> {
  const context = await browser.newContext({ viewport: PHONE, locale });
  contexts.push(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  const res = await page.goto(`${base}${new URL(p.checkoutUrl).pathname}`);
  expect(res?.status()).toBe(200);
  await page.waitForSelector(`main[data-live="${live}"]`, { timeout: 10_000 });
  if (live === 'open') expect(errors).toEqual([]); // no CSP violation, no script error
  return page;
}

/** The QR as the browser drew it, decoded from a screenshot of the image. */
async function decodeQrOnScreen(page: Page): Promise<string | undefined> {
  const shot = await page.locator('#qr').screenshot();
  const { data, info } = await sharp(shot).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return jsQR(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)?.data;
}

/** ms from `t0` until the page shows `status` (fails after `limitMs`). */
async function turns(page: Page, status: string, t0: number, limitMs = 1000): Promise<number> {
  await page.waitForSelector(`main[data-status="${status}"]`, { timeout: limitMs + 2000 });
  return Date.now() - t0;
}

/**
 * The WCAG contrast ratio of an element's text against the first opaque background behind it
 * (page-side code as text: this project's TypeScript has no DOM types).
 */
const contrastOf = (page: Page, selector: string): Promise<number> =>
  page.evaluate(`(() => {
    const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const el = document.querySelector(${JSON.stringify(selector)});
    let bg = [255, 255, 255];
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) {
        bg = c.slice(0, 3);
        break;
      }
    }
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(bg)].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  })()`);
const activeElement = (page: Page, prop: 'id' | 'textContent'): Promise<string | null> =>
  page.evaluate(`document.activeElement && document.activeElement.${prop}`);

describe('the checkout page in headless Chromium', () => {
  it('shows the QR that decodes to the payment payload, and turns paid within a second of the callback', async () => {
    const p = await qrPayment(stack.app, key, { amount: 250.5, returnUrl: 'https://shop.example/orders/42' });
    const page = await open(server.base, p);
    expect(await page.textContent('h1')).toBe('Pay with PromptPay');
    expect(await page.textContent('#merchant')).toBe('SALA MARKET');
    expect(await page.textContent('#amount')).toMatch(/250\.50/);
    expect(await page.textContent('#status')).toBe('Waiting for your payment…');
    expect(await page.getAttribute('#status', 'aria-live')).toBe('polite');
    expect(await page.getAttribute('#qr', 'alt')).toMatch(/PromptPay QR code: .*250\.50 to SALA MARKET/);
    expect(await decodeQrOnScreen(page)).toBe(p.payload);
    // the countdown runs in the page
    const before = await page.textContent('#countdown');
    expect(before).toMatch(/^1[45]:[0-5]\d$/);
    await page.locator('#countdown', { hasNotText: before! }).waitFor({ timeout: 3000 });
    // phone-sized: nothing wider than the screen
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    const low: [string, number][] = [];
    for (const sel of ['h1', '#amount', '#status', 'figcaption', '.facts dt', '.lang a']) {
      const ratio = await contrastOf(page, sel);
      if (!(ratio >= 4.5)) low.push([sel, ratio]); // WCAG AA for body text
    }
    expect(low).toEqual([]);
    // keyboard: the language switch is the first stop
    await page.keyboard.press('Tab');
    expect(await activeElement(page, 'textContent')).toBe('ภาษาไทย');
    await page.screenshot({ path: path.join(SHOTS, 'checkout-pending-en.png'), fullPage: true });

    const t0 = Date.now();
    expect((await qrCallback(stack, p, 'success')).status).toBe(200);
    const ms = await turns(page, 'paid', t0);
    expect(ms).toBeLessThan(1000);
    expect(await page.textContent('#status')).toBe('Payment received. Thank you!');
    expect(await page.isHidden('#qr')).toBe(true);
    // the way back to the shop has the focus, and the page goes there by itself
    expect(await activeElement(page, 'id')).toBe('return');
    expect(await page.getAttribute('#return', 'href')).toBe('https://shop.example/orders/42');
    expect(await page.textContent('#returning')).toMatch(/Returning to the shop in [45] s/);
    expect(await contrastOf(page, '#status')).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: path.join(SHOTS, 'checkout-paid-en.png'), fullPage: true });
    // a reload shows the outcome without a stream
    await page.goto(page.url());
    expect(await page.getAttribute('main', 'data-status')).toBe('paid');
  });

  it('in Thai, turns failed within a second of a failed callback (sandbox amount .01)', async () => {
    const p = await qrPayment(stack.app, key, { amount: 99.01, returnUrl: 'https://shop.example/cart' });
    const page = await open(server.base, p, 'th-TH');
    expect(await page.getAttribute('html', 'lang')).toBe('th');
    expect(await page.textContent('h1')).toBe('ชำระเงินด้วยพร้อมเพย์');
    expect(await decodeQrOnScreen(page)).toBe(p.payload);
    await page.screenshot({ path: path.join(SHOTS, 'checkout-pending-th.png'), fullPage: true });
    const t0 = Date.now();
    expect((await qrCallback(stack, p, 'failed')).status).toBe(200);
    expect(await turns(page, 'failed', t0)).toBeLessThan(1000);
    expect(await page.textContent('#status')).toBe('การชำระเงินไม่สำเร็จ');
    expect(await page.isVisible('#return')).toBe(true);
    expect(await page.$('#returning')).toBeNull(); // only a paid page goes back by itself
    expect(await contrastOf(page, '#status')).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: path.join(SHOTS, 'checkout-failed-th.png'), fullPage: true });
    // switched to English by its link, the outcome stays
    await page.click('.lang a');
    await page.waitForSelector('html[lang="en"]');
    expect(await page.textContent('#status')).toBe('The payment did not go through.');
  });

  it('turns expired within a second of the payment row turning expired (sandbox amount .03: no callback)', async () => {
    const shortLived = gatewayWith(stack, { SHOP_ORIGIN: 'https://shop.example', QR_EXPIRY_S: '4' });
    const srv = await serve(shortLived);
    try {
      const p = await qrPayment(shortLived, key, { amount: 75.03 });
      const expiresAt = Date.parse((await stack.db('payments').where({ id: p.paymentId }).first()).expires_at);
      const page = await open(srv.base, p);
      expect(await page.textContent('#countdown')).toMatch(/^0:0[1-4]$/);
      // the workflow's timer and its write decide when the row turns expired; the page follows that write
      await turns(page, 'expired', expiresAt, 5000 + Math.max(0, expiresAt - Date.now()));
      const seen = Date.now();
      const event = await stack.db('payment_events').where({ payment_id: p.paymentId, to_status: 'expired' }).first();
      expect(seen - (event.created_at as Date).getTime()).toBeLessThan(1000);
      expect(await page.isHidden('#countdown')).toBe(true);
      expect(await page.textContent('#status')).toBe('This QR code has expired. No payment was taken.');
      expect(await page.$('#return')).toBeNull(); // no returnUrl given: no link
      await page.screenshot({ path: path.join(SHOTS, 'checkout-expired-en.png'), fullPage: true });
    } finally {
      await srv.close();
    }
  });

  it('a tampered link shows the invalid-link page, not a payment', async () => {
    const p = await qrPayment(stack.app, key);
    const context = await browser.newContext({ viewport: PHONE, locale: 'en-US' });
    contexts.push(context);
    const page = await context.newPage();
    const tampered = p.token.slice(0, -1) + (p.token.endsWith('A') ? 'Q' : 'A');
    const res = await page.goto(`${server.base}/checkout/${tampered}`);
    expect(res?.status()).toBe(404);
    expect(await page.textContent('h1')).toBe('This payment link is not valid.');
  });

  it('reconnects after the LISTEN connection is lost, and still turns paid', async () => {
    const p = await qrPayment(stack.app, key);
    const page = await open(server.base, p);
    await stack.db.raw(
      "select pg_terminate_backend(pid) from pg_stat_activity where query = 'LISTEN payment_status' and datname = current_database()",
    );
    await page.waitForSelector('main[data-live="lost"]', { timeout: 5000 });
    await page.waitForSelector('main[data-live="open"]', { timeout: 10_000 }); // the stream's retry: 3 s
    const t0 = Date.now();
    expect((await qrCallback(stack, p, 'success')).status).toBe(200);
    expect(await turns(page, 'paid', t0)).toBeLessThan(1000);
  });

  it('a page whose stream was refused (20 pages of the payment open) tries again and turns paid', async () => {
    const p = await qrPayment(stack.app, key);
    const url = `${server.base}/checkout/${p.token}/events`;
    const others = await Promise.all(Array.from({ length: 20 }, () => openEvents(url)));
    try {
      const page = await open(server.base, p, 'en-US', 'lost'); // 429: EventSource gives up, the page does not
      expect(await page.textContent('#status')).toBe('Connection lost, reconnecting…');
      others.pop()!.close();
      await page.waitForSelector('main[data-live="open"]', { timeout: 10_000 });
      const t0 = Date.now();
      expect((await qrCallback(stack, p, 'success')).status).toBe(200);
      expect(await turns(page, 'paid', t0)).toBeLessThan(1000);
    } finally {
      others.forEach((o) => o.close());
    }
  });
});
