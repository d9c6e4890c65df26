/**
 * Install the Temporal worker runtime with a logger that goes through pino (once per process),
 * and, with `metricsPort`, the SDK's Prometheus exporter on 127.0.0.1:<port> (metrics named
 * temporal_*; the gateway appends them to its /metrics).
 */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

let installed = false;
export function installTemporalRuntime(level: LogLevel, opts: { metricsPort?: number } = {}): void {
  if (installed) return;
  installed = true;
  try {
    // shutdownSignals: [] -> the process (src/main.ts) owns SIGINT/SIGTERM and drains the worker in order
    Runtime.install({
      logger: new DefaultLogger(level),
      shutdownSignals: [],
      ...(opts.metricsPort
        ? {
            telemetryOptions: {
              metrics: {
                metricPrefix: 'temporal_',
                prometheus: { bindAddress: `127.0.0.1:${opts.metricsPort}`, useSecondsForDurations: true },
              },
            },
          }
        : {}),
    });
  } catch {
    // already installed in this process (e.g. by an earlier test file): keep that one
  }
}
