/**
 * The handler-form record stores of the contract ("Wallet callback record"): wallet_callbacks,
 * cardnet_callbacks and bankapp_callbacks, one row per order. A callback for an order that is
 * already recorded with the same payment id and success value changes nothing (a duplicate);
 * another one replaces the record and moves updated_at.
 *
 * Two ways to write one, with the same columns and the same conflict rule: alone
 * (saveHandlerRecord: the wallet handler), or as part of the statement that finishes a callback's
 * receipt (handlerRecordFrom: card network and bank app), written only when the receipt is.
 */
import type { Knex } from 'knex';
import type { HandlerEvent } from '../domain/handler-form';

export type HandlerStore = 'wallet_callbacks' | 'cardnet_callbacks' | 'bankapp_callbacks';

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

/** Saves the record; resolves to false when an identical record was there already. */
export async function saveHandlerRecord(
  q: Knex | Knex.Transaction,
  table: HandlerStore,
  e: HandlerEvent,
  event: unknown,
  body: unknown,
): Promise<boolean> {
  const result = await q.raw(
    `insert into ?? (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb) ${ON_CONFLICT} returning order_id`,
    [table, ...valuesOf(e, event, body), table, table],
  );
  return (result.rows as unknown[]).length > 0;
}

/**
 * The same write as an INSERT ... SELECT that writes the record once per row of `source` (a
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
