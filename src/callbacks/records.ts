/**
 * The handler-form record stores of SPEC.md ("Wallet callback record"): wallet_callbacks,
 * cardnet_callbacks and bankapp_callbacks, one row per order. A callback for an order that is
 * already recorded with the same payment id and success value changes nothing (a duplicate);
 * another one replaces the record and moves updated_at.
 */
import type { Knex } from 'knex';
import type { HandlerEvent } from '../domain/handler-form';

export type HandlerStore = 'wallet_callbacks' | 'cardnet_callbacks' | 'bankapp_callbacks';

/** Saves the record; resolves to false when an identical record was there already. */
export async function saveHandlerRecord(
  q: Knex | Knex.Transaction,
  table: HandlerStore,
  e: HandlerEvent,
  event: unknown,
  body: unknown,
): Promise<boolean> {
  const result = await q.raw(
    `insert into ?? (order_id, payment_id, success, user_id, message, amount_satang, event, body)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)
     on conflict (order_id) do update set
       payment_id = excluded.payment_id, success = excluded.success, user_id = excluded.user_id, message = excluded.message,
       amount_satang = excluded.amount_satang, event = excluded.event, body = excluded.body, updated_at = now()
     where (??.payment_id, ??.success) is distinct from (excluded.payment_id, excluded.success)
     returning order_id`,
    [
      table,
      e.orderId,
      e.paymentId,
      e.succeeded,
      e.userId,
      e.message,
      e.amountSatang,
      JSON.stringify(event ?? null),
      JSON.stringify(body ?? null),
      table,
      table,
    ],
  );
  return (result.rows as unknown[]).length > 0;
}
