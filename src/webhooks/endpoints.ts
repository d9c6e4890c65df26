/**
 * Webhook endpoints, messages, attempts and dead letters as the payment API shows them
 * (EndpointOut, AttemptOut, DeadLetterOut). Every query is scoped to the API key that owns the
 * endpoints; secrets are sealed at rest and shown once: when the endpoint is created and when
 * its secret is rotated. After a rotation the previous secret keeps signing for
 * SECRET_ROTATION_OVERLAP_MS (both signatures in webhook-signature, space-separated).
 */
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';
import { newId } from '../ids';
import { afterCursor, pageOf, type Page } from '../http/pagination';
import { sealSecret } from './secret-box';
import { generateWebhookSecret } from './signing';
import { DEFAULT_RETRY_SCHEDULE_S } from './index';

/** How long the previous secret still signs after a rotation. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export interface EndpointIn {
  url: string;
  description?: string;
  publicPayments?: boolean;
  /** null or absent: every event type */
  eventTypes?: string[] | null;
  disabled?: boolean;
  /** seconds to wait before each retry after the 1, 2 and 4 s ones; null or absent: the default */
  retrySchedule?: number[] | null;
}
export type EndpointPatch = Partial<EndpointIn>;

export interface EndpointOut {
  id: string;
  url: string;
  description: string;
  publicPayments: boolean;
  mode: Mode;
  eventTypes: string[] | null;
  disabled: boolean;
  /** the schedule in effect (the endpoint's own, or DEFAULT_RETRY_SCHEDULE_S) */
  retrySchedule: number[];
  createdAt: string;
}

export interface AttemptOut {
  id: string;
  messageId: string;
  endpointId: string;
  paymentId: string;
  orderId: string;
  eventStatus: string;
  attempt: number;
  kind: string;
  status: 'succeeded' | 'failed';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  createdAt: string;
}

export interface MessageRef {
  id: string;
  endpointId: string;
  state: string;
  disabled: boolean;
}

export interface DeadLetterOut {
  id: string;
  /** the webhook-id of the message */
  messageId: string;
  endpointId: string;
  url: string;
  paymentId: string;
  orderId: string;
  event: unknown;
  status: 'dead' | 'delivered';
  /** dead and still retried on the endpoint's schedule, dead and given up, or delivered */
  state: DeadLetterState;
  nextAttemptAt: string | null;
  reason: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  replays: number;
  createdAt: string;
  replayedAt: string | null;
  deliveredAt: string | null;
}

export type DeadLetterState = 'retrying' | 'gave_up' | 'delivered';

interface Owner {
  id: string;
  mode: Mode;
}

type Row = Record<string, unknown>;
const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : v ? String(v) : null);

const endpointOut = (r: Row): EndpointOut => ({
  id: String(r.id),
  url: String(r.url),
  description: String(r.description),
  publicPayments: Boolean(r.public_payments),
  mode: r.mode as EndpointOut['mode'],
  eventTypes: (r.event_types as string[] | null) ?? null,
  disabled: Boolean(r.disabled),
  retrySchedule: [...((r.retry_schedule as number[] | null) ?? DEFAULT_RETRY_SCHEDULE_S)],
  createdAt: iso(r.created_at)!,
});

const retryScheduleColumn = (s: number[] | null | undefined) => (s ? JSON.stringify(s) : null);

const eventTypesColumn = (types: string[] | null | undefined) =>
  types && types.length > 0 ? JSON.stringify([...new Set(types)]) : null;

export async function createEndpoint(
  db: Db,
  config: Config,
  owner: Owner,
  input: EndpointIn,
): Promise<EndpointOut & { secret: string }> {
  const secret = generateWebhookSecret();
  const [row] = await db('webhook_endpoints')
    .insert({
      id: newId('ep'),
      api_key_id: owner.id,
      mode: owner.mode,
      url: input.url,
      description: input.description ?? '',
      public_payments: input.publicPayments ?? false,
      event_types: eventTypesColumn(input.eventTypes),
      disabled: input.disabled ?? false,
      retry_schedule: retryScheduleColumn(input.retrySchedule),
      secret_ciphertext: sealSecret(config.webhooks.secretKey, secret),
    })
    .returning('*');
  return { ...endpointOut(row), secret };
}

const ownEndpoints = (db: Db, owner: Owner) =>
  db('webhook_endpoints as e').where('e.api_key_id', owner.id).whereNull('e.deleted_at');

export async function listEndpoints(
  db: Db,
  owner: Owner,
  page: { limit: number; startingAfter?: string },
): Promise<Page<EndpointOut>> {
  const q = afterCursor(ownEndpoints(db, owner).select('e.*'), {
    alias: 'e',
    table: 'webhook_endpoints',
    cursor: page.startingAfter,
    order: 'asc',
  });
  return pageOf(q, page.limit, endpointOut);
}

