/**
 * /openapi.json passes `redocly lint --extends recommended` with no error and no warning (the
 * linter from node_modules, @redocly/cli), and /docs is the Swagger UI reference from local assets.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { createTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let doc: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  doc = (await request(stack.app.callback()).get('/openapi.json')).body;
});
afterAll(() => stack.close());

describe('/openapi.json', () => {
  it('passes redocly lint --extends recommended with 0 errors and 0 warnings', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'talat-openapi-'));
    try {
      writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
      const bin = path.resolve(__dirname, '../../node_modules/.bin/redocly');
      const run = await promisify(execFile)(
        bin,
        ['lint', '--extends', 'recommended', '--format', 'summary', 'openapi.json'],
        { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
      ).catch((e: { stdout: string; stderr: string }) => e);
      const out = `${run.stdout}\n${run.stderr}`;
      expect(out).toContain('Your API description is valid');
      expect(out).not.toMatch(/^(error|warning) /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('has operationIds, required bodies, explicit security, error codes as enums and the webhook', () => {
    for (const item of Object.values(doc.paths) as Record<
      string,
      { operationId?: string; security?: unknown; requestBody?: { required?: boolean } }
    >[])
      for (const op of Object.values(item)) {
        expect(op.operationId).toMatch(/^[a-z][A-Za-z0-9]+$/);
        expect(op.security).toBeDefined();
        if (op.requestBody) expect(op.requestBody.required).toBe(true);
      }
    expect(doc.components.schemas.PaymentError.properties.body.properties.code.enum).toEqual(
      expect.arrayContaining(['INVALID_INPUT', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE']),
    );
    expect(doc.components.schemas.CallbackError.properties.body.properties.error.enum).toEqual(
      expect.arrayContaining(['INVALID_SIGNATURE', 'INVALID_IP']),
    );
    expect(doc.webhooks['payment.status.updated'].post.requestBody.content['application/json'].schema).toBeDefined();
    expect(Object.keys(doc.components.securitySchemes)).toEqual(
      expect.arrayContaining(['ApiKeyAuth', 'CallbackSignature']),
    );
    expect(doc.paths['/callback'].post.security).toEqual([{ CallbackSignature: [] }]);
  });
});

/** The example a reader of the operation sees: the media's own, else composed from the schema's; gaps listed. */
function exampleOf(schema: Json | undefined, at: string, gaps: string[]): unknown {
  let s = schema;
  while (s?.$ref)
    s = (s.$ref as string)
      .split('/')
      .slice(1)
      .reduce((o: Json, k) => o[k], doc);
  if (!s) return gaps.push(at);
  if (s.example !== undefined) return s.example;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const alternatives = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (alternatives) return exampleOf(alternatives.find((a) => a.type !== 'null') ?? alternatives[0], at, gaps);
  if (s.allOf) return Object.assign({}, ...(s.allOf as Json[]).map((a) => exampleOf(a, at, gaps)));
  const type = [s.type].flat().find((t) => t !== 'null');
  if (s.properties)
    return Object.fromEntries(
      Object.entries(s.properties as Json).map(([k, v]) => [k, exampleOf(v, `${at}.${k}`, gaps)]),
    );
  if (type === 'array') return [exampleOf(s.items, `${at}[]`, gaps)];
  if (type === 'boolean' || s.format === 'binary') return true;
  return gaps.push(at);
}
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('/openapi.json examples', () => {
  const operations = () =>
    Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op as Json] as const),
    );

  it('every operation has a complete example for its body, parameters, answers and errors', () => {
    expect(operations().length).toBeGreaterThan(50);
    const gaps: string[] = [];
    for (const [name, op] of operations()) {
      for (const p of (op.parameters ?? []) as Json[])
        if (p.in === 'path' && p.example === undefined) exampleOf(p.schema, `${name} parameter ${p.name}`, gaps);
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json))
        if (media.example === undefined) exampleOf(media.schema, `${name} request ${type}`, gaps);
      for (const [status, res] of Object.entries(op.responses as Json))
        for (const [type, media] of Object.entries((res.content ?? {}) as Json))
          if (media.example === undefined) exampleOf(media.schema, `${name} ${status} ${type}`, gaps);
      expect([name, Object.keys(op.responses).some((s) => /^[45]/.test(s))]).toEqual([name, true]);
    }
    expect(gaps).toEqual([]);
  });

  it('the check finds a missing example', () => {
    const gaps: string[] = [];
    exampleOf({ type: 'object', properties: { id: { type: 'string' }, ok: { type: 'boolean' } } }, 'x', gaps);
    expect(gaps).toEqual(['x.id']);
  });

  it('names real ids and Thai baht amounts in the payment examples', () => {
    const qr = doc.components.schemas.QrPaymentCreated.example;
    expect(qr.paymentId).toMatch(/^pay_[0-9a-f]{32}$/);
    expect(qr.amount).toBe(120.5);
    expect(qr.qr.payload).toMatch(/^000201/);
    expect(doc.components.schemas.RefundCreated.example.refundId).toMatch(/^re_[0-9a-f]{32}$/);
    const refund400 = doc.paths['/refund'].post.responses['400'].content['application/json'].example;
    expect(refund400).toEqual({
      statusCode: 400,
      body: { error: 'orderId is required', code: 'MISSING_FIELD', details: { field: 'orderId', fields: ['orderId'] } },
    });
  });

  it('try-it-out calls the gateway that serves the document', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });
});

describe('/docs', () => {
  it('is Swagger UI served from local assets, nothing from the internet', async () => {
    const page = await request(stack.app.callback()).get('/docs');
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/(src|href)=["']?https?:/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    for (const src of [...page.text.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1])) {
      const res = await request(stack.app.callback()).get(src);
      expect([src, res.status]).toEqual([src, 200]);
    }
    const init = await request(stack.app.callback()).get('/docs/assets/init.js');
    expect(init.text).toContain("url: '/openapi.json'");
    expect((await request(stack.app.callback()).get('/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });
});
