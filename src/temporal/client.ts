import fs from 'node:fs';
import { Client, type TLSConfig } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../domain/search-attributes';
import { dataConverterOf, type KeyRing } from './codec';

export interface TemporalDeps {
  client: Client;
  taskQueue: string;
  /**
   * A client on the NativeConnection of a worker of `taskQueue` in this process (`npm start`):
   * payment workflows are started through it with `requestEagerStart`, so the server hands the
   * first workflow task straight back to that worker (bench:eager). Absent: plain starts.
   */
  eagerStartClient?: Client;
}

/**
 * A client on a NativeConnection: a worker's own, for eager workflow starts
 * (TemporalDeps.eagerStartClient), or the one connectClient made.
 */
export function clientOnWorkerConnection(
  connection: NativeConnection,
  namespace: string,
  opts: { codecKeys?: KeyRing } = {},
): Client {
  return new Client({
    connection,
    namespace,
    ...(opts.codecKeys ? { dataConverter: dataConverterOf(opts.codecKeys) } : {}),
  });
}

/** TEMPORAL_TLS_*: PEM file paths (config.temporal.tls). */
export interface TemporalTlsFiles {
  certPath?: string;
  keyPath?: string;
  caPath?: string;
  serverName?: string;
}

/**
 * The TLS options of a connection to the Temporal frontend, for the client (Connection) and the
 * worker (NativeConnection) alike: the client certificate and key (mTLS), the CA that signed
 * the server's certificate (else the system's roots) and the name to check it against (else
 * the address's host). undefined: plain TCP (the embedded dev server).
 */
export function temporalTlsOptions(files: TemporalTlsFiles | undefined): TLSConfig | undefined {
  if (!files) return undefined;
  const read = (file: string, what: string) => {
    try {
      return fs.readFileSync(file);
    } catch (e) {
      throw new Error(`${what}: cannot read ${file}: ${(e as Error).message}`);
    }
  };
  return {
    ...(files.certPath && files.keyPath
      ? {
          clientCertPair: {
            crt: read(files.certPath, 'TEMPORAL_TLS_CERT'),
            key: read(files.keyPath, 'TEMPORAL_TLS_KEY'),
          },
        }
      : {}),
    ...(files.caPath ? { serverRootCACertificate: read(files.caPath, 'TEMPORAL_TLS_CA') } : {}),
    ...(files.serverName ? { serverNameOverride: files.serverName } : {}),
  };
}

/** How long connectClient waits for the frontend to accept its connection. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** connectClient's pause before it tries again a connection that a starting frontend reset. */
const CONNECT_RETRY_MS = 200;

/**
 * The process's Temporal client, on a NativeConnection: Core's gRPC client (Rust, on its own
 * threads) instead of grpc-js on the main thread, where the gateway's HTTP work runs. Measured on
 * this machine (README "Engine", round of the native client): a start costs the main thread about
 * a third, a signal about a quarter of what it cost through grpc-js. What differs from grpc-js, and
 * how the gateway deals with it:
 *  - Core retries a call refused with UNAVAILABLE for up to about 10 s (its own retry policy), and
 *    the SDK does not cancel a native call on an AbortSignal: `withinDeadline` gives every call
 *    a deadline as well (Core honours it per attempt), and answers 503 on its own timer and probe;
 *  - the connection is made at once (no lazy connection, whose first call grpc-js retried): a
 *    frontend that is still starting (it resets the connection) is tried again, one that accepts
 *    and never answers is given CONNECT_TIMEOUT_MS in all, a refused connection fails at once.
 * Install the Temporal runtime (installTemporalRuntime) first, or Core's logs bypass Talat's log.
 * With `codecKeys`, payloads are encrypted (src/temporal/codec.ts): give the worker the same keys.
 * With `tls`, the connection uses TLS (mTLS with a client certificate): temporalTlsOptions.
 */
export async function connectClient(
  address: string,
  namespace: string,
  opts: { codecKeys?: KeyRing; tls?: TemporalTlsFiles } = {},
): Promise<Client> {
  const tls = temporalTlsOptions(opts.tls);
  const deadline = Date.now() + CONNECT_TIMEOUT_MS;
  for (;;) {
    const connecting = NativeConnection.connect({ address, ...(tls ? { tls } : {}) });
    let timer: NodeJS.Timeout | undefined;
    try {
      const connection = await Promise.race([
        connecting,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            // a connection made after all is closed, not leaked
            void connecting.then((c) => c.close()).catch(() => undefined);
            reject(new Error(`no connection within ${CONNECT_TIMEOUT_MS / 1000} s`));
          }, deadline - Date.now());
        }),
      ]);
      return clientOnWorkerConnection(connection, namespace, opts);
    } catch (e) {
      // a frontend that is still starting accepts and resets the connection: try again until the
      // deadline; a refused connection (nothing listens) or the deadline itself fails at once
      const message = String((e as Error).message);
      if (/refused|no connection within/i.test(message) || Date.now() + CONNECT_RETRY_MS >= deadline) throw e;
      await new Promise((r) => setTimeout(r, CONNECT_RETRY_MS));
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Register the search attributes on a Temporal server that does not have them yet
 * (the embedded dev server registers them at start; an existing cluster may not).
 */
export async function ensureSearchAttributes(client: Client, namespace: string): Promise<void> {
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = [OrderIdKey, PaymentMethodKey, PaymentStatusKey].filter(
    (k) => !(k.name in (existing.customAttributes ?? {})),
  );
  if (missing.length === 0) return;
  await client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, 2 /* INDEXED_VALUE_TYPE_KEYWORD */])),
  });
}

/**
 * True when the Temporal frontend answers within `timeoutMs`. The call's own deadline ends it a
 * little before (so it normally settles, retries included, before this returns); the timer is
 * for a lazy connection, where the call first waits for the connection itself (up to its
 * connectTimeout), which no call deadline bounds.
 */
export async function temporalReachable(client: Client, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = Date.now() + Math.max(timeoutMs - 100, timeoutMs / 2);
  try {
    return await Promise.race([
      client.connection
        .withDeadline(deadline, () => client.connection.workflowService.getSystemInfo({}))
        .then(
          () => true,
          () => false,
        ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
