/**
 * Sandbox payment providers: for every pending sandbox payment, post the provider's callback to
 * the gateway from loopback, signed as a real provider would, retried like one (1, 2, 4, 8 s).
 * The satang part of the amount chooses the outcome:
 *   .01  fails;  .02  success after SIMULATOR_DELAY_S (default 20 s);  .03  no callback (expires)
 *   .11  success through another channel (card -> /cardnetcallback, QR -> /bankappcallback)
 *   .12  QR paid from a wallet: /walletcallback, then the wallet handler (/wallet/callback)
 *   any other amount: success about 1 s after creation.
 * Card payments are called back once their charge exists (objectId = the charge id).
 */
import { pendingRowsByIds, sandboxPendingAfter } from '../payments/repository';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { signatureHeaders, signPayload } from '../callbacks/verify';
import { satangToThb } from '../domain/money';

export type SandboxOutcome = 'fail' | 'delayed' | 'none' | 'alternate' | 'wallet' | 'success';

export function sandboxOutcome(amountSatang: number): SandboxOutcome {
  switch (amountSatang % 100) {
    case 1:
      return 'fail';
    case 2:
      return 'delayed';
    case 3:
      return 'none';
    case 11:
      return 'alternate';
    case 12:
      return 'wallet';
    default:
      return 'success';
  }
}

interface PendingPayment {
  id: string;
  order_id: string;
  user_id: string;
  method: string;
  amount_satang: string;
  provider_ref: string | null;
}

interface Post {
  path: string;
  contentType: 'application/json' | 'application/x-www-form-urlencoded';
  body: string;
  headers: Record<string, string>;
}

export interface CallbackSimulatorOptions {
  db: Db;
  config: Config;
  logger: Logger;
  /** the gateway, on loopback */
  gatewayUrl: string;
  /** only payments created after this time (default: the last hour) */
  since?: Date;
  pollMs?: number;
  /** delay of an ordinary outcome */
  quickDelayMs?: number;
}

export interface CallbackSimulator {
  stop(): Promise<void>;
}

export function buildCallbacks(config: Config, p: PendingPayment, outcome: SandboxOutcome): Post[] {
  const secret = (name: keyof Config['callbacks']['providers']) => config.callbacks.providers[name].secret;
  const ok = outcome !== 'fail';
  const amount = satangToThb(Number(p.amount_satang));
  const now = () => new Date().toISOString();
  const headerSigned = (
    path: string,
    name: 'CARD' | 'CARDNET' | 'BANKAPP',
    body: string,
    contentType: Post['contentType'],
  ): Post => ({
    path,
    contentType,
    body,
    headers: signatureHeaders(secret(name), body),
  });
  const handlerForm = {
    orderId: p.order_id,
    paymentId: p.id,
    success: ok,
    userId: p.user_id,
    amount,
    message: ok ? 'approved' : 'declined by the sandbox',
  };

  if (p.method === 'card' && outcome !== 'alternate') {
    const form = new URLSearchParams({
      objectId: p.provider_ref ?? '',
      token: 'tok_sandbox',
      status: String(ok),
      message: ok ? '' : 'declined by the sandbox',
      saveCard: 'false',
    });
    return [headerSigned('/callback', 'CARD', form.toString(), 'application/x-www-form-urlencoded')];
  }
  if (p.method === 'card' || p.method === 'cardnet')
    return [headerSigned('/cardnetcallback', 'CARDNET', JSON.stringify(handlerForm), 'application/json')];
  if (p.method === 'bankapp' || outcome === 'alternate')
    return [headerSigned('/bankappcallback', 'BANKAPP', JSON.stringify(handlerForm), 'application/json')];
  if (p.method === 'wallet' || outcome === 'wallet') {
    const gateway = signPayload(secret('WALLET'), {
      walletId: `wal_sandbox_${p.id.slice(-12)}`,
      status: ok ? 'success' : 'failed',
      amount,
      orderId: p.order_id,
      timestamp: now(),
    });
    return [
      { path: '/walletcallback', contentType: 'application/json', body: JSON.stringify(gateway), headers: {} },
      { path: '/wallet/callback', contentType: 'application/json', body: JSON.stringify(handlerForm), headers: {} },
    ];
  }
  const qr = signPayload(secret('QR'), {
    paymentId: p.id,
    status: ok ? 'success' : 'failed',
    amount,
    orderId: p.order_id,
    timestamp: now(),
  });
  return [{ path: '/qrcallback', contentType: 'application/json', body: JSON.stringify(qr), headers: {} }];
}

