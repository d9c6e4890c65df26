/**
 * Temporal unreachable: every payment API endpoint that needs it answers 503
 * SERVICE_UNAVAILABLE in the payment envelope (never a hang, never a 500) and writes nothing.
 *
 * "Temporal" here is a TCP port that accepts connections and never answers: calls hang rather
 * than fail (the harder case; a refused port fails faster). The gateway must give up by itself.
 */
import net from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type Koa from 'koa';
import { claimBankObject } from '../../src/bank/owners';
import { createApp } from '../../src/app/app';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';
import { newKey, paymentError, request, rowOf } from './support';

let stack: TestStack;
let app: Koa;
let connection: Connection;
let key: string;
const bankUser = uniq('u');
let blackHole: net.Server;
const sockets = new Set<net.Socket>();
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  blackHole = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  connection = Connection.lazy({
    address: `127.0.0.1:${(blackHole.address() as net.AddressInfo).port}`,
    connectTimeout: '1s',
  });
  app = createApp({
    config: stack.config,
    db: stack.db,
    temporal: { client: new Client({ connection }), taskQueue: 'x' },
    logger: testLogger,
  });
  const created = await newKey(stack.db);
  key = created.key;
  // the key's own bank user: another key's (or nobody's) is 404 before Temporal is asked
  await claimBankObject(stack.db, 'user', 'sandbox', bankUser, created.id);
});
afterAll(async () => {
  await connection.close().catch(() => undefined);
  sockets.forEach((s) => s.destroy());
  await new Promise((resolve) => blackHole.close(resolve));
  await stack.close();
});

describe('Temporal unreachable', () => {
  it.each([
    [
      'POST /qrpayment',
      () =>
        request(app.callback())
          .post('/qrpayment')
          .set('X-API-Key', key)
          .send({ orderId: uniq('o'), userId: 'u', amount: 1, customerId: 'c' }),
    ],
    [
      'POST /cardpayment',
      () =>
        request(app.callback())
          .post('/cardpayment')
          .type('form')
          .send({ orderId: uniq('o'), userId: 'u', amount: '1', token: 'tok' }),
    ],
    [
      'GET /checkstatus (no record yet)',
      () =>
        request(app.callback())
          .get(`/checkstatus/${uniq('o')}`)
          .set('X-API-Key', key),
    ],
    [
      'POST /bank/createuser',
      () =>
        request(app.callback())
          .post('/bank/createuser')
          .set('X-API-Key', key)
          .send({ userId: uniq('u'), name: 'n' }),
    ],
    ['GET /bank/user', () => request(app.callback()).get(`/bank/user/${bankUser}`).set('X-API-Key', key)],
  ])('%s -> 503 SERVICE_UNAVAILABLE', async (_name, send) => {
    const res = await send();
    expect(res.status).toBe(503);
    expect(res.body).toEqual(paymentError('SERVICE_UNAVAILABLE'));
    expect(res.body.statusCode).toBe(503);
  });

  it('calculate-cost needs no Temporal and still answers', async () => {
    const res = await request(app.callback())
      .post('/calculate-cost')
      .set('X-API-Key', key)
      .send({
        items: [{ productId: 'G496879-2', quantity: 1 }],
        branchId: 'B999',
        deliveryOption: 'pickup',
        paymentMethod: 'qr',
      });
    expect(res.status).toBe(404); // the unknown branch, not the engine
  });

  it('POST /webhooks/endpoints/{id}/recover -> 503 SERVICE_UNAVAILABLE within the bound, not a hang', async () => {
    const ep = await request(app.callback())
      .post('/webhooks/endpoints')
      .set('X-API-Key', key)
      .send({ url: 'http://127.0.0.1:9/talat' }); // loopback: allowed in tests, no DNS
    expect(ep.status).toBe(201); // Postgres alone
    const started = Date.now();
    const res = await request(app.callback())
      .post(`/webhooks/endpoints/${ep.body.body.id}/recover`)
      .set('X-API-Key', key)
      .send({ since: new Date(Date.now() - 3_600_000).toISOString() });
    expect(res.status).toBe(503);
    expect(res.body).toEqual(paymentError('SERVICE_UNAVAILABLE'));
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it('a refused QR payment leaves no record', async () => {
    const orderId = uniq('o');
    await request(app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u', amount: 1, customerId: 'c' });
    expect(await rowOf(stack.db, orderId)).toBeUndefined();
  });
});
