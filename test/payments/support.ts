/** Helpers of the payment API tests: keys, requests with a key, waiting for a workflow's row. */
import request from 'supertest';
import type { ApiKeyMode } from '../../src/domain/api-keys';
import type { Db } from '../../src/db/knex';
import { createApp } from '../../src/http/app';
import { createApiKey } from '../../src/http/middleware/api-key';
import { testConfig, testLogger, uniq, type TestStack } from '../support/stack';

export const ALL_SCOPES = ['payments:write', 'payments:read', 'cost:read', 'bank:write', 'bank:read', 'webhooks:manage'];

export async function newKey(db: Db, opts: { scopes?: string[]; mode?: ApiKeyMode; name?: string } = {}) {
  return createApiKey(db, { name: opts.name ?? uniq('test-key'), scopes: opts.scopes ?? ALL_SCOPES, mode: opts.mode ?? 'sandbox' });
}

/** The payment API error envelope with `code`. */
export const paymentError = (code: string, details: Record<string, unknown> = {}) => ({
  statusCode: expect.any(Number),
  body: { error: expect.any(String), code, details: expect.objectContaining(details) },
});

export { waitFor } from '../support/stack';

export const rowOf = (db: Db, orderId: string) => db('payments').where({ order_id: orderId }).first();

export const eventsOf = async (db: Db, paymentId: string): Promise<string[]> =>
  (await db('payment_events').where({ payment_id: paymentId }).orderBy('id')).map((e: { to_status: string }) => e.to_status);

/**
 * Another gateway on the same stack (database, Temporal client, worker's task queue) with its
 * own settings: what a test needs instead of a second stack (stacks of one jest worker share
 * one database pool, which closing a second stack would end).
 */
export const gatewayWith = (stack: TestStack, env: Record<string, string>, opts: { taskQueue?: string; clock?: () => number } = {}) =>
  createApp({ config: testConfig(env), db: stack.db, temporal: { client: stack.client, taskQueue: opts.taskQueue ?? stack.taskQueue }, logger: testLogger, clock: opts.clock });

export { request };
