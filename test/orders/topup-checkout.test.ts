/**
 * The hosted checkout page of a PromptPay order's top-up, in headless Chromium (as
 * test/checkout/browser.test.ts): finalize and GET /orders give its checkoutUrl; the page says what
 * the top-up is for (EN and TH); the bank's signed callback for the top-up turns the open page paid
 * and settles the order.
 */
import { chromium, type Browser } from 'playwright-core';
import { paymentWorkflowIdOf } from '../../src/payments';
import { createTestStack, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paidQr, request } from '../payments/support';
import { qrCallback, serve } from '../checkout/support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'];

let stack: TestStack;
let key: string;
let server: Awaited<ReturnType<typeof serve>>;
let browser: Browser;
beforeAll(async () => {
  stack = await createTestStack();
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
  server = await serve(stack.app);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.close();
});

const api = () => request(stack.app.callback());

it('a top-up has a hosted checkout link saying what it is for; paid through it, the order settles', async () => {
  const { orderId } = await paidQr(stack, key, 100, uniq('otc').slice(0, 12));
  await api()
    .post(`/orders/${orderId}/adjustments`)
    .set('X-API-Key', key)
    .send({
      lines: [
        { description: 'Chicken 1.2 kg weighed 1.34 kg', amount: 12.6, reason: 'weight' },
        { description: 'Organic milk instead of milk', amount: 7.9, reason: 'substitution' },
        { description: 'Rice: out of stock', amount: -5, reason: 'out_of_stock' },
      ],
    });
  const fin = await api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key);
  expect(fin.body.body).toMatchObject({ status: 'awaiting_topup', finalAmount: 115.5 });
  const [topUp] = fin.body.body.topUps;
  expect(topUp).toMatchObject({ amount: 15.5, checkoutUrl: expect.stringMatching(/\/checkout\/pay_/) });
  const viewed = (await api().get(`/orders/${orderId}`).set('X-API-Key', key)).body.body.topUps[0];
  expect(viewed.checkoutUrl).toBe(topUp.checkoutUrl);

  const path = new URL(topUp.checkoutUrl).pathname;
  const th = await (await browser.newContext({ locale: 'th-TH' })).newPage();
  expect((await th.goto(`${server.base}${path}`))?.status()).toBe(200);
  expect(await th.textContent('#purpose')).toBe(`ชำระส่วนเพิ่มของคำสั่งซื้อ ${orderId}: สินค้าทดแทน และ น้ำหนักสินค้า`);
  await th.context().close();

  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  expect((await page.goto(`${server.base}${path}`))?.status()).toBe(200);
  expect(await page.textContent('#purpose')).toBe(`Top-up for order ${orderId}: substitutions and weights`);
  expect(await page.textContent('#amount')).toContain('15.50');
  await page.waitForSelector('main[data-live="open"]', { timeout: 10_000 });

  const child = stack.client.workflow.getHandle(paymentWorkflowIdOf(topUp.paymentId));
  await waitFor(async () => !!(await child.describe().catch(() => undefined)), 20_000, 'top-up started');
  const cb = await qrCallback(
    stack,
    { orderId: topUp.orderId, paymentId: topUp.paymentId, amount: 15.5, payload: '', checkoutUrl: '', token: '' },
    'success',
  );
  expect(cb.status).toBe(200);
  await page.waitForSelector('main[data-status="paid"]', { timeout: 10_000 });
  await context.close();
  const settled = await waitFor(
    async () => {
      const o = (await api().get(`/orders/${orderId}`).set('X-API-Key', key)).body.body;
      return o.status === 'settled' ? o : undefined;
    },
    20_000,
    'settled',
  );
  expect(settled).toMatchObject({ paidAmount: 115.5, finalAmount: 115.5 });
  expect(settled.topUps[0].status).toBe('paid');
});

it('a payment without a purpose shows no purpose line', async () => {
  const created = await api()
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId: uniq('otc'), userId: 'u', customerId: 'c', amount: 10 });
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.base}${new URL(created.body.body.checkoutUrl).pathname}`);
  expect(await page.locator('#purpose').count()).toBe(0);
  await page.context().close();
});
