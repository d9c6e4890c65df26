/**
 * The webhook POST's kept-alive connections (src/webhooks/http.ts): reused by the next delivery
 * to the same host, never across policies, and a POST whose reused socket the server had closed
 * is sent again on a new one. Loopback only; the servers count the connections they accept.
 */
import http from 'node:http';
import net from 'node:net';
import { CONNECTION_FAILED, postWebhook } from '../../src/webhooks/http';
import type { UrlPolicy } from '../../src/webhooks/url-policy';
import type { Resolver } from '../../src/resolver';

const listen = async <S extends net.Server>(server: S): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
};
const close = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const post = (url: string, policy: UrlPolicy) =>
  postWebhook(url, { 'content-type': 'application/json' }, '{"type":"payment.status.updated"}', {
    timeoutMs: 3_000,
    policy,
  });

/** An HTTP receiver that keeps connections alive (as Node's servers do by default) and counts them. */
async function receiver() {
  let connections = 0;
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  server.keepAliveTimeout = 10_000;
  server.on('connection', () => connections++);
  const port = await listen(server);
  return {
    port,
    counts: () => ({ connections, requests }),
    stop: () => {
      server.closeAllConnections();
      return close(server);
    },
  };
}

describe('kept-alive webhook connections', () => {
  const loopback: UrlPolicy = { requireHttps: false, allowLoopback: true };

  it('consecutive POSTs to one host go over one connection', async () => {
    const r = await receiver();
    try {
      for (let i = 0; i < 3; i++)
        expect((await post(`http://127.0.0.1:${r.port}/hooks`, loopback)).statusCode).toBe(204);
      expect(r.counts()).toEqual({ connections: 1, requests: 3 });
    } finally {
      await r.stop();
    }
  });

  it('a socket is not reused under a policy that would refuse its address', async () => {
    const r = await receiver();
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const url = `http://hooks.test.example:${r.port}/hooks`;
    try {
      expect((await post(url, { ...loopback, resolve })).statusCode).toBe(204);
      // the same resolver and host, now under a policy without loopback: its lookup refuses, and
      // the idle connection the first policy opened is not used for it
      const refused = await post(url, { requireHttps: false, allowLoopback: false, resolve });
      expect(refused.error).toBe(CONNECTION_FAILED);
      expect(r.counts().requests).toBe(1);
    } finally {
      await r.stop();
    }
  });

  it('a POST on a reused socket the server had closed is sent again on a new connection', async () => {
    // answers the first request of a connection (keep-alive announced), resets the connection
    // when a second request arrives on it: a server that closed an idle socket as we wrote
    let connections = 0;
    const answered: number[] = [];
    const server = net.createServer((socket) => {
      const n = ++connections;
      let seen = '';
      let served = 0;
      socket.on('data', (chunk) => {
        seen += chunk.toString('latin1');
        const end = seen.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0);
        if (seen.length < end + 4 + length) return;
        seen = seen.slice(end + 4 + length);
        if (served++ > 0) return socket.resetAndDestroy();
        answered.push(n);
        socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\nKeep-Alive: timeout=30\r\n\r\n');
      });
      socket.on('error', () => undefined);
    });
    const port = await listen(server);
    try {
      const url = `http://127.0.0.1:${port}/hooks`;
      expect((await post(url, loopback)).statusCode).toBe(204);
      const again = await post(url, loopback);
      expect(again).toMatchObject({ statusCode: 204 });
      expect(again.error).toBeUndefined();
      expect(answered).toEqual([1, 2]);
    } finally {
      await close(server);
    }
  });
});
