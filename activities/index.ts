/** All activities, built by one factory over injected dependencies. */
import type { Db } from '../src/db/knex';
import type { Config } from '../src/config';
import type { Logger } from '../src/logger';
import type { Resolver } from '../src/resolver';
import type { SandboxProviders } from './provider-endpoint';
import { createBankActivities } from './bank';
import { createCardProviderActivities } from './payments/card-provider';
import { createCallbackActivities } from './callbacks';
import { createNotificationActivities } from './notifications';
import { createLateResultActivities } from './payments/late-results';
import { createPaymentActivities } from './payments/index';
import { createRefundActivities } from './refunds';
import { createReconciliationActivities } from './reconciliation';
import { createWebhookActivities } from './webhooks/index';
import { createWebhookRecoveryActivities } from './webhooks/recovery';
import { instrumentActivities } from './instrument';
import { createOrderActivities } from './orders';

export interface ActivityDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** the sandbox bank and card provider (src/simulators/providers.ts), started on first use */
  sandbox: SandboxProviders;
  /** how webhook endpoint host names are resolved at connect (dns.lookup when absent; tests inject one) */
  resolve?: Resolver;
}

/** Every activity logs with orderId, paymentId and workflowId; webhook attempts are metered (./instrument). */
export function createActivities(deps: ActivityDeps) {
  const webhooks = createWebhookActivities(deps);
  const card = createCardProviderActivities(deps);
  return instrumentActivities({
    ...createPaymentActivities({
      db: deps.db,
      webhooks,
      card,
      signingKey: deps.config.results.signingKey,
      logger: deps.logger,
    }),
    ...createLateResultActivities(deps),
    ...createCallbackActivities(deps),
    ...webhooks,
    ...createWebhookRecoveryActivities(deps),
    ...createNotificationActivities(deps),
    ...card,
    ...createBankActivities(deps),
    ...createRefundActivities(deps),
    ...createReconciliationActivities(deps),
    ...createOrderActivities({ ...deps, card }),
  });
}

export type Activities = ReturnType<typeof createActivities>;
