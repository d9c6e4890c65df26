/**
 * `talat trigger <event>`: a sandbox payment or order through the real payment API (a sandbox key,
 * tk_test_...), its amounts chosen by the sandbox rules (docs/commands.md lists each event and how
 * it is reached), then a wait until it reaches that state, so the key's webhook endpoints (e.g.
 * `talat listen`) receive the real event: payment.paid | failed | expired | refunded (`refund`:
 * an alias) | authorized [--finalize] | partially_refunded, and the order events of
 * docs/webhooks.md "Order events" (order.adjusted, order.released, order.settled, order.failed,
 * order.topup_pending, order.topup_paid, order.topup_expired).
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { keyPrefixOf } from '../../domain/api-keys';
import { apiOf, withApiOptions, type Api, type ApiOptions } from '../api';
import { CliError, output, usage } from '../context';

/** The event, the sandbox amount that leads to it and the payment status it ends in. */
export const TRIGGERS = {
  'payment.paid': { amount: 120, status: 'paid' },
  'payment.failed': { amount: 120.01, status: 'failed' },
  'payment.expired': { amount: 120.03, status: 'expired' },
  'payment.refunded': { amount: 120, status: 'paid', refund: true },
  'payment.authorized': { amount: 100, status: 'authorized', order: 'card' },
  'payment.partially_refunded': { amount: 120, status: 'paid', order: 'qr' },
  'order.adjusted': { amount: 100, status: 'authorized', order: 'card', finalize: 12.5 },
  'order.released': { amount: 100, status: 'authorized', order: 'card', finalize: 12.5 },
  'order.settled': { amount: 100, status: 'authorized', order: 'card', finalize: 12.5 },
  // 99.98 THB captured: the sandbox provider declines a capture ending in .98
  'order.failed': { amount: 100, status: 'authorized', order: 'card', finalize: 0.02 },
  // a top-up ending in .03 THB gets no callback (it expires); .00 is paid
  'order.topup_pending': { amount: 120, status: 'paid', order: 'qr', topUp: 20.03, until: 'awaiting_topup' },
  'order.topup_paid': { amount: 120, status: 'paid', order: 'qr', topUp: 20, until: 'settled' },
  'order.topup_expired': { amount: 120, status: 'paid', order: 'qr', topUp: 20.03, until: 'settled' },
} as const;
/** The order triggers' adjustment: one line out of stock, so the final amount is below the estimate. */
const PICKED = { description: 'talat trigger: an item out of stock', reason: 'out_of_stock' } as const;
/** Older names that still work. */
export const TRIGGER_ALIASES: Record<string, Trigger> = { refund: 'payment.refunded' };
type Trigger = keyof typeof TRIGGERS;

interface Status {
  paymentId: string;
  orderId: string;
  status: string;
  amount: number;
  expiresAt: string | null;
}
interface OrderOut {
  orderId: string;
  status: string;
  finalAmount: number | null;
  capturedAmount: number;
  refundedAmount: number;
}

