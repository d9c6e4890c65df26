/**
 * Revocations as they happen: one Postgres LISTEN connection per database pool (channel
 * `api_key_revoked`, raised by revokeApiKey in the revoking transaction), shared by every key
 * cache of the process. Each notice, and each loss of the connection, moves the generation on;
 * a cached lookup counts only in the generation it was made in, and nothing is cached while the
 * connection is not listening. So a revoked key is refused on every gateway as soon as Postgres
 * delivers the notice (milliseconds after the revocation commits).
 */
import pg from 'pg';
import type { Db } from '../../db/knex';

export const REVOKED_CHANNEL = 'api_key_revoked';
const RECONNECT_MS = 1000;

export interface RevocationFeed {
  /** The current generation, or undefined while not listening (then nothing may be cached). */
  generation(): number | undefined;
  /** Resolves once listening (tests). */
  ready(): Promise<void>;
}

const feeds = new WeakMap<Db, RevocationFeed>();

/** The feed of `db`'s database, one per pool; its connection does not keep the process alive. */
export function revocationFeed(db: Db): RevocationFeed {
  let feed = feeds.get(db);
  if (!feed) feeds.set(db, (feed = createFeed(db)));
  return feed;
}

function createFeed(db: Db): RevocationFeed {
  const conn = (db.client as { config: { connection: unknown } }).config.connection;
  const config: pg.ClientConfig = typeof conn === 'string' ? { connectionString: conn } : (conn as pg.ClientConfig);
  let gen = 0;
  let listening = false;
  let client: pg.Client | undefined;
  let lastTry = -Infinity;
  let waiting: Promise<void> | undefined;

  const lose = (c: pg.Client) => {
    if (c !== client) return;
    client = undefined;
    listening = false;
    gen++;
    c.end().catch(() => undefined);
  };
  const connect = (): Promise<void> => {
    lastTry = performance.now();
    const c = (client = new pg.Client(config));
    c.on('notification', () => void gen++);
    c.on('error', () => lose(c));
    c.on('end', () => lose(c));
    return (waiting = (async () => {
      await c.connect();
      (c as unknown as { connection?: { stream?: { unref?(): void } } }).connection?.stream?.unref?.();
      await c.query(`LISTEN ${REVOKED_CHANNEL}`);
      if (c === client) {
        gen++;
        listening = true;
      }
    })().catch(() => lose(c)));
  };
  connect();
  return {
    generation() {
      if (listening) return gen;
      if (!client && performance.now() - lastTry >= RECONNECT_MS) void connect();
      return undefined;
    },
    async ready() {
      for (let i = 0; i < 100 && !listening; i++) {
        if (!client) void connect();
        await waiting;
        if (!listening) await new Promise((r) => setTimeout(r, 50));
      }
      if (!listening) throw new Error('the revocation feed is not listening');
    },
  };
}
