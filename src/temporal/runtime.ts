/** Install the Temporal worker runtime with a logger that goes through pino (once per process). */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

let installed = false;
export function installTemporalRuntime(level: LogLevel): void {
  if (installed) return;
  installed = true;
  try {
    // shutdownSignals: [] -> the process (src/main.ts) owns SIGINT/SIGTERM and drains the worker in order
    Runtime.install({ logger: new DefaultLogger(level), shutdownSignals: [] });
  } catch {
    // already installed in this process (e.g. by an earlier test file): keep that one
  }
}
