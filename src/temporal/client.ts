import fs from 'node:fs';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../domain/search-attributes';
import { dataConverterOf } from './codec';
import { clientInterceptors } from './closed-channel';
import type { KeyRing } from '../key-ring';

export interface TemporalDeps {
  client: Client;
  taskQueue: string;
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

/**
 * With `codecKeys`, payloads are encrypted (src/temporal/codec.ts): give the worker the same keys.
 * With `tls`, the connection uses TLS (mTLS with a client certificate): temporalTlsOptions.
 */
export async function connectClient(
  address: string,
  namespace: string,
  opts: { codecKeys?: KeyRing; tls?: TemporalTlsFiles } = {},
): Promise<Client> {
  const tls = temporalTlsOptions(opts.tls);
  const connection = await Connection.connect({
    address,
    connectTimeout: '10s',
    interceptors: clientInterceptors(),
    ...(tls ? { tls } : {}),
  });
  return new Client({
    connection,
    namespace,
    ...(opts.codecKeys ? { dataConverter: dataConverterOf(opts.codecKeys) } : {}),
  });
}

/**
 * Register the search attributes on a Temporal server that does not have them yet
 * (the embedded dev server registers them at start; an existing cluster may not).
 */
export async function ensureSearchAttributes(client: Client, namespace: string): Promise<void> {
  return ensureSearchAttributesOn(client.connection, namespace);
}

/** The same on a connection (the cluster of `npm run cluster` registers them before any role starts). */
export async function ensureSearchAttributesOn(
  connection: Pick<Client['connection'], 'operatorService'>,
  namespace: string,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = [OrderIdKey, PaymentMethodKey, PaymentStatusKey].filter(
    (k) => !(k.name in (existing.customAttributes ?? {})),
  );
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
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
