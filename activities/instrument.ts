/**
 * Wraps every activity so that (1) its log lines carry orderId, paymentId and workflowId (the
 * log context of src/log-context.ts, from the activity's input and its workflow's id) and
 * (2) webhook attempts are counted and timed (talat_webhook_attempts_total,
 * talat_webhook_attempt_duration_seconds) without touching the delivery code.
 */
import { Context } from '@temporalio/activity';
import { withLogFields, type LogFields } from '../src/log-context';
import { webhookAttemptDuration, webhookAttempts } from '../src/metrics';

const PAYMENT_STATUS_SUFFIX = /-(pending|paid|failed|expired|refunded|partially_refunded)$/;

/** The ids an activity call is about, from its first argument and its workflow's id. */
export function logFieldsOf(input: unknown): LogFields {
  const fields: LogFields = {};
  let workflowId: string | undefined;
  try {
    workflowId = Context.current().info.workflowExecution?.workflowId;
  } catch {
    // called directly, not as an activity
  }
  if (workflowId) {
    fields.workflowId = workflowId;
    const m = /^(?:payment|paid-order)-(.+)$/.exec(workflowId);
    if (m) fields.orderId = m[1];
    const w = /^webhook-(?!replay-)(.+)$/.exec(workflowId);
    if (w) fields.paymentId = w[1].replace(PAYMENT_STATUS_SUFFIX, '');
  }
  const arg = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const event = (typeof arg.data === 'object' && arg.data !== null ? arg.data : {}) as Record<string, unknown>;
  for (const k of ['orderId', 'paymentId', 'deliveryId'] as const) {
    const v = arg[k] ?? event[k];
    if (typeof v === 'string' && v) fields[k] = v;
  }
  return fields;
}

type AttemptResultLike = { ok?: boolean; cancelled?: boolean; statusCode?: number };
const resultOf = (r: AttemptResultLike): string =>
  r.ok ? 'delivered' : r.cancelled ? 'cancelled' : r.statusCode !== undefined ? 'http_error' : 'network_error';

export function instrumentActivities<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
): T {
  const out: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(activities)) {
    const timed = name === 'attemptWebhookDelivery';
    out[name] = (...args: never[]) =>
      withLogFields(logFieldsOf(args[0]), async () => {
        if (!timed) return fn(...args);
        const start = process.hrtime.bigint();
        let result = 'failed';
        try {
          const r = (await fn(...args)) as AttemptResultLike;
          result = resultOf(r ?? {});
          return r;
        } finally {
          webhookAttempts.inc({ result });
          webhookAttemptDuration.observe({ result }, Number(process.hrtime.bigint() - start) / 1e9);
        }
      });
  }
  return out as T;
}
