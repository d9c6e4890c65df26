/**
 * The staff console at /console: server-rendered pages over the other slices' services (passed
 * in here, never their tables): payments, an order with its timeline and a refund form, payment
 * links, webhooks and dead letters, reconciliation days, an overview. A session sees and does
 * exactly what its key's scopes allow, and only its key's objects; every change needs the
 * session's CSRF token and writes an audit entry (docs/console.md).
 */
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { chooseLang, type Lang } from '../../checkout/page';
import type { ApiKeyInfo } from '../../domain/api-keys';
import { AppError, ErrorCode } from '../../domain/errors';
import type { AppDeps } from '../../http/deps';
import { clockOf, guards, HttpUrl, Id } from '../../http/guards';
import { apiKeyInfoById, lookupApiKey } from '../../http/middleware/api-key';
import { z } from '../../http/openapi';
import { validate } from '../../http/validate';
import { PaymentLinkIn } from '../../links/schemas';
import { PaymentListQuery } from '../../payments/schemas';
import { RefundRequest } from '../../refunds/schemas';
import { orderTimeline } from '../timeline';
import { countLatePayments } from '../../payments/late-payments-repository';
import { linkServiceOf, paymentServiceOf, refundServiceOf } from '../services';
import { listDeadLetters, listEndpoints, rotateSecret, updateEndpoint, createEndpoint } from '../../webhooks/endpoints';
import { replayDeadLetter } from '../../webhooks/routes';
import { dayExceptions, resolveDayException } from '../../reconciliation/routes';
import { openExceptionCount } from '../../reconciliation/repository';
import { RESOLUTIONS, SETTLEMENT_PROVIDERS } from '../../reconciliation';
import { urlProblem } from '../../webhooks/url-policy';
import { auditOfOrder, endSession, insertSession, openSession, touchSession, writeAudit } from './repository';
import {
  CONSOLE_IDLE_MS,
  cookieOf,
  csrfOf,
  LANG_COOKIE,
  newToken,
  PRE_COOKIE,
  sameToken,
  SESSION_COOKIE,
  sessionIdOf,
  setCookie,
} from './session';
import { CONSOLE_CSS } from './style';
import { csrfField, err, esc, layout, ok, table, text, type TextKey, type Viewer } from './views';
import { overviewPage } from './overview';

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface ConsoleState {
  lang: Lang;
  sessionId: string;
  key: ApiKeyInfo;
  viewer: Viewer;
}
declare module 'koa' {
  interface DefaultState {
    console?: ConsoleState;
  }
}