export async function getEndpoint(db: Db, owner: Owner, id: string): Promise<EndpointOut | undefined> {
  const row = await ownEndpoints(db, owner).where('e.id', id).first('e.*');
  return row ? endpointOut(row) : undefined;
}

/** Change url, description, publicPayments, eventTypes, disabled or retrySchedule; undefined when not found. */
export async function updateEndpoint(
  db: Db,
  owner: Owner,
  id: string,
  patch: EndpointPatch,
): Promise<EndpointOut | undefined> {
  const [row] = await db('webhook_endpoints')
    .where({ id, api_key_id: owner.id })
    .whereNull('deleted_at')
    .update({
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.publicPayments !== undefined ? { public_payments: patch.publicPayments } : {}),
      ...(patch.eventTypes !== undefined ? { event_types: eventTypesColumn(patch.eventTypes) } : {}),
      ...(patch.disabled !== undefined ? { disabled: patch.disabled } : {}),
      ...(patch.retrySchedule !== undefined ? { retry_schedule: retryScheduleColumn(patch.retrySchedule) } : {}),
      updated_at: db.fn.now(),
    })
    .returning('*');
  return row ? endpointOut(row) : undefined;
}

/** A new secret (returned once); the current one becomes the previous one and signs for 24 h more. */
export async function rotateSecret(
  db: Db,
  config: Config,
  owner: Owner,
  id: string,
  now = Date.now(),
): Promise<{ id: string; secret: string; previousSecretExpiresAt: string } | undefined> {
  const secret = generateWebhookSecret();
  const expires = new Date(now + SECRET_ROTATION_OVERLAP_MS);
  const [row] = await db('webhook_endpoints')
    .where({ id, api_key_id: owner.id })
    .whereNull('deleted_at')
    .update({
      previous_secret_ciphertext: db.ref('secret_ciphertext'),
      previous_secret_expires_at: expires,
      secret_ciphertext: sealSecret(config.webhooks.secretKey, secret),
      updated_at: db.fn.now(),
    })
    .returning('id');
  return row ? { id: String(row.id), secret, previousSecretExpiresAt: expires.toISOString() } : undefined;
}

/** Removes (soft-deletes) the endpoint: no new deliveries, pending retries stop. False when not found. */
export async function removeEndpoint(db: Db, owner: Owner, id: string): Promise<boolean> {
  const n = await db('webhook_endpoints')
    .where({ id, api_key_id: owner.id })
    .whereNull('deleted_at')
    .update({ deleted_at: db.fn.now() });
  return n > 0;
}

const attemptOut = (r: Row): AttemptOut => ({
  id: `att_${r.id}`,
  messageId: String(r.delivery_id),
  endpointId: String(r.endpoint_id),
  paymentId: String(r.payment_id),
  orderId: String(r.order_id),
  eventStatus: String(r.event_status),
  attempt: Number(r.attempt),
  kind: String(r.kind),
  status:
    r.status_code !== null && Number(r.status_code) >= 200 && Number(r.status_code) < 300 ? 'succeeded' : 'failed',
  statusCode: r.status_code === null ? null : Number(r.status_code),
  error: (r.error as string | null) ?? null,
  durationMs: Number(r.duration_ms),
  createdAt: iso(r.started_at)!,
});

/** The endpoint's attempts, newest first: optionally only succeeded or failed ones, or those after a time. */
export async function listAttempts(
  db: Db,
  endpointId: string,
  opts: { status?: 'succeeded' | 'failed'; after?: Date; limit: number; startingAfter?: string },
): Promise<Page<AttemptOut>> {
  const cursor = opts.startingAfter ? Number(/^att_(\d+)$/.exec(opts.startingAfter)?.[1] ?? -1) : undefined;
  const q = db('webhook_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.endpoint_id', endpointId)
    .modify((x) => {
      if (opts.status === 'succeeded') x.whereBetween('a.status_code', [200, 299]);
      if (opts.status === 'failed')
        x.where((w) => w.whereNull('a.status_code').orWhereNotBetween('a.status_code', [200, 299]));
      if (opts.after) x.where('a.started_at', '>', opts.after);
      if (cursor !== undefined) x.where('a.id', '<', cursor);
    })
    .orderBy('a.id', 'desc')
    .select('a.*', 'd.endpoint_id', 'd.payment_id', 'd.order_id', 'd.event_status');
  return pageOf(q, opts.limit, attemptOut);
}

