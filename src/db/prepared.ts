/**
 * A hot statement as a named prepared statement: Postgres parses and plans its text once per
 * connection rather than at every call, and knex's query building is skipped. Same `?`
 * placeholders, bindings, result and knex events ('query', 'query-response', 'query-error') as
 * `db.raw`, on `db`'s pool or transaction (a text with `??` goes through db.raw). Only for texts
 * from a fixed set: each connection keeps every text it prepared. docs/engine.md: what it saves.
 */
import { createHash } from 'node:crypto';
import type { Db } from './knex';

interface PgConnection {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
  __knexUid?: string;
  __knexTxId?: string;
}
interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<unknown>;
  emit(event: string, ...args: unknown[]): boolean;
}

/**
 * Data-modifying CTEs of one feature that another feature's statement runs first, in the same
 * statement (one round trip, one transaction): `ctes` is a list of `name AS (...)`, `matched` the
 * CTE whose rows say it applied, and `value` the column of it the statement reports.
 */
export interface LeadingCtes {
  ctes: string;
  bindings: unknown[];
  matched: string;
  value: string;
}

const texts = new Map<string, { name: string; text: string; generation: number }>();

/** `sql`'s name and its text with `$n` for each `?` (the same rule as knex's for Postgres). */
function statementOf(sql: string, generation = 0): { name: string; text: string; generation: number } {
  let s = texts.get(sql);
  if (!s || s.generation < generation) {
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 20);
    s = { name: `talat_${hash}_${generation}`, text, generation };
    texts.set(sql, s);
  }
  return s;
}

/** A prepared plan whose result columns changed under it (a migration while running). */
const staleCachedPlan = (e: unknown) => /cached plan must not change result type/.test(String((e as Error)?.message));

export async function prepared<R = Record<string, unknown>>(
  db: Db,
  sql: string,
  bindings: unknown[],
): Promise<{ rows: R[] }> {
  // identifier bindings (??) are knex's to expand: such a text goes through db.raw
  if (sql.includes('??')) return (await db.raw(sql, bindings as never)) as unknown as { rows: R[] };
  const client = db.client as unknown as KnexClient;
  const { name, text, generation } = statementOf(sql);
  const conn = await client.acquireConnection();
  const obj = { method: 'raw', sql, bindings, __knexUid: conn.__knexUid, __knexTxId: conn.__knexTxId };
  client.emit('query', obj);
  try {
    let result: { rows: unknown[] };
    try {
      result = await conn.query({ name, text, values: bindings });
    } catch (e) {
      if (!staleCachedPlan(e)) throw e;
      // a new name, prepared afresh on every connection; retried once unless the error aborted a transaction
      const next = statementOf(sql, generation + 1);
      if (db.isTransaction) throw e;
      result = await conn.query({ name: next.name, text: next.text, values: bindings });
    }
    client.emit('query-response', result, obj);
    return result as { rows: R[] };
  } catch (e) {
    client.emit('query-error', e, obj);
    throw e;
  } finally {
    await client.releaseConnection(conn);
  }
}
