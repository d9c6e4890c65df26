/** Install the Temporal worker runtime with a logger that goes through pino (once per process). */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

let installed = false;
export function installTemporalRuntime(level: LogLevel): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({ logger: new DefaultLogger(level) });
  } catch {
    // already installed in this process (e.g. by an earlier test file): keep that one
  }
}
