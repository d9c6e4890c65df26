/**
 * `npm run gateway`: the HTTP role alone (payment, callback and storefront APIs, /healthz,
 * /readyz) against TEMPORAL_ADDRESS and DATABASE_URL. Run any number of them behind a load
 * balancer: rate-limit counters, idempotency keys and callback receipts live in Postgres, and
 * payments are Temporal workflows, so every gateway sees the same state.
 *
 * SIGTERM: /readyz turns 503 (the load balancer stops sending), the server stops accepting,
 * in-flight requests finish (up to SHUTDOWN_GRACE_S), then the pools close and the process
 * exits 0.
 */
import http from 'node:http';
import { createApp } from '../app/app';
import { createNotifier } from '../notifier';
import { connectServices, redactUrl, runRole } from './common';

runRole('gateway', async (ctx) => {
  const { config, logger, onStop, draining, step } = ctx;
  const { db, client, databaseUrl, temporalAddress, embedded } = await connectServices(ctx, 'gateway');
  step('opening the HTTP port');

  const notifier = createNotifier({ config, logger });
  onStop({ name: 'notifier', stop: () => notifier.close() });
  const app = createApp({ config, db, temporal: { client, taskQueue: config.temporal.taskQueue }, logger, notifier });
  const handle = app.callback();
  const server = http.createServer((req, res) => {
    if (draining() && req.url?.split('?')[0] === '/readyz') {
      res.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
      res.end(
        JSON.stringify({
          statusCode: 503,
          body: { error: 'SERVICE_UNAVAILABLE', code: 'SERVICE_UNAVAILABLE', details: { draining: true } },
        }),
      );
      return;
    }
    if (draining()) res.setHeader('connection', 'close');
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new Error(`cannot listen on ${config.host}:${config.port} (HOST, PORT): ${e.message}`)),
    );
    server.listen(config.port, config.host, resolve);
  });
  onStop({
    name: 'http server (drained)',
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }).then(() => app.stop()),
  });

  if (config.roles.simulators) {
    const { startCallbackSimulator } = await import('../simulators/callbacks');
    const host = ['0.0.0.0', '::', 'localhost'].includes(config.host) ? '127.0.0.1' : config.host;
    const simulator = startCallbackSimulator({
      db,
      config,
      logger,
      gatewayUrl: `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`,
    });
    onStop({ name: 'sandbox callback simulator', stop: () => simulator.stop() });
  }

  const base = `http://${config.host}:${config.port}`;
  return [
    `gateway        ${base}  (docs ${base}/docs, health ${base}/healthz ${base}/readyz)`,
    `temporal       ${temporalAddress}${embedded.includes('temporal') ? ' (the embedded one of `npm start`)' : ''}, namespace ${config.temporal.namespace}, task queue ${config.temporal.taskQueue}`,
    `postgres       ${redactUrl(databaseUrl)}${embedded.includes('postgres') ? ' (the embedded one of `npm start`)' : ''}`,
    'SIGTERM drains and stops.',
  ];
});
