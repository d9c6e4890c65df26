/**
 * Which project files run, measured with V8 precise coverage of this process (node:inspector's
 * Profiler): a file counts when one of its functions was called since the last take(). Workflow
 * code runs in the Temporal worker's threads, which this session does not see.
 */
import { Session } from 'node:inspector';
import path from 'node:path';

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { count: number }[] }[];
}

export interface FileCoverage {
  /** project files (relative to `root`) with at least one function called since the last take() */
  take(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startFileCoverage(root: string, dirs = /^(src|workflows|activities)\//): Promise<FileCoverage> {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) =>
      session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res as T))),
    );
  await post('Profiler.enable');
  await post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const relative = (url: string) => path.relative(root, url.startsWith('file://') ? new URL(url).pathname : url);
  return {
    async take() {
      const { result } = await post<{ result: ScriptCoverage[] }>('Profiler.takePreciseCoverage');
      const files = result
        .filter((s) => s.functions.some((f) => f.ranges[0].count > 0))
        .map((s) => relative(s.url).split(path.sep).join('/'))
        .filter((f) => dirs.test(f) && /\.ts$/.test(f));
      return [...new Set(files)].sort();
    },
    async stop() {
      await post('Profiler.stopPreciseCoverage');
      await post('Profiler.disable');
      session.disconnect();
    },
  };
}
