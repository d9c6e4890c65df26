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
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
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

const PAYMENTS: Partial<Record<SettlementProvider, { method: string; ref: string }>> = {
  card: { method: 'card', ref: 'p.provider_ref' },
  promptpay: { method: 'qr', ref: "p.details->'qr'->>'ref1'" },
};
const REFUNDS: Partial<Record<SettlementProvider, string>> = { card: 'card', bank: 'qr' };

/** The lines the sandbox `provider` settles in its file of `date`. */
export async function sandboxSettlementEntries(
  db: Db,
  provider: SettlementProvider,
  date: string,
): Promise<SettlementEntry[]> {
  const due = addDays(date, -SETTLEMENT_DELAY_DAYS[provider]);
  const [from, to] = [bangkokDayStart(due), bangkokDayStart(addDays(due, 1))];
  const entries: SettlementEntry[] = [];
  const p = PAYMENTS[provider];
  if (p) {
    const { rows } = await db.raw(
      `SELECT ${p.ref} AS ref, p.amount_satang, x.at FROM payments p
         JOIN (SELECT payment_id, min(created_at) AS at FROM payment_events
                WHERE to_status = 'paid' AND created_at >= ? AND created_at < ? GROUP BY payment_id
               UNION ALL
               SELECT payment_id, created_at FROM payment_conflicts
                WHERE result_status = 'success' AND created_at >= ? AND created_at < ?) x ON x.payment_id = p.id
        WHERE p.method = ? AND p.mode = 'sandbox' AND ${p.ref} IS NOT NULL ORDER BY x.at, p.id`,
      [from, to, from, to, p.method],
    );
    for (const r of rows as { ref: string; amount_satang: string; at: Date }[]) {
      const amount = Number(r.amount_satang);
      const quirk = amount % 100;
      if (quirk === 23) continue;
      const e: SettlementEntry = {
        kind: 'payment',
        reference: r.ref,
        amountSatang: quirk === 21 ? amount - 100 : amount,
        txnAt: r.at,
      };
      entries.push(e, ...(quirk === 22 ? [e] : []));
    }
  }
  const refundMethod = REFUNDS[provider];
  if (refundMethod) {
    const rows = await db('refunds as r')
      .join('payments as p', 'p.id', 'r.payment_id')
      .where({ 'r.status': 'succeeded', 'p.method': refundMethod, 'p.mode': 'sandbox' })
      .where('r.updated_at', '>=', from)
      .where('r.updated_at', '<', to)
      .whereNotNull('r.provider_ref')
      .orderBy(['r.updated_at', 'r.id'])
      .select('r.provider_ref', 'r.amount_satang', 'r.updated_at');
    for (const r of rows)
      entries.push({
        kind: 'refund',
        reference: r.provider_ref,
        amountSatang: Number(r.amount_satang),
        txnAt: r.updated_at,
      });
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
  deps: { db: Db; store: SettlementStore },
  date: string,
): Promise<string[]> {
  const written: string[] = [];
  for (const provider of SETTLEMENT_PROVIDERS) {
    const key = settlementKey(provider, date);
    if (await deps.store.exists(key)) continue;
    await deps.store.put(
      key,
      formatSettlementFile(provider, date, await sandboxSettlementEntries(deps.db, provider, date)),
    );
    written.push(key);
  }
  return written;
}

/** Every hour (and now): the files of the last three finished Bangkok days that are missing. */
export function startSandboxSettlements(deps: { db: Db; store: SettlementStore; logger: Logger }): {
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
