/**
 * /docs as a reader uses it: Swagger UI in headless Chromium (/usr/bin/chromium, as the checkout's
 * browser tests), Authorize with an API key, then "Try it out" on POST /qrpayment with the example
 * the reference prefills: the request reaches the gateway serving the page (servers: '/').
 */
import { chromium, type Browser } from 'playwright-core';
import { createTestStack, type TestStack } from '../support/stack';
import { newKey } from '../payments/support';
import { serve } from '../checkout/support';

jest.setTimeout(120_000);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'];

let stack: TestStack;
let key: string;
let server: Awaited<ReturnType<typeof serve>>;
let browser: Browser;
beforeAll(async () => {
  stack = await createTestStack();
  ({ key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
  server = await serve(stack.app);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.close();
});

it('Try it out sends the prefilled example to this gateway and shows its answer', async () => {
  const page = await browser.newPage();
  await page.goto(`${server.base}/docs`);
  await page.locator('button.authorize').first().click();
  await page.locator('.modal-ux input[type=text], .modal-ux input[type=password]').first().fill(key);
  await page.locator('.modal-ux button.authorize').first().click();
  await page.locator('.modal-ux button.btn-done').first().click();

  const op = page.locator('[id$="-postQrpayment"]').first();
  await op.locator('.opblock-summary').first().click();
  await op.locator('button.try-out__btn').click();
  const body = op.locator('textarea.body-param__text');
  const prefilled = JSON.parse(await body.inputValue()) as { orderId: string; amount: number };
  expect(prefilled).toMatchObject({ orderId: 'ORD-2001', amount: 120.5 });
  const orderId = `ORD-DOCS-${Date.now()}`;
  await body.fill(JSON.stringify({ ...prefilled, orderId })); // its returnUrl too: on the shop origin
  await op.locator('button.execute').click();

  const answer = op.locator('.live-responses-table .response-col_description pre').first();
  await answer.waitFor({ timeout: 30_000 });
  const shown = JSON.parse(await answer.innerText()) as { statusCode: number; body: Record<string, unknown> };
  expect(shown.statusCode).toBe(200);
  expect(shown.body).toMatchObject({ orderId, method: 'qr', amount: 120.5, status: 'pending' });
  expect(await op.locator('.request-url pre').first().innerText()).toBe(`${server.base}/qrpayment`);
  await page.close();
});
