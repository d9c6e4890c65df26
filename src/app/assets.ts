/**
 * The object store in `npm start`: the embedded one (data under DATA_DIR/objectstore, loopback)
 * unless S3_ENDPOINT is set or in production, and the asset publisher job over it.
 */
import net from 'node:net';
import path from 'node:path';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { startEmbeddedObjectStore } from '../stack/objectstore';
import { supervise, type Supervised } from '../stack/supervisor';
import { freePort } from '../stack/temporal';
import { createAssetPublisher } from '../storefront/assets/publisher';

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/**
 * Starts the embedded store when configured so, supervised (started again on the same port when
 * it exits: src/stack/supervisor.ts); returns the config with its endpoint filled in.
 */
export async function startObjectStore(
  config: Config,
  log: (msg: string) => void,
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>,
): Promise<{ config: Config; describe: string; stop?: () => Promise<void>; supervisor?: Supervised }> {
  const c = config.objectStore;
  if (!c.embedded) return { config, describe: `${c.endpoint} (external)` };
  let port = c.embedded.port;
  if (!(await portFree(port))) {
    const taken = port;
    port = await freePort();
    log(`OBJECT_STORE_PORT ${taken} is taken: the embedded object store listens on ${port}`);
  }
  const bin = c.embedded.bin;
  const start = () =>
    startEmbeddedObjectStore({
      dataDir: path.join(config.dataDir, 'objectstore'),
      port,
      accessKeyId: c.accessKeyId!,
      secretAccessKey: c.secretAccessKey!,
      bin,
      toolsDataDir: config.dataDir,
      log,
    });
  const store = await start();
  let first: typeof store | undefined = store;
  const supervisor = await supervise(
    'the object store',
    async () => {
      const s = first ?? (await start());
      first = undefined;
      const exited = new Promise<string>((resolve) => {
        if (s.process.exitCode !== null || s.process.signalCode !== null) return resolve('exited');
        s.process.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`));
      });
      return { pid: s.process.pid, exited, stop: () => s.stop() };
    },
    {
      info: (m) => (logger ? logger.info(m) : log(m)),
      warn: (m) => (logger ? logger.warn(m) : log(m)),
      error: (m) => (logger ? logger.error(m) : log(m)),
    },
  );
  return {
    config: { ...config, objectStore: { ...c, endpoint: store.endpoint } },
    describe: `${store.endpoint} (embedded ${store.engine}, data under ${path.join(config.dataDir, 'objectstore')}; buckets ${c.buckets.prices}, ${c.buckets.images}; supervised)`,
    stop: () => supervisor.stop(),
    supervisor,
  };
}

/** The publisher job: publishes on start (the seed) and whenever the data versions move on. */
export function startAssetPublisher(deps: { db: Db; config: Config; logger: Logger }): { stop: () => Promise<void> } {
  const publisher = createAssetPublisher(deps);
  publisher.start();
  return { stop: () => publisher.stop() };
}
