/** Shared by the callback tests: payments to call back for, and correctly (or deliberately wrongly) signed callbacks. */
import request from 'supertest';
import type Koa from 'koa';
import { signatureHeaders, signPayload } from '../../src/callbacks/verify';
import type { Config, ProviderName } from '../../src/config';
import { uniq, waitFor, type TestStack } from '../support/stack';

export { waitFor };

export interface TestPayment {
  orderId: string;
  paymentId: string;
  providerRef: string;
  amount: number;
  workflowId: string;
}

/** A pending card payment through POST /cardpayment, once its charge exists at the (simulated) provider. */
export async function cardPayment(
  stack: TestStack,
  opts: { amount?: number; callback?: string; apiKey?: string; orderId?: string } = {},
): Promise<TestPayment> {
  const orderId = opts.orderId ?? uniq('ord');
  const amount = opts.amount ?? 250.5;
  const req = request(stack.app.callback()).post('/cardpayment').type('form');
  if (opts.apiKey) req.set('X-API-Key', opts.apiKey);
  const res = await req.send({
    orderId,
    userId: 'u-1',
    amount: String(amount),
    token: 'tok_test_visa',
    ...(opts.callback ? { callback: opts.callback } : {}),
  });
  if (res.status !== 200) throw new Error(`POST /cardpayment: ${res.status} ${JSON.stringify(res.body)}`);
  // by its id when the answer names it (another account or mode may use the order id)
  const id = res.body?.body?.paymentId as string | undefined;
  const row = await waitFor(
    () =>
      stack
        .db('payments')
        .where(id ? { id } : { order_id: orderId })
        .whereNotNull('provider_ref')
        .first(),
    20_000,
    'card charge',
  );
  return { orderId, paymentId: row.id, providerRef: row.provider_ref, amount, workflowId: row.workflow_id };
}

export interface Sent {
  type: 'json' | 'form';
  raw: string;
  headers: Record<string, string>;
}

const iso = (offsetSeconds = 0) => new Date(Date.now() + offsetSeconds * 1000).toISOString();
const unix = (offsetSeconds = 0) => Math.floor(Date.now() / 1000) + offsetSeconds;
export const secretOf = (config: Config, p: ProviderName) => config.callbacks.providers[p].secret;

/** A form or JSON body signed with X-Timestamp/X-Signature (card, card network, bank app). */
export function headerSigned(
  config: Config,
  provider: ProviderName,
  type: 'json' | 'form',
  body: Record<string, unknown> | string,
  offsetSeconds = 0,
): Sent {
  const raw =
    typeof body === 'string'
      ? body
      : type === 'json'
        ? JSON.stringify(body)
        : new URLSearchParams(body as Record<string, string>).toString();
  return { type, raw, headers: signatureHeaders(secretOf(config, provider), raw, unix(offsetSeconds)) };
}

/** A JSON payload with its `signature` field (QR, wallet gateway form). */
export function fieldSigned(
  config: Config,
  provider: ProviderName,
  payload: Record<string, unknown>,
  offsetSeconds = 0,
): Sent {
  const signed = signPayload(secretOf(config, provider), {
    ...payload,
    timestamp: payload.timestamp ?? iso(offsetSeconds),
  });
  return { type: 'json', raw: JSON.stringify(signed), headers: {} };
}

export function post(app: Koa, path: string, sent: Sent, extraHeaders: Record<string, string> = {}) {
  return request(app.callback())
    .post(path)
    .set('Content-Type', sent.type === 'json' ? 'application/json' : 'application/x-www-form-urlencoded')
    .set({ ...sent.headers, ...extraHeaders })
    .send(sent.raw);
}

/** The callback error envelope with this name. */
export const callbackError = (name: string, status: number) => ({
  statusCode: status,
  body: { error: name, message: expect.any(String) },
});

/** The payment's receipts, once the finishes that run after the answers have ended. */
export async function receiptsOf(stack: TestStack, paymentId: string) {
  await stack.app.idle();
  return stack.db('callback_receipts').where({ payment_id: paymentId });
}

/** How many paymentResult signals the payment's workflow history holds. */
export async function signalsOf(stack: TestStack, workflowId: string): Promise<number> {
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'paymentResult',
  ).length;
}

export const resultOf = (stack: TestStack, workflowId: string) =>
  stack.client.workflow.getHandle(workflowId).result() as Promise<{ status: string }>;

/** A stand-in for the error tracker's ingestion endpoint on loopback: the Sentry SDK posts its envelopes here. */
export async function startSentrySink(): Promise<{ dsn: string; envelopes: string[]; stop(): Promise<void> }> {
  const http = await import('node:http');
  const zlib = await import('node:zlib');
  const envelopes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      envelopes.push((req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(body) : body).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as import('node:net').AddressInfo;
  return {
    dsn: `http://publickey@127.0.0.1:${port}/1`,
    envelopes,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The input a workflow was started with, read back from its history. */
export async function workflowInput<T>(stack: TestStack, workflowId: string): Promise<T> {
  const { defaultPayloadConverter } = await import('@temporalio/common');
  const { AesGcmCodec } = await import('../../src/temporal/codec');
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const payload = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
  // the history holds ciphertext (src/temporal/codec.ts): decrypt as Temporal Web's codec endpoint would
  const [clear] = await new AesGcmCodec(stack.config.temporal.codecKeys).decode([payload as never]);
  return defaultPayloadConverter.fromPayload(clear) as T;
}
