/**
 * Payment states and their transition table: the one place transitions are decided.
 *
 *   pending --(provider success)--> paid
 *   pending --(provider failure)--> failed
 *   pending --(expiry passes)-----> expired
 *   paid    --(refunds reach the amount)--> refunded   (a partial refund keeps `paid`, with
 *                                                 payments.refunded_satang; workflows/refunds.ts)
 *   pending --(card authorised, capture=false)--> authorized   (the orders slice, docs/orders.md)
 *   authorized --(captured)--> paid;  --(released or lapsed)--> expired;  --(capture refused)--> failed
 */
import type { CallbackProvider } from '../domain/providers';

export const PaymentStatus = {
  pending: 'pending',
  authorized: 'authorized',
  paid: 'paid',
  failed: 'failed',
  expired: 'expired',
  refunded: 'refunded',
} as const;
export type PaymentStatus = (typeof PaymentStatus)[keyof typeof PaymentStatus];
export const PAYMENT_STATUSES = Object.values(PaymentStatus);

/** A payment's method: one per provider (src/domain/providers), the same wire and DB value. */
export const PaymentMethod: { readonly [P in CallbackProvider]: P } = {
  card: 'card',
  qr: 'qr',
  wallet: 'wallet',
  cardnet: 'cardnet',
  bankapp: 'bankapp',
};
export type PaymentMethod = CallbackProvider;

const transitions: { readonly [S in PaymentStatus]: readonly PaymentStatus[] } = {
  pending: ['paid', 'failed', 'expired', 'authorized'],
  authorized: ['paid', 'failed', 'expired'],
  paid: ['refunded'],
  failed: [],
  expired: [],
  refunded: [],
};

export const canTransition = (from: PaymentStatus, to: PaymentStatus): boolean => transitions[from].includes(to);

export const isTerminal = (s: PaymentStatus): boolean =>
  s === 'failed' || s === 'expired' || s === 'refunded' || s === 'paid';

/** Returns the next state, or null when the transition is not allowed (the event is ignored). */
export function transition(from: PaymentStatus, to: PaymentStatus): PaymentStatus | null {
  return canTransition(from, to) ? to : null;
}

/**
 * A provider result contradicts a decided payment when money and status disagree: a success on
 * a payment that expired or failed (the customer paid, nobody will ship), or a failure on one
 * that is paid (or refunded from paid). A result on a pending payment, or one that agrees with
 * the status, is no conflict.
 */
export const CONTRADICTED_BY: Record<'success' | 'failed', readonly PaymentStatus[]> = {
  success: ['failed', 'expired'],
  failed: ['paid', 'refunded'],
};

export function contradicts(result: 'success' | 'failed', status: PaymentStatus): boolean {
  return CONTRADICTED_BY[result].includes(status);
}
