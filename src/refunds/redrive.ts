/**
 * The re-drive of stuck refunds: POST /refund writes the `pending` row, then asks the order's
 * refunds workflow; if Temporal or the gateway fails between the two, nothing else would ever run
 * or fail that refund, and its amount stays reserved. Every worker process scans for rows still
 * pending after REFUND_REDRIVE_AFTER_S, claims a bounded batch (SKIP LOCKED, redriven_at: two
 * workers never take the same row in one period) and re-sends each one's `refund` update with the
 * row's proof and its update id (refundUpdateId, as the gateway sent it): a refund the workflow
 * already has is not run again, and the provider's Idempotency-Key is the refund id. Only recorded rows are re-sent; no
 * Temporal call starts this.
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { refundRedrives } from '../metrics';
import { signRefund } from '../proofs';
import { sendRefund } from './workflow-client';
import { every } from '../periodic';

/** Most rows one scan re-sends; the rest wait for the next scan. */
export const REDRIVE_BATCH = 20;
/** From this many re-sends on, a stuck refund is logged as an error (someone should look). */
export const REDRIVE_ALERT_AFTER = 5;

export interface StuckRefund {
  refundId: string;
  paymentId: string;
  orderId: string;
  amountSatang: number;
  redrives: number;
}

/**
 * Claims up to `limit` refunds pending for more than `afterSeconds` and not re-sent within that
 * time, oldest first: each claimed row gets redrives + 1 and redriven_at = now().
 */
export async function claimStuckRefunds(db: Db, afterSeconds: number, limit: number): Promise<StuckRefund[]> {
  const { rows } = await db.raw(
    `UPDATE refunds r SET redrives = r.redrives + 1, redriven_at = now()
     FROM (SELECT id FROM refunds
           WHERE status = 'pending' AND created_at < now() - make_interval(secs => ?)
             AND (redriven_at IS NULL OR redriven_at < now() - make_interval(secs => ?))
           ORDER BY created_at, id LIMIT ? FOR UPDATE SKIP LOCKED) c
     WHERE r.id = c.id
     RETURNING r.id, r.payment_id, r.order_id, r.amount_satang, r.redrives`,
    [afterSeconds, afterSeconds, limit],
  );
  return rows.map((r: Record<string, unknown>) => ({
    refundId: String(r.id),
    paymentId: String(r.payment_id),
    orderId: String(r.order_id),
    amountSatang: Number(r.amount_satang),
    redrives: Number(r.redrives),
  }));
}

export interface RedriveDeps {
  db: Db;
  client: Client;
  config: Config;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  taskQueue: string;
}

/** One scan: claims the stuck refunds and re-sends each; returns how many were accepted and failed. */
export async function redriveStuckRefunds(
  deps: RedriveDeps,
  opts: { afterSeconds?: number; limit?: number } = {},
): Promise<{ accepted: string[]; failed: string[] }> {
  const { db, client, config, logger, taskQueue } = deps;
  const stuck = await claimStuckRefunds(
    db,
    opts.afterSeconds ?? config.refunds.redriveAfterSeconds,
    opts.limit ?? REDRIVE_BATCH,
  );
  const accepted: string[] = [];
  const failed: string[] = [];
  for (const r of stuck) {
    const fields = { refundId: r.refundId, orderId: r.orderId, paymentId: r.paymentId, redrives: r.redrives };
    const proof = signRefund(config.results.signingKey, r);
    try {
      await sendRefund(client, { taskQueue, orderId: r.orderId, request: { refundId: r.refundId, proof } });
      accepted.push(r.refundId);
      refundRedrives.inc({ result: 'accepted' });
      const level = r.redrives >= REDRIVE_ALERT_AFTER ? 'error' : 'info';
      logger[level](fields, 'pending refund re-driven: its workflow has it');
    } catch (e) {
      failed.push(r.refundId);
      refundRedrives.inc({ result: 'failed' });
      const level = r.redrives >= REDRIVE_ALERT_AFTER ? 'error' : 'warn';
      logger[level]({ ...fields, err: e }, 'pending refund could not be re-driven: retried at the next scan');
    }
  }
  return { accepted, failed };
}

/** Scans every REFUND_REDRIVE_AFTER_S (one scan at a time in this process) until stopped. */
export function startRefundRedrive(deps: RedriveDeps): { stop: () => Promise<void> } {
  return every(deps.logger, 'the scan for stuck refunds', deps.config.refunds.redriveAfterSeconds * 1000, () =>
    redriveStuckRefunds(deps),
  );
}