async function waitForStatus(api: Api, orderId: string, want: string, deadline: number): Promise<Status> {
  for (;;) {
    const s = await api<Status>('GET', `/checkstatus/${encodeURIComponent(orderId)}`);
    if (s.status === want) return s;
    if (s.status !== 'pending' && !(s.status === 'authorized' && want === 'paid'))
      throw new CliError(`payment of order ${orderId} ended ${s.status}, not ${want}: is this a sandbox stack?`);
    if (Date.now() > deadline)
      throw new CliError(
        `payment of order ${orderId} is still pending: no ${want} by the deadline (are the sandbox simulators on?)`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

export function triggerCommand(program: Command): void {
  withApiOptions(
    program
      .command('trigger')
      .description('make a sandbox payment reach a state, so your webhook endpoints receive the real event')
      .argument('<event>', `${Object.keys(TRIGGERS).join(' | ')} (refund: payment.refunded)`),
  )
    .option('--order-id <id>', 'the order id of the payment (default trg-<random>)')
    .option('--timeout <seconds>', 'give up when the state is not reached (expired: added to QR_EXPIRY_S)', '60')
    .option('--json', 'print the payment (and the refund) as JSON')
    .option('--finalize', 'payment.authorized: then adjust the order and finalise it (the capture: payment.paid)')
    .action(
      async (
        given: string,
        o: ApiOptions & { orderId?: string; timeout: string; json?: boolean; finalize?: boolean },
      ) => {
        const event = TRIGGER_ALIASES[given] ?? given;
        if (!(event in TRIGGERS))
          throw usage(`unknown event ${JSON.stringify(given)}: one of ${Object.keys(TRIGGERS).join(', ')}`);
        const timeoutMs = Number(o.timeout) * 1000;
        if (!(timeoutMs > 0)) throw usage(`--timeout: ${JSON.stringify(o.timeout)} is not a number of seconds`);
        const api = apiOf(o);
        if (!o.apiKey!.startsWith(keyPrefixOf('sandbox')))
          throw usage(
            'trigger makes sandbox payments only: give a sandbox key (tk_test_..., `talat apikey create --sandbox`)',
          );
        const t: {
          amount: number;
          status: string;
          refund?: boolean;
          order?: 'card' | 'qr';
          finalize?: number;
          topUp?: number;
          until?: string;
        } = TRIGGERS[event as Trigger];
        if (o.finalize && event !== 'payment.authorized') throw usage('--finalize goes with payment.authorized only');
        const orderId = o.orderId ?? `trg-${randomBytes(4).toString('hex')}`;
        if (t.order === 'card')
          return authorizeCard(api, orderId, t.amount, timeoutMs, {
            ...o,
            ...(t.finalize ? { finalize: true, down: t.finalize } : {}),
          });
        const created = await api<Status>('POST', '/qrpayment', {
          orderId,
          userId: 'talat-trigger',
          customerId: 'talat-trigger',
          amount: t.amount,
        });
        process.stderr.write(`created QR payment ${created.paymentId} for order ${orderId}, ${t.amount} THB\n`);
        const deadline =
          (t.status === 'expired' && created.expiresAt ? Date.parse(created.expiresAt) : Date.now()) + timeoutMs;
        if (t.status === 'expired')
          process.stderr.write(`waiting for it to expire at ${created.expiresAt} (QR_EXPIRY_S of the stack)\n`);
        const payment = await waitForStatus(api, orderId, t.status, deadline);
        if (t.order === 'qr' && t.topUp) return finalizeUp(api, payment, t.topUp, t.until!, timeoutMs, o);
        if (t.order === 'qr') return finalizeDown(api, payment, timeoutMs, o);
        if (!t.refund) {
          output(o.json, payment, () => `payment ${payment.paymentId} of order ${orderId} is ${payment.status}`);
          return;
        }
        const refund = await api<{ refundId: string; status: string; amount: number }>('POST', '/refund', {
          orderId,
          reason: 'talat trigger payment.refunded',
        });
        if (refund.status !== 'succeeded') throw new CliError(`refund ${refund.refundId} ${refund.status}`);
        const refunded = await waitForStatus(api, orderId, 'refunded', Date.now() + timeoutMs);
        output(
          o.json,
          { ...refunded, refund },
          () => `payment ${refunded.paymentId} of order ${orderId} was paid, then refunded (${refund.refundId})`,
        );
      },
    );
}

const adjustDown = (api: Api, orderId: string, amount: number) =>
  api('POST', `/orders/${encodeURIComponent(orderId)}/adjustments`, { lines: [{ ...PICKED, amount: -amount }] });
const finalizeOrder = (api: Api, orderId: string) =>
  api<OrderOut>('POST', `/orders/${encodeURIComponent(orderId)}/finalize`);

/** A sandbox card held with capture=false (estimate + the stack's margin); with --finalize, captured less 12.50 THB. */
async function authorizeCard(
  api: Api,
  orderId: string,
  estimate: number,
  timeoutMs: number,
  o: { json?: boolean; finalize?: boolean; down?: number },
): Promise<void> {
  const created = await api<Status>('POST', '/cardpayment', {
    orderId,
    userId: 'talat-trigger',
    amount: estimate,
    token: 'tok_test',
    capture: 'false',
  });
  process.stderr.write(`created card authorisation ${created.paymentId} for order ${orderId}, ${created.amount} THB\n`);
  const held = await waitForStatus(api, orderId, 'authorized', Date.now() + timeoutMs);
  if (!o.finalize) {
    output(o.json, held, () => `payment ${held.paymentId} of order ${orderId} is authorized (${held.amount} THB held)`);
    return;
  }
  // the order opens a moment after the payment is authorised: an adjustment before that is refused
  const deadline = Date.now() + timeoutMs;
  while ((await api<OrderOut>('GET', `/orders/${encodeURIComponent(orderId)}`)).status !== 'open') {
    if (Date.now() > deadline) throw new CliError(`order ${orderId} did not open by the deadline`);
    await new Promise((r) => setTimeout(r, 300));
  }
  await adjustDown(api, orderId, o.down ?? 12.5);
  const order = await finalizeOrder(api, orderId);
  if (order.status === 'failed') {
    output(o.json, { ...held, order }, () => `order ${orderId} failed: its capture was declined, the hold released`);
    return;
  }
  const paid = await waitForStatus(api, orderId, 'paid', Date.now() + timeoutMs);
  output(
    o.json,
    { ...paid, order },
    () =>
      `payment ${paid.paymentId} of order ${orderId}: ${held.amount} THB authorized, ${order.capturedAmount} THB captured, the rest released`,
  );
}

/** A paid QR payment as an order: 20 THB out of stock, finalised: the difference refunded (partially_refunded). */
async function finalizeDown(api: Api, payment: Status, timeoutMs: number, o: { json?: boolean }): Promise<void> {
  const { orderId } = payment;
  await adjustDown(api, orderId, 20);
  const order = await finalizeOrder(api, orderId);
  if (order.status !== 'settled' || order.refundedAmount !== 20)
    throw new CliError(`order ${orderId} is ${order.status} with ${order.refundedAmount} THB refunded, not 20 THB`);
  const after = await waitForStatus(api, orderId, 'paid', Date.now() + timeoutMs);
  output(
    o.json,
    { ...after, order },
    () =>
      `payment ${after.paymentId} of order ${orderId} was paid ${payment.amount} THB; finalised at ${order.finalAmount} THB, 20 THB refunded`,
  );
}

/** A paid QR payment as an order, `topUp` THB more picked, finalised: a top-up, waited for until the order is `until`. */
async function finalizeUp(
  api: Api,
  payment: Status,
  topUp: number,
  until: string,
  timeoutMs: number,
  o: { json?: boolean },
): Promise<void> {
  const { orderId } = payment;
  await api('POST', `/orders/${encodeURIComponent(orderId)}/adjustments`, {
    lines: [{ description: 'talat trigger: a heavier item', reason: 'weight', amount: topUp }],
  });
  let order = await finalizeOrder(api, orderId);
  const expiresAt = (order as OrderOut & { topUps?: { expiresAt: string | null }[] }).topUps?.[0]?.expiresAt;
  const deadline = (until === 'settled' && expiresAt ? Date.parse(expiresAt) : Date.now()) + timeoutMs;
  process.stderr.write(`order ${orderId}: a top-up of ${topUp} THB is due; waiting for the order to be ${until}\n`);
  while (order.status !== until) {
    if (Date.now() > deadline) throw new CliError(`order ${orderId} is ${order.status}, not ${until}, by the deadline`);
    await new Promise((r) => setTimeout(r, 500));
    order = await api<OrderOut>('GET', `/orders/${encodeURIComponent(orderId)}`);
  }
  output(o.json, { ...payment, order }, () => `order ${orderId} is ${order.status} (a top-up of ${topUp} THB)`);
}
