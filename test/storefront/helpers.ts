/** A storefront app on the test stack with a clock the test sets, and helpers shared by the storefront tests. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Koa from 'koa';
import type { Test } from 'supertest';
import http, { type IncomingMessage } from 'node:http';
import { createApp } from '../../src/app/app';
import { createTestStack, testConfig, testLogger, type TestStack } from '../support/stack';

export interface StorefrontTestApp {
  stack: TestStack;
  app: Koa;
  /** another app on the same stack and clock, with more settings */
  appWith(env: Record<string, string>): Koa;
  /** set the app's clock (ISO time) */
  at(iso: string): void;
  dataDir: string;
  close(): Promise<void>;
}

/** The shop's data runs 2026-11-01..2027-01-31; tests pin the clock inside it unless they move it. */
export const IN_SEASON = '2026-11-25T12:00:00+07:00';

export async function storefrontApp(env: Record<string, string> = {}): Promise<StorefrontTestApp> {
  const stack = await createTestStack({ worker: false });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-sf-'));
  let now = Date.parse(IN_SEASON);
  const appWith = (overrides: Record<string, string>) =>
    createApp({
      config: testConfig({ DATA_DIR: dataDir, SHOP_ORIGIN: 'https://shop.example', ...env, ...overrides }),
      db: stack.db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
      clock: () => now,
    });
  return {
    stack,
    app: appWith({}),
    appWith,
    dataDir,
    at(iso: string) {
      now = Date.parse(iso);
    },
    async close() {
      await stack.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The storefront error envelope with a given code. */
export const storefrontError = (code: string, status: number) => ({
  statusCode: status,
  body: { error: expect.any(String), code, details: expect.any(Object) },
});

/** supertest parser that keeps the body as bytes. */
export const binary = ((res: IncomingMessage, cb: (err: Error | null, body: Buffer) => void): void => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}) as unknown as Parameters<Test['parse']>[0];

/** A raw HTTP exchange on a loopback port: the bytes exactly as sent, nothing decoded. */
export async function rawRequest(
  app: Koa,
  opts: { method: string; path: string; headers?: Record<string, string>; body?: string },
) {
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as { port: number };
    return await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: opts.method, path: opts.path, headers: opts.headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
        },
      );
      req.on('error', reject);
      req.end(opts.body);
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
}
