/**
 * For test/temporal/closed-channel.test.ts: `node --import tsx test/temporal/closed-channel-process.ts
 * ADDRESS [bare]` connects to Temporal through a TCP relay (with connectClient, or with `bare` a
 * Connection without Talat's interceptors), cuts the relay so a call is being retried, closes the
 * connection and prints how that call ended.
 */
import net from 'node:net';
import { Connection } from '@temporalio/client';
import { connectClient } from '../../src/temporal/client';

const [address, bare] = process.argv.slice(2);
const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
const sockets = new Set<net.Socket>();
const relay = net.createServer((inbound) => {
  const outbound = net.connect(port, host);
  for (const s of [inbound, outbound]) {
    sockets.add(s);
    s.on('error', () => undefined);
  }
  inbound.pipe(outbound).pipe(inbound);
});

void (async () => {
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  const relayed = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
  const connection = bare
    ? await Connection.connect({ address: relayed })
    : (await connectClient(relayed, 'default')).connection;
  await connection.workflowService.getSystemInfo({});
  relay.close();
  for (const s of sockets) s.destroy();
  const call = connection
    .withDeadline(Date.now() + 10_000, () => connection.workflowService.getSystemInfo({}))
    .then(
      () => 'answered',
      (e: { code?: number; details?: string }) => `failed: code ${e.code}, ${e.details}`,
    );
  await new Promise((r) => setTimeout(r, 300)); // the call has failed once and waits for its retry
  await connection.close();
  console.log(`closed; the call ${await call}`);
})();
