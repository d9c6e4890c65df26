/**
 * `npm run cluster`: the production topology on this machine (src/app/cluster.ts), on its own
 * ports and data directory so it runs beside `npm start`; prints where each part is; Ctrl-C stops
 * everything; a second run reuses the data. Ports and sizes from the environment (docs/cluster.md).
 */
import path from 'node:path';
import { startCluster, type Cluster } from '../app/cluster';
import { claimDataDir } from '../stack/supervisor';

const env = process.env;
const int = (name: string, dflt: number) => {
  const v = env[name] === undefined || env[name] === '' ? dflt : Number(env[name]);
  if (!Number.isInteger(v) || v < 1 || v > 65535) throw new Error(`${name} must be a whole number from 1 to 65535`);
  return v;
};
const ports = (name: string, dflt: number[]) =>
  env[name] ? env[name]!.split(',').map((p, i) => int(`${name}[${i}]`, Number(p))) : dflt;

/** Temporal keeps membership ports (base + 20 to base + 26) in a smallint column: below 32768. */
const temporalBase = () => {
  const base = int('CLUSTER_TEMPORAL_PORT_BASE', 7333);
  if (base > 32_700)
    throw new Error('CLUSTER_TEMPORAL_PORT_BASE must be at most 32700 (Temporal stores its ports as smallint)');
  return base;
};

const say = (m: string) => process.stderr.write(`[cluster ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

async function main(): Promise<void> {
  const dataDir = path.resolve(env.DATA_DIR ?? '.data-cluster');
  const release = claimDataDir(dataDir);
  let cluster: Cluster | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping the cluster');
    await cluster?.stop();
    release();
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  try {
    const gatewayPorts = ports('CLUSTER_GATEWAY_PORTS', [3101, 3102]);
    const workerPorts = ports('CLUSTER_WORKER_PORTS', [3111, 3112]);
    cluster = await startCluster({
      dataDir,
      ports: {
        postgres: int('CLUSTER_PG_PORT', 5434),
        temporalBase: temporalBase(),
        balancer: int('CLUSTER_BALANCER_PORT', 3100),
        gateways: gatewayPorts,
        workers: workerPorts,
        ui: int('CLUSTER_UI_PORT', 8633),
      },
      namespace: env.TEMPORAL_NAMESPACE || 'default',
      retentionDays: int('CLUSTER_RETENTION_DAYS', 7),
      historyShards: int('CLUSTER_HISTORY_SHARDS', 16),
      roleEnv: {
        NODE_ENV: env.NODE_ENV || 'development',
        LOG_LEVEL: env.LOG_LEVEL || 'warn',
        ...(env.SIMULATORS ? { SIMULATORS: env.SIMULATORS } : {}),
        ...(env.WEBHOOK_ALLOW_LOOPBACK ? { WEBHOOK_ALLOW_LOOPBACK: env.WEBHOOK_ALLOW_LOOPBACK } : {}),
      },
      workerQueues: env.CLUSTER_WORKER_QUEUES ? env.CLUSTER_WORKER_QUEUES.split(';') : undefined,
      workflowBundle: env.CLUSTER_WORKFLOW_BUNDLE || undefined,
      mtls: env.CLUSTER_MTLS === 'on',
      log: say,
    });
    if (stopping) return;
    process.stdout.write(
      [
        '',
        'Talat cluster is running:',
        ...cluster.describe(),
        `Data in ${dataDir} (a second run reuses it). Press Ctrl-C to stop.`,
        '',
      ].join('\n') + '\n',
    );
  } catch (e) {
    process.stderr.write(`talat: the cluster could not start: ${(e as Error).message}\n`);
    await stop(1);
  }
}

void main();
