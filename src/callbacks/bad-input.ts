/**
 * A callback refused by the input rule (a field Postgres cannot store) is answered 400, so the
 * provider stops retrying. When it was correctly signed, a real provider sent a result we
 * could not take: the operator is e-mailed once per provider, order and field and window (the
 * alert throttle), and every refusal is logged.
 */
import type { Context } from 'koa';
import type { AlertThrottle } from '../alerts';
import type { Config, ProviderName } from '../config';
import { rawBodyOf } from '../http/middleware/body';
import type { InputViolation } from '../http/middleware/input';
import { printableField } from '../http/input-rule';
import type { Logger } from '../logger';
import { verifyFieldSignature, verifyHeaderSignature } from './verify';
import { RESTRICTED_PATHS } from './verify';

const FIELD_SIGNED = new Set<ProviderName>(['QR', 'WALLET']);

function correctlySigned(ctx: Context, config: Config, provider: ProviderName): boolean {
  const secret = config.callbacks.providers[provider].secret;
  const body = ctx.request.body;
  if (FIELD_SIGNED.has(provider))
    return (
      typeof body === 'object' &&
      body !== null &&
      !Array.isArray(body) &&
      verifyFieldSignature(secret, body as Record<string, unknown>)
    );
  return verifyHeaderSignature(secret, ctx.get('X-Timestamp'), rawBodyOf(ctx) ?? '', ctx.get('X-Signature'));
}

const orderIdOf = (body: unknown): string => {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const inner = typeof b.body === 'object' && b.body !== null ? (b.body as Record<string, unknown>) : {};
  const id = b.orderId ?? b.order_id ?? b.objectId ?? inner.orderId ?? inner.order_id;
  return typeof id === 'string' ? printableField(id).slice(0, 100) : 'unknown';
};

export function callbackInputRefused(deps: { config: Config; logger: Logger; alerts: AlertThrottle }) {
  return (ctx: Context, v: InputViolation): void => {
    const provider = RESTRICTED_PATHS[ctx.path.replace(/\/+$/, '').toLowerCase()];
    if (!provider) return;
    const signed = correctlySigned(ctx, deps.config, provider);
    const orderId = orderIdOf(ctx.request.body);
    const field = printableField(v.field);
    deps.logger.warn(
      { requestId: ctx.state.requestId, provider, orderId, field, reason: v.reason, signed },
      'callback refused: a field Postgres cannot store',
    );
    if (!signed) return;
    deps.alerts
      .alert(`callback-input:${provider}:${orderId}:${field}`, {
        subject: `[Talat] ${provider} callback for order ${orderId} refused: ${field} holds a ${v.reason}`,
        text: [
          `A correctly signed ${provider} callback was refused with 400 INVALID_INPUT, so the provider stops retrying it.`,
          `The payment it concerns did not change; settle it by hand after checking with the provider.`,
          '',
          `Path:       ${ctx.path}`,
          `Order id:   ${orderId}`,
          `Field:      ${field} (${v.reason})`,
          `Request id: ${ctx.state.requestId}`,
          '',
        ].join('\n'),
      })
      .catch((err) => deps.logger.error({ err, provider, orderId }, 'callback input alert e-mail failed'));
  };
}
