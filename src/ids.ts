/** Ids carry a typed prefix so a log line says what an id is (pay_, key_, req_, whk_, msg_, cfl_). */
import { createHmac, randomUUID } from 'node:crypto';

export type IdPrefix =
  'pay' | 'key' | 'req' | 'whk' | 'evt' | 'msg' | 'dlq' | 'chg' | 'usr' | 'ord' | 'ep' | 're' | 'cfl' | 'adj' | 'fin';

/** `<prefix>_<32 hex>`: a random UUID without its dashes (sliced out: every request gets one) */
export const newId = (prefix: IdPrefix): string => {
  const u = randomUUID();
  return `${prefix}_${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(14, 18)}${u.slice(19, 23)}${u.slice(24)}`;
};

/**
 * The payment id of an order (one payment per order): an HMAC of the order id under a server
 * secret, in the form of newId('pay'). Derived, not random, so that a payments row undone after a
 * start that failed ambiguously (a deadline, a dropped connection: the workflow may have started)
 * is written again with the id the workflow's input holds; a random id let the retry's row and
 * the running workflow disagree, and the payment stayed pending for ever (found by `npm run chaos`).
 */
export const orderPaymentId = (secret: string, orderId: string): string =>
  `pay_${createHmac('sha256', secret).update(`talat-payment-id-v1\n${orderId}`).digest('hex').slice(0, 32)}`;

/**
 * A payment's id since order ids are scoped (docs/concepts.md): the same derivation over the order's
 * scope (account, mode) too, so two merchants' (or modes') same order id are two payments, two
 * workflows (payment-<id>), and a retry after an unanswered start still finds the same id.
 */
export const scopedPaymentId = (secret: string, accountId: string | null, mode: string, orderId: string): string =>
  `pay_${createHmac('sha256', secret)
    .update(`talat-payment-id-v2\n${accountId ?? ''}\n${mode}\n${orderId}`)
    .digest('hex')
    .slice(0, 32)}`;