const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000];

export function startCallbackSimulator(opts: CallbackSimulatorOptions): CallbackSimulator {
  const { db, config, logger } = opts;
  const since = opts.since ?? new Date(Date.now() - 3600_000);
  const handled = new Set<string>();
  const waits = new Map<NodeJS.Timeout, () => void>();
  let stopped = false;
  /** a timer that stop() ends early */
  const later = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        waits.delete(t);
        resolve();
      }, ms);
      waits.set(t, resolve);
    });

  async function deliver(p: PendingPayment, outcome: SandboxOutcome): Promise<void> {
    // built when sent, so timestamps are fresh even after a delay
    for (const post of buildCallbacks(config, p, outcome)) {
      for (let attempt = 0; !stopped; attempt++) {
        let status: number | undefined;
        try {
          const res = await fetch(`${opts.gatewayUrl}${post.path}`, {
            method: 'POST',
            headers: { 'content-type': post.contentType, ...post.headers },
            body: post.body,
            redirect: 'manual',
            signal: AbortSignal.timeout(10_000),
          });
          status = res.status;
          await res.arrayBuffer();
        } catch (e) {
          logger.warn(
            { err: (e as Error).message, path: post.path, orderId: p.order_id },
            'sandbox callback: no answer',
          );
        }
        if (status !== undefined && status < 500) {
          logger.info(
            { path: post.path, orderId: p.order_id, paymentId: p.id, outcome, status },
            'sandbox callback sent',
          );
          break;
        }
        if (attempt >= RETRY_DELAYS_MS.length) {
          logger.error({ path: post.path, orderId: p.order_id, status }, 'sandbox callback: giving up');
          return;
        }
        await later(RETRY_DELAYS_MS[attempt]);
      }
    }
  }

  /**
   * Pending sandbox payments are read with a keyset cursor over (created_at, id), so payments that
   * stay pending for ever (.03, or a charge that never comes) never hide newer ones. The cursor
   * passes a row only once it is AGE_S old: a row committed late by a slow transaction (created_at
   * is the transaction's start) is still read. Cards whose charge is not there yet are asked for
   * again by id until they have it or leave `pending`.
   */
  const AGE_S = 5;
  const cursor = { at: since.toISOString(), id: '' };
  const awaitingCharge = new Set<string>();

  function schedule(p: PendingPayment): void {
    const outcome = sandboxOutcome(Number(p.amount_satang));
    if (outcome === 'none') {
      logger.info({ orderId: p.order_id, paymentId: p.id }, 'sandbox: no callback for this amount (.03)');
      return;
    }
    const delay = outcome === 'delayed' ? config.simulatorDelaySeconds * 1000 : (opts.quickDelayMs ?? 1000);
    void later(delay)
      .then(() => (stopped ? undefined : deliver(p, outcome)))
      .catch((e) => logger.error({ err: e, orderId: p.order_id }, 'sandbox callback failed'));
  }

  async function poll(): Promise<void> {
    const rows: (PendingPayment & { at: string; aged: boolean })[] = await sandboxPendingAfter(db, cursor, AGE_S);
    let passing = true;
    for (const p of rows) {
      if (passing && p.aged) {
        cursor.at = p.at;
        cursor.id = p.id;
        handled.delete(p.id); // the cursor is past it: never read again
      } else passing = false;
      if (handled.has(p.id) || awaitingCharge.has(p.id)) continue;
      if (p.method === 'card' && !p.provider_ref) {
        awaitingCharge.add(p.id); // the charge is not there yet
        continue;
      }
      if (!passing) handled.add(p.id);
      schedule(p);
    }
    if (awaitingCharge.size) {
      const waiting: PendingPayment[] = await pendingRowsByIds(db, [...awaitingCharge]);
      for (const p of waiting as (PendingPayment & { status: string })[]) {
        if (p.status !== 'pending') awaitingCharge.delete(p.id);
        else if (p.provider_ref) {
          awaitingCharge.delete(p.id);
          schedule(p);
        }
      }
    }
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        await poll();
      } catch (e) {
        if (!stopped) logger.warn({ err: (e as Error).message }, 'sandbox simulator: poll failed');
      }
      await later(opts.pollMs ?? 500);
    }
  })();

  logger.info({ gateway: opts.gatewayUrl }, 'sandbox callback simulators running');
  return {
    async stop() {
      stopped = true;
      for (const [t, resolve] of waits) {
        clearTimeout(t);
        resolve();
      }
      waits.clear();
      await loop;
    },
  };
}
