/**
 * The one input rule (src/http/input-rule.ts): a string Postgres text cannot hold (NUL, a lone
 * surrogate) anywhere in a request (JSON or form field, object key, query or path parameter)
 * is 400 INVALID_INPUT naming the field, in its area's envelope, and nothing is written.
 * Property-based over every operation of /openapi.json and every field of its request body.
 */
import fc from 'fast-check';
import type Koa from 'koa';
import request from 'supertest';
import { fieldSigned, headerSigned, post } from '../callbacks/helpers';
import { createApp } from '../../src/app/app';
import { findUnstorable, printableField } from '../../src/http/input-rule';
import { createAlertThrottle } from '../../src/alerts';
import type { AdminEmail, Notifier } from '../../src/notifier';
import { createDb } from '../../src/db/knex';
import { newKey } from '../payments/support';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';

type Doc = {
  paths: Record<
    string,
    Record<
      string,
      { requestBody?: { content: Record<string, { schema: Schema }> }; parameters?: { name: string; in: string }[] }
    >
  >;
  components: { schemas: Record<string, Schema> };
};
type Schema = { $ref?: string; properties?: Record<string, Schema>; allOf?: Schema[] };

let stack: TestStack;
let app: Koa;
let key: string;
let doc: Doc;
const mails: AdminEmail[] = [];
const notifier: Notifier = {
  sendAdminEmail: async (m) => void mails.push(m),
  reportError: async () => undefined,
  close: async () => undefined,
};

// what changes when a request is refused: rows of these tables (rate-limit counters excepted)
const COUNTED = [
  'payments',
  'payment_events',
  'callback_receipts',
  'wallet_callbacks',
  'cardnet_callbacks',
  'bankapp_callbacks',
  'callback_errors',
  'webhook_endpoints',
  'bank_users',
  'bank_orders',
  'idempotency_keys',
  'storefront_sessions',
];
const counted: string[] = [];
async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of counted) out[t] = Number((await stack.db(t).count<{ count: string }[]>('* as count'))[0].count);
  return out;
}

beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  app = createApp({
    config: stack.config,
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger: testLogger,
    notifier,
    alerts: createAlertThrottle({ notifier, logger: testLogger }),
  });
  key = (await newKey(stack.db)).key;
  doc = (await request(app.callback()).get('/openapi.json')).body;
  for (const t of COUNTED) if (await stack.db.schema.hasTable(t)) counted.push(t);
});
afterAll(() => stack.close());

const resolve = (s: Schema | undefined): Schema => {
  if (!s) return {};
  if (s.$ref) return resolve(doc.components.schemas[s.$ref.split('/').pop()!]);
  if (s.allOf)
    return Object.assign({}, ...s.allOf.map(resolve), {
      properties: Object.assign({}, ...s.allOf.map((x) => resolve(x).properties ?? {})),
    });
  return s;
};

/**
 * Strings Postgres text cannot hold: some text around a NUL or an unpaired surrogate (JSON only:
 * a form body is UTF-8 percent-encoding, where a lone surrogate arrives as U+FFFD).
 */
const unstorable = (json: boolean) =>
  fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('\u0000', 'a\u0000', ...(json ? ['\ud800', '\udfff'] : [])),
      fc.string({ maxLength: 8 }),
    )
    .map(([a, bad, b]) => a + bad + b);

/** Near-valid bodies, so a refusal cannot be for another reason than the bad field. */
const BASE: Record<string, Record<string, unknown>> = {
  '/qrpayment': { orderId: 'o-1', userId: 'u-1', amount: 10, customerId: 'c-1' },
  '/cardpayment': { orderId: 'o-1', userId: 'u-1', amount: '10', token: 'tok_test' },
  '/calculate-cost': {
    items: [{ productId: 'G851378-1', quantity: 1 }],
    branchId: 'B001',
    deliveryOption: 'pickup',
    paymentMethod: 'qr',
  },
  '/bank/createuser': { userId: 'u-1', name: 'Somchai' },
  '/bank/createorder': { orderId: 'o-1', userId: 'u-1', amount: 10 },
  '/webhooks/endpoints': { url: 'http://127.0.0.1:9/hook' },
  '/wallet/callback': { orderId: 'o-1', paymentId: 'p-1', success: true, userId: 'u-1', amount: 1, message: 'ok' },
  '/qrcallback': { paymentId: 'p-1', status: 'success', amount: 1, orderId: 'o-1' },
  '/walletcallback': { walletId: 'w-1', status: 'success', amount: 1, orderId: 'o-1' },
  '/cardnetcallback': { orderId: 'o-1', paymentId: 'p-1', success: true, userId: 'u-1' },
  '/bankappcallback': { orderId: 'o-1', paymentId: 'p-1', success: true, userId: 'u-1' },
  '/callback': { objectId: 'ch_1', token: 'tok', status: 'true', message: 'm' },
  '/dev/identity': { IdentityPoolId: 'pool' },
};
const CALLBACK_PROVIDER: Record<string, 'CARD' | 'CARDNET' | 'BANKAPP' | 'QR' | 'WALLET'> = {
  '/callback': 'CARD',
  '/cardnetcallback': 'CARDNET',
  '/bankappcallback': 'BANKAPP',
  '/qrcallback': 'QR',
  '/walletcallback': 'WALLET',
};

