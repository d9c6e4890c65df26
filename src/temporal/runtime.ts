/**
 * Install the Temporal worker runtime (once per process) with its logs in Talat's log: the SDK's
 * own lines (worker state, activity and workflow task failures, a workflow's `log` calls) and
 * Core's (forwarded from Rust, e.g. TMPRL1104 "Workflow task duration exceeded") are written by
 * the process's pino logger, as JSON lines with its redaction and batching, a field
 * `component: "temporal-sdk"` telling them apart. Without this the SDK's DefaultLogger wrote plain
 * text lines to stderr, and Core's console logger colored text lines to stdout among the JSON lines.
 * With `metricsPort`, the SDK's Prometheus exporter on 127.0.0.1:<port> (metrics named temporal_*;
 * the gateway appends them to its /metrics).
 */
import { Runtime, type LogLevel, type LogMetadata, type Logger as SdkLogger } from '@temporalio/worker';
import type { Logger } from '../logger';

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * The SDK's Logger interface over a pino logger, at `level` and above, and never below the pino
 * logger's own level (LOG_LEVEL=error keeps the SDK's warnings out too). The SDK names an error
 * `error` in its metadata; pino serializes an Error (message, stack) under `err`, so it goes there.
 */
export function sdkLoggerOf(logger: Logger, level: LogLevel): SdkLogger {
  const wanted = PINO_LEVEL[level];
  const out = logger.child(
    { component: 'temporal-sdk' },
    { level: logger.levelVal > logger.levels.values[wanted] ? logger.level : wanted },
  );
  const log = (at: LogLevel, message: string, meta?: LogMetadata): void => {
    const method = PINO_LEVEL[at] ?? 'info';
    const { error, ...fields } = meta ?? {}; // symbol keys (the SDK's timestamp) are never written
    out[method](error === undefined ? fields : { ...fields, err: error }, message);
  };
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

/** What installTemporalRuntime installs: the SDK's and Core's logs through `logger`, at `level`. */
export function runtimeOptions(logger: Logger, level: LogLevel, opts: { metricsPort?: number } = {}) {
  return {
    logger: sdkLoggerOf(logger, level),
    // the process (src/main.ts) owns SIGINT/SIGTERM and drains the worker in order
    shutdownSignals: [] as NodeJS.Signals[],
    telemetryOptions: {
      logging: { forward: {}, filter: { core: level, other: level } },
      ...(opts.metricsPort
        ? {
            metrics: {
              metricPrefix: 'temporal_',
              prometheus: { bindAddress: `127.0.0.1:${opts.metricsPort}`, useSecondsForDurations: true },
            },
          }
        : {}),
    },
  };
}

let installed = false;
export function installTemporalRuntime(logger: Logger, level: LogLevel, opts: { metricsPort?: number } = {}): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install(runtimeOptions(logger, level, opts));
  } catch {
    // already installed in this process (e.g. by an earlier test file): keep that one
  }
}
