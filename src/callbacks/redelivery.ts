/**
 * The redelivery of callbacks already answered: each gateway, every CALLBACK_REDELIVERY_S, finds
 * receipts left unfinished past the lease (a gateway that died after its answer, a signal
 * Temporal did not take) and delivers each from the table: taken over (one UPDATE; of gateways
 * racing, one wins), signalled, finished, by the processor's own paths. Handler-form receipts
 * are left to their provider's retry: they finish before their answer, so it was not answered.
 */
import { callbacks } from '../metrics';
import { CALLBACK_ENDPOINTS } from './index';
import { redeliver, type ProcessorDeps, type VerifiedCallback } from './processor';
import { takeOverReceipt, unfinishedReceipts, type CallbackProvider } from './receipts';

/** The providers whose callbacks are answered before their signal. */
const REDELIVERED: readonly CallbackProvider[] = CALLBACK_ENDPOINTS.filter((e) => e.schema !== 'handler').map(
  (e) => e.provider,
);

/** How many receipts one pass takes at most (the rest wait for the next). */
const PASS_LIMIT = 50;

/** One pass: the receipts delivered again, and those that failed again (tried after another lease). */
export async function redeliverUnfinished(
  deps: ProcessorDeps,
  respondOf: (r: Pick<VerifiedCallback, 'provider' | 'payment' | 'status'>) => VerifiedCallback['respond'],
): Promise<{ delivered: number; failed: number }> {
  let delivered = 0;
  let failed = 0;
  for (const r of await unfinishedReceipts(deps, REDELIVERED, PASS_LIMIT)) {
    if (!(await takeOverReceipt(deps, r.id))) continue; // another gateway (or the provider's retry) took it
    const what = { receipt: r.id, provider: r.provider, paymentId: r.payment.id, status: r.status };
    deps.logger.warn(what, 'callback receipt left unfinished after its answer: delivered again');
    try {
      await redeliver(
        deps,
        {
          provider: r.provider,
          payment: r.payment,
          status: r.status,
          sourceIp: '',
          request: null,
          reference: r.reference,
          message: r.message,
          respond: respondOf({ provider: r.provider, payment: r.payment, status: r.status }),
        },
        r.id,
      );
      callbacks.inc({ provider: r.provider, outcome: 'redelivered', reason: '' });
      delivered++;
    } catch (err) {
      deps.logger.warn({ err, ...what }, 'callback receipt not delivered again: tried after another lease');
      failed++;
    }
  }
  return { delivered, failed };
}
