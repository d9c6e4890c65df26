/**
 * The embedded dev server serves Talat's search attributes from its cache: a start or a
 * signal-with-start that carries them reads no cluster metadata from its database (the dev
 * server's default re-reads it on every such read). Counted from the server's own Prometheus
 * metrics, on a dev server of this file's own, so no other test's calls are counted.
 */
import { Client, Connection } from '@temporalio/client';
import { freePort, operationCounts, startEmbeddedTemporal, type EmbeddedTemporal } from '../../src/stack/temporal';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../../src/domain/search-attributes';
import { uniq } from '../support/stack';

let temporal: EmbeddedTemporal;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  temporal = await startEmbeddedTemporal({
    port: await freePort(),
    namespace: 'default',
    cliPath: process.env.TEMPORAL_CLI_PATH,
  });
  connection = await Connection.connect({ address: temporal.address });
  client = new Client({ connection, namespace: 'default' });
}, 60_000);
afterAll(async () => {
  await connection?.close();
  await temporal?.stop();
});

/** The dev server's persistence requests of `operation` so far (its metrics are reported each second). */
async function persistenceRequests(operation: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 2000));
  return (await operationCounts([temporal.metricsPort], 'persistence_requests')).get(operation) ?? 0;
}

const withAttributes = (orderId: string) => ({
  taskQueue: 'search-attribute-cache-unpolled',
  workflowId: orderId,
  typedSearchAttributes: [
    { key: OrderIdKey, value: orderId },
    { key: PaymentMethodKey, value: 'qr' },
    { key: PaymentStatusKey, value: 'pending' },
  ],
});

it('starts and signal-with-starts carrying the search attributes read no cluster metadata, and are found by them', async () => {
  await client.workflow.start('anyWorkflow', withAttributes(uniq('sa-warm'))); // the cache's first load
  const before = await persistenceRequests('GetCurrentClusterMetadata');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const started = uniq('sa-start');
    await client.workflow.start('anyWorkflow', withAttributes(started));
    const signalled = uniq('sa-sws');
    await client.workflow.signalWithStart('anyWorkflow', { ...withAttributes(signalled), signal: 'paymentResult' });
    ids.push(started, signalled);
  }
  expect((await persistenceRequests('GetCurrentClusterMetadata')) - before).toBe(0);
  // and the attributes hold: Temporal Web's query by OrderId finds each
  const found = async (orderId: string) => {
    for await (const w of client.workflow.list({ query: `OrderId = "${orderId}"` })) return w.workflowId;
    return undefined;
  };
  for (let tries = 0; (await found(ids[ids.length - 1])) === undefined && tries < 50; tries++)
    await new Promise((r) => setTimeout(r, 100));
  for (const id of ids) expect(await found(id)).toBe(id);
}, 60_000);
