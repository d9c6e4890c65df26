/**
 * The hosted PromptPay checkout (docs/checkout.md): GET /checkout/{token} (the page),
 * /checkout/{token}/qr.png (its QR), /checkout/{token}/events (server-sent status events fed by
 * the LISTEN hub, never by polling) and /checkout/assets/{file}. No API key: the signed token is
 * the door, and it opens exactly one payment's page (./token.ts); nothing is read from Postgres
 * before its tag checks.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../http/deps';
import { clockOf } from '../http/guards';
import { registry, z } from '../http/openapi';
import { qrReferenceOf, type Payment, type PaymentRecords } from '../payments';
import { qrImage } from '../qr-image';
import { createStatusHub } from './hub';
import { checkoutPage, chooseLang, FINAL, linkErrorPage } from './page';
import { verifyCheckoutToken } from './token';

/** Open event streams per payment and per process: past them a page gets 429 / 503 (its browser retries). */
export const MAX_STREAMS_PER_PAYMENT = 20;
export const MAX_STREAMS = 20_000;
/** A comment line on every open stream this often, so proxies and NATs keep the connection. */
export const KEEPALIVE_MS = 25_000;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ASSETS: Record<string, string> = {
  'checkout.js': 'application/javascript; charset=utf-8',
  'checkout.css': 'text/css; charset=utf-8',
  'thai-qr-payment.svg': 'image/svg+xml',
  'icon.svg': 'image/svg+xml',
};
/** Read once when the routes are built: a build without them (npm run build copies them) fails at start. */
const loadAssets = (): Map<string, Buffer> =>
  new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(path.join(__dirname, 'assets', name))]));

const secure = (ctx: Context) => {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
};

const Token = z.object({
  token: z.string().openapi({
    description: 'the signed token of the `checkoutUrl` that `POST /qrpayment` returned',
    example: 'pay_9d85008165c15b44c1dfeac49cca3667.towf51.hsWihesnW4dBh-IHEzO7OA',
  }),
});
const text = (description: string, example: string) => ({
  description,
  content: { 'text/plain': { schema: z.string(), example } },
});
const page = (title: string) => `<!doctype html><html lang="en"><head><title>${title}</title></head>…</html>`;
const linkRefusals = {
  404: {
    description: 'a link that is not valid (tampered, or no QR payment)',
    content: { 'text/html': { schema: z.string(), example: page('No such checkout') } },
  },
  410: {
    description: 'a link past its expiry',
    content: { 'text/html': { schema: z.string(), example: page('This checkout has expired') } },
  },
};
registry.registerPath({
  method: 'get',
  path: '/checkout/{token}',
  operationId: 'checkoutPage',
  summary: 'The hosted checkout page of one QR payment (HTML; Thai or English by Accept-Language or ?lang=th|en)',
  description: 'No API key: the signed token opens exactly one payment. See docs/checkout.md.',
  tags: ['payment'],
  security: [],
  request: { params: Token, query: z.object({ lang: z.enum(['th', 'en']).optional() }) },
  responses: {
    200: {
      description: 'the page',
      content: { 'text/html': { schema: z.string(), example: page('Pay 120.50 THB with PromptPay') } },
    },
    ...linkRefusals,
  },
});
registry.registerPath({
  method: 'get',
  path: '/checkout/{token}/qr.png',
  operationId: 'checkoutQr',
  summary: "The PromptPay QR of the checkout's payment (PNG)",
  tags: ['payment'],
  security: [],
  request: { params: Token },
  responses: {
    200: { description: 'the QR', content: { 'image/png': { schema: z.string().openapi({ format: 'binary' }) } } },
    404: text('a link that is not valid', 'No such QR code'),
    410: text('a link past its expiry', 'No such QR code'),
  },
});
registry.registerPath({
  method: 'get',
  path: '/checkout/{token}/events',
  operationId: 'checkoutEvents',
  summary: 'Server-sent events `status` ({"status": ...}) of the payment, ending on paid, failed or expired',
  tags: ['payment'],
  security: [],
  request: { params: Token },
  responses: {
    200: {
      description: 'an event stream',
      content: {
        'text/event-stream': {
          schema: z.string(),
          example: 'event: status\ndata: {"status":"pending"}\n\nevent: status\ndata: {"status":"paid"}\n\n',
        },
      },
    },
    404: text('a link that is not valid', 'No such checkout'),
    410: text('a link past its expiry', 'No such checkout'),
    429: text(
      `${MAX_STREAMS_PER_PAYMENT} pages of this payment are open already`,
      'Too many open pages of this payment',
    ),
    503: text('the process holds its most open streams', 'Too many open checkout pages'),
  },
});

