/**
 * The console as a person uses it, in Debian's headless Chromium (as test/checkout/browser.test.ts):
 * sign in, find an order, refund part of it, replay a dead letter, create a payment link and pay
 * it through the sandbox (the QR provider's signed callback), sign out; another merchant's session
 * sees none of it; a form without its CSRF token is refused. Each page's structure is compared
 * with docs/images/console-structure.json; CONSOLE_SCREENSHOTS=docs/images rewrites it and the
 * screenshots (docs/console.md says what "current" means).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { createTestStack, type TestStack } from '../support/stack';
import { newKey, paidQr } from '../payments/support';
import { qrCallback, serve } from '../checkout/support';
import { startReceiver, type Receiver } from '../webhooks/helpers';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { RECONCILIATION_WORKFLOW, settlementKey } from '../../src/reconciliation';
import { createSettlementStore } from '../../src/reconciliation/files';
import { taskQueueOf } from '../../src/domain/temporal';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { generateDay, settlementEnv } from '../reconciliation/generate';

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
const DOCS = path.join(__dirname, '..', '..', 'docs', 'images');
const STRUCTURE = path.join(DOCS, 'console-structure.json');
const SHOTS = process.env.CONSOLE_SCREENSHOTS
  ? path.resolve(process.env.CONSOLE_SCREENSHOTS)
  : fs.mkdtempSync(path.join(os.tmpdir(), 'console-shots-'));
const DESKTOP = { width: 1200, height: 900 };

let stack: TestStack;
let server: Awaited<ReturnType<typeof serve>>;
let browser: Browser;
let receiver: Receiver;
let smtp: SmtpSink;
let shop: { key: string; id: string };
let rival: { key: string; id: string };
const structure: Record<string, string[]> = {};
beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await createTestStack({ env: settlementEnv(smtp.url) });
  const scopes = ['payments:write', 'payments:read', 'webhooks:manage'];
  shop = await newKey(stack.db, { scopes, name: 'Sala Market staff' });
  rival = await newKey(stack.db, { scopes, name: 'Other shop' });
  receiver = await startReceiver(500);
  await createEndpoint(stack.db, stack.config, { id: shop.id, mode: 'sandbox' }, { url: receiver.url });
  server = await serve(stack.app);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.stop();
  await stack?.close();
  await smtp?.stop();
});

/** What a page is made of, without its data: headings, form fields and buttons, in order. */
async function structureOf(page: Page): Promise<string[]> {
  return page.$$eval(
    'main h1, main h2, main form, main input, main select, main button, main table th, main svg',
    (els) =>
      els.map((e) => {
        const el = e as unknown as {
          tagName: string;
          id: string;
          textContent: string | null;
          getAttribute(n: string): string | null;
        };
        const tag = el.tagName.toLowerCase();
        if (tag === 'h1' || tag === 'h2') return tag;
        if (tag === 'form')
          return `form ${(el.getAttribute('action') ?? '')
            .split('/')
            .map((seg) => (/\d/.test(seg) || seg.length > 20 ? '{id}' : seg))
            .join('/')}`;
        if (tag === 'svg') return `svg#${el.id}`;
        return `${tag}${el.getAttribute('name') ? `[${el.getAttribute('name')}]` : ''}${tag === 'th' ? `:${el.textContent}` : ''}`;
      }),
  );
}
/** The page's screenshot (docs/images/console-<name>.png when regenerating) and its structure, once per name. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage: true });
  structure[name] ??= [...new Set(await structureOf(page))];
}

async function signIn(key: string, locale = 'en-US'): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP, locale });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(`${server.base}/console`);
  expect(page.url()).toBe(`${server.base}/console/sign-in`);
  if (key === shop.key) await shoot(page, 'sign-in');
  await page.fill('input[name="apiKey"]', key);
  await page.click('button[type="submit"]');
  await page.waitForURL(`${server.base}/console/overview`);
  expect(errors).toEqual([]); // no CSP violation
  return page;
}

it('a shop person: finds an order, refunds part of it, replays a dead letter, makes and pays a link', async () => {
  const paid = await paidQr(stack, shop.key, 300, 'ord-console');
  const page = await signIn(shop.key);
  await page.waitForSelector('svg#chart-count');
  await shoot(page, 'overview');

  // find the order, refund part of it
  await page.click('nav.main a[href="/console/payments"]');
  await shoot(page, 'payments');
  await page.fill('#order', paid.orderId);
  await page.click('form.filters button[type="submit"]');
  await page.waitForURL(`${server.base}/console/orders/${paid.orderId}`);
  expect(await page.textContent('#status')).toBe('paid');
  await page.fill('#refund-amount', '20.50');
  await page.fill('input[name="reason"]', 'one item missing');
  await page.click('#refund-submit'); // not confirmed: refused, nothing refunded
  expect(await page.textContent('.err')).toContain('Tick the confirmation');
  await page.fill('#refund-amount', '20.50');
  await page.check('#refund-confirm');
  await page.click('#refund-submit');
  expect(await page.textContent('.msg')).toContain('Refund succeeded: 20.50 THB.');
  expect(await page.textContent('#refunded')).toBe('20.50 THB');
  expect(await page.textContent('main')).toContain('console.refund');
  await shoot(page, 'order');

  // the payment's webhook went dead (the receiver answered 500): replay it once the receiver is back
  await page.click('nav.main a[href="/console/webhooks"]');
  for (let i = 0; i < 60 && !(await page.$('button.replay')); i++) {
    await new Promise((r) => setTimeout(r, 1000));
    await page.reload();
  }
  receiver.status = 200;
  await page.click('button.replay');
  expect(await page.textContent('.msg')).toContain('Replayed: delivered.');
  await shoot(page, 'webhooks');
  await page.goto(`${server.base}/console/orders/${paid.orderId}`); // the replay is in the order's timeline
  expect(await page.textContent('main')).toContain('console.webhook.replay');

  // a payment link, paid through the sandbox
  await page.click('nav.main a[href="/console/links"]');
  await page.fill('#link-amount', '350');
  await page.fill('#link-description', 'Mango box, 2 kg');
  await page.click('#link-create');
  expect(await page.textContent('.msg')).toContain('Created.');
  const href = (await page.getAttribute('a.link-url', 'href'))!;
  await shoot(page, 'links');
  const payer = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'th-TH' });
  await payer.goto(`${server.base}${href}`);
  expect(await payer.textContent('#amount')).toContain('350');
  await payer.screenshot({ path: path.join(SHOTS, 'console-link-page-th.png'), fullPage: true });
  await payer.click('#pay');
  await payer.waitForURL(/\/checkout\//);
  await payer.waitForSelector('main[data-live="open"]');
  const linkRow = await stack.db('payment_links').where({ api_key_id: shop.id }).orderBy('created_at', 'desc').first();
  const orderId = `${linkRow.id}-1`;
  const { id: paymentId } = await stack.db('payments').where({ order_id: orderId }).first('id');
  const cb = await qrCallback(
    stack,
    { orderId, paymentId, amount: 350 } as Parameters<typeof qrCallback>[1],
    'success',
  );
  expect(cb.status).toBe(200);
  await payer.waitForSelector('main[data-status="paid"]', { timeout: 10_000 });
  await payer.goto(`${server.base}${href}`);
  expect(await payer.textContent('#status')).toContain('ชำระเงินแล้ว');
  await page.reload();
  expect(await page.textContent('main')).toContain(`${orderId} paid`);

  // the other merchant's session sees none of it
  const other = await signIn(rival.key);
  await other.goto(`${server.base}/console/payments`);
  expect(await other.textContent('main')).not.toContain(paid.orderId);
  const res = await other.goto(`${server.base}/console/orders/${paid.orderId}`);
  expect(res?.status()).toBe(404);
  await other.goto(`${server.base}/console/links`);
  expect(await other.textContent('main')).not.toContain('Mango box');
  await other.goto(`${server.base}/console/webhooks`);
  expect(await other.textContent('main')).not.toContain(paid.orderId);
  await other.close();

  // a change whose form lost its CSRF token is refused
  await page.goto(`${server.base}/console/links`);
  await page.fill('#link-amount', '1');
  await page.fill('#link-description', 'forged');
  await page.$eval('form.filters input[name="csrf"]', (el) => el.remove());
  await page.click('#link-create');
  expect(await page.textContent('.err')).toContain('not from this console');
  expect(await stack.db('payment_links').where({ description: 'forged' })).toEqual([]);

  // sign out: the session is over
  await page.click('header form button[type="submit"]');
  await page.waitForURL(`${server.base}/console/sign-in`);
  await page.goto(`${server.base}/console/payments`);
  expect(page.url()).toBe(`${server.base}/console/sign-in`);
  await page.context().close();
}, 150_000);

it('an operator resolves a reconciliation exception with a note, audited', async () => {
  const operator = await newKey(stack.db, {
    scopes: ['reconciliation:read', 'reconciliation:manage', 'payments:read'],
    name: 'Finance',
  });
  const date = '2025-04-02';
  const day = await generateDay(stack.db, 'promptpay', date, 40, `con${Date.now().toString(36)}`);
  await createSettlementStore(stack.config).put(settlementKey('promptpay', date), day.text);
  const run = await stack.client.workflow.start(RECONCILIATION_WORKFLOW, {
    taskQueue: taskQueueOf('background', stack.taskQueue),
    workflowId: `recon-console-${Date.now()}`,
    args: [{ provider: 'promptpay', mode: 'sandbox', date, fileWaitSeconds: 0, filePollSeconds: 1 }],
  });
  await run.result();
  const page = await signIn(operator.key);
  await page.click('nav.main a[href="/console/reconciliation"]');
  await page.selectOption('select[name="provider"]', 'promptpay');
  await page.fill('input[name="date"]', date);
  await page.click('form.filters button[type="submit"]');
  await page.waitForSelector('#run-status');
  const open = await page.$$('button.resolve');
  expect(open.length).toBeGreaterThan(0);
  await page.fill('form.inline input[name="note"] >> nth=0', 'bank fee confirmed by phone, ticket 4471');
  await page.click('button.resolve >> nth=0');
  expect(await page.textContent('.msg')).toContain('Resolved.');
  expect(await page.textContent('main')).toContain('accepted: bank fee confirmed by phone, ticket 4471');
  expect(await page.$$('button.resolve')).toHaveLength(open.length - 1);
  await shoot(page, 'reconciliation');
  const audit = await stack.db('console_audit').where({ api_key_id: operator.id, action: 'reconciliation.resolve' });
  expect(audit).toHaveLength(1);
  await page.context().close();
}, 120_000);

it('every page keeps the structure its screenshot shows (docs/images/console-structure.json)', () => {
  expect(Object.keys(structure).sort()).toEqual([
    'links',
    'order',
    'overview',
    'payments',
    'reconciliation',
    'sign-in',
    'webhooks',
  ]);
  if (process.env.CONSOLE_SCREENSHOTS) {
    fs.writeFileSync(STRUCTURE, JSON.stringify(structure));
    execFileSync(path.join(__dirname, '..', '..', 'node_modules', '.bin', 'prettier'), ['--write', STRUCTURE]); // as lint checks it
  }
  expect(structure).toEqual(JSON.parse(fs.readFileSync(STRUCTURE, 'utf8')));
});
