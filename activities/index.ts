/** All activities, built by one factory over injected dependencies. */
import type { Db } from '../src/db/knex';
import type { Config } from '../src/config';
import type { Logger } from '../src/logger';
import type { SandboxProviders } from './provider-endpoint';
import { createBankActivities } from './bank';
import { createCardProviderActivities } from './card-provider';
import { createCallbackActivities } from './callbacks';
import { createNotificationActivities } from './notifications';
import { createPaymentActivities } from './payments';
import { createWebhookActivities } from './webhooks';
import { instrumentActivities } from './instrument';

export interface ActivityDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** the sandbox bank and card provider (src/simulators/providers.ts), started on first use */
  sandbox: SandboxProviders;
}

/** Every activity logs with orderId, paymentId and workflowId; webhook attempts are metered (./instrument). */
export function createActivities(deps: ActivityDeps) {
  return instrumentActivities({
    ...createPaymentActivities(deps),
    ...createCallbackActivities(deps),
    ...createWebhookActivities(deps),
    ...createNotificationActivities(deps),
    ...createCardProviderActivities(deps),
    ...createBankActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
