/**
 * GET /payments/{orderId}/timeline: an order's whole story in one call, read from the tables
 * (never from Temporal): the payment's creation, every status transition (payment_events),
 * every callback received (callback_receipts: provider, status, outcome, source IP, receipt id),
 * every webhook delivery and attempt (endpoint, attempt number, status code or error, latency),
 * dead letters and their replays, refunds when the refunds table exists, and conflicting
 * provider results (payment_conflicts: a success after expiry, a failure after paid), reconciliation
 * exceptions about it (src/reconciliation), an order's settlement steps (src/orders); in time order,
 * with a link to the payment workflow in Temporal Web. Scope payments:read; visible to the same
 * keys as /checkstatus (same mode; the creating key, or any key for a keyless payment).
 */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { AppError, ErrorCode } from '../domain/errors';
import { guards, Id } from '../http/guards';
import { requireApiKey } from '../http/middleware/api-key';
import type { ApiKeyInfo } from '../domain/api-keys';
import { ApiKeyAuth, envelope, errorResponses, registry, z } from '../http/openapi';
import { validate } from '../http/validate';
import { receiptRowsOfPayment } from '../callbacks/receipts';
import { paymentRowByOrder, paymentStoryRows } from '../payments/repository';
import { exceptionsOfPayment } from '../reconciliation/repository';
import { ORDER_TIMELINE_TYPES } from '../orders';
import { orderStory } from '../orders/repository';
import { refundRowsOfPayment } from '../refunds/repository';
import { endpointIdsOfKey, webhookRowsOfPayment } from '../webhooks/endpoints';

const Entry = z.object({
  at: z.string().openapi({ description: 'ISO 8601 UTC' }),
  type: z.enum([
    'payment.created',
    'payment.status_changed',
    'callback.received',
    'webhook.delivery',
    'webhook.attempt',
    'webhook.dead_letter',
    'webhook.replayed',
    'refund',
    'payment.conflict',
    'reconciliation.exception',
    ...ORDER_TIMELINE_TYPES,
  ]),
  details: z.record(z.unknown()),
});
const Timeline = registry.register(
  'PaymentTimeline',
  z
    .object({
      orderId: z.string(),
      paymentId: z.string(),
      status: z.string(),
      workflowId: z.string(),
      temporalWebUrl: z.string().nullable(),
      entries: z.array(Entry),
    })
    .openapi({
      example: {
        orderId: 'ORD-2001',
        paymentId: 'pay_1',
        status: 'paid',
        workflowId: 'payment-ORD-2001',
        temporalWebUrl: 'http://127.0.0.1:8233/namespaces/default/workflows/payment-ORD-2001',
        entries: [
          { at: '2026-11-22T08:00:00.000Z', type: 'payment.created', details: { method: 'qr', amount: 120.5 } },
          {
            at: '2026-11-22T08:00:01.000Z',
            type: 'callback.received',
            details: {
              provider: 'qr',
              status: 'success',
              outcome: 'signalled',
              sourceIp: '127.0.0.1',
              receiptId: 'evt_1',
            },
          },
          {
            at: '2026-11-22T08:00:01.100Z',
            type: 'payment.status_changed',
            details: { from: 'pending', to: 'paid', reason: 'qr callback' },
          },
          {
            at: '2026-11-22T08:00:01.300Z',
            type: 'webhook.attempt',
            details: { deliveryId: 'msg_1', endpointId: 'ep_1', attempt: 1, statusCode: 200, durationMs: 12 },
          },
        ],
      },
    }),
);

registry.registerPath({
  method: 'get',
  path: '/payments/{orderId}/timeline',
  operationId: 'getPaymentTimeline',
  summary: "An order's whole story: creation, callbacks, status changes, webhook attempts, dead letters, refunds",
  tags: ['payment'],
  security: [{ [ApiKeyAuth.name]: [] }],
  request: { params: z.object({ orderId: z.string().openapi({ example: 'ORD-2001' }) }) },
  responses: {
    200: { description: 'the timeline, oldest first', content: { 'application/json': { schema: envelope(Timeline) } } },
    ...errorResponses([400, 401, 403, 404, 429]),
  },
});

const iso = (d: unknown) => new Date(d as string).toISOString();

export type Timeline = z.infer<typeof Timeline>;

