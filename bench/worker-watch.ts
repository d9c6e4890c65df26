/**
 * What the worker itself went through while a benchmark's load ran, sampled every `everyMs`:
 *  - from Core's own Prometheus metrics (the Runtime's metrics port, bench/support.ts): the
 *    fewest free workflow-task and local-activity slots of the payments queue's worker, the most
 *    pollers it ran (sticky and normal queue) and the largest sticky cache;
 *  - the event-loop delay of the main thread (where the gateway, the local activities and Core's
 *    callbacks into JS run): p99 and max;
 *  - the largest size of the dev server's SQLite write-ahead log (`walFile`), whose checkpoints
 *    the server's writes wait for.
 * It tells a worker that ran out of slots or whose thread was blocked from one that was simply
 * short of CPU (slots free, loop prompt, tasks still waiting on the server).
 */
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

interface Gauge {
  name: string;
  /** label name=value pairs the series must carry */
  labels: Record<string, string>;
  /** min or max over the samples */
  keep: 'min' | 'max';
}

const value = (text: string, g: Gauge): number | undefined => {
  let found: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${g.name}{`)) continue;
    const labels = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
    if (!Object.entries(g.labels).every(([k, v]) => labels.includes(`${k}="${v}"`))) continue;
    const n = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(n)) found = (found ?? 0) + n;
  }
  return found;
};

export function watchWorker(
  metricsPort: number | undefined,
  taskQueue: string,
  walFile?: string,
  everyMs = 250,
): { stop: () => Promise<string> } {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const gauges: Record<string, Gauge> = {
    'free workflow-task slots (min)': {
      name: 'temporal_worker_task_slots_available',
      labels: { worker_type: 'WorkflowWorker', task_queue: taskQueue },
      keep: 'min',
    },
    'free local-activity slots (min)': {
      name: 'temporal_worker_task_slots_available',
      labels: { worker_type: 'LocalActivityWorker', task_queue: taskQueue },
      keep: 'min',
    },
    'sticky pollers (max)': {
      name: 'temporal_num_pollers',
      labels: { poller_type: 'sticky_workflow_task', task_queue: taskQueue },
      keep: 'max',
    },
    'normal pollers (max)': {
      name: 'temporal_num_pollers',
      labels: { poller_type: 'workflow_task', task_queue: taskQueue },
      keep: 'max',
    },
    'sticky cache (max)': { name: 'temporal_sticky_cache_size', labels: { task_queue: taskQueue }, keep: 'max' },
  };
  const seen: Record<string, number | undefined> = {};
  let walMax = 0;
  let samples = 0;
  let failures = 0;
  let stopped = false;
  const sample = async () => {
    if (walFile) walMax = Math.max(walMax, fs.statSync(walFile, { throwIfNoEntry: false })?.size ?? 0);
    if (metricsPort === undefined) return;
    try {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      samples++;
      for (const [label, g] of Object.entries(gauges)) {
        const v = value(text, g);
        if (v === undefined) continue;
        const was = seen[label];
        seen[label] = was === undefined ? v : g.keep === 'min' ? Math.min(was, v) : Math.max(was, v);
      }
    } catch {
      failures++;
    }
  };
  const running = (async () => {
    while (!stopped) {
      await sample();
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await running;
      loop.disable();
      const ms = (ns: number) => `${(ns / 1e6).toFixed(0)} ms`;
      const core =
        metricsPort === undefined
          ? 'no worker metrics'
          : Object.entries(gauges)
              .map(([label]) => `${label} ${seen[label] ?? 'n/a'}`)
              .join(', ') + ` (${samples} samples${failures ? `, ${failures} failed` : ''})`;
      const wal = walFile ? `; the server's SQLite WAL at most ${(walMax / 2 ** 20).toFixed(1)} MiB` : '';
      return `  worker while offered: ${core}; main thread's event-loop delay p99 ${ms(loop.percentile(99))}, max ${ms(loop.max)}${wal}`;
    },
  };
}
