/**
 * Webhook delivery activities. The delivery workflows own the schedule (first attempt, retries
 * after 1 s, 2 s, 4 s, the dead letter, then its longer schedule); an attempt is one HTTP POST
 * and is never retried by Temporal itself, so the spacing seen by the receiver is the workflow's.
 *
 * Which endpoints receive an event: those registered by the API key that created the payment;
 * a payment made without a key (public POST /cardpayment) goes to the endpoints registered with
 * publicPayments = true in the payment's mode (live or sandbox).
 */
import { Context } from '@temporalio/activity';
import type { Config } from '../../src/config';
import type { Payment } from '../../src/payments';
import type { Db } from '../../src/db/knex';
import {
  DEFAULT_RETRY_SCHEDULE_S,
  eventTypesOf,
  isOrderEvent,
  ORDER_EVENT,
  orderEventKey,
  orderWebhookBody,
  webhookBody,
  type OrderEvent,
  type PaymentStatusEvent,
  type WebhookEvent,
} from '../../src/webhooks';
import type { AttemptResult, KeepTryingAttempt, ReplayOutcome, WebhookReplayInput } from '../../src/webhooks';
import { newId } from '../../src/ids';
import type { Logger } from '../../src/logger';
import { postWebhook } from '../../src/webhooks/http';
import type { Resolver } from '../../src/resolver';
import { openSecret } from '../../src/webhooks/secret-box';
import { webhookHeaders } from '../../src/webhooks/signing';
import { prepared, type LeadingCtes } from '../../src/db/prepared';
import { batchedWrites } from '../../src/db/write-batch';

export interface AttemptInput {
  deliveryId: string;
  attempt: number;
  kind: 'automatic' | 'replay' | 'resend' | 'recover';
}

/** The current secret, and during a rotation's overlap the previous one too (two signatures). */
function signingSecrets(
  config: Config,
  row: {
    secret_ciphertext: string;
    previous_secret_ciphertext?: string | null;
    previous_secret_expires_at?: Date | null;
  },
): string[] {
  const secrets = [openSecret(config.webhooks.secretKey, row.secret_ciphertext)];
  if (
    row.previous_secret_ciphertext &&
    row.previous_secret_expires_at &&
    row.previous_secret_expires_at.getTime() > Date.now()
  ) {
    secrets.push(openSecret(config.webhooks.secretKey, row.previous_secret_ciphertext));
  }
  return secrets;
}

/** A delivery and what its attempt needs of its endpoint (attempt(), plan()). */
interface DeliveryRow {
  id: string;
  payload: string;
  state: string;
  endpoint_id: string;
  attempts?: number;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext?: string | null;
  previous_secret_expires_at?: Date | null;
  deleted_at?: Date | null;
  disabled?: boolean;
}

/** An endpoint whose last attempt failed this recently gets no first attempt inside a payment's settle step. */
export const INLINE_BREAKER_MS = 30_000;

/** What firstWebhookAttempts hands back to the payment workflow. */
export interface FirstAttempts {
  /** deliveries to retry: first attempt failed, or attempted before (a retried settle step) */
  retry: string[];
  /** deliveries whose first attempt was left to the webhook retry workflow (the settle step's bulkhead) */
  deferred: string[];
  /** ms since the epoch: when the first attempts began */
  firstAttemptAt: number;
  /** with leading CTEs: their value, null when they did not match (then nothing was planned) */
  guard?: string | null;
}

/** One attempt's record: its row in webhook_attempts, and its delivery's counters and state. */
interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  kind: AttemptInput['kind'];
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  ok: boolean;
}

/**
 * Records attempts (one per delivery) in ONE statement: a data-modifying CTE is atomic on its
 * own, so no BEGIN/COMMIT round trips; a delivered one's state becomes `delivered`.
 */
