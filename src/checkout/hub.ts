/**
 * One Postgres LISTEN connection per gateway process, fanning each payment status change
 * (channel `payment_status`, raised by a trigger on payments for watched payments only:
 * migrations/*_status_notify_watched) out to every open checkout page of that payment. Open
 * while at least one page listens; when the connection is lost every page is told (its stream
 * ends, the browser reconnects and reads the status afresh), so no change is missed silently.
 */
import pg from 'pg';
import type { Logger } from '../logger';

export const STATUS_CHANNEL = 'payment_status';

export interface Listener {
  onStatus(status: string): void;
  /** the LISTEN connection ended: changes may have been missed */
  onLost(): void;
}

export interface StatusHub {
  /** Resolves once changes of `paymentId` are delivered to `l`; the function returned stops that. */
  subscribe(paymentId: string, l: Listener): Promise<() => void>;
}

export function createStatusHub(opts: { connection: pg.ClientConfig; logger: Logger }): StatusHub {
  const byPayment = new Map<string, Set<Listener>>();
  let count = 0;
  let conn: Promise<pg.Client> | undefined;
  let current: pg.Client | undefined;

  const lose = (client: pg.Client, err?: Error) => {
    if (client !== current) return; // one this hub closed itself
    conn = current = undefined;
    client.end().catch(() => undefined);
    if (err) opts.logger.warn({ err }, 'checkout: the LISTEN connection was lost');
    for (const set of byPayment.values()) for (const l of set) l.onLost();
  };

  const connect = (): Promise<pg.Client> => {
    const client = (current = new pg.Client(opts.connection));
    client.on('notification', (n) => {
      const [id, status] = (n.payload ?? '').split(' ');
      const set = byPayment.get(id);
      if (set) for (const l of set) l.onStatus(status);
    });
    client.on('error', (err) => lose(client, err));
    client.on('end', () => lose(client));
    const ready = (async () => {
      await client.connect();
      await client.query(`LISTEN ${STATUS_CHANNEL}`);
      return client;
    })();
    ready.catch(() => lose(client));
    return ready;
  };

  const release = (paymentId: string, l: Listener) => {
    const set = byPayment.get(paymentId);
    if (!set?.delete(l)) return;
    if (set.size === 0) byPayment.delete(paymentId);
    if (--count === 0 && conn) {
      const closing = conn;
      conn = current = undefined;
      closing.then((c) => c.end()).catch(() => undefined);
    }
  };

  return {
    async subscribe(paymentId, l) {
      let set = byPayment.get(paymentId);
      if (!set) byPayment.set(paymentId, (set = new Set()));
      set.add(l);
      count++;
      try {
        await (conn ??= connect());
      } catch (e) {
        release(paymentId, l);
        throw e;
      }
      return () => release(paymentId, l);
    },
  };
}
