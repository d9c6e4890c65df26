/**
 * Administrator alerts with a memory: the same failure (one key, e.g. `wallet:<orderId>:<error>`)
 * e-mails the administrator at most once per window (ALERT_WINDOW_S, default one hour); the
 * repeats are counted and sent as one digest e-mail per window, so a client posting the same bad
 * request in a loop costs one e-mail and one digest an hour instead of one e-mail per request.
 *
 * The memory is per gateway process (N gateways: at most N e-mails per key and window) and
 * bounded (MAX_KEYS; the oldest keys are forgotten first). The digest timer is unref'd, so it
 * never keeps a process alive; close() sends what is pending.
 */
import type { Logger } from './logger';
import { alerts as alertCount } from './metrics';
import type { AdminEmail, Notifier } from './notifier';

export interface AlertThrottle {
  /** 'sent' (e-mailed now), 'suppressed' (counted for the digest) */
  alert(key: string, mail: AdminEmail): Promise<'sent' | 'suppressed'>;
  /** Sends the digest of suppressed alerts now, if there are any. */
  flushDigest(): Promise<void>;
  close(): Promise<void>;
}

const MAX_KEYS = 10_000;

export function createAlertThrottle(opts: {
  notifier: Notifier;
  logger: Logger;
  windowMs?: number;
  clock?: () => number;
}): AlertThrottle {
  const { notifier, logger } = opts;
  const windowMs = opts.windowMs ?? 3_600_000;
  const clock = opts.clock ?? Date.now;
  const lastSent = new Map<string, number>();
  const suppressed = new Map<string, { count: number; subject: string }>();

  const flushDigest = async () => {
    if (suppressed.size === 0) return;
    const lines = [...suppressed.entries()].map(
      ([key, s]) => `${String(s.count).padStart(6)} x  ${s.subject}  (${key})`,
    );
    const total = [...suppressed.values()].reduce((n, s) => n + s.count, 0);
    suppressed.clear();
    try {
      await notifier.sendAdminEmail({
        subject: `[Talat] Digest: ${total} repeated alert${total === 1 ? '' : 's'} not e-mailed one by one`,
        text: ['These alerts repeated an alert already e-mailed within the last window:', '', ...lines, ''].join('\n'),
      });
    } catch (err) {
      logger.error({ err }, 'alert digest e-mail failed');
    }
  };
  const timer = setInterval(() => void flushDigest(), windowMs);
  timer.unref();

  return {
    async alert(key, mail) {
      const now = clock();
      const last = lastSent.get(key);
      if (last !== undefined && now - last < windowMs) {
        const s = suppressed.get(key) ?? { count: 0, subject: mail.subject };
        s.count += 1;
        if (suppressed.size < MAX_KEYS || suppressed.has(key)) suppressed.set(key, s);
        alertCount.inc({ result: 'suppressed' });
        return 'suppressed';
      }
      lastSent.delete(key); // re-inserted last: Map order is the eviction order
      lastSent.set(key, now);
      if (lastSent.size > MAX_KEYS) lastSent.delete(lastSent.keys().next().value as string);
      alertCount.inc({ result: 'sent' });
      await notifier.sendAdminEmail(mail);
      return 'sent';
    },
    flushDigest,
    async close() {
      clearInterval(timer);
      await flushDigest();
    },
  };
}
