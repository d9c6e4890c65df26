/** Helpers of the payment API tests: keys, requests with a key, waiting for a workflow's row. */
import request from 'supertest';
import type { ApiKeyMode } from '../../src/domain/api-keys';
import type { Db } from '../../src/db/knex';
import { createApp } from '../../src/app/app';
import { createApiKey } from '../../src/http/middleware/api-key';
import { scopedPaymentId } from '../../src/ids';
import { paymentWorkflowIdOf, toPayment, type PaymentResult } from '../../src/payments';
import { resultDelivery } from '../../src/payments/workflow-client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { provenResult, testConfig, testLogger, uniq, waitFor, type TestStack } from '../support/stack';

export const ALL_SCOPES = [
  'payments:write',
  'payments:read',
  'cost:read',
  'bank:write',
  'bank:read',
  'webhooks:manage',
];

export async function newKey(db: Db, opts: { scopes?: string[]; mode?: ApiKeyMode; name?: string } = {}) {
  return createApiKey(db, {
    name: opts.name ?? uniq('test-key'),
    scopes: opts.scopes ?? ALL_SCOPES,
    mode: opts.mode ?? 'sandbox',
  });
}

/** The payment API error envelope with `code`. */
export const paymentError = (code: string, details: Record<string, unknown> = {}) => ({
  statusCode: expect.any(Number),
  body: { error: expect.any(String), code, details: expect.objectContaining(details) },
});

export { waitFor } from '../support/stack';

export const rowOf = (db: Db, orderId: string) => db('payments').where({ order_id: orderId }).first();

export const eventsOf = async (db: Db, paymentId: string): Promise<string[]> =>
  (await db('payment_events').where({ payment_id: paymentId }).orderBy('id')).map(
    (e: { to_status: string }) => e.to_status,
  );

/**
 * Another gateway on the same stack (database, Temporal client, worker's task queue) with its
 * own settings: what a test needs instead of a second stack (stacks of one jest worker share
 * one database pool, which closing a second stack would end).
 */
export const gatewayWith = (
  stack: TestStack,
  env: Record<string, string>,
  opts: { taskQueue?: string; clock?: () => number } = {},
) =>
  createApp({
    config: testConfig(env),
    db: stack.db,
    temporal: { client: stack.client, taskQueue: opts.taskQueue ?? stack.taskQueue },
    logger: testLogger,
    clock: opts.clock,
  });

export { request };

/**
 * A receiving webhook endpoint of an API key (or, without one, of the public payments in sandbox
 * mode) at a receiver on loopback, so a payment's payment.status.updated can be seen arriving.
 */
export async function webhookWitness(stack: TestStack, owner?: { id: string }) {
  const { startReceiver } = await import('../webhooks/helpers');
  const { createEndpoint } = await import('../../src/webhooks/endpoints');
  const receiver = await startReceiver(200);
  const publicOwner = owner ?? (await newKey(stack.db, { scopes: ['webhooks:manage'] }));
  await createEndpoint(
    stack.db,
    stack.config,
    { id: publicOwner.id, mode: 'sandbox' },
    { url: receiver.url, publicPayments: !owner },
  );
  return {
    /** the event of this order and status, once it has arrived (signed; checked by the webhook tests) */
    received: (orderId: string, status: string) =>
      waitFor(
        async () =>
          receiver.log
            .map((r) => JSON.parse(r.body) as { data: { orderId: string; status: string } })
            .find((b) => b.data.orderId === orderId && b.data.status === status),
        20_000,
        `payment.status.updated ${status} for ${orderId}`,
      ),
    stop: () => receiver.stop(),
  };
}

/** A clock the test moves (rate-limit windows); starts on a whole minute so window arithmetic is plain. */
export function testClock(start = Date.UTC(2031, 0, 1, 8, 0, 0)) {
  let now = start;
  return { now: () => now, set: (t: number) => (now = t), start };
}

/** A QR payment of `amount` THB made with `key` and settled paid by the provider's (proven) result. */
export async function paidQr(
  stack: TestStack,
  key: string,
  amount: number,
  prefix = 'qr',
): Promise<{ orderId: string; paymentId: string }> {
  const orderId = uniq(prefix);
  const created = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount, customerId: 'c' });
  expect(created.status).toBe(200);
  await waitFor(() => rowOf(stack.db, orderId));
  const handle = await paymentHandle(stack, orderId);
  const paymentId = created.body.body.paymentId as string;
  await handle.signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'qr' }));
  await handle.result();
  return { orderId, paymentId };
}

/** The workflow id of an order's payment as the gateway stored it (payment-<paymentId>); payment-<orderId> when there is no row. */
export async function paymentWorkflowIdOfOrder(stack: TestStack, orderId: string): Promise<string> {
  const row = await stack.db('payments').where({ order_id: orderId }).first('workflow_id');
  return row ? String(row.workflow_id) : `payment-${orderId}`;
}
export const paymentHandle = async (stack: TestStack, orderId: string) =>
  resultAware(stack, stack.client.workflow.getHandle(await paymentWorkflowIdOfOrder(stack, orderId)));

/**
 * `handle` whose signal('paymentResult', r) goes as the callback API sends a result
 * (resultDelivery: signal-with-start for a delayed-start QR payment, whose plain signals wait out
 * its start delay); an ended workflow is WorkflowNotFoundError, as for a signal. Anything else is
 * the handle's own.
 */
export function resultAware<H extends WorkflowHandle>(stack: TestStack, handle: H): H {
  const deliver = resultDelivery({
    config: stack.config,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
  });
  return new Proxy(handle, {
    get(target, prop, receiver) {
      if (prop !== 'signal') return Reflect.get(target, prop, receiver) as unknown;
      return async (def: string | { name: string }, ...args: unknown[]) => {
        const name = typeof def === 'string' ? def : def.name;
        const row =
          name === 'paymentResult' && (await stack.db('payments').where({ workflow_id: target.workflowId }).first());
        if (!row) return target.signal(def as string, ...args);
        await deliver(toPayment(row)!, args[0] as PaymentResult).catch((e: unknown) => {
          throw e instanceof WorkflowExecutionAlreadyStartedError
            ? new WorkflowNotFoundError('ended', target.workflowId, undefined)
            : e;
        });
      };
    },
  });
}
/** The workflow id the gateway gives a new payment of a key's order (an insider who knows IDENTITY_SECRET can derive it). */
export const derivedPaymentWorkflowId = (
  config: TestStack['config'],
  key: { id: string },
  mode: ApiKeyMode,
  orderId: string,
): string => paymentWorkflowIdOf(scopedPaymentId(config.identity.secret, key.id, mode, orderId));

/** The QR reference (Ref1, tag 62) stored with the payment, as a bank app names it in a callback. */
export async function storedRef1(db: Db, paymentId: string): Promise<string> {
  const row = await db('payments').where({ id: paymentId }).first('details');
  const ref1 = (row?.details as { qr?: { ref1?: unknown } } | undefined)?.qr?.ref1;
  if (typeof ref1 !== 'string') throw new Error(`payment ${paymentId} has no stored QR reference`);
  return ref1;
}
