/**
 * Batched writes (src/db/write-batch.ts): what batchedWrites promises its callers, then the two
 * writes that use it, on a stack with a long window: the finishes of callback receipts answered
 * before their signal, and the records of webhook attempts. Five payments paid at once make fewer
 * statements of each than payments, and every receipt, delivery and attempt is written as alone.
 */
import request from 'supertest';
import { batchedWrites } from '../../src/db/write-batch';
import { signPayload } from '../../src/callbacks/verify';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { label } from '../support/statements';
import { newKey } from '../payments/support';
import { startReceiver, type Receiver } from '../webhooks/helpers';
import { createTestStack, uniq, waitFor, type TestStack } from '../support/stack';

describe('batchedWrites', () => {
  const recorder = (fail?: (items: string[]) => boolean) => {
    const batches: string[][] = [];
    const write = batchedWrites(
      async (items: string[]) => {
        batches.push(items);
        if (fail?.(items)) throw new Error('the statement failed');
        return items.map((x) => `done ${x}`);
      },
      { windowMs: 40, keyOf: (x) => x.split(':')[0] },
    );
    return { batches, write };
  };

  it('sends the items of one window as one write, each caller getting its own result', async () => {
    const { batches, write } = recorder();
    const first = write('a');
    await new Promise((r) => setTimeout(r, 10));
    const results = await Promise.all([first, write('b'), write('c')]);
    expect(results).toEqual(['done a', 'done b', 'done c']);
    expect(batches).toEqual([['a', 'b', 'c']]);
    await write('d');
    expect(batches).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('writes two items of one key in successive statements, in their order', async () => {
    const { batches, write } = recorder();
    const results = await Promise.all([write('a:1'), write('b'), write('a:2'), write('a:3')]);
    expect(results).toEqual(['done a:1', 'done b', 'done a:2', 'done a:3']);
    expect(batches).toEqual([['a:1', 'b'], ['a:2'], ['a:3']]);
  });

  it('fails every item of a failed statement, and only those', async () => {
    const { write } = recorder((items) => items.includes('bad'));
    const [a, bad] = await Promise.allSettled([write('a'), write('bad')]);
    expect(a).toMatchObject({ status: 'rejected', reason: { message: 'the statement failed' } });
    expect(bad.status).toBe('rejected');
    await expect(write('c')).resolves.toBe('done c');
  });
});

describe('the batched finishes and attempt records of payments paid at once', () => {
  let stack: TestStack;
  let receiver: Receiver;
  let key: string;
  const statements: string[] = [];

  beforeAll(async () => {
    stack = await createTestStack({ env: { WRITE_BATCH_MS: '300' } });
    const owner = await newKey(stack.db);
    key = owner.key;
    receiver = await startReceiver(200);
    await createEndpoint(stack.db, stack.config, { id: owner.id, mode: 'sandbox' }, { url: receiver.url });
    // the gateway and the workers share this stack's Db
    stack.db.on('query', (q: { sql: string }) => statements.push(label(q.sql)));
  });
  afterAll(async () => {
    await receiver?.stop();
    await stack?.close();
  });

  it('writes 5 finishes and 5 attempts in fewer statements than payments, each as if alone', async () => {
    const app = stack.app.callback();
    const paid = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const orderId = uniq('batch');
        const created = await request(app)
          .post('/qrpayment')
          .set('X-API-Key', key)
          .send({ orderId, userId: 'u', amount: 10, customerId: 'c' });
        expect(created.status).toBe(200);
        return { orderId, paymentId: created.body.body.paymentId as string };
      }),
    );
    statements.length = 0;
    const answers = await Promise.all(
      paid.map(({ orderId, paymentId }) =>
        request(app)
          .post('/qrcallback')
          .set('Content-Type', 'application/json')
          .send(
            JSON.stringify(
              signPayload(stack.config.callbacks.providers.QR.secret, {
                paymentId,
                status: 'success',
                amount: 10,
                orderId,
                timestamp: new Date().toISOString(),
              }),
            ),
          ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    await stack.app.idle();
    const ids = paid.map((p) => p.paymentId);
    await waitFor(
      async () =>
        (await stack.db('webhook_deliveries').whereIn('payment_id', ids).where({ state: 'delivered' })).length === 5,
      20_000,
      'five deliveries delivered',
    );

    const finishes = statements.filter((s) => s === 'update callback_receipts payments');
    const attempts = statements.filter((s) => s === 'insert webhook_attempts webhook_deliveries');
    expect(finishes.length).toBeGreaterThanOrEqual(1);
    expect(finishes.length).toBeLessThan(5);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    expect(attempts.length).toBeLessThan(5);

    const receipts = await stack
      .db('callback_receipts')
      .whereIn('payment_id', ids)
      .select('outcome', 'response_status');
    expect(receipts).toEqual(Array(5).fill({ outcome: 'signalled', response_status: 200 }));
    const deliveries = await stack
      .db('webhook_deliveries')
      .whereIn('payment_id', ids)
      .select('id', 'attempts', 'last_status_code');
    expect(deliveries.map((d) => [d.attempts, d.last_status_code])).toEqual(Array(5).fill([1, 200]));
    const rows = await stack.db('webhook_attempts').whereIn(
      'delivery_id',
      deliveries.map((d) => d.id),
    );
    expect(rows.map((r) => [r.attempt, r.kind, r.status_code])).toEqual(Array(5).fill([1, 'automatic', 200]));
    expect(receiver.log.length).toBe(5);
  });
});
