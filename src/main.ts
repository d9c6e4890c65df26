/**
 * `npm start`: the whole of Talat on one machine with embedded defaults: Postgres (under
 * DATA_DIR/pg, unless DATABASE_URL), the Temporal dev server (unless TEMPORAL_ADDRESS), the object
 * store, migrations, the catalog seed on an empty database, the worker and the gateway on PORT.
 * The embedded servers are supervised (src/stack/supervisor.ts): restarted with back-off on the
 * same port and data. A port held by another process is refused, never used; DATA_DIR belongs to
 * one `npm start` at a time (DATA_DIR/talat.pid), and servers a killed start left on it are taken
 * over. SIGINT/SIGTERM stop everything in reverse order; the worker drains first.
 */
import http from 'node:http';
import path from 'node:path';
import { createActivities } from '../activities';
import { ConfigError, loadConfig, type Config } from './config';
import { createDb, migrateLatest } from './db/knex';
import { isCatalogEmpty, seedCatalog } from './db/seed';
import { createApp } from './app/app';
import { createNotifier } from './notifier';
import { sandboxProviders } from './simulators/providers';
import { createLogger, createLogOutput, logCrashes } from './logger';
import { stopInReverse, type Stopper } from './roles/common';
import { superviseEmbeddedPostgres } from './stack/postgres';
import { claimDataDir, type Supervised } from './stack/supervisor';
import { keysFileOf } from './stack/keys';
import { freePort, superviseEmbeddedTemporal } from './stack/temporal';
import { startAssetPublisher, startObjectStore } from './app/assets';
import { connectClient, ensureSearchAttributes } from './temporal/client';
import { installTemporalRuntime } from './temporal/runtime';
import { createQueueWorkers } from './app/worker';
import { startReconciliationSchedules } from './reconciliation/schedules';
import { startRefundRedrive } from './refunds/redrive';