async function recordAttempts(db: Db, attempts: AttemptRecord[]): Promise<void[]> {
  await prepared(
    db,
    `WITH v AS (
       SELECT * FROM unnest(?::text[], ?::int[], ?::text[], ?::timestamptz[], ?::int[], ?::int[], ?::text[], ?::boolean[])
         AS v(delivery_id, attempt, kind, started_at, duration_ms, status_code, error, ok)
     ), attempt AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, kind, started_at, duration_ms, status_code, error)
       SELECT delivery_id, attempt, kind, started_at, duration_ms, status_code, error FROM v
     )
     UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, last_status_code = v.status_code, last_error = v.error, updated_at = now(),
            state = CASE WHEN v.ok THEN 'delivered' ELSE d.state END,
            delivered_at = CASE WHEN v.ok THEN now() ELSE d.delivered_at END
       FROM v
      WHERE d.id = v.delivery_id`,
    [
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.attempt),
      attempts.map((a) => a.kind),
      attempts.map((a) => a.startedAt),
      attempts.map((a) => a.durationMs),
      attempts.map((a) => a.statusCode),
      attempts.map((a) => a.error),
      attempts.map((a) => a.ok),
    ],
  );
  return attempts.map(() => undefined);
}

/** `resolve`: how endpoint host names are resolved (dns.lookup when absent; tests inject one). */
/**
 * What the webhooks take of the payments and refunds slices: whether an event is one their
 * records hold (wired by the composition root, activities/index.ts).
 */
export interface EventRecords {
  payment(paymentId: string): Promise<Payment | undefined>;
  /** whether the payment ever reached `status` (its payment_events) */
  reached(paymentId: string, status: string): Promise<boolean>;
  /** the amount of a succeeded refund of the payment, or undefined */
  refunded(refundId: string, paymentId: string): Promise<number | undefined>;
  /**
   * an order step's facts (the body's data) read from the orders slice's rows, or undefined when
   * the rows do not hold that step of that order, payment, key and mode
   */
  orderEvent(e: OrderEvent): Promise<Record<string, unknown> | undefined>;
}

