/** The console_sessions and console_audit tables: the only place they are read or written. */
import type { Db } from '../../db/knex';

export interface ConsoleSession {
  id: string;
  apiKeyId: string;
  lastSeenAt: Date;
}

export async function insertSession(db: Db, s: { id: string; apiKeyId: string; at: Date }): Promise<void> {
  await db('console_sessions').insert({ id: s.id, api_key_id: s.apiKeyId, created_at: s.at, last_seen_at: s.at });
}

/** An open session (not ended) by its id. */
export async function openSession(db: Db, id: string): Promise<ConsoleSession | undefined> {
  const r = await db('console_sessions').where({ id }).whereNull('ended_at').first();
  return r ? { id: r.id, apiKeyId: r.api_key_id, lastSeenAt: r.last_seen_at } : undefined;
}

export async function touchSession(db: Db, id: string, at: Date): Promise<void> {
  await db('console_sessions').where({ id }).update({ last_seen_at: at });
}

export async function endSession(db: Db, id: string, at: Date): Promise<void> {
  await db('console_sessions').where({ id }).whereNull('ended_at').update({ ended_at: at });
}

export interface AuditEntry {
  apiKeyId: string;
  sessionId: string;
  action: string;
  orderId?: string;
  detail: Record<string, unknown>;
  at: Date;
}

export async function writeAudit(db: Db, e: AuditEntry): Promise<void> {
  await db('console_audit').insert({
    api_key_id: e.apiKeyId,
    session_id: e.sessionId,
    action: e.action,
    order_id: e.orderId ?? null,
    detail: JSON.stringify(e.detail),
    at: e.at,
  });
}

/** The audit entries about an order written by this key's sessions, oldest first. */
export async function auditOfOrder(db: Db, apiKeyId: string, orderId: string): Promise<AuditEntry[]> {
  const rows = await db('console_audit').where({ order_id: orderId, api_key_id: apiKeyId }).orderBy('at');
  return rows.map((r: Record<string, unknown>) => ({
    apiKeyId: String(r.api_key_id),
    sessionId: String(r.session_id),
    action: String(r.action),
    orderId: String(r.order_id),
    detail: r.detail as Record<string, unknown>,
    at: r.at as Date,
  }));
}