/** An order's timeline as `key` may see it (404 as unknown otherwise): the route's and the console's. */
export async function orderTimeline(
  { db, config }: Pick<AppDeps, 'db' | 'config'>,
  orderId: string,
  key: ApiKeyInfo,
): Promise<Timeline> {
  const webBase = config.temporal.address ? undefined : `http://127.0.0.1:${config.temporal.uiPort}`;
  {
    const p = await paymentRowByOrder(db, orderId, { apiKeyId: key.id, mode: key.mode });
    if (!p || p.mode !== key.mode || (p.api_key_id !== null && p.api_key_id !== key.id))
      throw new AppError(ErrorCode.NOT_FOUND, `No payment for order ${orderId}`, { orderId });
    // one read per slice that holds part of the story, side by side
    const [{ events, conflicts }, receipts, { deliveries, attempts, deadLetters }, refunds, reconciled, order] =
      await Promise.all([
        paymentStoryRows(db, p.id),
        receiptRowsOfPayment(db, p.id),
        webhookRowsOfPayment(db, p.id),
        refundRowsOfPayment(db, p.id),
        exceptionsOfPayment(db, p.id),
        orderStory(db, p.order_id, p.id),
      ]);

    // a keyless payment is seen by every key of its mode: only the viewer's own endpoints' deliveries
    const own = p.api_key_id === null ? new Set<string>(await endpointIdsOfKey(db, key.id)) : undefined;
    const mine = (r: { endpoint_id: string }) => !own || own.has(r.endpoint_id);
    type E = { at: string; type: z.infer<typeof Entry>['type']; details: Record<string, unknown> };
    const entries: E[] = [];
    for (const e of events)
      entries.push(
        e.from_status === null
          ? {
              at: iso(e.created_at),
              type: 'payment.created',
              details: {
                method: p.method,
                amount: Number(p.amount_satang) / 100,
                status: e.to_status,
                reason: e.reason,
              },
            }
          : {
              at: iso(e.created_at),
              type: 'payment.status_changed',
              details: { from: e.from_status, to: e.to_status, reason: e.reason },
            },
      );
    if (!events.some((e: { from_status: string | null }) => e.from_status === null))
      entries.push({
        at: iso(p.created_at),
        type: 'payment.created',
        details: { method: p.method, amount: Number(p.amount_satang) / 100 },
      });
    for (const c of receipts)
      entries.push({
        at: iso(c.created_at),
        type: 'callback.received',
        details: {
          provider: c.provider,
          status: c.status,
          outcome: c.outcome,
          responseStatus: c.response_status,
          sourceIp: c.source_ip,
          receiptId: c.id,
        },
      });
    for (const d of deliveries.filter(mine))
      entries.push({
        at: iso(d.created_at),
        type: 'webhook.delivery',
        details: {
          deliveryId: d.id,
          endpointId: d.endpoint_id,
          event: d.event_status,
          state: d.state,
          attempts: d.attempts,
        },
      });
    for (const a of attempts.filter(mine))
      entries.push({
        at: iso(a.started_at),
        type: 'webhook.attempt',
        details: {
          deliveryId: a.delivery_id,
          endpointId: a.endpoint_id,
          attempt: a.attempt,
          kind: a.kind,
          statusCode: a.status_code,
          error: a.error,
          durationMs: a.duration_ms,
        },
      });
    for (const l of deadLetters.filter(mine)) {
      entries.push({
        at: iso(l.created_at),
        type: 'webhook.dead_letter',
        details: { deadLetterId: l.id, deliveryId: l.delivery_id, reason: l.reason, status: l.status },
      });
      if (l.replayed_at)
        entries.push({
          at: iso(l.replayed_at),
          type: 'webhook.replayed',
          details: { deadLetterId: l.id, replays: l.replays, delivered: l.status === 'delivered' },
        });
    }
    // a keyless payment is seen by every key of its mode: another key's id (and its
    // Idempotency-Key) is never shown
    for (const f of refunds as Record<string, unknown>[])
      entries.push({
        at: iso(f.created_at),
        type: 'refund',
        details: Object.fromEntries(
          Object.entries(f)
            .filter(([k]) => !['payment_id', 'created_at', 'idempotency_key', 'requested_satang'].includes(k))
            .map(([k, v]) => [k, k === 'api_key_id' && v !== key.id ? null : v]),
        ),
      });
    for (const c of conflicts)
      entries.push({
        at: iso(c.created_at),
        type: 'payment.conflict',
        details: {
          conflictId: c.id,
          result: c.result_status,
          paymentStatus: c.payment_status,
          provider: c.provider,
          receiptId: c.receipt_id,
          resolution: c.resolution,
          refundId: c.refund_id,
          detail: c.detail,
        },
      });
    for (const x of reconciled)
      entries.push({
        at: iso(x.created_at),
        type: 'reconciliation.exception',
        details: {
          rowId: x.id,
          provider: x.provider,
          outcome: x.outcome,
          expected: x.expected,
          reference: x.reference,
          amount: Number(x.amount_satang) / 100,
          detail: x.detail,
          resolution: x.resolution,
        },
      });
    // the settlement steps of an order (capture=false card, or a QR payment adjusted after picking)
    for (const o of order) entries.push({ at: o.at.toISOString(), type: o.type, details: o.details });
    entries.sort((a, b) => a.at.localeCompare(b.at));

    return {
      orderId: p.order_id,
      paymentId: p.id,
      status: p.status,
      workflowId: p.workflow_id,
      temporalWebUrl: webBase
        ? `${webBase}/namespaces/${encodeURIComponent(config.temporal.namespace)}/workflows/${encodeURIComponent(p.workflow_id)}`
        : null,
      entries,
    };
  }
}

export function timelineRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db'>): Router {
  const r = new Router();
  const { limited } = guards(deps);
  r.get('/payments/:orderId/timeline', limited, requireApiKey('payments:read'), async (ctx) => {
    const { orderId } = validate(z.object({ orderId: Id }), { orderId: ctx.params.orderId });
    ctx.body = { statusCode: 200, body: await orderTimeline(deps, orderId, ctx.state.apiKey!) };
  });
  return r;
}