function send(method: string, path: string, type: string, body: Record<string, unknown>) {
  const provider = CALLBACK_PROVIDER[path];
  if (provider) {
    const sent =
      provider === 'QR' || provider === 'WALLET'
        ? fieldSigned(stack.config, provider, body)
        : headerSigned(stack.config, provider, type.includes('json') ? 'json' : 'form', body);
    return post(app, path, sent);
  }
  const agent = request(app.callback());
  const req = agent[method as 'post'](path).set('X-API-Key', key).set('Content-Type', type);
  return req.send(
    type.includes('json') ? JSON.stringify(body) : new URLSearchParams(body as Record<string, string>).toString(),
  );
}

const isCallback = (path: string) => path in CALLBACK_PROVIDER || path === '/wallet/callback';

function expectRefused(res: request.Response, path: string, field: string | undefined) {
  expect(res.status).toBe(400);
  if (field === undefined) expect([res.body.body.error, res.body.body.code]).toContain('INVALID_INPUT');
  else if (isCallback(path))
    expect(res.body).toEqual({
      statusCode: 400,
      body: { error: 'INVALID_INPUT', message: expect.stringContaining(field) },
    });
  else expect(res.body).toMatchObject({ statusCode: 400, body: { code: 'INVALID_INPUT', details: { field } } });
}

describe('findUnstorable', () => {
  it('finds NUL and lone surrogates in values and keys, and passes everything else', () => {
    expect(findUnstorable({ a: ['x', { b: 'y\u0000' }] })).toEqual({ field: 'a.1.b', reason: 'NUL character' });
    expect(findUnstorable({ 'k\u0000': 1 })).toEqual({ field: 'k\u0000', reason: 'NUL character' });
    expect(findUnstorable('\udc00x')).toEqual({ field: '(body)', reason: 'unpaired surrogate' });
    expect(findUnstorable({ emoji: '😀 ไทย', n: 1, t: true, z: null })).toBeUndefined();
    const deep: unknown[] = [];
    let cur = deep;
    for (let i = 0; i < 100_000; i++) cur.push((cur = []));
    cur.push('\u0000');
    expect(findUnstorable(deep)?.reason).toBe('NUL character');
    fc.assert(
      fc.property(
        fc.jsonValue(),
        (v) =>
          findUnstorable(v) === undefined ||
          JSON.stringify(v).includes('\\u0000') ||
          /\\ud[89a-f]/i.test(JSON.stringify(v)),
      ),
    );
  });
});

describe('every body field of every operation', () => {
  it('a bad string in any field (or key) is 400 INVALID_INPUT naming it, and nothing is written', async () => {
    const ops: { method: string; path: string; type: string; fields: string[] }[] = [];
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) {
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {}))
          ops.push({ method, path, type, fields: Object.keys(resolve(media.schema).properties ?? {}) });
      }
    expect(ops.length).toBeGreaterThanOrEqual(12);
    const before = await counts();
    for (const op of ops) {
      const base = BASE[op.path] ?? {};
      // (a field-signed callback's `signature` is replaced by the signing helper)
      const fields = [...new Set([...op.fields, ...Object.keys(base)])].filter((f) => f !== 'signature');
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...fields, '(new key)'),
          unstorable(op.type.includes('json')),
          async (field, bad) => {
            const body = field === '(new key)' ? { ...base, [bad]: 'x' } : { ...base, [field]: bad };
            const res = await send(op.method, op.path, op.type, body);
            expectRefused(
              res,
              op.path,
              field === '(new key)' ? (op.type.includes('json') ? printableField(bad) : undefined) : field,
            );
          },
        ),
        { numRuns: 8 },
      );
    }
    expect(await counts()).toEqual(before);
  });

  it('nested fields are named by their path', async () => {
    const res = await send('post', '/calculate-cost', 'application/json', {
      ...BASE['/calculate-cost'],
      items: [{ productId: 'G\u0000', quantity: 1 }],
    });
    expectRefused(res, '/calculate-cost', 'items.0.productId');
  });
});