/** A message (delivery) of one of the key's endpoints. */
export async function getMessage(db: Db, owner: Owner, messageId: string): Promise<MessageRef | undefined> {
  const row = await db('webhook_deliveries as d')
    .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .where({ 'd.id': messageId, 'e.api_key_id': owner.id })
    .whereNull('e.deleted_at')
    .first('d.id', 'd.endpoint_id', 'd.state', 'e.disabled');
  return row
    ? {
        id: String(row.id),
        endpointId: String(row.endpoint_id),
        state: String(row.state),
        disabled: Boolean(row.disabled),
      }
    : undefined;
}

const deadLetterQuery = (db: Db, owner: Owner) =>
  db('webhook_dead_letters as l')
    .join('webhook_deliveries as d', 'd.id', 'l.delivery_id')
    .join('webhook_endpoints as e', 'e.id', 'l.endpoint_id')
    .where('e.api_key_id', owner.id)
    .select(
      'l.id',
      'l.delivery_id',
      'l.endpoint_id',
      'e.url',
      'd.payment_id',
      'd.order_id',
      'd.payload',
      'd.attempts',
      'd.last_status_code',
      'd.last_error',
      'l.status',
      'l.retry_state',
      'l.next_attempt_at',
      'l.reason',
      'l.replays',
      'l.created_at',
      'l.replayed_at',
      'l.delivered_at',
    );

const deadLetterOut = (r: Row): DeadLetterOut => ({
  id: String(r.id),
  messageId: String(r.delivery_id),
  endpointId: String(r.endpoint_id),
  url: String(r.url),
  paymentId: String(r.payment_id),
  orderId: String(r.order_id),
  event: JSON.parse(String(r.payload)),
  status: r.status as DeadLetterOut['status'],
  state: r.status === 'delivered' ? 'delivered' : (r.retry_state as DeadLetterState),
  nextAttemptAt: r.status === 'delivered' ? null : iso(r.next_attempt_at),
  reason: String(r.reason),
  attempts: Number(r.attempts),
  lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
  lastError: (r.last_error as string | null) ?? null,
  replays: Number(r.replays),
  createdAt: iso(r.created_at)!,
  replayedAt: iso(r.replayed_at),
  deliveredAt: iso(r.delivered_at),
});

export async function listDeadLetters(
  db: Db,
  owner: Owner,
  opts: { status?: 'dead' | 'delivered'; state?: DeadLetterState; limit: number; startingAfter?: string },
): Promise<Page<DeadLetterOut>> {
  const q = afterCursor(
    deadLetterQuery(db, owner).modify((x) => {
      if (opts.status) x.where('l.status', opts.status);
      if (opts.state === 'delivered') x.where('l.status', 'delivered');
      else if (opts.state) x.where({ 'l.status': 'dead', 'l.retry_state': opts.state });
    }),
    { alias: 'l', table: 'webhook_dead_letters', cursor: opts.startingAfter, order: 'desc' },
  );
  return pageOf(q, opts.limit, deadLetterOut);
}

export async function getDeadLetter(db: Db, owner: Owner, id: string): Promise<DeadLetterOut | undefined> {
  const row = await deadLetterQuery(db, owner).where('l.id', id).first();
  return row ? deadLetterOut(row) : undefined;
}

/** A payment's webhook deliveries, their attempts and dead letters as stored, for the order timeline. */
export async function webhookRowsOfPayment(db: Db, paymentId: string) {
  const [deliveries, attempts, deadLetters] = await Promise.all([
    db('webhook_deliveries')
      .where({ payment_id: paymentId })
      .select('id', 'endpoint_id', 'event_status', 'state', 'attempts', 'created_at'),
    db('webhook_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('d.payment_id', paymentId)
      .select(
        'a.delivery_id',
        'd.endpoint_id',
        'a.attempt',
        'a.kind',
        'a.started_at',
        'a.duration_ms',
        'a.status_code',
        'a.error',
      ),
    db('webhook_dead_letters as l')
      .join('webhook_deliveries as d', 'd.id', 'l.delivery_id')
      .where('d.payment_id', paymentId)
      .select('l.*', 'd.endpoint_id'),
  ]);
  return { deliveries, attempts, deadLetters };
}

/** The ids of a key's endpoints. */
export const endpointIdsOfKey = (db: Db, apiKeyId: string): Promise<string[]> =>
  db('webhook_endpoints').where({ api_key_id: apiKeyId }).pluck('id');

/** How many dead letters wait for a replay (the gateway's /metrics). */
export const openDeadLetters = async (db: Db): Promise<number> =>
  Number(
    (await db('webhook_dead_letters').where({ status: 'dead' }).count<{ count: string }[]>('id as count'))[0].count,
  );
