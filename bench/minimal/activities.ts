/** The minimal anchor's activities: one UPDATE of its row, one POST of a webhook signed with HMAC. */
import { createHmac } from 'node:crypto';
import type { Pool } from 'pg';

export function minimalActivities(pool: Pool, webhook: { url: string; secret: string }) {
  return {
    async recordResult(paymentId: string, status: string): Promise<void> {
      await pool.query('UPDATE minimal_payments SET status = $1, updated_at = now() WHERE id = $2', [
        status,
        paymentId,
      ]);
    },
    async postWebhook(orderId: string, paymentId: string, status: string): Promise<void> {
      const body = JSON.stringify({ type: 'payment.status.updated', data: { orderId, paymentId, status } });
      const signature = createHmac('sha256', webhook.secret).update(body).digest('hex');
      const res = await fetch(webhook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-signature': signature },
        body,
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`webhook: ${res.status}`);
    },
  };
}

export type MinimalActivities = ReturnType<typeof minimalActivities>;
