/**
 * Input limits before any work: JSON nesting depth (an iterative scan of the raw text, before
 * JSON.parse or canonical JSON recurse), the content type of a body, unknown methods (405 with
 * Allow), and idempotent replays byte for byte.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { jsonDeeperThan, MAX_JSON_DEPTH } from '../../src/domain/json-depth';
import { FORM_PATHS } from '../../src/http/middleware/body';
import { capturingLogger, createTestStack, uniq, waitFor, type TestStack } from '../support/stack';
import { createApp } from '../../src/app/app';
import { fieldSigned, post } from '../callbacks/helpers';
import { newKey } from '../payments/support';

let stack: TestStack;
let key: string;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  key = (await newKey(stack.db)).key;
});
afterAll(() => stack.close());

const paymentError = (code: string, details: Record<string, unknown> = {}) => ({
  statusCode: expect.any(Number),
  body: { error: expect.any(String), code, details: expect.objectContaining(details) },
});
const callbackError = (name: string, status: number) => ({
  statusCode: status,
  body: { error: name, message: expect.any(String) },
});
const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);

describe('jsonDeeperThan (the scan of the raw text)', () => {
  it.each([
    ['{}', 1, false],
    ['{"a":{"b":[1]}}', 3, false],
    ['{"a":{"b":[1]}}', 2, true],
    [nested(32), 32, false],
    [nested(33), 32, true],
    // brackets inside strings, escaped quotes and backslashes do not count
    ['{"a":"[[[[[[[[[[{{{{{{{{"}', 1, false],
    ['{"a":"\\"[[[[","b":"\\\\"}', 1, false],
    ['{"a":"\\\\","b":[[1]]}', 2, true],
    ['"[[[["', 0, false],
  ])('%s with at most %i levels -> deeper: %s', (text, max, deeper) => {
    expect(jsonDeeperThan(text, max)).toBe(deeper);
  });

  it('scans 100,000 levels without recursion', () => {
    expect(jsonDeeperThan(nested(100_000), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe('JSON depth', () => {
  it('a 10,000-deep field in a signed /qrcallback -> 400 INVALID_INPUT in the callback envelope, not a 500', async () => {
    const sent = fieldSigned(stack.config, 'QR', {
      paymentId: 'pay_0123456789abcdef0123456789abcdef',
      orderId: uniq('o'),
      status: 'success',
      amount: 1,
    });
    const raw = sent.raw.replace(/}$/, `,"deep":${nested(10_000)}}`);
    const res = await post(stack.app, '/qrcallback', { ...sent, raw });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(callbackError('INVALID_INPUT', 400));
    expect(res.body.body.message).toMatch(/nested deeper than 32/);
  });

  it('33 levels on the payment API -> 400 INVALID_INPUT naming the limit; 32 levels pass the limit', async () => {
    const send = (depth: number) =>
      request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .set('Content-Type', 'application/json')
        .send(`{"orderId":"${uniq('o')}","userId":"u","amount":1,"extra":${nested(depth - 1)}}`);
    const deep = await send(33);
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual(paymentError('INVALID_INPUT', { reason: 'too deeply nested', maxDepth: 32 }));
    const ok = await send(32);
    expect(ok.body.body.details?.reason).not.toBe('too deeply nested');
  });

  it('the wallet handler refuses a JSON string body nested too deep inside (as not JSON)', async () => {
    const inner = JSON.stringify({ orderId: 'o', paymentId: 'p', success: true, userId: 'u', deep: [] }).replace(
      '[]',
      nested(5_000),
    );
    const res = await request(stack.app.callback())
      .post('/wallet/callback')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ body: inner }));
    expect(res.status).toBe(500); // the contract's answer to any failure of the wallet handler
    expect(res.body).toEqual({
      success: false,
      error: 'body is a string that is not valid JSON',
      message: expect.any(String),
    });
  });

  it('over the body limit -> 413 in the callback envelope', async () => {
    const res = await request(stack.app.callback())
      .post('/qrcallback')
      .set('Content-Type', 'application/json')
      .send(`{"pad":"${'x'.repeat(stack.config.bodyLimitBytes)}"}`);
    expect(res.status).toBe(413);
    expect(res.body).toEqual(callbackError('PAYLOAD_TOO_LARGE', 413));
  });

  it('a chunked body (no Content-Length, JSON or form) over the limit -> 413 as it arrives, and the connection still answers', async () => {
    const server = http.createServer(stack.app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const { port } = server.address() as AddressInfo;
      const send = (path: string, chunks: string[], type = 'application/json') =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = http.request(
            { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'Content-Type': type } },
            (res) => {
              let body = '';
              res.setEncoding('utf8').on('data', (c: string) => (body += c));
              res.on('end', () => resolve({ status: res.statusCode!, body }));
            },
          );
          req.on('error', reject);
          for (const c of chunks) req.write(c); // no Content-Length: Transfer-Encoding chunked
          req.end();
        });
      const half = 'x'.repeat(Math.ceil(stack.config.bodyLimitBytes / 2));
      const over = await send('/qrcallback', ['{"pad":"', half, half, half, '"}']);
      expect(over.status).toBe(413);
      expect(JSON.parse(over.body)).toEqual(callbackError('PAYLOAD_TOO_LARGE', 413));
      // a form (read by koa-body) too
      const form = await send('/callback', ['pad=', half, half, half], 'application/x-www-form-urlencoded');
      expect(form.status).toBe(413);
      expect(JSON.parse(form.body)).toEqual(callbackError('PAYLOAD_TOO_LARGE', 413));
      // a body under the limit on the same agent is read whole and gets its own answer
      const under = await send('/qrcallback', ['{"a":', '1}']);
      expect(under.status).toBe(400);
      expect(JSON.parse(under.body)).toEqual(callbackError('MISSING_FIELD', 400));
    } finally {
      agent.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});

it('a client that goes away in the middle of its JSON body: a 400 in the access log, no 500 and no error line', async () => {
  const { logger, lines } = capturingLogger();
  const app = createApp({
    config: stack.config,
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger,
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const received = new Promise((r) => server.once('request', r));
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    // 100 bytes announced, 11 sent; gone once the server has the request
    socket.write(
      'POST /qrpayment HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"orderId":',
    );
    await received;
    socket.destroy();
    const access = await waitFor(
      async () => lines.find((l) => l.msg === 'request' && l.path === '/qrpayment'),
      5000,
      'the access line',
    );
    expect(access.status).toBe(400);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

describe('content type', () => {
  it.each([
    ['POST /qrpayment text/plain', '/qrpayment', 'text/plain', '{"orderId":"o"}'],
    ['POST /qrpayment form', '/qrpayment', 'application/x-www-form-urlencoded', 'orderId=o'],
    ['POST /webhooks/endpoints form', '/webhooks/endpoints', 'application/x-www-form-urlencoded', 'url=x'],
    ['POST /bank/createuser multipart', '/bank/createuser', 'multipart/form-data; boundary=x', '--x--'],
    ['POST /api/price/getallgz text/plain', '/api/price/getallgz', 'text/plain', '{}'],
  ])('%s -> 415 UNSUPPORTED_MEDIA_TYPE in the payment envelope', async (_n, path, type, body) => {
    const res = await request(stack.app.callback())
      .post(path)
      .set('X-API-Key', key)
      .set('Content-Type', type)
      .send(body);
    expect(res.status).toBe(415);
    expect(res.body).toEqual(paymentError('UNSUPPORTED_MEDIA_TYPE', { contentType: type }));
  });

  it('a body without any Content-Type -> 415', async () => {
    const res = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send(Buffer.from('{"orderId":"o"}'));
    expect(res.status).toBe(415);
  });

  it('POST /qrcallback text/plain -> 415 in the callback envelope', async () => {
    const res = await request(stack.app.callback()).post('/qrcallback').set('Content-Type', 'text/plain').send('{}');
    expect(res.status).toBe(415);
    expect(res.body).toEqual(callbackError('UNSUPPORTED_MEDIA_TYPE', 415));
  });

  it('POST /cardpayment keeps taking forms (and JSON): a form missing a field is MISSING_FIELD, not 415', async () => {
    const form = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId: uniq('o') });
    expect(form.status).toBe(400);
    expect(form.body).toEqual(paymentError('MISSING_FIELD'));
    const json = await request(stack.app.callback())
      .post('/cardpayment')
      .send({ orderId: uniq('o') });
    expect(json.body).toEqual(paymentError('MISSING_FIELD'));
  });

  it('a bodiless POST passes the rule (no Content-Type needed without a body)', async () => {
    const res = await request(stack.app.callback()).post('/qrpayment').set('X-API-Key', key);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError('MISSING_FIELD'));
  });

  it('FORM_PATHS are exactly the paths /openapi.json documents with a form body', async () => {
    const doc = (await request(stack.app.callback()).get('/openapi.json')).body as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>>;
    };
    const documented = Object.entries(doc.paths)
      .filter(([, ops]) =>
        Object.values(ops).some((op) => op?.requestBody?.content?.['application/x-www-form-urlencoded']),
      )
      .map(([p]) => p)
      .sort();
    expect(documented).toEqual([...FORM_PATHS].sort());
  });
});

describe('unknown methods', () => {
  it.each(['TRACE', 'PROPFIND'])('%s on a known path -> 405 with Allow', async (method) => {
    const res = await request(stack.app.callback())[method.toLowerCase() as 'trace']('/qrpayment');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toMatch(/\bPOST\b/);
    expect(res.body).toEqual(paymentError('METHOD_NOT_ALLOWED', { allowed: expect.arrayContaining(['POST']) }));
  });

  it('TRACE on a callback path -> 405 in the callback envelope, with Allow', async () => {
    const res = await request(stack.app.callback()).trace('/qrcallback');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toMatch(/\bPOST\b/);
    expect(res.body).toEqual(callbackError('METHOD_NOT_ALLOWED', 405));
  });

  it('TRACE on an unknown path -> 404', async () => {
    const res = await request(stack.app.callback()).trace('/no/such/thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(paymentError('NOT_FOUND'));
  });
});

describe('idempotent replays', () => {
  it('a replay sends the first answer byte for byte', async () => {
    const idem = uniq('idem');
    const send = () =>
      request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .set('Idempotency-Key', idem)
        .send({ orderId: `${idem}-o`, userId: 'u', amount: 12.5, customerId: 'c' });
    const first = await send();
    expect(first.status).toBe(200);
    const replay = await send();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.status).toBe(first.status);
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(replay.text).toBe(first.text);
  });

  it('an error answer is replayed byte for byte too', async () => {
    const idem = uniq('idem');
    const send = () =>
      request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .set('Idempotency-Key', idem)
        .send({ orderId: `${idem}-o`, userId: 'u', amount: -1, customerId: 'c' });
    const first = await send();
    expect(first.status).toBe(400);
    const replay = await send();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
  });

  it('a row stored before response_text existed (jsonb only) is still replayed', async () => {
    const idem = uniq('idem');
    const body = { orderId: `${idem}-o`, userId: 'u', amount: 3, customerId: 'c' };
    const first = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .set('Idempotency-Key', idem)
      .send(body);
    // as an old gateway wrote it
    await stack
      .db('idempotency_keys')
      .where({ key: idem })
      .update({ response_text: null, response_body: JSON.stringify(first.body) });
    const replay = await request(stack.app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .set('Idempotency-Key', idem)
      .send(body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });
});
