/**
 * The handler-form record stores of the contract ("Wallet callback record"). cardnet_callbacks
 * and bankapp_callbacks (signed callbacks): one row per order, written by the statement that
 * finishes a callback's receipt (handlerRecordFrom); the same payment id and success again
 * changes nothing, another replaces the record and moves updated_at. wallet_callbacks (the
 * public handler): append-only, one row per post (appendWalletRecord), so no post replaces another.
 */
import type { Knex } from 'knex';
import type { HandlerEvent } from '../domain/handler-form';

export type HandlerStore = 'cardnet_callbacks' | 'bankapp_callbacks';

const COLUMNS = 'order_id, payment_id, success, user_id, message, amount_satang, event, body';
/** the conflict rule; its two `??` are the table */
const ON_CONFLICT = `on conflict (order_id) do update set
       payment_id = excluded.payment_id, success = excluded.success, user_id = excluded.user_id, message = excluded.message,
       amount_satang = excluded.amount_satang, event = excluded.event, body = excluded.body, updated_at = now()
     where (??.payment_id, ??.success) is distinct from (excluded.payment_id, excluded.success)`;

const valuesOf = (e: HandlerEvent, event: unknown, body: unknown) => [
  e.orderId,
  e.paymentId,
  e.succeeded,
  e.userId,
  e.message,
  e.amountSatang,
  JSON.stringify(event ?? null),
  JSON.stringify(body ?? null),
];

/** Appends the wallet handler's record of one post (the table refuses updates). */
export async function appendWalletRecord(q: Knex, e: HandlerEvent, event: unknown, body: unknown): Promise<void> {
  await q.raw(`insert into wallet_callbacks (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)`, [
    ...valuesOf(e, event, body),
  ]);
}

/**
 * The signed callbacks' record as an INSERT ... SELECT that writes it once per row of `source` (a
 * common table expression of the statement it joins: none, nothing written). The values are cast
 * to their columns' types, as a SELECT's parameters carry none.
 */
export function handlerRecordFrom(
  source: string,
  table: HandlerStore,
  e: HandlerEvent,
  event: unknown,
  body: unknown,
): { sql: string; bindings: Knex.RawBinding[] } {
  if (!/^[a-z_]+$/.test(source)) throw new Error(`handlerRecordFrom: not a CTE name: ${source}`);
  return {
    sql: `insert into ?? (${COLUMNS})
     select ?::text, ?::text, ?::boolean, ?::text, ?::text, ?::bigint, ?::jsonb, ?::jsonb from ${source}
     ${ON_CONFLICT}`,
    bindings: [table, ...valuesOf(e, event, body), table, table],
  };
}
