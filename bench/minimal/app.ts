/**
 * The minimal anchor of issue 41: the payment app anyone would write in an afternoon, on the same
 * Postgres and Temporal as Talat. Koa and pg and the Temporal SDK: POST /payments inserts a row and
 * starts a workflow; POST /callback checks the body's HMAC (X-Signature) and signals; the workflow
 * records the result with a local activity and posts a signed webhook. No keys, limits, proofs,
 * codec, events or receipts: the floor Talat's cost is measured against (bench/anchor.ts).
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Pool } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { minimalActivities } from './activities';
import { minimalPayment, paidSignal } from './workflows';

export interface MinimalOptions {
  databaseUrl: string;
  temporalAddress: string;
  taskQueue: string;
  /** the provider's callback secret (HMAC-SHA256 of the raw body, hex, in X-Signature) */
  callbackSecret: string;
  webhook: { url: string; secret: string };
}

export const minimalSignature = (secret: string, raw: string) => createHmac('sha256', secret).update(raw).digest('hex');

async function rawBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the minimal app (its table, worker and HTTP server on 127.0.0.1); stop() ends all of it. */
export async function startMinimal(
  o: MinimalOptions,
): Promise<{ base: string; statements: () => number; stop(): Promise<void> }> {
  const pool = new Pool({ connectionString: o.databaseUrl, max: 20 });
  let statements = 0;
  const query = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: typeof query }).query = (...a: unknown[]) => {
    statements++;
    return query(...a);
  };
  await pool.query(
    `CREATE TABLE IF NOT EXISTS minimal_payments (id text PRIMARY KEY, order_id text UNIQUE NOT NULL,
       amount numeric NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now())`,
  );
  const connection = await Connection.connect({ address: o.temporalAddress });
  const client = new Client({ connection, namespace: 'default' });
  const workerConnection = await NativeConnection.connect({ address: o.temporalAddress });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace: 'default',
    taskQueue: o.taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows'), logger: quietLogger }),
    activities: minimalActivities(pool, o.webhook),
  });
  const run = worker.run();

  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') return void (ctx.status = 404);
    const raw = await rawBody(ctx.req);
    if (ctx.path === '/payments') {
      const b = JSON.parse(raw) as { orderId?: string; amount?: number };
      if (typeof b.orderId !== 'string' || typeof b.amount !== 'number') return void (ctx.status = 400);
      const paymentId = `mp_${randomUUID()}`;
      await pool.query('INSERT INTO minimal_payments (id, order_id, amount, status) VALUES ($1, $2, $3, $4)', [
        paymentId,
        b.orderId,
        b.amount,
        'pending',
      ]);
      await client.workflow.start(minimalPayment, {
        taskQueue: o.taskQueue,
        workflowId: `minimal-${b.orderId}`,
        args: [{ paymentId, orderId: b.orderId }],
      });
      ctx.body = { paymentId };
    } else if (ctx.path === '/callback') {
      const given = Buffer.from(String(ctx.get('x-signature')), 'hex');
      const want = Buffer.from(minimalSignature(o.callbackSecret, raw), 'hex');
      if (given.length !== want.length || !timingSafeEqual(given, want)) return void (ctx.status = 401);
      const b = JSON.parse(raw) as { orderId: string; status: string };
      await client.workflow.getHandle(`minimal-${b.orderId}`).signal(paidSignal, { status: b.status });
      ctx.body = { ok: true };
    } else ctx.status = 404;
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    statements: () => statements,
    async stop() {
      await new Promise((r) => server.close(r));
      worker.shutdown();
      await run.catch(() => undefined);
      await workerConnection.close();
      await connection.close();
      await pool.end();
    },
  };
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (m: string) => process.stderr.write(`[minimal] ${m}\n`),
};
