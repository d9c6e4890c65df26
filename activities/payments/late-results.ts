/**
 * Late and conflicting results (workflows/payments/late-result.ts): the proof check, the conflict row
 * (one per payment and contradicting status) and its resolution. Each is idempotent, so
 * Temporal may retry it; the first workflow to claim a conflict (the gateway's lateResultWorkflow
 * or the payment workflow's own handler, whichever comes first) e-mails and applies the policy,
 * the other finds it claimed (verdict `duplicate`).
 */
import { Context } from '@temporalio/activity';
import type { Config } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { verifyResultProof } from '../../src/result-proof';
import type { Mode } from '../../src/domain/mode';
import { contradicts, type PaymentMethod, type PaymentStatus } from '../../src/payments';
import type { ConflictResolution, LateResultInput, LateResultOutcome } from '../../src/payments';
import { newId } from '../../src/ids';
import type { Logger } from '../../src/logger';
import type { ProviderRefundInput } from '../../src/refunds';

export interface LateRecord extends LateResultOutcome {
  /** policy refund: what to ask the provider (the refund id is fixed on the conflict row) */
  refund?: ProviderRefundInput;
  /** for the administrator's e-mail */
  amountSatang?: number;
  mode?: string;
}

/** A signalled result whose proof does not verify: a security event, logged without any secret. */
export function logForgedResult(
  logger: Logger,
  where: string,
  r: { paymentId: string; receiptId?: unknown; status?: unknown; provider?: unknown; proof?: unknown },
): void {
  let workflowId: string | undefined;
  try {
    workflowId = Context.current().info.workflowExecution?.workflowId;
  } catch {
    // not inside an activity
  }
  logger.error(
    {
      securityEvent: 'payment_result_forged',
      where,
      paymentId: r.paymentId,
      workflowId,
      receiptId: typeof r.receiptId === 'string' ? r.receiptId.slice(0, 80) : undefined,
      status: typeof r.status === 'string' ? r.status.slice(0, 20) : undefined,
      provider: typeof r.provider === 'string' ? r.provider.slice(0, 40) : undefined,
      proofPresent: r.proof !== undefined,
    },
    'security: payment result rejected, its proof does not verify (not sent by the callback processor); nothing changed',
  );
}

/** How long a conflict waits for its payment row to be settled and its callback receipt committed (the gateway commits it right after the signal). */
const SETTLE_WAIT_MS = 3000;
const SETTLE_POLL_MS = 200;

export function createLateResultActivities({
  db,
  config,
  logger,
  receipts,
}: {
  db: Db;
  config: Config;
  logger: Logger;
  /** the callbacks slice: marks a receipt's outcome `conflict`; the number of receipts it marked */
  receipts: { markConflict(receiptId: string): Promise<number> };
}) {
  return {
    /**
     * Verify the proof; when the result contradicts the payment as its row says (`paymentStatus`
     * is what the caller saw; a row still pending is waited for): mark its callback receipt
     * `conflict`, insert the conflict (once per payment and status) and claim it for this
     * workflow. `recorded`: this workflow e-mails and applies the policy.
     */
    async recordLateResult(input: LateResultInput): Promise<LateRecord> {
      const r = input.result;
      const claim = { receiptId: r.receiptId, paymentId: input.paymentId, status: r.status };
      if (!verifyResultProof(config.results.signingKey, claim, r.proof)) {
        logForgedResult(logger, 'late result', { ...r, paymentId: input.paymentId });
        return { verdict: 'rejected' };
      }
      if (!contradicts(r.status, input.paymentStatus)) return { verdict: 'agrees' };
      // the row is the truth, not the input: a settle step still writing it gets a moment
      // (and then Temporal's retries); a row that agrees with the result is no conflict
      let payment: Record<string, unknown> | undefined;
      for (let waited = 0; ; waited += SETTLE_POLL_MS) {
        payment = await db('payments').where({ id: input.paymentId }).first();
        if (!payment) throw new Error(`payment ${input.paymentId} not found`);
        if (payment.status !== 'pending' || waited >= SETTLE_WAIT_MS) break;
        await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
      }
      const paymentStatus = payment.status as PaymentStatus;
      if (paymentStatus === 'pending') throw new Error(`payment ${input.paymentId} is still pending`);
      if (!contradicts(r.status, paymentStatus)) return { verdict: 'agrees' };

      const info = Context.current().info;
      // the signal may have overtaken the commit of its receipt (the gateway commits right after
      // Temporal accepted the signal): give it a moment, then record the conflict without it
      let marked = 0;
      for (let waited = 0; ; waited += SETTLE_POLL_MS) {
        marked = await receipts.markConflict(r.receiptId!);
        if (marked > 0 || waited >= SETTLE_WAIT_MS) break;
        await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
      }

      const resolution: ConflictResolution =
        r.status === 'success'
          ? config.results.latePaymentPolicy === 'refund'
            ? 'refund_pending'
            : 'review'
          : 'recorded';
      await db('payment_conflicts')
        .insert({
          id: newId('cfl'),
          payment_id: input.paymentId,
          order_id: input.orderId,
          result_status: r.status,
          payment_status: paymentStatus,
          provider: String(r.provider ?? 'unknown').slice(0, 40),
          receipt_id: marked ? r.receiptId : null,
          reference: r.reference?.slice(0, 256) ?? null,
          resolution,
          refund_id: resolution === 'refund_pending' ? newId('re') : null,
        })
        .onConflict(['payment_id', 'result_status'])
        .ignore();
      const workflowId = info.workflowExecution?.workflowId ?? 'unknown';
      await db('payment_conflicts')
        .where({ payment_id: input.paymentId, result_status: r.status })
        .whereNull('handled_by')
        .update({ handled_by: workflowId });
      const row = await db('payment_conflicts').where({ payment_id: input.paymentId, result_status: r.status }).first();
      logger.warn(
        {
          paymentId: input.paymentId,
          orderId: input.orderId,
          result: r.status,
          paymentStatus,
          conflictId: row.id,
          resolution: row.resolution,
        },
        'conflicting payment result recorded',
      );
      if (row.handled_by !== workflowId)
        return { verdict: 'duplicate', conflictId: row.id, resolution: row.resolution };
      return {
        verdict: 'recorded',
        conflictId: row.id,
        resolution: row.resolution,
        amountSatang: Number(payment.amount_satang),
        mode: String(payment.mode),
        ...(row.resolution === 'refund_pending'
          ? {
              refund: {
                refundId: row.refund_id,
                paymentId: input.paymentId,
                orderId: String(payment.order_id),
                method: payment.method as PaymentMethod,
                mode: payment.mode as Mode,
                providerRef: (payment.provider_ref as string | null) ?? null,
                amountSatang: Number(payment.amount_satang),
                reason: `late payment: ${r.provider} success after the payment ${paymentStatus}`,
              },
            }
          : {}),
      };
    },

    /** The policy's outcome on the conflict row (a refund: refunded or refund_failed). */
    async settleLateResult(input: { conflictId: string; resolution: ConflictResolution; detail?: string }) {
      await db('payment_conflicts')
        .where({ id: input.conflictId })
        .update({ resolution: input.resolution, detail: input.detail ?? null, updated_at: db.fn.now() });
    },
  };
}
