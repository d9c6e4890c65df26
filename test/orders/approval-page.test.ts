/**
 * The approval page of a costlier substitution in a real browser: Debian's Chromium headless
 * (/usr/bin/chromium, as test/checkout/browser.test.ts), on a real HTTP server over the test
 * stack. English and Thai, approve and decline: the button's form POST reaches the order's
 * workflow and the page then shows the outcome; no CSP violation or script error on the way.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestStack, type TestStack } from '../support/stack';
import { newKey, paidQr, request } from '../payments/support';
import { serve } from '../checkout/support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let stack: TestStack;
let key: string;
let server: Awaited<ReturnType<typeof serve>>;
let browser: Browser;
beforeAll(async () => {
  stack = await createTestStack({ env: { ORDER_APPROVAL_THRESHOLD: '0', ORDER_APPROVAL_TIMEOUT_S: '600' } });
  ({ key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
  server = await serve(stack.app);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.close();
});

/** A paid QR order with a 12.50 THB costlier substitution: its approval link's path and id. */
async function approvalLink(description: string) {
  const { orderId } = await paidQr(stack, key, 100, 'op');
  const res = await request(stack.app.callback())
    .post(`/orders/${orderId}/adjustments`)
    .set('X-API-Key', key)
    .send({ lines: [{ description, amount: 12.5, reason: 'substitution' }] });
  const { url, approvalId } = res.body.body.adjustments[0].lines[0].approval;
  return { orderId, path: new URL(url).pathname, approvalId: approvalId as string };
}

async function open(path: string, locale: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  const res = await page.goto(`${server.base}${path}`);
  expect(res?.status()).toBe(200);
  return { page, errors };
}

const statusOf = async (approvalId: string) =>
  (await stack.db('order_approvals').where({ id: approvalId }).first()).status;

describe('the approval page in headless Chromium', () => {
  it('English: shows the substitution and its price difference; Approve approves it', async () => {
    const { path, approvalId } = await approvalLink('Organic milk 1 L instead of house brand');
    const { page, errors } = await open(path, 'en-US');
    expect(await page.textContent('h1')).toBe('Approve a substitution');
    expect(await page.textContent('#description')).toBe('Organic milk 1 L instead of house brand');
    expect(await page.textContent('#amount')).toMatch(/^\+(THB|฿)\s?12\.50$/);
    expect(await page.textContent('#status')).toBe('The shop is waiting for your decision.');
    await Promise.all([page.waitForURL(/\?lang=en$/), page.click('#approve')]);
    expect(await page.getAttribute('main', 'data-status')).toBe('approved');
    expect(await page.textContent('#status')).toBe('You approved the substitution. Thank you!');
    expect(await page.locator('#approve').count()).toBe(0);
    expect(await statusOf(approvalId)).toBe('approved');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('Thai: the page in Thai; ปฏิเสธ (decline) declines it', async () => {
    const { path, approvalId } = await approvalLink('นมออร์แกนิก 1 ลิตร แทนนมยี่ห้อร้าน');
    const { page, errors } = await open(path, 'th-TH');
    expect(await page.getAttribute('html', 'lang')).toBe('th');
    expect(await page.textContent('h1')).toBe('อนุมัติสินค้าทดแทน');
    expect(await page.textContent('#description')).toBe('นมออร์แกนิก 1 ลิตร แทนนมยี่ห้อร้าน');
    expect(await page.textContent('#decline')).toBe('ปฏิเสธ');
    await Promise.all([page.waitForURL(/\?lang=th$/), page.click('#decline')]);
    expect(await page.getAttribute('main', 'data-status')).toBe('declined');
    expect(await page.textContent('#status')).toBe('คุณปฏิเสธสินค้าทดแทนแล้ว ไม่มีการเรียกเก็บเงินส่วนนี้');
    expect(await statusOf(approvalId)).toBe('declined');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a tampered link shows the invalid-link page (404), in Thai for a Thai browser', async () => {
    const { path } = await approvalLink('Rice 5 kg: another brand');
    const context = await browser.newContext({ locale: 'th-TH' });
    const page = await context.newPage();
    const res = await page.goto(`${server.base}${path.slice(0, -2)}xx`);
    expect(res?.status()).toBe(404);
    expect(await page.textContent('#status')).toBe('ลิงก์อนุมัตินี้ไม่ถูกต้อง');
    await context.close();
  });
});
