/**
 * Postgres writes per settled order: every INSERT, UPDATE and DELETE the gateway and the worker
 * send (knex's query events on the stack's one pool) from the authorisation (or the QR payment)
 * to the order's workflow completing: a card order adjusted twice and finalised, and a paid QR
 * order adjusted once and finalised with a refund. docs/orders.md quotes the bound checked here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { orderWorkflowOf } from './support';
import { paymentWorkflowIdOf } from '../../src/payments';
import { createTestStack, provenResult, statementsOf, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, request } from '../payments/support';
import { resultAware } from '../payments/support';

let stack: TestStack;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
});
afterAll(() => stack.close());

const WRITE = /^\s*(insert|update|delete)\b|^\s*with\b[\s\S]*\b(insert|update|delete)\b/i;
const tableOf = (sql: string) => /\b(?:into|update|from)\s+"?([a-z_]+)"?/i.exec(sql)?.[1] ?? '?';
function summary(sql: string[]) {
  const writes = sql.filter((s) => WRITE.test(s));
  const byTable: Record<string, number> = {};
  for (const w of writes) byTable[tableOf(w)] = (byTable[tableOf(w)] ?? 0) + 1;
  return { statements: sql.length, writes: writes.length, byTable };
}
const doc = () => fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'orders.md'), 'utf8');
/** the bound docs/orders.md states for `kind` ("at most N Postgres writes") */
const bound = (kind: string) => Number(new RegExp(`${kind}: at most (\\d+) Postgres writes`).exec(doc())?.[1]);

it('a card order, authorised, adjusted twice and finalised', async () => {
  const api = () => request(stack.app.callback());
  const orderId = uniq('ow');
  const { sql } = await statementsOf(stack.db, async () => {
    const res = await api()
      .post('/cardpayment')
      .type('form')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u', amount: '500', token: 'tok_test_visa', capture: 'false' });
    await stack.client.workflow
      .getHandle(await orderWorkflowOf(stack.db, orderId))
      .signal(
        'paymentResult',
        provenResult(stack.config, res.body.body.paymentId, { status: 'success', provider: 'card' }),
      );
    await waitFor(() => stack.db('orders').where({ order_id: orderId, status: 'open' }).first());
    for (const amount of [-45.5, 12.25])
      await api()
        .post(`/orders/${orderId}/adjustments`)
        .set('X-API-Key', key)
        .send({ lines: [{ description: 'line', amount, reason: 'weight' }] });
    await api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key);
    await stack.client.workflow.getHandle(await orderWorkflowOf(stack.db, orderId)).result();
  });
  const s = summary(sql);
  console.log(`card order ${JSON.stringify(s)}`);
  expect(s.writes).toBeLessThanOrEqual(bound('card order'));
});

it('a paid QR order, adjusted once and finalised with a refund', async () => {
  const api = () => request(stack.app.callback());
  const orderId = uniq('ow');
  const { sql } = await statementsOf(stack.db, async () => {
    const created = await api()
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u', amount: 300, customerId: 'c' });
    const handle = resultAware(
      stack,
      stack.client.workflow.getHandle(paymentWorkflowIdOf(created.body.body.paymentId)),
    );
    await handle.signal(
      'paymentResult',
      provenResult(stack.config, created.body.body.paymentId, { status: 'success', provider: 'qr' }),
    );
    await handle.result();
    await api()
      .post(`/orders/${orderId}/adjustments`)
      .set('X-API-Key', key)
      .send({ lines: [{ description: 'line', amount: -20, reason: 'out_of_stock' }] });
    await api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key);
    await stack.client.workflow.getHandle(await orderWorkflowOf(stack.db, orderId)).result();
  });
  const s = summary(sql);
  console.log(`QR order ${JSON.stringify(s)}`);
  expect(s.writes).toBeLessThanOrEqual(bound('QR order'));
});
