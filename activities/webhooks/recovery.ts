/**
 * Resend and recovery of webhook messages (POST /webhooks/messages/{id}/resend, POST
 * /webhooks/endpoints/{id}/recover): one attempt per message through the delivery activities'
 * attempt, numbered after the message's earlier attempts; a success also closes the message's
 * dead letter, if it has one.
 */
import type { AttemptResult, WebhookResendInput } from '../../src/webhooks';
import { createWebhookActivities } from './index';

export function createWebhookRecoveryActivities(deps: Parameters<typeof createWebhookActivities>[0]) {
  const { db } = deps;
  const { attemptWebhookDelivery } = createWebhookActivities(deps);
  return {
    async resendWebhookMessage(input: WebhookResendInput): Promise<AttemptResult> {
      const n = await db('webhook_attempts')
        .where({ delivery_id: input.messageId })
        .count<{ count: string }[]>('id as count');
      const r = await attemptWebhookDelivery({
        deliveryId: input.messageId,
        attempt: Number(n[0].count) + 1,
        kind: input.kind,
      });
      if (r.ok) {
        await db('webhook_dead_letters')
          .where({ delivery_id: input.messageId, status: 'dead' })
          .update({
            status: 'delivered',
            delivered_at: db.fn.now(),
            next_attempt_at: null,
            replays: db.raw('replays + 1'),
            replayed_at: db.fn.now(),
          });
      }
      return r;
    },

    /** Up to `limit` messages of the endpoint that failed every attempt, created since `since`, after `cursor`, oldest first. */
    async failedWebhookMessages(input: {
      endpointId: string;
      since: string;
      cursor?: { createdAt: string; id: string };
      limit: number;
    }): Promise<{ id: string; createdAt: string }[]> {
      const rows = await db('webhook_deliveries')
        .where({ endpoint_id: input.endpointId, state: 'dead' })
        .where('created_at', '>=', new Date(input.since))
        .modify((q) =>
          input.cursor
            ? q.whereRaw('(created_at, id) > (?::timestamptz, ?)', [input.cursor.createdAt, input.cursor.id])
            : q,
        )
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .limit(input.limit)
        .select('id', 'created_at');
      return rows.map((r: { id: string; created_at: Date }) => ({ id: r.id, createdAt: r.created_at.toISOString() }));
    },
  };
}