async function main(config: Config) {
  const logger = createLogger(config.logLevel, createLogOutput({ buffered: config.logBuffered }));
  logCrashes(logger);
  const stoppers: Stopper[] = [];
  const say = (msg: string) => logger.info(msg);
  let stopping = false;
  // the supervised services: no restarts once a shutdown starts (they stop in their turn below)
  const supervisors: Supervised[] = [];

  const shutdown = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    supervisors.forEach((s) => s.hold());
    logger.info({ signal }, 'shutting down');
    await stopInReverse(stoppers, logger);
    logger.flush?.();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    // one `npm start` per DATA_DIR: what runs on it (Postgres, the dev server) is this process's
    const release = claimDataDir(config.dataDir);
    stoppers.push({ name: 'data directory lock', stop: async () => release() });

    // development: the administrator e-mail goes to a local SMTP sink (.eml files under DATA_DIR/mail)
    let mailSink: string | undefined;
    if (!config.mail.smtpUrl && !config.production) {
      // development only: smtp-server is a devDependency, loaded here and nowhere on the production path
      const { startSmtpSink } = await import('./simulators/smtp-sink');
      const dir = path.join(config.dataDir, 'mail');
      const onMail = (m: { to: string[]; subject: string }) =>
        logger.info({ to: m.to, subject: m.subject, dir }, 'e-mail caught by the development SMTP sink');
      const sink = await startSmtpSink({ port: config.mail.sinkPort, dir, onMail }).catch(() =>
        startSmtpSink({ port: 0, dir, onMail }),
      );
      config = { ...config, mail: { ...config.mail, smtpUrl: sink.url } };
      mailSink = `${sink.url} (messages in ${dir})`;
      stoppers.push({ name: 'smtp sink', stop: () => sink.stop() });
    } else if (!config.mail.smtpUrl) {
      logger.warn('SMTP_URL is not set: administrator e-mails cannot be sent');
    }

    let databaseUrl = config.database.url;
    if (!databaseUrl) {
      const { pg, supervisor } = await superviseEmbeddedPostgres(
        { dataDir: path.join(config.dataDir, 'pg'), port: config.database.embeddedPort, database: 'talat', log: say },
        logger,
      );
      databaseUrl = pg.url;
      if (!pg.startedByUs)
        say(
          `taking over the Postgres cluster an earlier start left running in ${pg.dataDir} (pid ${pg.pid}): supervised, and stopped with this one`,
        );
      supervisors.push(supervisor);
      stoppers.push({ name: 'postgres (supervised)', stop: () => supervisor.stop() });
    }

    let temporalAddress = config.temporal.address;
    let uiUrl: string | undefined;
    if (!temporalAddress) {
      const t = await superviseEmbeddedTemporal(
        {
          cliPath: config.temporal.cliPath,
          port: config.temporal.embeddedPort,
          uiPort: config.temporal.uiPort,
          dbFile: path.join(config.dataDir, 'temporal.db'),
          dataDir: config.dataDir,
          namespace: config.temporal.namespace,
          log: say,
          uiCodecEndpoint: `${config.publicBaseUrl}/codec`,
        },
        logger,
      );
      temporalAddress = t.address;
      uiUrl = t.uiUrl;
      supervisors.push(t.supervisor);
      stoppers.push({ name: 'temporal dev server (supervised)', stop: () => t.supervisor.stop() });
    }

    // the storefront's object store (embedded unless S3_ENDPOINT), before the gateway that signs its URLs
    const objectStore = await startObjectStore(config, say, logger);
    config = objectStore.config;
    if (objectStore.supervisor) supervisors.push(objectStore.supervisor);
    if (objectStore.stop) stoppers.push({ name: 'object store', stop: objectStore.stop });

    const db = createDb(databaseUrl);
    stoppers.push({ name: 'database pool', stop: () => db.destroy() });
    const applied = await migrateLatest(db);
    if (applied.length) say(`applied migrations: ${applied.join(', ')}`);
    if (await isCatalogEmpty(db)) say(`seeded the catalog: ${JSON.stringify(await seedCatalog(db))}`);

    const publisher = startAssetPublisher({ db, config, logger });
    stoppers.push({ name: 'asset publisher', stop: publisher.stop });

    // TLS only to a Temporal of TEMPORAL_ADDRESS: the embedded dev server speaks plain TCP on loopback
    const tls = config.temporal.address ? config.temporal.tls : undefined;
    const client = await connectClient(temporalAddress, config.temporal.namespace, {
      codecKeys: config.temporal.codecKeys,
      tls,
    });
    stoppers.push({ name: 'temporal client', stop: () => client.connection.close() });
    if (config.temporal.address) await ensureSearchAttributes(client, config.temporal.namespace);

    // the worker's temporal_* metrics on the gateway's /metrics: a free loopback port unless set (0: none)
    if (!config.temporal.metricsPort && !config.temporal.metricsOff)
      config = { ...config, temporal: { ...config.temporal, metricsPort: await freePort() } };
    installTemporalRuntime(logger, config.logLevel === 'debug' || config.logLevel === 'trace' ? 'DEBUG' : 'WARN', {
      metricsPort: config.temporal.metricsPort,
    });
    const workers = await createQueueWorkers({
      address: temporalAddress,
      namespace: config.temporal.namespace,
      paymentsQueue: config.temporal.taskQueue,
      queues: config.roles.workerQueues,
      activities: createActivities({ db, config, logger, sandbox: sandboxProviders({ db }) }),
      codecKeys: config.temporal.codecKeys,
      requireEncrypted: config.production,
      tls,
    });
    const workerRun = workers.run();
    stoppers.push({ name: 'workers', stop: workers.stop });
    if (config.reconciliation.schedules) await startReconciliationSchedules(client, config, logger);
    const redrive = startRefundRedrive({ db, client, config, logger, taskQueue: config.temporal.taskQueue });
    stoppers.push({ name: 'refund re-drive', stop: redrive.stop });

    const notifier = createNotifier({ config, logger });
    stoppers.push({ name: 'notifier', stop: () => notifier.close() });
    const app = createApp({
      config,
      db,
      temporal: { client, taskQueue: config.temporal.taskQueue },
      logger,
      notifier,
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, resolve);
    });
    stoppers.push({
      name: 'gateway',
      stop: () => new Promise<void>((r) => server.close(() => r())).then(() => app.stop()),
    });

    // sandbox providers post their signed callbacks from loopback (README "Sandbox providers")
    if (config.simulators) {
      const { startCallbackSimulator } = await import('./simulators/callbacks');
      const loopback = ['0.0.0.0', '::', 'localhost'].includes(config.host) ? '127.0.0.1' : config.host;
      const simulator = startCallbackSimulator({
        db,
        config,
        logger,
        gatewayUrl: `http://${loopback.includes(':') ? `[${loopback}]` : loopback}:${config.port}`,
      });
      stoppers.push({ name: 'sandbox simulators', stop: () => simulator.stop() });
      if (config.reconciliation.mode === 'sandbox') {
        const { startSandboxSettlements } = await import('./reconciliation/sandbox');
        const { createSettlementStore } = await import('./reconciliation/files');
        const { sandboxLedgers } = await import('./app/sandbox-ledgers');
        const store = createSettlementStore(config);
        const files = startSandboxSettlements({ ledgers: sandboxLedgers(db), store, logger });
        stoppers.push({ name: 'sandbox settlement files', stop: async () => files.stop() });
      }
    }

    const base = `http://${config.host}:${config.port}`;
    const lines = [
      '',
      'Talat is running:',
      `  gateway        ${base}  (docs ${base}/docs, OpenAPI ${base}/openapi.json)`,
      `  health         ${base}/healthz  ${base}/readyz`,
      `  temporal       ${temporalAddress}${config.temporal.address ? ' (external)' : ' (embedded dev server, supervised)'}`,
      `  temporal web   ${uiUrl ?? '(external: see your cluster)'}`,
      `  postgres       ${databaseUrl.replace(/\/\/([^:@]+)(:[^@]*)?@/, '//$1@')}${config.database.url ? ' (external)' : ` (embedded, supervised; password in ${path.join(config.dataDir, 'pg.password')})`}`,
      `  workers        task queues ${workers.describe()}`,
      `  object store   ${objectStore.describe}`,
      ...(mailSink ? [`  smtp sink      ${mailSink}`] : []),
      ...(config.production
        ? []
        : [`  keys           generated for this data directory: ${keysFileOf(config.dataDir)} (0600)`]),
      ...(config.simulators
        ? [
            '  simulators     sandbox card, card network, bank app, QR and wallet providers post callbacks (and settlement files)',
          ]
        : []),
      'Press Ctrl-C to stop.',
      '',
    ];
    logger.flush(); // the start-up's buffered lines before the banner
    process.stdout.write(lines.join('\n') + '\n');
    await workerRun.catch(async (e) => {
      logger.error({ err: e }, 'worker failed');
      process.stderr.write(`talat: the worker failed: ${(e as Error).message}\n`);
      await shutdown('worker-failure', 1);
    });
  } catch (e) {
    logger.error({ err: e }, 'start-up failed');
    process.stderr.write(`talat: start-up failed: ${(e as Error).message}\n`);
    stopping = false;
    await shutdown('startup-failure', 1);
  }
}

try {
  void main(loadConfig());
} catch (e) {
  if (e instanceof ConfigError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(78);
  }
  throw e;
}
