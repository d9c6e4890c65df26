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

export interface ActivityDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** the sandbox bank and card provider (src/simulators/providers.ts), started on first use */
  sandbox: SandboxProviders;
}

export function createActivities(deps: ActivityDeps) {
  const webhooks = createWebhookActivities(deps);
  const card = createCardProviderActivities(deps);
  return {
    ...createPaymentActivities({ db: deps.db, webhooks, card }),
    ...createCallbackActivities(deps),
    ...webhooks,
    ...createNotificationActivities(deps),
    ...card,
    ...createBankActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
