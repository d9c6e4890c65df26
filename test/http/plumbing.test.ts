/** Gateway plumbing on the real stack: envelopes, 404/405/413, malformed bodies, health, docs. */
import { Client, Connection } from '@temporalio/client';
import request from 'supertest';
import { createDb } from '../../src/db/knex';
import { createApp } from '../../src/app/app';
import { testConfig, testLogger } from '../support/stack';
import { useTestStack } from '../support/servers';

const stack = useTestStack({ worker: false, env: { BODY_LIMIT_KB: '1' } });

const paymentError = (code: string) => ({
  statusCode: expect.any(Number),
  body: { error: expect.any(String), code, details: expect.any(Object) },
});

describe('error envelopes', () => {
  it('404 in the payment envelope for an unknown path, with a request id', async () => {
    const res = await request(stack.app.callback()).get('/no/such/thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(paymentError('NOT_FOUND'));
    expect(res.body.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it('echoes a sane X-Request-Id', async () => {
    const res = await request(stack.app.callback()).get('/healthz').set('X-Request-Id', 'abc-123');
    expect(res.headers['x-request-id']).toBe('abc-123');
  });

  it('405 with Allow for a known path and another method', async () => {
    const res = await request(stack.app.callback()).get('/cardpayment');
    expect(res.status).toBe(405);
    expect(res.body).toEqual(paymentError('METHOD_NOT_ALLOWED'));
    expect(res.body.statusCode).toBe(405);
    expect(res.headers.allow).toContain('POST');
  });

  it('400 INVALID_INPUT for malformed JSON, never a 500', async () => {
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .set('Content-Type', 'application/json')
      .send('{"orderId": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError('INVALID_INPUT'));
  });

  it('400 INVALID_INPUT for a malformed form body', async () => {
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('orderId=%E0%A4%A&amount=%%%');
    expect(res.status).toBe(400);
    expect(res.body.body.code).toMatch(/INVALID_INPUT|MISSING_FIELD/);
  });

  it('413 PAYLOAD_TOO_LARGE over the body limit', async () => {
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ orderId: 'x'.repeat(5000) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual(paymentError('PAYLOAD_TOO_LARGE'));
    expect(res.body.statusCode).toBe(413);
  });

  it('uses the callback envelope {statusCode, body: {error, message}} on callback paths', async () => {
    const res = await request(stack.app.callback()).get('/qrcallback');
    expect([404, 405]).toContain(res.status);
    expect(res.body).toEqual({
      statusCode: res.status,
      body: { error: expect.any(String), message: expect.any(String) },
    });
  });

  it('MISSING_FIELD names the absent field', async () => {
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ userId: 'u1', amount: '10', token: 't' });
    expect(res.status).toBe(400);
    expect(res.body.body).toMatchObject({ code: 'MISSING_FIELD', details: { field: 'orderId' } });
  });
});

describe('health', () => {
  it('/healthz says the process is up', async () => {
    const res = await request(stack.app.callback()).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz checks Postgres and Temporal', async () => {
    const res = await request(stack.app.callback()).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok' } });
  });

  it('/readyz is 503 SERVICE_UNAVAILABLE when both are unreachable', async () => {
    const db = createDb('postgres://nobody@127.0.0.1:1/none');
    const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: '1s' });
    const client = new Client({ connection });
    const app = createApp({ config: testConfig(), db, temporal: { client, taskQueue: 'x' }, logger: testLogger });
    try {
      const res = await request(app.callback()).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        statusCode: 503,
        body: {
          error: expect.any(String),
          code: 'SERVICE_UNAVAILABLE',
          details: { checks: { postgres: 'unreachable', temporal: 'unreachable' } },
        },
      });
    } finally {
      await db.destroy();
      // /readyz does not wait for the client's own connect attempt (up to connectTimeout): let it end first
      await connection.ensureConnected().catch(() => undefined);
      await connection.close().catch(() => undefined);
    }
  });
});

describe('docs', () => {
  it('/openapi.json is an OpenAPI 3 document generated from the schemas', async () => {
    const res = await request(stack.app.callback()).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(
      res.body.paths['/cardpayment'].post.requestBody.content['application/x-www-form-urlencoded'].schema,
    ).toBeDefined();
    expect(res.body.components.schemas.CardPaymentRequest.required).toEqual(
      expect.arrayContaining(['orderId', 'userId', 'amount', 'token']),
    );
  });

  it('/docs is an HTML page that loads nothing from the internet', async () => {
    const res = await request(stack.app.callback()).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('/openapi.json');
    expect(res.text).not.toMatch(/(src|href)=["']?https?:/);
  });
});
