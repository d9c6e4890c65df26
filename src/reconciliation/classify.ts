/**
 * The classification of one file's lines (pure): each line against the Talat item its reference
 * names, in file order. An item is claimed (matched or amount_mismatch) by one line only: the
 * next line naming it, in this file or after a claim in another file, is a duplicate. Late
 * payments recorded by Talat (a success after expiry, handled by LATE_PAYMENT_POLICY) come out
 * as expected exceptions.
 */
import type { Outcome } from './index';
import type { SettlementLine } from './parsers';

export interface TalatItem {
  kind: 'payment' | 'refund';
  id: string;
  paymentId: string;
  orderId: string;
  amountSatang: number;
  /** a paid (or since refunded) payment, a succeeded refund: money the provider should settle */
  settles: boolean;
  status: string;
  /** the late payment or conflict Talat recorded for the payment, if any */
  conflict?: { id: string; result: string; resolution: string };
  /** a card authorisation (capture=false) that ended: what was held; amountSatang is the capture */
  authorizedSatang?: number;
  /** a top-up payment: the order whose difference it paid */
  topUpOf?: string;
}

export interface ClassifiedRow {
  lineNo: number | null;
  outcome: Outcome;
  expected: boolean;
  kind: 'payment' | 'refund' | 'fee';
  reference: string | null;
  amountSatang: number;
  talatAmountSatang: number | null;
  itemId: string | null;
  paymentId: string | null;
  orderId: string | null;
  txnAt: Date | null;
  detail: string | null;
}

const thb = (satang: number) => (satang / 100).toFixed(2);

/**
 * `find(kind, reference)` is the item a reference names; `claimedElsewhere(kind, id)` says
 * whether a line of another run of this provider already claimed it.
 */
export function classifyLines(
  lines: SettlementLine[],
  find: (kind: 'payment' | 'refund', reference: string) => TalatItem | undefined,
  claimedElsewhere: (kind: 'payment' | 'refund', id: string) => string | undefined,
): ClassifiedRow[] {
  const claimedHere = new Map<string, number>();
  return lines.map((l) => {
    const base = {
      lineNo: l.lineNo,
      kind: l.kind,
      reference: l.reference,
      amountSatang: l.amountSatang,
      txnAt: l.txnAt,
      expected: false,
      talatAmountSatang: null,
      itemId: null,
      paymentId: null,
      orderId: null,
    };
    if (l.kind === 'fee') return { ...base, outcome: 'fee', detail: null };
    const item = find(l.kind, l.reference!);
    if (!item) return { ...base, outcome: 'unknown', detail: `no ${l.kind} of Talat has this reference` };
    const known = {
      ...base,
      talatAmountSatang: item.amountSatang,
      itemId: item.id,
      paymentId: item.paymentId,
      orderId: item.orderId,
    };
    if (!item.settles) {
      const late = item.kind === 'payment' && item.conflict?.result === 'success';
      return {
        ...known,
        outcome: 'unknown',
        expected: late,
        detail: late
          ? `late payment ${item.conflict!.id} recorded by Talat (payment ${item.status}, resolution ${item.conflict!.resolution})`
          : item.status === 'authorized'
            ? 'the card payment is only authorized in Talat (held, not captured): an authorisation is not settled money'
            : item.authorizedSatang !== undefined
              ? `the authorisation of ${thb(item.authorizedSatang)} THB was released in Talat, nothing captured`
              : `the ${item.kind} is ${item.status} in Talat, not settled money`,
      };
    }
    const key = `${item.kind}:${item.id}`;
    const here = claimedHere.get(key);
    const elsewhere = here === undefined ? claimedElsewhere(item.kind, item.id) : undefined;
    if (here !== undefined || elsewhere !== undefined)
      return {
        ...known,
        outcome: 'duplicate',
        detail: here !== undefined ? `already settled on line ${here}` : `already settled in ${elsewhere}`,
      };
    claimedHere.set(key, l.lineNo);
    if (item.amountSatang !== l.amountSatang)
      return {
        ...known,
        outcome: 'amount_mismatch',
        detail:
          item.authorizedSatang !== undefined
            ? `settled ${thb(l.amountSatang)} THB, Talat captured ${thb(item.amountSatang)} THB of ${thb(item.authorizedSatang)} THB authorised${l.amountSatang === item.authorizedSatang ? ' (the line is the authorisation, not the capture)' : ''}`
            : `settled ${thb(l.amountSatang)} THB, Talat has ${thb(item.amountSatang)} THB${item.topUpOf ? ` (top-up of order ${item.topUpOf})` : ''}`,
      };
    // a top-up is its own payment: its row names the order it completed
    return { ...known, outcome: 'matched', detail: item.topUpOf ? `top-up of order ${item.topUpOf}` : null };
  }) as ClassifiedRow[];
}
