/**
 * `npm run worker`: the Temporal workers alone (TEMPORAL_ADDRESS, DATABASE_URL), with /healthz,
 * /readyz and /metrics (its talat_* and temporal_*, METRICS_ACCESS as the gateway's) on
 * WORKER_HTTP_PORT: one worker per task queue of WORKER_QUEUES (default all three, see
 * taskQueueOf). Run any number: Temporal hands each task to one worker and the activities'
 * writes are idempotent. Workflow code: the prebuilt bundle (dist/workflow-bundle.js or
 * WORKFLOW_BUNDLE_PATH) when present, else bundled at start. SIGTERM: /readyz turns 503, polling
 * stops, running activities get SHUTDOWN_GRACE_S to finish, then exit 0.
 */
import http from 'node:http';
import { createActivities } from '../../activities';
import { sandboxProviders } from '../simulators/providers';
import { connectServices, redactUrl, runRole, temporalTlsOf, withTimeout } from './common';
import { ensureSearchAttributes, temporalReachable } from '../temporal/client';
import { installTemporalRuntime } from '../temporal/runtime';
import { createQueueWorkers, prebuiltWorkflowBundle, type QueueWorkers } from '../app/worker';
import { startReconciliationSchedules } from '../reconciliation/schedules';
import { startRefundRedrive } from '../refunds/redrive';
import { scrapeMetrics } from '../app/routes/metrics';
import { AppError, ErrorCode, isAppError } from '../domain/errors';
import { errorEnvelope } from '../http/errors';
import { headersOf } from '../http/middleware/api-key';
import { freePort } from '../stack/temporal';

runRole('worker', async (ctx) => {
  const { config, logger, onStop, draining, fail, step } = ctx;
  const { db, client, databaseUrl, temporalAddress, embedded } = await connectServices(ctx, 'worker');
  step('checking the search attributes');
  await client.connection
    .withDeadline(Date.now() + 10_000, () => ensureSearchAttributes(client, config.temporal.namespace))
    .catch((e) =>
      logger.warn(
        { err: e },
        'could not check or register the search attributes OrderId, PaymentMethod, PaymentStatus: register them on the cluster (see README "Deploy")',
      ),
    );

  // development without SMTP_URL: the SMTP sink of a running `npm start`, when there is one
  let mail = config.mail;
  if (!mail.smtpUrl && !config.production) mail = { ...mail, smtpUrl: `smtp://127.0.0.1:${mail.sinkPort}` };
  if (!mail.smtpUrl) logger.warn('SMTP_URL is not set: administrator e-mails cannot be sent');

  // the SDK's temporal_* metrics: its exporter on TEMPORAL_METRICS_PORT or a free loopback port (0:
  // none), served with this process's talat_* on GET /metrics of the health port
  const metricsPort = config.temporal.metricsOff ? undefined : (config.temporal.metricsPort ?? (await freePort()));
  const scraped = { db, config: { ...config, temporal: { ...config.temporal, metricsPort } } };

  const running: { workers?: QueueWorkers } = {};
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = req.url?.split('?')[0];
    if (url === '/healthz') return reply(200, { status: 'ok' });
    if (url === '/metrics' && req.method === 'GET')
      return void scrapeMetrics(scraped, headersOf(req)).then(
        ({ contentType, text }) => {
          res.writeHead(200, { 'content-type': contentType });
          res.end(text);
        },
        (e: unknown) => {
          if (!isAppError(e)) logger.error({ err: e }, 'GET /metrics failed');
          const err = isAppError(e) ? e : new AppError(ErrorCode.INTERNAL_ERROR, 'Metrics could not be read');
          reply(err.status, errorEnvelope('payment', err));
        },
      );
    if (url !== '/readyz') return reply(404, { statusCode: 404, body: { error: 'NOT_FOUND' } });
    void (async () => {
      const [pg, temporal] = await Promise.all([
        withTimeout(db.raw('select 1'), 2000, 'timeout').then(
          () => true,
          () => false,
        ),
        temporalReachable(client),
      ]);
      const state = running.workers?.state() ?? 'STARTING';
      const checks = { postgres: pg ? 'ok' : 'unreachable', temporal: temporal ? 'ok' : 'unreachable', worker: state };
      const ready = pg && temporal && state === 'RUNNING' && !draining();
      reply(
        ready ? 200 : 503,
        ready
          ? { status: 'ready', checks }
          : { statusCode: 503, body: { error: 'SERVICE_UNAVAILABLE', details: { checks, draining: draining() } } },
      );
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(
        new Error(
          `cannot listen on ${config.host}:${config.roles.workerHttpPort} (HOST, WORKER_HTTP_PORT): ${e.message}`,
        ),
      ),
    );
    step('opening the health port');
    server.listen(config.roles.workerHttpPort, config.host, resolve);
  });
  onStop({ name: 'health server', stop: () => new Promise<void>((r) => server.close(() => r())) });

  step('creating the workers');
  installTemporalRuntime(logger, config.logLevel === 'debug' || config.logLevel === 'trace' ? 'DEBUG' : 'WARN', {
    metricsPort,
  });
  const bundle = prebuiltWorkflowBundle(config.temporal.workflowBundlePath);
  const workers = await createQueueWorkers({
    address: temporalAddress,
    namespace: config.temporal.namespace,
    paymentsQueue: config.temporal.taskQueue,
    queues: config.roles.workerQueues,
    activities: createActivities({ db, config: { ...config, mail }, logger, sandbox: sandboxProviders({ db }) }),
    workflowBundle: bundle ? { codePath: bundle } : undefined,
    codecKeys: config.temporal.codecKeys,
    requireEncrypted: config.production,
    tls: temporalTlsOf(config, embedded),
    shutdownGraceTime: Math.max(1000, config.roles.shutdownGraceMs - 2000),
  }).catch((e: Error) => {
    throw new Error(`the worker could not start on ${temporalAddress}: ${e.message}`);
  });
  running.workers = workers;
  const run = workers.run();
  onStop({ name: 'workers (drained)', stop: workers.stop });
  run.catch((e) => void fail(e));
  step('starting the reconciliation schedules');
  if (config.reconciliation.schedules) await startReconciliationSchedules(client, config, logger);
  const redrive = startRefundRedrive({ db, client, config, logger, taskQueue: config.temporal.taskQueue });
  onStop({ name: 'refund re-drive', stop: redrive.stop });

  // the storefront's assets: published by the workers (one at a time, under an advisory lock) to
  // the configured S3 API; the embedded store of `npm start` has its own publisher there
  if (!config.objectStore.embedded) {
    const { startAssetPublisher } = await import('../app/assets');
    const publisher = startAssetPublisher({ db, config, logger });
    onStop({ name: 'asset publisher', stop: publisher.stop });
  }

  const port = config.roles.workerHttpPort;
  return [
    `worker         task queues ${workers.describe()} (WORKER_QUEUES ${config.roles.workerQueues.join(',')}), workflows ${bundle ? `from the prebuilt bundle ${bundle}` : 'bundled at start'}`,
    `health         http://${config.host}:${port}/healthz  http://${config.host}:${port}/readyz  metrics http://${config.host}:${port}/metrics${config.metricsNeedKey ? ' (a key with the scope metrics)' : ''}`,
    `temporal       ${temporalAddress}${embedded.includes('temporal') ? ' (the embedded one of `npm start`)' : ''}, namespace ${config.temporal.namespace}`,
    `postgres       ${redactUrl(databaseUrl)}${embedded.includes('postgres') ? ' (the embedded one of `npm start`)' : ''}`,
    'SIGTERM drains and stops.',
  ];
});
