/** All activities, built by one factory over injected dependencies. */
import type { Db } from '../src/db/knex';
import type { Config } from '../src/config';
import type { Logger } from '../src/logger';
import { createPaymentActivities } from './payments';

export interface ActivityDeps {
  db: Db;
  config: Config;
  logger: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createPaymentActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
