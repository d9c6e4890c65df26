/** Shared by the checkout tests: a real HTTP server over a test app, QR payments, an SSE reader, signed QR callbacks. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import request from 'supertest';
import { fieldSigned, post as postCallback } from '../callbacks/helpers';
import { uniq, type TestStack } from '../support/stack';
import { storedRef1 } from '../payments/support';

export async function serve(app: Koa): Promise<{ base: string; close(): Promise<void> }> {
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface QrCreated {
  orderId: string;
  paymentId: string;
  amount: number;
  payload: string;
  checkoutUrl: string;
  token: string;
}

export async function qrPayment(
  app: Koa,
  key: string,
  body: { amount?: number; returnUrl?: string } = {},
): Promise<QrCreated> {
  const orderId = uniq('ord');
  const amount = body.amount ?? 123.5;
  const res = await request(app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({
      orderId,
      userId: 'u-1',
      customerId: 'c-1',
      amount,
      ...(body.returnUrl ? { returnUrl: body.returnUrl } : {}),
    });
  if (res.status !== 200) throw new Error(`POST /qrpayment: ${res.status} ${JSON.stringify(res.body)}`);
  const b = res.body.body;
  return {
    orderId,
    paymentId: b.paymentId,
    amount,
    payload: b.qr.payload,
    checkoutUrl: b.checkoutUrl,
    token: new URL(b.checkoutUrl).pathname.split('/')[2],
  };
}

/** The QR provider's signed callback for the payment (by its stored QR reference, as a bank app names it). */
export const qrCallback = async (stack: TestStack, p: QrCreated, status: 'success' | 'failed') =>
  postCallback(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', {
      paymentId: await storedRef1(stack.db, p.paymentId),
      status,
      amount: p.amount,
      orderId: p.orderId,
    }),
  );

/** An event stream read as a client reads it: each `status` event's value, in order. */
export function openEvents(url: string): Promise<{
  status: number;
  statuses: string[];
  next(timeoutMs?: number): Promise<string>;
  ended: Promise<void>;
  close(): void;
}> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { Accept: 'text/event-stream' } }, (res) => {
      const statuses: string[] = [];
      const waiters: (() => void)[] = [];
      let buf = '';
      let read = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = /^data: (.*)$/m.exec(block);
          if (/^event: status$/m.test(block) && data) statuses.push((JSON.parse(data[1]) as { status: string }).status);
        }
        waiters.splice(0).forEach((w) => w());
      });
      const ended = new Promise<void>((r) => res.on('close', () => r()));
      resolve({
        status: res.statusCode ?? 0,
        statuses,
        ended,
        close: () => req.destroy(),
        async next(timeoutMs = 5000) {
          const deadline = Date.now() + timeoutMs;
          while (statuses.length <= read) {
            if (Date.now() > deadline) throw new Error(`no status event within ${timeoutMs} ms (got ${statuses})`);
            await new Promise<void>((r) => {
              waiters.push(r);
              setTimeout(r, 50);
            });
          }
          return statuses[read++];
        },
      });
    });
    req.on('error', reject);
  });
}