describe('query and path parameters', () => {
  it.each([
    ['/api/search2/semantic_search?query=abc%00', 'query', 'query'],
    ['/api/promotion/get-two4?groupId=G%00', 'groupId', 'query'],
    ['/api/inventory2/B001?timestamp=%00', 'timestamp', 'query'],
    ['/api/group/read/G%00', 'groupId', 'path'],
    ['/api/inventory2/B%00', 'branchId', 'path'],
    ['/checkstatus/o%00', 'orderId', 'path'],
    ['/bank/user/u%00', 'userId', 'path'],
    ['/api/group/image/G1/G1-1%00.webp', 'imageId', 'path'],
  ])('GET %s -> 400 naming %s', async (url, field, where) => {
    const res = await request(app.callback()).get(url).set('X-API-Key', key);
    expect(res.status).toBe(400);
    expect(res.body.body).toMatchObject({ code: 'INVALID_INPUT', details: { field, in: where } });
  });

  it('a path parameter that fails its own rule is named, not (body)', async () => {
    const res = await request(app.callback()).get(`/api/group/read/${'x'.repeat(300)}`);
    expect(res.status).toBe(400);
    expect(res.body.body.details.field).toBe('groupId');
  });

  it('any query string on any GET is never a 500', async () => {
    const gets = Object.entries(doc.paths)
      .filter(([p, item]) => item.get && !p.startsWith('/bank/')) // (bank lookups need a worker: this stack has none)
      .map(([p]) => p.replace(/\{[^}]+\}/g, 'x1'));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...gets),
        fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 12 }), { maxKeys: 3 }),
        async (path, q) => {
          const res = await request(app.callback())
            .get(`${path}?${new URLSearchParams(q)}`)
            .set('X-API-Key', key);
          expect(res.status).toBeLessThan(500);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('arbitrary JSON', () => {
  it('any JSON body to any JSON operation is never a 500 (unsigned callbacks included)', async () => {
    const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.requestBody?.content['application/json'])
        .map(([method]) => ({ method, path: path.replace(/\{[^}]+\}/g, 'x1') })),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops), fc.jsonValue({ maxDepth: 3 }), async (op, body) => {
        const agent = request(app.callback());
        const res = await agent[op.method as 'post'](op.path)
          .set('X-API-Key', key)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(body) ?? 'null');
        // the wallet handler's refusals are the contract's own 500 {success: false}: the only 500 allowed
        if (res.status === 500)
          expect(op.path === '/wallet/callback' && JSON.parse(res.text).success === false).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

describe('a correctly signed callback with a bad field', () => {
  it('is 400 (the provider stops retrying), and the operator is e-mailed once', async () => {
    mails.length = 0;
    const orderId = uniq('o');
    for (let i = 0; i < 3; i++) {
      const res = await post(
        app,
        '/qrcallback',
        fieldSigned(stack.config, 'QR', { paymentId: 'p\u0000', status: 'success', amount: 1, orderId }),
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        body: { error: 'INVALID_INPUT', message: expect.stringContaining('paymentId') },
      });
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toContain(orderId);
  });

  it('an unsigned one is refused without an e-mail', async () => {
    mails.length = 0;
    const res = await request(app.callback())
      .post('/qrcallback')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ orderId: 'o\u0000', signature: 'f'.repeat(64) }));
    expect(res.status).toBe(400);
    expect(mails).toHaveLength(0);
  });

  it('the public wallet handler answers 400 and writes no error row nor e-mail', async () => {
    mails.length = 0;
    const before = await counts();
    const res = await request(app.callback())
      .post('/wallet/callback')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ ...BASE['/wallet/callback'], message: 'a\u0000b' }));
    expect(res.status).toBe(400);
    expect(await counts()).toEqual(before);
    expect(mails).toHaveLength(0);
  });
});

describe('Postgres down', () => {
  // (the wallet handler keeps the contract's rule: saving failed -> its own 500 {success: false})
  it('answers 503 SERVICE_UNAVAILABLE, not 500', async () => {
    const deadDb = createDb('postgres://talat:x@127.0.0.1:1/none', { poolMax: 1 });
    const down = createApp({
      config: stack.config,
      db: deadDb,
      temporal: { client: stack.client, taskQueue: 'x' },
      logger: testLogger,
      notifier,
    });
    try {
      for (const [method, path, body] of [
        ['post', '/qrpayment', BASE['/qrpayment']],
        ['get', '/checkstatus/o-1', undefined],
        ['get', '/api/v2/catalog-tree/catalog-tree', undefined],
      ] as const) {
        const req = request(down.callback())[method](path).set('X-API-Key', key);
        const res = body ? await req.send(body) : await req;
        expect([503, 500].includes(res.status) && res.status).toBe(503);
      }
    } finally {
      await deadDb.destroy();
    }
  });
});
