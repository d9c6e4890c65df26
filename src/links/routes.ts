/**
 * Payment links over HTTP: the API (POST/GET /payment-links, GET /payment-links/{id},
 * POST /payment-links/{id}/deactivate; the owner's key and mode, else 404) and the link page
 * GET /l/{code}, whose button (POST /l/{code}) makes a QR payment and redirects (303) to the
 * hosted checkout. No key on the page: its unguessable code is the door, as the checkout's token.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { chooseLang } from '../checkout';
import { sendSmallPage } from '../http/small-page';
import type { AppDeps } from '../http/deps';
import { apiErrors, guards, idempotencyHeader, rateLimitHeaders, security } from '../http/guards';
import { requireApiKey } from '../http/middleware/api-key';
import { registry, z } from '../http/openapi';
import { validate } from '../http/validate';
import { linkPage, type LinkPageState } from './page';
import { PaymentLinkIn, PaymentLinkList, PaymentLinkOut, PaymentLinkQuery } from './schemas';
import type { LinkService } from './service';

const ok = <T extends z.ZodTypeAny>(status: number, body: T, description: string) => ({
  [status]: {
    description,
    headers: rateLimitHeaders,
    content: { 'application/json': { schema: z.object({ statusCode: z.literal(status), body }) } },
  },
});
const IdParam = z.object({ id: z.string().openapi({ example: 'plink_5f1c9e2a7b3d40c8a1e6f2b9' }) });
const CodeParam = z.object({ code: z.string().openapi({ example: 'Qm9uZ1RoYWlNYW5nb0JveA' }) });
const common = { tags: ['payment-links'], security };
registry.registerPath({
  ...common,
  method: 'post',
  path: '/payment-links',
  summary: 'Create a payment link (single-use or reusable, optional expiry): its short url opens a payment page',
  request: {
    headers: idempotencyHeader,
    body: { content: { 'application/json': { schema: PaymentLinkIn } } },
  },
  responses: { ...ok(201, PaymentLinkOut, 'created'), ...apiErrors([400, 401, 403, 409, 413, 415, 422, 429]) },
});
registry.registerPath({
  ...common,
  method: 'get',
  path: '/payment-links',
  summary: "The key's payment links, newest first, each with its payments",
  request: { query: PaymentLinkQuery },
  responses: { ...ok(200, PaymentLinkList, 'links'), ...apiErrors([400, 401, 403, 429]) },
});
registry.registerPath({
  ...common,
  method: 'get',
  path: '/payment-links/{id}',
  summary: 'One payment link with its payments',
  request: { params: IdParam },
  responses: { ...ok(200, PaymentLinkOut, 'the link'), ...apiErrors([401, 403, 404, 429]) },
});
registry.registerPath({
  ...common,
  method: 'post',
  path: '/payment-links/{id}/deactivate',
  summary: 'Deactivate a payment link: its page takes no more payments (payments made stay)',
  request: { params: IdParam },
  responses: { ...ok(200, PaymentLinkOut, 'the link, deactivated'), ...apiErrors([401, 403, 404, 429]) },
});
const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: z.string(), example: '<!doctype html><html lang="en">…</html>' } },
});
registry.registerPath({
  method: 'get',
  path: '/l/{code}',
  operationId: 'paymentLinkPage',
  summary: 'The page of a payment link (HTML; Thai or English by Accept-Language or ?lang=th|en)',
  tags: ['payment-links'],
  security: [],
  request: { params: CodeParam, query: z.object({ lang: z.enum(['th', 'en']).optional() }) },
  responses: {
    200: html('the page: the amount and a pay button, or "already paid"'),
    404: html('no such link'),
    410: html('a link past its expiry or deactivated'),
  },
});
registry.registerPath({
  method: 'post',
  path: '/l/{code}',
  operationId: 'paymentLinkPay',
  summary: "The page's button: makes a QR payment of the link and redirects to its hosted checkout",
  tags: ['payment-links'],
  security: [],
  request: { params: CodeParam, query: z.object({ lang: z.enum(['th', 'en']).optional() }) },
  responses: {
    303: html('to the hosted checkout page of the payment (Location)'),
    200: html('already paid'),
    404: html('no such link'),
    410: html('a link past its expiry or deactivated'),
    429: { description: 'too many requests from this address' },
  },
});

export function linkRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db'> & { links: LinkService }): Router {
  const r = new Router();
  const { limited, idempotent } = guards(deps);
  const { links } = deps;

  r.post('/payment-links', limited, requireApiKey('payments:write'), idempotent, async (ctx) => {
    const input = validate(PaymentLinkIn, ctx.request.body);
    ctx.status = 201;
    ctx.body = { statusCode: 201, body: await links.create(input, ctx.state.apiKey!) };
  });
  r.get('/payment-links', limited, requireApiKey('payments:read'), async (ctx) => {
    const q = validate(PaymentLinkQuery, ctx.query);
    ctx.body = { statusCode: 200, body: await links.list(q, ctx.state.apiKey!) };
  });
  r.get('/payment-links/:id', limited, requireApiKey('payments:read'), async (ctx) => {
    ctx.body = { statusCode: 200, body: await links.get(ctx.params.id, ctx.state.apiKey!) };
  });
  r.post('/payment-links/:id/deactivate', limited, requireApiKey('payments:write'), async (ctx) => {
    ctx.body = { statusCode: 200, body: await links.deactivate(ctx.params.id, ctx.state.apiKey!) };
  });

  const page = (
    ctx: Context,
    status: number,
    state: LinkPageState,
    shown?: { code: string; description: string; amountSatang: number },
  ) => {
    const lang = chooseLang(ctx.query.lang, ctx.get('Accept-Language'));
    sendSmallPage(
      ctx,
      status,
      lang,
      linkPage({ merchantName: deps.config.payments.merchantName, ...shown, lang, state }),
    );
  };
  const statusOf = (state: LinkPageState) => (state === 'expired' || state === 'deactivated' ? 410 : 200);

  r.get('/l/:code', async (ctx) => {
    const found = await links.byCode(ctx.params.code);
    if (!found) return page(ctx, 404, 'invalid');
    const { link, state } = found;
    page(ctx, statusOf(state), state, {
      code: ctx.params.code,
      description: link.description,
      amountSatang: link.amountSatang,
    });
  });

  r.post('/l/:code', limited, async (ctx) => {
    const visit = await links.visit(ctx.params.code);
    if (!visit) return page(ctx, 404, 'invalid');
    if ('refused' in visit) return page(ctx, visit.refused === 'paid' ? 200 : 410, visit.refused);
    const lang = ctx.query.lang === 'th' || ctx.query.lang === 'en' ? `?lang=${ctx.query.lang}` : '';
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(new URL(visit.checkoutUrl).pathname + lang); // same origin as this page
  });

  return r;
}
