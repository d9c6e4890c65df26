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
