/**
 * What the runs on the cluster share (bench/chaos.ts --cluster, bench/bulkhead.ts --cluster,
 * bench/cluster.ts): free ports for a whole cluster, the "next build" of the rolling upgrade, and
 * the replay of histories on a build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { TEMPORAL_SERVICES, temporalPorts, type ClusterPorts } from '../src/app/cluster';
import { portInUse } from '../src/stack/supervisor';
import { freePort } from '../src/stack/temporal';
import { dataConverterOf } from '../src/temporal/codec';
import type { KeyRing } from '../src/key-ring';
import { connectClient } from '../src/temporal/client';

/** Ports for a cluster of `gateways` and `workers` on this machine, none of them in use. */
export async function clusterPorts(gateways: number, workers: number): Promise<ClusterPorts> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Temporal keeps membership ports in a smallint column: below 32768
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    const temporal = [
      ...new Set(
        TEMPORAL_SERVICES.flatMap((s) => {
          const p = temporalPorts(base, s);
          return [p.grpc, p.membership, p.metrics, p.http];
        }),
      ),
    ];
    let busy = false;
    for (const p of temporal) if ((busy = await portInUse(p))) break;
    if (busy) continue;
    const others: number[] = [];
    while (others.length < 2 + gateways + workers) {
      const p = await freePort();
      if (!temporal.includes(p) && !others.includes(p)) others.push(p);
    }
    return {
      postgres: others[0],
      balancer: others[1],
      temporalBase: base,
      gateways: others.slice(2, 2 + gateways),
      workers: others.slice(2 + gateways),
    };
  }
  throw new Error('no free range of ports for a cluster');
}

/** The next build of the rolling upgrade (bench/roll/workflows.ts: a patched() change), bundled to `file`. */
export async function bundleRollBuild(file: string): Promise<string> {
  const quiet = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'roll', 'workflows.ts'),
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: console.error, log: quiet },
  });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, code);
  return file;
}

/** Replays the histories of `workflowIds` (from the cluster) on the build in `bundlePath`. */
export async function replayWithBuild(
  address: string,
  codecKeys: KeyRing,
  workflowIds: string[],
  bundlePath: string,
): Promise<{ replayed: number; failures: string[] }> {
  const client = await connectClient(address, 'default', { codecKeys });
  try {
    const histories = [];
    for (const workflowId of workflowIds)
      histories.push({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() });
    const failures: string[] = [];
    let replayed = 0;
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { codePath: bundlePath }, dataConverter: dataConverterOf(codecKeys) },
      histories,
    )) {
      replayed++;
      if (r.error) failures.push(`${r.workflowId}: ${r.error.message.split('\n')[0]}`);
    }
    return { replayed, failures };
  } finally {
    await client.connection.close();
  }
}

/** Those of `workflowIds` whose history has a patch marker (a `patched()` call recorded one). */
export async function historiesWithPatchMarker(
  address: string,
  codecKeys: KeyRing,
  workflowIds: string[],
): Promise<string[]> {
  const client = await connectClient(address, 'default', { codecKeys });
  try {
    const marked: string[] = [];
    for (const id of workflowIds) {
      const { events } = await client.workflow.getHandle(id).fetchHistory();
      if ((events ?? []).some((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')) marked.push(id);
    }
    return marked;
  } finally {
    await client.connection.close();
  }
}
