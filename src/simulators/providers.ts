/**
 * The sandbox providers the worker's activities call in sandbox mode, started on loopback on
 * first use (activities/provider-endpoint.ts resolves sandbox -> simulator, live -> URL).
 * Injected into createActivities, so activities/ never imports a simulator.
 */
import type { SandboxProviders } from '../../activities/provider-endpoint';
import type { Db } from '../db/knex';
import { startBankSimulator } from './bank';
import { startCardProviderSimulator } from './card-provider';

export const sandboxProviders = ({ db }: { db: Db }): SandboxProviders => ({
  bank: () => startBankSimulator({ db }),
  cardProvider: () => startCardProviderSimulator({ db }),
});
