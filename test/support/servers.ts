/** Set-up the test files repeated: a stack per file, a server on a loopback port, the gateway served. */
import http from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import type Koa from 'koa';
import { createTestStack, type TestStack } from './stack';

/**
 * The file's test stack, created before its tests and closed after them (beforeAll/afterAll).
 * The returned object stands for the stack (reads and writes) once beforeAll has run; before, it throws.
 */
export function useTestStack(opts?: Parameters<typeof createTestStack>[0]): TestStack {
  let stack: TestStack | undefined;
  beforeAll(async () => {
    stack = await createTestStack(opts);
  });
  afterAll(() => stack?.close());
  const created = (name: string | symbol): TestStack => {
    if (!stack) throw new Error(`the test stack is used before beforeAll created it (.${String(name)})`);
    return stack;
  };
  return new Proxy({} as TestStack, {
    get: (_target, name) => Reflect.get(created(name), name),
    set: (_target, name, value) => Reflect.set(created(name), name, value),
  });
}

/** `server` listening on a free port of 127.0.0.1: its port, its base URL and how to close it. */
export async function listenLocal<S extends Server>(
  server: S,
): Promise<{ server: S; port: number; url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The Koa app (the gateway of a test stack) served over HTTP on a loopback port. */
export const serveApp = (app: Koa) => listenLocal(http.createServer(app.callback()));
