/**
 * Webhook endpoints and dead letters as the payment API shows them (EndpointOut, DeadLetterOut).
 * Every query is scoped to the API key that owns the endpoints; secrets are sealed at rest and
 * shown once, when the endpoint is created.
 */
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';
import { newId } from '../ids';
import { sealSecret } from './secret-box';
import { generateWebhookSecret } from './signing';

export interface EndpointIn {
  url: string;
  description?: string;
  publicPayments?: boolean;
}

export interface EndpointOut {
  id: string;
  url: string;
  description: string;
  publicPayments: boolean;
  mode: Mode;
  createdAt: string;
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
  reason: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  replays: number;
  createdAt: string;
  replayedAt: string | null;
  deliveredAt: string | null;
}

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
  createdAt: iso(r.created_at)!,
});

export async function createEndpoint(db: Db, config: Config, owner: Owner, input: EndpointIn): Promise<EndpointOut & { secret: string }> {
  const secret = generateWebhookSecret();
  const [row] = await db('webhook_endpoints')
    .insert({
      id: newId('ep'),
      api_key_id: owner.id,
      mode: owner.mode,
      url: input.url,
      description: input.description ?? '',
      public_payments: input.publicPayments ?? false,
      secret_ciphertext: sealSecret(config.webhooks.secretKey, secret),
    })
    .returning('*');
  return { ...endpointOut(row), secret };
}

export async function listEndpoints(db: Db, owner: Owner): Promise<EndpointOut[]> {
  const rows = await db('webhook_endpoints').where({ api_key_id: owner.id }).whereNull('deleted_at').orderBy('created_at');
  return rows.map(endpointOut);
}

/** Removes (soft-deletes) the endpoint: no new deliveries, pending retries stop. False when not found. */
export async function removeEndpoint(db: Db, owner: Owner, id: string): Promise<boolean> {
  const n = await db('webhook_endpoints').where({ id, api_key_id: owner.id }).whereNull('deleted_at').update({ deleted_at: db.fn.now() });
  return n > 0;
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
  reason: String(r.reason),
  attempts: Number(r.attempts),
  lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
  lastError: (r.last_error as string | null) ?? null,
  replays: Number(r.replays),
  createdAt: iso(r.created_at)!,
  replayedAt: iso(r.replayed_at),
  deliveredAt: iso(r.delivered_at),
});

export async function listDeadLetters(db: Db, owner: Owner, opts: { status?: 'dead' | 'delivered'; limit: number }): Promise<DeadLetterOut[]> {
  const rows = await deadLetterQuery(db, owner)
    .modify((q) => (opts.status ? q.where('l.status', opts.status) : q))
    .orderBy('l.created_at', 'desc')
    .limit(opts.limit);
  return rows.map(deadLetterOut);
}

export async function getDeadLetter(db: Db, owner: Owner, id: string): Promise<DeadLetterOut | undefined> {
  const row = await deadLetterQuery(db, owner).where('l.id', id).first();
  return row ? deadLetterOut(row) : undefined;
}
