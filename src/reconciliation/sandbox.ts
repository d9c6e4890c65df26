/**
 * The sandbox providers' settlement files (`npm start` with the simulators): after a Bangkok day
 * ends, each provider drops the file of what it settled into the settlements bucket, made from
 * Talat's sandbox records with the sandbox's settlement quirks, chosen by the satang part of
 * the amount as the callback simulator's outcomes are:
 *   .21  settled one baht short (amount_mismatch)     .22  settled twice (duplicate)
 *   .23  never settled (unsettled)
 * plus one settlement Talat never saw (unknown) and the day's fee on every non-empty file; late
 * payments (a success after expiry) are settled too: the provider took the money.
 */
import type { Logger } from '../logger';
import type { SqlFragment } from '../domain/sql';
import type { Mode } from '../domain/mode';
import { paymentIdsSql, type PaymentMethod, type SettlementRef } from '../payments';
import {
  addDays,
  bangkokDayOf,
  bangkokDayStart,
  SETTLEMENT_DELAY_DAYS,
  SETTLEMENT_PROVIDERS,
  settlementKey,
  type SettlementProvider,
} from './index';
import type { SettlementStore } from './files';
import { formatSettlementFile, type SettlementEntry } from './parsers';

const PAYMENTS: Partial<Record<SettlementProvider, { method: PaymentMethod; ref: SettlementRef }>> = {
  card: { method: 'card', ref: 'providerRef' },
  promptpay: { method: 'qr', ref: 'qrRef1' },
};
const REFUNDS: Partial<Record<SettlementProvider, PaymentMethod>> = { card: 'card', bank: 'qr' };

type Taken = { ref: string; amountSatang: number; at: Date };
/**
 * What the sandbox providers read of the payments' and refunds' ledgers, oldest first: the
 * owners' repository functions (`paymentsTakenBetween`, `refundsSucceededBetween`) over the
 * database, wired where the file dropper starts (src/main.ts).
 */
export interface SandboxLedgers {
  paymentsTaken(w: { ref: SettlementRef; method: PaymentMethod; mode: Mode; from: Date; to: Date }): Promise<Taken[]>;
  refundsSucceeded(w: { from: Date; to: Date; payments: SqlFragment }): Promise<Taken[]>;
}

/** The lines the sandbox `provider` settles in its file of `date`. */
export async function sandboxSettlementEntries(
  ledgers: SandboxLedgers,
  provider: SettlementProvider,
  date: string,
): Promise<SettlementEntry[]> {
  const due = addDays(date, -SETTLEMENT_DELAY_DAYS[provider]);
  const [from, to] = [bangkokDayStart(due), bangkokDayStart(addDays(due, 1))];
  const entries: SettlementEntry[] = [];
  const p = PAYMENTS[provider];
  if (p) {
    for (const r of await ledgers.paymentsTaken({ ...p, mode: 'sandbox', from, to })) {
      const quirk = r.amountSatang % 100;
      if (quirk === 23) continue;
      const e: SettlementEntry = {
        kind: 'payment',
        reference: r.ref,
        amountSatang: quirk === 21 ? r.amountSatang - 100 : r.amountSatang,
        txnAt: r.at,
      };
      entries.push(e, ...(quirk === 22 ? [e] : []));
    }
  }
  const refundMethod = REFUNDS[provider];
  if (refundMethod) {
    const payments = paymentIdsSql(refundMethod, 'sandbox');
    for (const r of await ledgers.refundsSucceeded({ from, to, payments }))
      entries.push({ kind: 'refund', reference: r.ref, amountSatang: r.amountSatang, txnAt: r.at });
  }
  if (entries.length) {
    const noon = new Date(from.getTime() + 12 * 3_600_000);
    const stray = provider === 'promptpay' ? `STRAY${due.replace(/-/g, '')}` : `sim_stray_${due}`;
    entries.push({
      kind: provider === 'bank' ? 'refund' : 'payment',
      reference: stray,
      amountSatang: 12_345,
      txnAt: noon,
    });
    const gross = entries.reduce((s, e) => s + e.amountSatang, 0);
    entries.push({
      kind: 'fee',
      reference: null,
      amountSatang: Math.max(100, Math.round(gross * 0.0165)),
      txnAt: noon,
    });
  }
  return entries;
}

/** Writes the file of `date` of every sandbox provider that has none yet; returns the keys written. */
export async function dropSandboxSettlements(
  deps: { ledgers: SandboxLedgers; store: SettlementStore },
  date: string,
): Promise<string[]> {
  const written: string[] = [];
  for (const provider of SETTLEMENT_PROVIDERS) {
    const key = settlementKey(provider, date);
    if (await deps.store.exists(key)) continue;
    await deps.store.put(
      key,
      formatSettlementFile(provider, date, await sandboxSettlementEntries(deps.ledgers, provider, date)),
    );
    written.push(key);
  }
  return written;
}

/** Every hour (and now): the files of the last three finished Bangkok days that are missing. */
export function startSandboxSettlements(deps: { ledgers: SandboxLedgers; store: SettlementStore; logger: Logger }): {
  stop: () => void;
} {
  const tick = async () => {
    const today = bangkokDayOf(new Date());
    for (const back of [3, 2, 1]) {
      const keys = await dropSandboxSettlements(deps, addDays(today, -back));
      if (keys.length) deps.logger.info({ keys }, 'sandbox providers dropped their settlement files');
    }
  };
  const run = () => void tick().catch((e) => deps.logger.warn({ err: e }, 'sandbox settlement files failed'));
  run();
  const timer = setInterval(run, 3_600_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
