/**
 * What the sandbox providers' file dropper (src/reconciliation/sandbox.ts) reads of the payments'
 * and refunds' ledgers: their owners' repository functions over the database.
 */
import type { Db } from '../db/knex';
import { paymentsTakenBetween } from '../payments/repository';
import type { SandboxLedgers } from '../reconciliation/sandbox';
import { refundsSucceededBetween } from '../refunds/repository';

export const sandboxLedgers = (db: Db): SandboxLedgers => ({
  paymentsTaken: (w) => paymentsTakenBetween(db, w),
  refundsSucceeded: (w) => refundsSucceededBetween(db, w),
});
