/** Shared by the webhook tests: API keys, a webhook receiver on loopback that logs every request. */
import http from 'node:http';
import request from 'supertest';
import { createApiKey } from '../../src/http/middleware/api-key';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../src/webhooks/signing';
import { listenLocal } from '../support/servers';
import { uniq, type TestStack } from '../support/stack';

export async function apiKey(
  stack: TestStack,
  scopes = ['payments:write', 'payments:read', 'webhooks:manage'],
  mode: 'live' | 'sandbox' = 'sandbox',
) {
  return createApiKey(stack.db, { name: uniq('key'), scopes, mode });
}

export interface Received {
  /** ms, monotonic */
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  log: Received[];
  /** the status the next requests get */
  status: number;
  /** checks a request's Standard Webhooks signature with the endpoint's secret */
  verified(r: Received, secret: string): boolean;
  stop(): Promise<void>;
}

export async function startReceiver(status = 200): Promise<Receiver> {
  const log: Received[] = [];
  const receiver: Receiver = {
    url: '',
    log,
    status,
    verified: (r, secret) => verifyWebhook(secret, r.headers as Record<string, string>, r.body),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = receiver.status;
      log.push({
        at: performance.now(),
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        status: s,
      });
      res.writeHead(s, { 'content-type': 'text/plain' }).end(s < 300 ? 'ok' : 'down');
    });
  });
  server.keepAliveTimeout = 1;
  receiver.url = `${(await listenLocal(server)).url}/hooks`;
  return receiver;
}

export async function registerEndpoint(stack: TestStack, key: string, body: Record<string, unknown>) {
  const res = await request(stack.app.callback()).post('/webhooks/endpoints').set('X-API-Key', key).send(body);
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.body as { id: string; secret: string; url: string };
}

/** A new QR payment created with `key` through the API, and the `paid` status event of it (to hand to the webhook activities). */
export async function paidQrEvent(stack: TestStack, key: { key: string; id: string }) {
  const orderId = uniq('evt');
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u-1', amount: 3, customerId: 'c-1' });
  if (res.status !== 200) throw new Error(`POST /qrpayment: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    paymentId: res.body.body.paymentId as string,
    orderId,
    status: 'paid' as const,
    amountSatang: 300,
    timestamp: new Date().toISOString(),
    mode: 'sandbox' as const,
    apiKeyId: key.id,
  };
}

/** Every delivery of a payment's event once none is pending any more (delivered, dead or cancelled). */
export async function deliveriesSettled(stack: TestStack, paymentId: string, status: string, timeoutMs = 30_000) {
  const { waitFor } = await import('../support/stack');
  return waitFor(
    async () => {
      const rows = await stack
        .db('webhook_deliveries')
        .where({ payment_id: paymentId, event_status: status })
        .orderBy('id');
      return rows.length > 0 && rows.every((r: { state: string }) => r.state !== 'pending') ? rows : undefined;
    },
    timeoutMs,
    `webhook deliveries of ${paymentId} ${status}`,
  );
}

/** Whether the official standardwebhooks library accepts a received message with `secret`. */
export function verifiesWithStandardWebhooks(r: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