export function checkoutRoutes(
  deps: Pick<AppDeps, 'clock' | 'config' | 'db' | 'logger'> & { payments: Pick<PaymentRecords, 'byId' | 'watch'> },
): Router {
  const r = new Router();
  const clock = clockOf(deps);
  const assets = loadAssets();
  const conn = (deps.db.client as { config: { connection: unknown } }).config.connection;
  const hub = createStatusHub({
    connection: typeof conn === 'string' ? { connectionString: conn } : (conn as object),
    logger: deps.logger,
  });

  /** The token's QR payment, or why there is none (a bad tag and an unknown payment look alike). */
  const paymentOf = async (
    token: string,
  ): Promise<{ ok: true; p: Payment } | { ok: false; reason: 'invalid' | 'expired' }> => {
    const check = verifyCheckoutToken(deps.config.identity.secret, token, clock());
    if (!check.ok) return check;
    const p = await deps.payments.byId(check.paymentId);
    return p && p.method === 'qr' ? { ok: true, p } : { ok: false, reason: 'invalid' };
  };

  r.get('/checkout/assets/:file', (ctx) => {
    const body = Object.hasOwn(ASSETS, ctx.params.file) ? assets.get(ctx.params.file) : undefined;
    secure(ctx);
    if (!body) {
      ctx.status = 404;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'No such checkout asset';
      return;
    }
    ctx.type = ASSETS[ctx.params.file];
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  });

  r.get('/checkout/:token', async (ctx) => {
    const lang = chooseLang(ctx.query.lang, ctx.get('Accept-Language'));
    secure(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Vary', 'Accept-Language');
    ctx.set('Content-Language', lang);
    ctx.type = 'text/html; charset=utf-8';
    const found = await paymentOf(ctx.params.token);
    if (!found.ok) {
      ctx.status = found.reason === 'expired' ? 410 : 404;
      ctx.body = linkErrorPage(lang, found.reason);
      return;
    }
    const { p } = found;
    const returnUrl = typeof p.details.returnUrl === 'string' ? p.details.returnUrl : null;
    const purpose = p.details.purpose as { kind?: unknown; orderId?: unknown; reasons?: unknown } | undefined;
    ctx.body = checkoutPage({
      ...(purpose?.kind === 'order_topup' && typeof purpose.orderId === 'string' && Array.isArray(purpose.reasons)
        ? { purpose: { orderId: purpose.orderId, reasons: purpose.reasons.map(String) } }
        : {}),
      lang,
      token: ctx.params.token,
      status: p.status,
      amountSatang: p.amountSatang,
      merchantName: deps.config.payments.merchantName,
      orderId: p.orderId,
      reference: qrReferenceOf(p),
      remainingMs: Math.max(0, (p.expiresAt?.getTime() ?? 0) - clock()),
      returnUrl,
    });
  });

  r.get('/checkout/:token/qr.png', async (ctx) => {
    secure(ctx);
    const found = await paymentOf(ctx.params.token);
    const payload = found.ok ? (found.p.details.qr as { payload?: string } | undefined)?.payload : undefined;
    if (!payload) {
      ctx.status = found.ok || found.reason === 'invalid' ? 404 : 410;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'No such QR code';
      return;
    }
    ctx.type = 'image/png';
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = Buffer.from(qrImage(payload).split(',')[1], 'base64');
  });

  // ---- server-sent events, written straight to the response (no stream in between) ----
  const streams = new Set<ServerResponse>();
  const perPayment = new Map<string, number>();
  let keepalive: NodeJS.Timeout | undefined;

  r.get('/checkout/:token/events', async (ctx) => {
    secure(ctx);
    ctx.set('Cache-Control', 'no-store');
    const found = await paymentOf(ctx.params.token);
    const refuse = (status: number, text: string) => {
      ctx.status = status; // EventSource gives up on a non-200 answer (the page says so)
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = text;
    };
    if (!found.ok) return refuse(found.reason === 'expired' ? 410 : 404, 'No such checkout');
    const { p } = found;
    if (streams.size >= MAX_STREAMS) return refuse(503, 'Too many open checkout pages');
    if ((perPayment.get(p.id) ?? 0) >= MAX_STREAMS_PER_PAYMENT)
      return refuse(429, 'Too many open pages of this payment');

    const res = ctx.res;
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('X-Accel-Buffering', 'no');
    ctx.respond = false;
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    res.writeHead(200);
    res.write('retry: 3000\n\n');

    let last = '';
    let ended = false;
    let unsubscribe: (() => void) | undefined;
    // ending a 200 stream makes the browser reconnect (after `retry`) and read the status afresh
    const end = () => {
      if (ended) return;
      ended = true;
      unsubscribe?.();
      streams.delete(res);
      const n = (perPayment.get(p.id) ?? 1) - 1;
      if (n > 0) perPayment.set(p.id, n);
      else perPayment.delete(p.id);
      if (streams.size === 0 && keepalive) keepalive = void clearInterval(keepalive);
      res.end();
    };
    const send = (status: string) => {
      if (ended || status === last) return;
      last = status;
      res.write(`event: status\ndata: ${JSON.stringify({ status })}\n\n`);
      if (FINAL.has(status)) end();
    };
    streams.add(res);
    perPayment.set(p.id, (perPayment.get(p.id) ?? 0) + 1);
    keepalive ??= setInterval(() => {
      for (const s of streams) s.write(': keepalive\n\n');
    }, KEEPALIVE_MS).unref();
    ctx.req.on('close', end);
    try {
      unsubscribe = await hub.subscribe(p.id, { onStatus: send, onLost: end });
    } catch (err) {
      deps.logger.warn({ err }, 'checkout: cannot LISTEN for payment status');
      return end();
    }
    if (ended) return unsubscribe(); // the page left, or the connection was lost, while LISTEN started
    // the status now that LISTEN is on, read as the payment is marked watched (its changes are
    // announced from then on): a change between the page's read and LISTEN is not lost
    const now = await deps.payments.watch(p.id).catch(() => undefined);
    if (now) send(now.status);
    else end();
  });

  return r;
}
