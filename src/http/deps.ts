/** What the HTTP layer is built over (createApp(deps)), and the Koa state every request carries. */
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { AlertThrottle } from '../alerts';
import type { Notifier } from '../notifier';
import type { TemporalDeps } from '../temporal/client';
import type { Resolver } from '../resolver';

export interface AppDeps {
  config: Config;
  db: Db;
  temporal: TemporalDeps;
  logger: Logger;
  /** ms since the epoch; injected by tests (rate-limit windows, QR expiry, promotion dates) */
  clock?: () => number;
  /**
   * the administrator e-mail and error tracker of the wallet handler; created by the caller, who
   * closes it (without one, createApp builds one over config that lives as long as the process)
   */
  notifier?: Notifier;
  /** administrator alerts with a memory (once per key and window, a digest for the rest); built over the notifier when absent */
  alerts?: AlertThrottle;
  /** how webhook endpoint host names are resolved at registration (dns.lookup when absent; tests inject one) */
  resolve?: Resolver;
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    area: 'payment' | 'callback' | 'storefront';
    /** the raw text of a JSON body (see rawBodyOf) */
    rawBody?: string;
  }
}
