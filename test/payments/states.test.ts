import { canTransition, PAYMENT_STATUSES, transition, type PaymentStatus } from '../../src/payments';

const allowed: [PaymentStatus, PaymentStatus][] = [
  ['pending', 'paid'],
  ['pending', 'failed'],
  ['pending', 'expired'],
  ['paid', 'refunded'],
  ['pending', 'authorized'],
  ['authorized', 'paid'],
  ['authorized', 'failed'],
  ['authorized', 'expired'],
];

describe('payment state transitions', () => {
  const pairs = PAYMENT_STATUSES.flatMap((from) =>
    PAYMENT_STATUSES.map((to) => [from, to] as [PaymentStatus, PaymentStatus]),
  );
  it.each(pairs)('%s -> %s', (from, to) => {
    const ok = allowed.some(([f, t]) => f === from && t === to);
    expect(canTransition(from, to)).toBe(ok);
    expect(transition(from, to)).toBe(ok ? to : null);
  });
});
