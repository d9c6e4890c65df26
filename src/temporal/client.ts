import { Client, Connection } from '@temporalio/client';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../domain/search-attributes';
import { dataConverterOf, type KeyRing } from './codec';

export interface TemporalDeps {
  client: Client;
  taskQueue: string;
}

/** With `codecKeys`, payloads are encrypted (src/temporal/codec.ts): give the worker the same keys. */
export async function connectClient(
  address: string,
  namespace: string,
  opts: { codecKeys?: KeyRing } = {},
): Promise<Client> {
  const connection = await Connection.connect({ address, connectTimeout: '10s' });
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