const bodyOf = (ctx: Context): Record<string, string> => {
  const b = ctx.request.body;
  if (!b || typeof b !== 'object') return {};
  return Object.fromEntries(
    Object.entries(b as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : '']),
  );
};
const baht = (n: number) => n.toFixed(2);
const when = (iso: string | null | undefined) => (iso ? esc(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')) : '');

export function consoleRoutes(deps: AppDeps): Router {
  const r = new Router({ prefix: '/console' });
  const { db, config } = deps;
  const clock = clockOf(deps);
  const { limited } = guards(deps);
  const secure = config.publicBaseUrl.startsWith('https:');
  const secret = config.identity.secret;
  const payments = paymentServiceOf(deps);
  const refunds = refundServiceOf(deps);
  const links = linkServiceOf(deps);
  const urlPolicy = { ...config.webhooks.urlPolicy, ...(deps.resolve ? { resolve: deps.resolve } : {}) };

  const langOf = (ctx: Context): Lang => {
    const q = ctx.query.lang;
    if (q === 'th' || q === 'en') {
      setCookie(ctx, LANG_COOKIE, q, { secure, maxAgeS: 365 * 86400 });
      return q;
    }
    return chooseLang(cookieOf(ctx, LANG_COOKIE), ctx.get('Accept-Language'));
  };
  const headers = (ctx: Context) => {
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Cache-Control', 'no-store');
  };
  const render = (ctx: Context, status: number, page: string, title: string, body: string, flash?: string) => {
    headers(ctx);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    const s = ctx.state.console;
    ctx.body = layout(s?.lang ?? langOf(ctx), page, title, body, s?.viewer, flash);
  };
  const t = (ctx: Context, k: TextKey, v?: Record<string, unknown>) =>
    text(ctx.state.console?.lang ?? langOf(ctx), k, v);

  /** The session, its key (reloaded: a revoked key ends it), the idle timeout, CSRF on changes, the scope. */
  const session =
    (scope?: string) =>
    async (ctx: Context, next: Next): Promise<void> => {
      const lang = langOf(ctx);
      const token = cookieOf(ctx, SESSION_COOKIE);
      const s = token && /^[A-Za-z0-9_-]{43}$/.test(token) ? await openSession(db, sessionIdOf(token)) : undefined;
      const now = clock();
      const key = s ? await apiKeyInfoById(db, s.apiKeyId) : undefined;
      if (!s || !key || now - s.lastSeenAt.getTime() > CONSOLE_IDLE_MS) {
        if (s) await endSession(db, s.id, new Date(now));
        if (ctx.method === 'GET') {
          headers(ctx);
          ctx.status = 303;
          ctx.redirect(`/console/sign-in${s ? '?expired=1' : ''}`);
          return;
        }
        ctx.state.console = undefined;
        return render(ctx, 401, 'sign-in', text(lang, 'signIn'), '', err(text(lang, 'expired')));
      }
      const csrf = csrfOf(secret, 'session', s.id);
      ctx.state.console = {
        lang,
        sessionId: s.id,
        key,
        viewer: { keyName: key.name, mode: key.mode, scopes: key.scopes, csrf },
      };
      if (ctx.method === 'POST' && !sameToken(bodyOf(ctx).csrf, csrf))
        return render(ctx, 403, 'refused', t(ctx, 'csrf'), '', err(t(ctx, 'csrf')));
      await touchSession(db, s.id, new Date(now));
      if (scope && !key.scopes.includes(scope))
        return render(ctx, 403, 'refused', t(ctx, 'forbidden'), '', err(`${t(ctx, 'forbidden')}: ${scope}`));
      try {
        await next();
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        render(ctx, e.status, 'error', e.status === 404 ? t(ctx, 'notFound') : String(e.status), '', err(e.message));
      }
    };
  const stateOf = (ctx: Context) => ctx.state.console!;
  const audit = (ctx: Context, action: string, orderId: string | undefined, detail: Record<string, unknown>) => {
    const s = stateOf(ctx);
    return writeAudit(db, {
      apiKeyId: s.key.id,
      sessionId: s.sessionId,
      action,
      orderId,
      detail: { ...detail, keyName: s.key.name },
      at: new Date(clock()),
    });
  };
  const form = (action: string, inner: string, v: Viewer, cls = '') =>
    `<form method="post" action="${esc(action)}"${cls ? ` class="${cls}"` : ''}>${csrfField(v)}${inner}</form>`;

  r.get('/assets/console.css', (ctx) => {
    headers(ctx);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = CONSOLE_CSS;
  });

  // ---- sign-in, sign-out ----
  const signInPage = (ctx: Context, status: number, flash?: string) => {
    const pre = newToken();
    setCookie(ctx, PRE_COOKIE, pre, { secure, maxAgeS: 3600 });
    render(
      ctx,
      status,
      'sign-in',
      t(ctx, 'signIn'),
      `<p>${esc(t(ctx, 'signInHelp'))}</p>
<form method="post" action="/console/sign-in" class="signin">
<input type="hidden" name="csrf" value="${esc(csrfOf(secret, 'pre', pre))}">
<label>${esc(t(ctx, 'apiKey'))}<input name="apiKey" type="password" autocomplete="off" required></label>
<p><button type="submit">${esc(t(ctx, 'signIn'))}</button></p></form>`,
      flash,
    );
  };
  r.get('/', (ctx) => {
    headers(ctx);
    ctx.status = 303;
    ctx.redirect('/console/overview');
  });
  r.get('/sign-in', (ctx) => signInPage(ctx, 200, ctx.query.expired ? err(t(ctx, 'expired')) : undefined));
  r.post('/sign-in', limited, async (ctx) => {
    const pre = cookieOf(ctx, PRE_COOKIE);
    const b = bodyOf(ctx);
    if (!pre || !sameToken(b.csrf, csrfOf(secret, 'pre', pre))) return signInPage(ctx, 403, err(t(ctx, 'csrf')));
    const found = await lookupApiKey(db, b.apiKey?.trim());
    if (found.status !== 'valid') return signInPage(ctx, 401, err(t(ctx, 'badKey')));
    const token = newToken();
    const id = sessionIdOf(token);
    await insertSession(db, { id, apiKeyId: found.key.id, at: new Date(clock()) });
    await writeAudit(db, {
      apiKeyId: found.key.id,
      sessionId: id,
      action: 'session.sign_in',
      detail: { keyName: found.key.name },
      at: new Date(clock()),
    });
    setCookie(ctx, SESSION_COOKIE, token, { secure });
    setCookie(ctx, PRE_COOKIE, '', { secure, maxAgeS: 0 });
    headers(ctx);
    ctx.status = 303;
    ctx.redirect('/console/overview');
  });
  r.post('/sign-out', session(), async (ctx) => {
    await audit(ctx, 'session.sign_out', undefined, {});
    await endSession(db, stateOf(ctx).sessionId, new Date(clock()));
    setCookie(ctx, SESSION_COOKIE, '', { secure, maxAgeS: 0 });
    headers(ctx);
    ctx.status = 303;
    ctx.redirect('/console/sign-in');
  });

  // ---- payments ----
  r.get('/payments', session('payments:read'), async (ctx) => {
    const s = stateOf(ctx);
    const q = ctx.query as Record<string, string | undefined>;
    if (q.order?.trim()) {
      headers(ctx);
      ctx.status = 303;
      ctx.redirect(`/console/orders/${encodeURIComponent(q.order.trim())}`);
      return;
    }
    const day = (d: string | undefined, add = 0) =>
      d && /^\d{4}-\d{2}-\d{2}$/.test(d)
        ? new Date(Date.parse(`${d}T00:00:00+07:00`) + add * 86400_000).toISOString()
        : undefined;
    const query = validate(PaymentListQuery, {
      ...(q.status ? { status: q.status } : {}),
      ...(q.method ? { method: q.method } : {}),
      ...(day(q.from) ? { created_gte: day(q.from) } : {}),
      ...(day(q.to, 1) ? { created_lt: day(q.to, 1) } : {}),
      limit: '25',
      ...(q.after ? { starting_after: q.after } : {}),
    });
    const page = await payments.listPayments(query, s.key);
    const sel = (name: string, values: string[]) =>
      `<label>${esc(t(ctx, name as TextKey))}<select name="${name}"><option value="">${esc(t(ctx, 'any'))}</option>${values
        .map((v) => `<option${q[name] === v ? ' selected' : ''}>${v}</option>`)
        .join('')}</select></label>`;
    const keep = new URLSearchParams(
      Object.entries({ status: q.status, method: q.method, from: q.from, to: q.to }).filter(
        (e): e is [string, string] => Boolean(e[1]),
      ),
    );
    if (page.nextCursor) keep.set('after', page.nextCursor);
    render(
      ctx,
      200,
      'payments',
      t(ctx, 'paymentsPage'),
      `<form method="get" action="/console/payments" class="filters">
<label>${esc(t(ctx, 'orderId'))}<input name="order" id="order" value=""></label>
${sel('status', ['pending', 'paid', 'failed', 'expired', 'refunded'])}
${sel('method', ['qr', 'card', 'wallet', 'cardnet', 'bankapp'])}
<label>${esc(t(ctx, 'mode'))}<select name="mode"><option>${esc(s.key.mode)}</option></select></label>
<label>${esc(t(ctx, 'from'))}<input type="date" name="from" value="${esc(q.from)}"></label>
<label>${esc(t(ctx, 'to'))}<input type="date" name="to" value="${esc(q.to)}"></label>
<button type="submit">${esc(t(ctx, 'search'))}</button></form>
${table(
  [t(ctx, 'orderId'), t(ctx, 'status'), t(ctx, 'method'), t(ctx, 'amount'), t(ctx, 'refunded'), t(ctx, 'created')],
  page.payments.map((p) => [
    `<a href="/console/orders/${encodeURIComponent(p.orderId)}">${esc(p.orderId)}</a>`,
    esc(p.status),
    esc(p.method),
    baht(p.amount),
    baht(p.refundedAmount),
    when(p.createdAt),
  ]),
  s.lang,
)}
${page.hasMore ? `<p><a id="next" href="/console/payments?${esc(keep.toString())}">${esc(t(ctx, 'next'))}</a></p>` : ''}`,
    );
  });

  // ---- an order ----
  const orderPage = async (ctx: Context, orderId: string, status = 200, flash?: string) => {
    const s = stateOf(ctx);
    const p = await payments.paymentStatus(orderId, s.key);
    const tl = await orderTimeline(deps, orderId, s.key);
    const audited = await auditOfOrder(db, s.key.id, orderId);
    const entries = [
      ...tl.entries,
      ...audited.map((a) => ({ at: a.at.toISOString(), type: `console.${a.action}`, details: a.detail })),
    ].sort((a, b) => a.at.localeCompare(b.at));
    const refundable = Math.round((p.amount - p.refundedAmount) * 100) / 100;
    const canRefund = s.key.scopes.includes('payments:write') && p.status === 'paid' && refundable > 0;
    const hooks = entries.filter((e) => e.type.startsWith('webhook.'));
    render(
      ctx,
      status,
      'order',
      `${t(ctx, 'order')} ${orderId}`,
      `<dl class="facts">
<dt>${esc(t(ctx, 'status'))}</dt><dd id="status">${esc(p.status)}</dd>
<dt>${esc(t(ctx, 'method'))}</dt><dd>${esc(p.method)}</dd>
<dt>${esc(t(ctx, 'mode'))}</dt><dd>${esc(p.mode)}</dd>
<dt>${esc(t(ctx, 'amount'))}</dt><dd id="amount">${baht(p.amount)} THB</dd>
<dt>${esc(t(ctx, 'refunded'))}</dt><dd id="refunded">${baht(p.refundedAmount)} THB</dd>
<dt>${esc(t(ctx, 'created'))}</dt><dd>${when(p.createdAt)}</dd>
</dl>
${
  canRefund
    ? `<h2>${esc(t(ctx, 'refund'))}</h2>${form(
        `/console/orders/${encodeURIComponent(orderId)}/refund`,
        `<input type="hidden" name="idem" value="${newToken().slice(0, 32)}">
<label>${esc(t(ctx, 'refundAmount'))}<input name="amount" id="refund-amount" inputmode="decimal" placeholder="${baht(refundable)}"></label>
<label>${esc(t(ctx, 'reason'))}<input name="reason" maxlength="500"></label>
<label><span><input type="checkbox" name="confirm" value="yes" id="refund-confirm"> ${esc(t(ctx, 'confirm'))}</span></label>
<button type="submit" class="danger" id="refund-submit">${esc(t(ctx, 'refund'))}</button>`,
        s.viewer,
        'filters',
      )}`
    : ''
}
<h2>${esc(t(ctx, 'webhookAttempts'))}</h2>
${table(
  [t(ctx, 'when'), t(ctx, 'what'), t(ctx, 'details')],
  hooks.map((e) => [when(e.at), esc(e.type), `<code>${esc(JSON.stringify(e.details))}</code>`]),
  s.lang,
)}
<h2>${esc(t(ctx, 'timeline'))}</h2>
${table(
  [t(ctx, 'when'), t(ctx, 'what'), t(ctx, 'details')],
  entries.map((e) => [when(e.at), esc(e.type), `<code>${esc(JSON.stringify(e.details))}</code>`]),
  s.lang,
)}`,
      flash,
    );
  };
  r.get('/orders/:orderId', session('payments:read'), async (ctx) => {
    const { orderId } = validate(z.object({ orderId: Id }), { orderId: ctx.params.orderId });
    await orderPage(ctx, orderId);
  });
  r.post('/orders/:orderId/refund', session('payments:write'), async (ctx) => {
    const { orderId } = validate(z.object({ orderId: Id }), { orderId: ctx.params.orderId });
    const b = bodyOf(ctx);
    if (b.confirm !== 'yes') return orderPage(ctx, orderId, 400, err(t(ctx, 'needConfirm')));
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(b.idem ?? '')) throw new AppError(ErrorCode.INVALID_INPUT, 'idem is missing');
    const req = validate(RefundRequest, {
      orderId,
      ...(b.amount?.trim() ? { amount: b.amount.trim() } : {}),
      ...(b.reason?.trim() ? { reason: b.reason.trim() } : {}),
    });
    const done = await refunds.refund(req, stateOf(ctx).key, `console-${b.idem}`);
    await audit(ctx, 'refund', orderId, { refundId: done.refundId, amount: done.amount, status: done.status });
    await orderPage(ctx, orderId, 200, ok(t(ctx, 'refundDone', { status: done.status, amount: baht(done.amount) })));
  });

  // ---- payment links ----
  const linksPage = async (ctx: Context, status = 200, flash?: string) => {
    const s = stateOf(ctx);
    const after = typeof ctx.query.after === 'string' ? ctx.query.after : undefined;
    const page = await links.list({ limit: 25, ...(after ? { starting_after: after } : {}) }, s.key);
    const write = s.key.scopes.includes('payments:write');
    render(
      ctx,
      status,
      'links',
      t(ctx, 'links'),
      `${
        write
          ? form(
              '/console/links',
              `<label>${esc(t(ctx, 'amount'))}<input name="amount" id="link-amount" inputmode="decimal" required></label>
<label>${esc(t(ctx, 'description'))}<input name="description" id="link-description" maxlength="200" required></label>
<label>${esc(t(ctx, 'expiresAt'))}<input type="datetime-local" name="expiresAt"></label>
<label><span><input type="checkbox" name="reusable" value="yes"> ${esc(t(ctx, 'reusable'))}</span></label>
<button type="submit" id="link-create">${esc(t(ctx, 'create'))}</button>`,
              s.viewer,
              'filters',
            )
          : ''
      }
${table(
  [t(ctx, 'url'), t(ctx, 'description'), t(ctx, 'amount'), t(ctx, 'status'), t(ctx, 'paymentsPage'), ''],
  page.links.map((l) => [
    `<a class="link-url" href="${esc(new URL(l.url).pathname)}">${esc(l.url)}</a>`,
    esc(l.description),
    baht(l.amount),
    esc(l.status),
    l.payments
      .map((p) => `<a href="/console/orders/${encodeURIComponent(p.orderId)}">${esc(p.orderId)}</a> ${esc(p.status)}`)
      .join('<br>'),
    write && l.status === 'active'
      ? form(
          `/console/links/${encodeURIComponent(l.id)}/deactivate`,
          `<button type="submit" class="danger">${esc(t(ctx, 'deactivate'))}</button>`,
          s.viewer,
          'inline',
        )
      : '',
  ]),
  s.lang,
)}
${page.hasMore ? `<p><a href="/console/links?after=${esc(page.nextCursor)}">${esc(t(ctx, 'next'))}</a></p>` : ''}`,
      flash,
    );
  };
  r.get('/links', session('payments:read'), (ctx) => linksPage(ctx));
  r.post('/links', session('payments:write'), async (ctx) => {
    const b = bodyOf(ctx);
    const input = validate(PaymentLinkIn, {
      amount: b.amount?.trim() || undefined,
      description: b.description,
      reusable: b.reusable === 'yes',
      ...(b.expiresAt ? { expiresAt: `${b.expiresAt.length === 16 ? `${b.expiresAt}:00` : b.expiresAt}+07:00` } : {}),
    });
    const link = await links.create(input, stateOf(ctx).key);
    await audit(ctx, 'link.create', undefined, { linkId: link.id, amount: link.amount });
    await linksPage(ctx, 200, ok(`${t(ctx, 'created1')} ${link.url}`));
  });
  r.post('/links/:id/deactivate', session('payments:write'), async (ctx) => {
    const link = await links.deactivate(ctx.params.id, stateOf(ctx).key);
    await audit(ctx, 'link.deactivate', undefined, { linkId: link.id });
    await linksPage(ctx, 200, ok(t(ctx, 'deactivated')));
  });

  // ---- webhooks ----
  const webhooksPage = async (ctx: Context, status = 200, flash?: string) => {
    const s = stateOf(ctx);
    const eps = await listEndpoints(db, s.key, { limit: 100 });
    const dead = await listDeadLetters(db, s.key, { status: 'dead', limit: 50 });
    render(
      ctx,
      status,
      'webhooks',
      t(ctx, 'webhooks'),
      `<h2>${esc(t(ctx, 'endpoints'))}</h2>
${form(
  '/console/webhooks/endpoints',
  `<label>URL<input name="url" type="url" required></label><label>${esc(t(ctx, 'description'))}<input name="description" maxlength="200"></label><button type="submit">${esc(t(ctx, 'create'))}</button>`,
  s.viewer,
  'filters',
)}
${table(
  ['URL', t(ctx, 'description'), t(ctx, 'status'), ''],
  eps.items.map((e) => [
    esc(e.url),
    esc(e.description),
    e.disabled ? 'disabled' : 'enabled',
    form(
      `/console/webhooks/endpoints/${encodeURIComponent(e.id)}/${e.disabled ? 'enable' : 'disable'}`,
      `<button type="submit">${esc(t(ctx, e.disabled ? 'enable' : 'disable'))}</button>`,
      s.viewer,
      'inline',
    ) +
      ' ' +
      form(
        `/console/webhooks/endpoints/${encodeURIComponent(e.id)}/rotate`,
        `<button type="submit">${esc(t(ctx, 'rotate'))}</button>`,
        s.viewer,
        'inline',
      ),
  ]),
  s.lang,
)}
<h2>${esc(t(ctx, 'deadLetters'))}</h2>
${table(
  [t(ctx, 'created'), t(ctx, 'orderId'), 'URL', t(ctx, 'details'), ''],
  dead.items.map((d) => [
    when(d.createdAt),
    `<a href="/console/orders/${encodeURIComponent(d.orderId)}">${esc(d.orderId)}</a>`,
    esc(d.url),
    esc(`${d.reason}; ${d.attempts} attempts; ${d.lastStatusCode ?? d.lastError ?? ''}`),
    form(
      `/console/webhooks/dead-letters/${encodeURIComponent(d.id)}/replay`,
      `<button type="submit" class="replay">${esc(t(ctx, 'replay'))}</button>`,
      s.viewer,
      'inline',
    ),
  ]),
  s.lang,
)}`,
      flash,
    );
  };
  r.get('/webhooks', session('webhooks:manage'), (ctx) => webhooksPage(ctx));
  r.post('/webhooks/endpoints', session('webhooks:manage'), async (ctx) => {
    const b = bodyOf(ctx);
    const input = validate(z.object({ url: HttpUrl, description: z.string().max(200).optional() }), {
      url: b.url,
      ...(b.description ? { description: b.description } : {}),
    });
    const problem = await urlProblem(input.url, urlPolicy); // the API's destination policy
    if (problem) throw new AppError(ErrorCode.INVALID_INPUT, `url: ${problem}`, { field: 'url' });
    const created = await createEndpoint(db, config, stateOf(ctx).key, input);
    await audit(ctx, 'webhook.endpoint_create', undefined, { endpointId: created.id, url: created.url });
    await webhooksPage(ctx, 200, ok(t(ctx, 'rotated', { secret: created.secret })));
  });
  r.post('/webhooks/endpoints/:id/:action', session('webhooks:manage'), async (ctx) => {
    const { id, action } = ctx.params;
    const key = stateOf(ctx).key;
    if (action === 'rotate') {
      const rotated = await rotateSecret(db, config, key, id, clock());
      if (!rotated) throw new AppError(ErrorCode.NOT_FOUND, 'No such webhook endpoint', { id });
      await audit(ctx, 'webhook.endpoint_rotate', undefined, { endpointId: id });
      return webhooksPage(ctx, 200, ok(t(ctx, 'rotated', { secret: rotated.secret })));
    }
    if (action !== 'disable' && action !== 'enable') throw new AppError(ErrorCode.NOT_FOUND, 'No such action');
    const ep = await updateEndpoint(db, key, id, { disabled: action === 'disable' });
    if (!ep) throw new AppError(ErrorCode.NOT_FOUND, 'No such webhook endpoint', { id });
    await audit(ctx, `webhook.endpoint_${action}`, undefined, { endpointId: id });
    await webhooksPage(ctx);
  });
  r.post('/webhooks/dead-letters/:id/replay', session('webhooks:manage'), async (ctx) => {
    const out = await replayDeadLetter(deps, stateOf(ctx).key, ctx.params.id);
    await audit(ctx, 'webhook.replay', out.deadLetter.orderId, {
      deadLetterId: out.deadLetter.id,
      status: out.deadLetter.status,
    });
    await webhooksPage(ctx, 200, ok(t(ctx, 'replayed', { status: out.deadLetter.status })));
  });

  // ---- reconciliation (operator keys) ----
  const reconPage = async (ctx: Context, provider: string, date: string, status = 200, flash?: string) => {
    const s = stateOf(ctx);
    const manage = s.key.scopes.includes('reconciliation:manage');
    const day = provider && date ? await dayExceptions(db, { provider, mode: s.key.mode, date }) : undefined;
    render(
      ctx,
      status,
      'reconciliation',
      t(ctx, 'reconciliation'),
      `<form method="get" action="/console/reconciliation" class="filters">
<label>${esc(t(ctx, 'provider'))}<select name="provider">${SETTLEMENT_PROVIDERS.map(
        (p) => `<option${p === provider ? ' selected' : ''}>${p}</option>`,
      ).join('')}</select></label>
<label>${esc(t(ctx, 'date'))}<input type="date" name="date" value="${esc(date)}" required></label>
<button type="submit">${esc(t(ctx, 'show'))}</button></form>
${day ? `<p id="run-status">${esc(day.status)} · ${esc(JSON.stringify(day.summary))}</p>` : ''}
${
  day
    ? `<h2>${esc(t(ctx, 'exceptions'))}</h2>${table(
        ['id', 'outcome', t(ctx, 'orderId'), t(ctx, 'amount'), t(ctx, 'details'), t(ctx, 'resolve')],
        day.rows.map((x) => [
          esc(x.id),
          esc(x.outcome),
          x.orderId ? `<a href="/console/orders/${encodeURIComponent(x.orderId)}">${esc(x.orderId)}</a>` : '',
          baht(x.amount),
          esc(x.detail),
          x.resolution
            ? `${esc(x.resolution)}: ${esc(x.resolutionNote)}`
            : manage
              ? form(
                  `/console/reconciliation/${encodeURIComponent(provider)}/${encodeURIComponent(date)}/exceptions/${encodeURIComponent(x.id)}/resolve`,
                  `<select name="resolution">${RESOLUTIONS.map((r) => `<option>${r}</option>`).join('')}</select>
<input name="note" maxlength="2000" required placeholder="${esc(t(ctx, 'note'))}"><button type="submit" class="resolve">${esc(t(ctx, 'resolve'))}</button>`,
                  s.viewer,
                  'inline',
                )
              : '',
        ]),
        s.lang,
      )}`
    : ''
}`,
      flash,
    );
  };
  r.get('/reconciliation', session('reconciliation:read'), async (ctx) => {
    const q = ctx.query as Record<string, string | undefined>;
    await reconPage(ctx, q.provider ?? '', q.date ?? '');
  });
  r.post('/reconciliation/:provider/:date/exceptions/:id/resolve', session('reconciliation:manage'), async (ctx) => {
    const { provider, date, id } = ctx.params;
    const b = bodyOf(ctx);
    const key = stateOf(ctx).key;
    const row = await resolveDayException(
      db,
      { provider, mode: key.mode, date },
      id,
      { resolution: b.resolution as (typeof RESOLUTIONS)[number], note: b.note ?? '' },
      key.id,
    );
    await audit(ctx, 'reconciliation.resolve', row.orderId ?? undefined, {
      rowId: row.id,
      resolution: row.resolution,
      note: row.resolutionNote,
    });
    await reconPage(ctx, provider, date, 200, ok(t(ctx, 'resolved')));
  });

  // ---- overview ----
  r.get('/overview', session('payments:read'), async (ctx) => {
    const s = stateOf(ctx);
    const body = await overviewPage({
      lang: s.lang,
      now: clock(),
      listPayments: (q) => payments.listPayments(q, s.key),
      deadLetters: async () =>
        s.key.scopes.includes('webhooks:manage')
          ? (await listDeadLetters(db, s.key, { status: 'dead', limit: 200 })).items.length
          : undefined,
      latePayments: () => countLatePayments(db, s.key, 'review'),
      openExceptions: async () =>
        s.key.scopes.includes('reconciliation:read') ? openExceptionCount(db, s.key.mode) : undefined,
    });
    render(ctx, 200, 'overview', t(ctx, 'overview'), body);
  });

  return r;
}