export function createWebhookActivities({
  db,
  config,
  logger,
  resolve,
  records,
}: {
  db: Db;
  config: Config;
  logger: Logger;
  resolve?: Resolver;
  records: EventRecords;
}) {
  // the settle step's bulkhead, per worker process: first attempts in flight and last failure, per endpoint
  const inlineInFlight = new Map<string, number>();
  const lastFailure = new Map<string, number>();
  const noteOutcome = (endpointId: string, ok: boolean) => {
    if (ok) lastFailure.delete(endpointId);
    else lastFailure.set(endpointId, Date.now());
  };
  /** a slot for one first attempt to `endpointId` inside a settle step, or false (then the retry workflow makes it) */
  const takeInlineSlot = (endpointId: string): boolean => {
    const failed = lastFailure.get(endpointId);
    if (failed !== undefined && Date.now() - failed < INLINE_BREAKER_MS) return false;
    const n = inlineInFlight.get(endpointId) ?? 0;
    if (n >= config.webhooks.inlinePerEndpoint) return false;
    inlineInFlight.set(endpointId, n + 1);
    return true;
  };
  const releaseInlineSlot = (endpointId: string) => {
    const n = (inlineInFlight.get(endpointId) ?? 1) - 1;
    if (n <= 0) inlineInFlight.delete(endpointId);
    else inlineInFlight.set(endpointId, n);
  };

  const recordAttempt = batchedWrites((attempts: AttemptRecord[]) => recordAttempts(db, attempts), {
    windowMs: config.database.writeBatchMs,
    keyOf: (a) => a.deliveryId,
  });

  /**
   * One signed POST of a delivery's payload, recorded as an attempt. `planned`: the delivery and
   * its endpoint as plan() returned them (the settle step's first attempt), so not read again.
   */
  async function attempt(input: AttemptInput, planned?: DeliveryRow): Promise<AttemptResult> {
    const row: DeliveryRow | undefined =
      planned ??
      (await db('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .where('d.id', input.deliveryId)
        .first(
          'd.id',
          'd.payload',
          'd.state',
          'd.endpoint_id',
          'e.url',
          'e.secret_ciphertext',
          'e.previous_secret_ciphertext',
          'e.previous_secret_expires_at',
          'e.deleted_at',
          'e.disabled',
        ));
    if (!row) throw new Error(`no webhook delivery ${input.deliveryId}`);
    if (row.deleted_at) {
      await db('webhook_deliveries')
        .where({ id: input.deliveryId, state: 'pending' })
        .update({ state: 'cancelled', updated_at: db.fn.now() });
      return { ok: false, cancelled: true, error: 'endpoint removed' };
    }
    if (row.state === 'delivered' && input.kind === 'automatic') return { ok: true };
    // the endpoint's state now, whoever started the workflow (issue 38): a disabled one gets nothing
    if (row.disabled) return { ok: false, error: 'endpoint disabled' };

    const secret = signingSecrets(config, row);
    const startedAt = new Date();
    const heartbeat = () => {
      try {
        // a local activity (the settle step's first attempt) has no heartbeat: the server would refuse it
        if (!Context.current().info.isLocal) Context.current().heartbeat();
      } catch {
        // not running as an activity (called directly): nothing to report to
      }
    };
    const res = await postWebhook(row.url, webhookHeaders(secret, row.id, row.payload), row.payload, {
      timeoutMs: config.webhooks.timeoutMs,
      policy: { ...config.webhooks.urlPolicy, ...(resolve ? { resolve } : {}) },
      onProgress: heartbeat,
    });
    if (res.detail) logger.warn({ deliveryId: row.id, error: res.error, cause: res.detail }, 'webhook not delivered');
    const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
    noteOutcome(String(row.endpoint_id), ok);
    const error = res.error ?? (ok ? undefined : `HTTP ${res.statusCode}`);
    // the attempt and the delivery's counters in one statement, batched with other attempts'
    await recordAttempt({
      deliveryId: row.id,
      attempt: input.attempt,
      kind: input.kind,
      startedAt,
      durationMs: res.durationMs,
      statusCode: res.statusCode ?? null,
      error: error ?? null,
      ok,
    });
    logger.info(
      {
        deliveryId: row.id,
        attempt: input.attempt,
        kind: input.kind,
        statusCode: res.statusCode,
        error,
        ms: res.durationMs,
      },
      'webhook attempt',
    );
    return { ok, ...(res.statusCode !== undefined ? { statusCode: res.statusCode } : {}), ...(error ? { error } : {}) };
  }

  /** The body of an event the records hold (see planWebhookDeliveries), or undefined. */
  async function recorded(event: WebhookEvent): Promise<string | undefined> {
    if (isOrderEvent(event)) {
      const data = await records.orderEvent(event);
      return data ? JSON.stringify(orderWebhookBody(event, data)) : undefined;
    }
    return (await recordedPayment(event)) ? JSON.stringify(webhookBody(event)) : undefined;
  }

  async function recordedPayment(event: PaymentStatusEvent): Promise<boolean> {
    const p = await records.payment(event.paymentId);
    if (!p || p.orderId !== event.orderId || p.mode !== event.mode) return false;
    if ((p.apiKeyId ?? undefined) !== (event.apiKeyId ?? undefined)) return false;
    if (event.refundId) return (await records.refunded(event.refundId, p.id)) === event.amountSatang;
    if (p.amountSatang !== event.amountSatang) return false;
    return records.reached(p.id, event.status);
  }

  /**
   * Creates one delivery per receiving endpoint (idempotent) and returns those still pending, each
   * with its endpoint's url and secrets, in ONE statement (issue 41: it was three, and the first
   * attempt read the delivery and endpoint again). One snapshot: the deliveries this statement
   * inserts come from its RETURNING, those inserted before from the table; none is in both.
   */
  /**
   * The event's deliveries: inserted once per endpoint that takes it, with those still pending.
   * With `after`, another feature's CTEs run first in the same statement and the deliveries are
   * planned only when they matched (`guard`: their value, null when they did not match).
   */
  async function plan(
    event: WebhookEvent,
    payload: string,
    after?: LeadingCtes,
  ): Promise<{ deliveries: DeliveryRow[]; guard?: string | null }> {
    // each refund is its own message: its key carries the refund id; an order step: its type and row
    const eventKey = isOrderEvent(event)
      ? orderEventKey(event)
      : event.refundId
        ? `${event.status}:${event.refundId}`
        : event.status;
    const types = isOrderEvent(event) ? [ORDER_EVENT, event.type] : eventTypesOf(event.status);
    const owner = event.apiKeyId
      ? { sql: 'api_key_id = ?', bindings: [event.apiKeyId] }
      : { sql: 'public_payments AND mode = ?', bindings: [event.mode] };
    const { rows } = await prepared<DeliveryRow & { guard?: string | null }>(
      db,
      `WITH ${after ? `${after.ctes}, ` : ''}e AS (
         SELECT id, url, secret_ciphertext, previous_secret_ciphertext, previous_secret_expires_at,
                deleted_at, disabled
           FROM webhook_endpoints
          WHERE deleted_at IS NULL AND NOT disabled AND ${owner.sql}${after ? ` AND EXISTS (SELECT 1 FROM ${after.matched})` : ''}
            AND (event_types IS NULL OR event_types IN ('null'::jsonb, '[]'::jsonb)
                 OR jsonb_exists_any(event_types, ?::text[]))
       ), ins AS (
         INSERT INTO webhook_deliveries (id, endpoint_id, payment_id, order_id, event_status, payload)
         SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, ?, ?, ?, ? FROM e
         ON CONFLICT (endpoint_id, payment_id, event_status) DO NOTHING
         RETURNING id, endpoint_id, attempts, payload, state
       ), d AS (
         SELECT * FROM ins
         UNION ALL
         -- per endpoint, one probe of the unique key (endpoint, payment, event), the state
         -- checked after it (OFFSET 0 keeps it out): never a walk through the endpoint's pending
         -- deliveries (a receiver that is down holds many), whatever the statistics say
         SELECT w.id, w.endpoint_id, w.attempts, w.payload, w.state FROM e CROSS JOIN LATERAL (
           SELECT * FROM webhook_deliveries w
            WHERE w.endpoint_id = e.id AND w.payment_id = ? AND w.event_status = ? OFFSET 0
         ) w WHERE w.state = 'pending'
       )
       , planned AS (
         SELECT d.*, e.url, e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at,
                e.deleted_at, e.disabled
           FROM d JOIN e ON e.id = d.endpoint_id
          WHERE d.state = 'pending'
       )
       ${
         after
           ? `SELECT g.guard, planned.* FROM (SELECT (SELECT ${after.value} FROM ${after.matched}) AS guard) g
                LEFT JOIN planned ON true ORDER BY planned.id`
           : 'SELECT * FROM planned ORDER BY id'
       }`,
      [
        ...(after?.bindings ?? []),
        ...owner.bindings,
        types,
        event.paymentId,
        event.orderId,
        eventKey,
        payload,
        event.paymentId,
        eventKey,
      ],
    );
    const deliveries = rows
      .filter((r) => r.id !== null)
      .map(({ guard: _guard, ...r }) => ({ ...r, endpoint_id: String(r.endpoint_id), attempts: Number(r.attempts) }));
    return after ? { deliveries, guard: rows[0]?.guard ?? null } : { deliveries };
  }

  /**
   * The dead letter of `deliveryId` that deadLetterWebhook left retrying, or undefined: a start of
   * webhookKeepTryingWorkflow by hand, with ids that do not belong together, sends nothing.
   */
  async function retryingLetter(input: { deliveryId: string; deadLetterId: string }) {
    const dl = await db('webhook_dead_letters')
      .where({ id: input.deadLetterId })
      .first('delivery_id', 'status', 'retry_state');
    if (dl && dl.delivery_id === input.deliveryId && (dl.status === 'delivered' || dl.retry_state === 'retrying'))
      return dl as { status: string };
    logger.error(
      { securityEvent: 'webhook_retry_forged', deliveryId: input.deliveryId, deadLetterId: input.deadLetterId },
      'security: webhook retries of a message that is not a retrying dead letter (forged start); nothing sent',
    );
    return undefined;
  }

  function forged(event: WebhookEvent): void {
    logger.error(
      {
        securityEvent: 'webhook_event_forged',
        paymentId: event.paymentId,
        status: isOrderEvent(event) ? event.type : event.status,
      },
      'security: a webhook event that the records do not hold (forged start); nothing sent',
    );
  }

  return {
    /**
     * webhookDeliveryWorkflow's plan: only for an event Talat's records hold (the payment, its
     * key, mode, amount and that status in its history; a refund's succeeded row), so a workflow
     * started by hand with a forged event gets no signed message out (docs/security.md).
     */
    async planWebhookDeliveries(event: WebhookEvent): Promise<string[]> {
      const payload = await recorded(event);
      if (!payload) {
        forged(event);
        return [];
      }
      return (await plan(event, payload)).deliveries.map((d) => d.id);
    },

    /**
     * The event's deliveries and their first attempts, all endpoints at once (lean-payment-v1: run
     * inside the payment workflow's settle step). Returns the deliveries still to retry: those whose
     * first attempt failed, and those attempted before (a retried settle step never attempts twice).
     *
     * The bulkhead (README "Roles"): an endpoint that failed in the last INLINE_BREAKER_MS, or that
     * already has WEBHOOK_INLINE_PER_ENDPOINT first attempts in flight from this process, gets no
     * attempt here: its delivery is `deferred` to the retry workflow on the webhooks queue, which
     * makes the first attempt itself. So a dead or hanging endpoint holds at most that many
     * payment settle steps, each for at most WEBHOOK_TIMEOUT_MS.
     */
    async firstWebhookAttempts(event: WebhookEvent, after?: LeadingCtes): Promise<FirstAttempts> {
      const firstAttemptAt = Date.now();
      // a payment event comes from the payment's own settle step (its row written in the same
      // activity); an order event is checked against the orders' rows here
      const payload = isOrderEvent(event) ? await recorded(event) : JSON.stringify(webhookBody(event));
      if (!payload) {
        forged(event);
        return { retry: [], deferred: [], firstAttemptAt };
      }
      const { deliveries, guard } = await plan(event, payload, after);
      if (after && guard === null) return { retry: [], deferred: [], firstAttemptAt, guard };
      const results = await Promise.all(
        deliveries.map(async (d): Promise<{ id: string; next?: 'retry' | 'deferred' }> => {
          if ((d.attempts ?? 0) > 0) return { id: d.id, next: 'retry' };
          if (!takeInlineSlot(d.endpoint_id)) return { id: d.id, next: 'deferred' };
          try {
            const r = await attempt({ deliveryId: d.id, attempt: 1, kind: 'automatic' }, d).catch((e: Error) => ({
              ok: false,
              cancelled: false,
              error: e.message,
            }));
            return { id: d.id, next: !r.ok && !r.cancelled ? 'retry' : undefined };
          } finally {
            releaseInlineSlot(d.endpoint_id);
          }
        }),
      );
      return {
        retry: results.filter((r) => r.next === 'retry').map((r) => r.id),
        deferred: results.filter((r) => r.next === 'deferred').map((r) => r.id),
        firstAttemptAt,
        ...(after ? { guard } : {}),
      };
    },

    attemptWebhookDelivery: attempt,

    /**
     * The delivery failed every attempt: a dead-letter row an operator can list and replay;
     * `keepTrying` (webhook-keep-trying-v1): `retrying`, its longer schedule comes next.
     */
    async deadLetterWebhook(input: { deliveryId: string; reason: string; keepTrying?: boolean }): Promise<string> {
      return db.transaction(async (trx) => {
        const d = await trx('webhook_deliveries as d')
          .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
          .where('d.id', input.deliveryId)
          .first('d.endpoint_id', 'e.retry_schedule');
        const first = ((d.retry_schedule as number[] | null) ?? DEFAULT_RETRY_SCHEDULE_S)[0];
        await trx('webhook_deliveries')
          .where({ id: input.deliveryId, state: 'pending' })
          .update({ state: 'dead', updated_at: trx.fn.now() });
        await trx('webhook_dead_letters')
          .insert({
            id: newId('dlq'),
            delivery_id: input.deliveryId,
            endpoint_id: d.endpoint_id,
            reason: input.reason,
            ...(input.keepTrying && first !== undefined
              ? { retry_state: 'retrying', next_attempt_at: new Date(Date.now() + first * 1000) }
              : {}),
          })
          .onConflict('delivery_id')
          .ignore();
        const dl = await trx('webhook_dead_letters').where({ delivery_id: input.deliveryId }).first('id');
        logger.warn(
          { deliveryId: input.deliveryId, deadLetterId: dl.id, reason: input.reason },
          'webhook dead-lettered',
        );
        return String(dl.id);
      });
    },

    /**
     * The start of a dead letter's longer schedule: the endpoint's waits (its retry_schedule, or
     * the default) in ms, and when the next attempt comes; none: the dead letter gives up now.
     */
    async beginWebhookRetries(input: { deliveryId: string; deadLetterId: string }): Promise<number[]> {
      const dl = await retryingLetter(input);
      if (!dl || dl.status === 'delivered') return [];
      const row = await db('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .where('d.id', input.deliveryId)
        .first('e.retry_schedule');
      const delaysMs = ((row?.retry_schedule as number[] | null) ?? DEFAULT_RETRY_SCHEDULE_S).map((s) => s * 1000);
      await db('webhook_dead_letters')
        .where({ id: input.deadLetterId, status: 'dead' })
        .update(
          delaysMs.length
            ? { retry_state: 'retrying', next_attempt_at: new Date(Date.now() + delaysMs[0]) }
            : { retry_state: 'gave_up', next_attempt_at: null },
        );
      return delaysMs;
    },

    /**
     * One attempt of a dead letter's longer schedule (numbered after the message's earlier
     * attempts). A 2xx marks the dead letter delivered; else the next attempt's time, or (the
     * last step: nextDelayMs null) the dead letter gives up. `done`: delivered meanwhile.
     */
    async keepTryingWebhook(input: {
      deliveryId: string;
      deadLetterId: string;
      nextDelayMs: number | null;
    }): Promise<KeepTryingAttempt> {
      const dl = await retryingLetter(input);
      if (!dl) return { ok: false, cancelled: true, error: 'not a retrying dead letter' };
      if (dl.status === 'delivered') return { ok: true, done: true };
      const n = await db('webhook_attempts')
        .where({ delivery_id: input.deliveryId })
        .count<{ count: string }[]>('id as count');
      const attemptNo = Number(n[0].count) + 1;
      const r = await attempt({ deliveryId: input.deliveryId, attempt: attemptNo, kind: 'automatic' });
      const last = `${attemptNo} attempts failed; last: ${r.error ?? 'no response'}`;
      await db('webhook_dead_letters')
        .where({ id: input.deadLetterId, status: 'dead' })
        .update(
          r.ok
            ? { status: 'delivered', delivered_at: db.fn.now(), next_attempt_at: null }
            : r.cancelled || input.nextDelayMs === null
              ? { retry_state: 'gave_up', next_attempt_at: null, reason: r.cancelled ? 'endpoint removed' : last }
              : { next_attempt_at: new Date(Date.now() + input.nextDelayMs), reason: last },
        );
      if (!r.ok && !r.cancelled && input.nextDelayMs === null)
        logger.warn({ deliveryId: input.deliveryId, deadLetterId: input.deadLetterId }, 'webhook retries gave up');
      return r;
    },

    /** The last attempt of the longer schedule did not report back: the dead letter gives up. */
    async endWebhookRetries(input: { deadLetterId: string; error: string }): Promise<void> {
      await db('webhook_dead_letters')
        .where({ id: input.deadLetterId, status: 'dead', retry_state: 'retrying' })
        .update({ retry_state: 'gave_up', next_attempt_at: null, reason: `retries ended; last: ${input.error}` });
    },

    /** One replay attempt of a dead letter; success marks the dead letter and its delivery delivered. */
    async replayDeadLetter(input: WebhookReplayInput): Promise<ReplayOutcome> {
      const dl = await db('webhook_dead_letters').where({ id: input.deadLetterId }).first('delivery_id', 'status');
      if (!dl) throw new Error(`no dead letter ${input.deadLetterId}`);
      if (dl.status === 'delivered') return { ok: true, status: 'delivered' };
      const n = await db('webhook_attempts')
        .where({ delivery_id: dl.delivery_id })
        .count<{ count: string }[]>('id as count');
      const r = await attempt({ deliveryId: dl.delivery_id, attempt: Number(n[0].count) + 1, kind: 'replay' });
      await db('webhook_dead_letters')
        .where({ id: input.deadLetterId })
        .update({
          replays: db.raw('replays + 1'),
          replayed_at: db.fn.now(),
          ...(r.ok ? { status: 'delivered', delivered_at: db.fn.now(), next_attempt_at: null } : {}),
        });
      return { ...r, status: r.ok ? 'delivered' : 'dead' };
    },
  };
}
