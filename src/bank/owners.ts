/**
 * Which key (merchant) a partner-bank user or bank order belongs to (bank_user_owners,
 * bank_order_owners): the first key to create the id claims it, per mode. The bank routes answer
 * another key as the bank answers for an id it does not have (user) or one taken with other
 * details (order), so a key learns nothing of another merchant's customers.
 */
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';

const TABLES = {
  user: { table: 'bank_user_owners', column: 'user_id' },
  order: { table: 'bank_order_owners', column: 'order_id' },
} as const;
export type BankObject = keyof typeof TABLES;

export interface Claim {
  /** the id is the key's (claimed now or before) */
  mine: boolean;
  /** this call claimed it: to release when the bank refuses the create */
  fresh: boolean;
}

/** Claims `id` for the key unless another key has it. */
export async function claimBankObject(db: Db, kind: BankObject, mode: Mode, id: string, keyId: string): Promise<Claim> {
  const { table, column } = TABLES[kind];
  const inserted = await db(table)
    .insert({ mode, [column]: id, api_key_id: keyId })
    .onConflict(['mode', column])
    .ignore()
    .returning('api_key_id');
  if (inserted.length > 0) return { mine: true, fresh: true };
  return { mine: await ownsBankObject(db, kind, mode, id, keyId), fresh: false };
}

/** Gives up a claim this key made (the bank refused to create the object). */
export async function releaseBankObject(
  db: Db,
  kind: BankObject,
  mode: Mode,
  id: string,
  keyId: string,
): Promise<void> {
  const { table, column } = TABLES[kind];
  await db(table)
    .where({ mode, [column]: id, api_key_id: keyId })
    .delete();
}

export async function ownsBankObject(
  db: Db,
  kind: BankObject,
  mode: Mode,
  id: string,
  keyId: string,
): Promise<boolean> {
  const { table, column } = TABLES[kind];
  const row = await db(table)
    .where({ mode, [column]: id })
    .first('api_key_id');
  return row?.api_key_id === keyId;
}
