/**
 * The sandbox providers the worker's activities call in sandbox mode, started on loopback on
 * first use (activities/provider-endpoint.ts resolves sandbox -> simulator, live -> URL).
 * Injected into createActivities, so activities/ never imports a simulator.
 */
import type { SandboxProviders } from '../../activities/provider-endpoint';
import type { Db } from '../db/knex';

/** The simulators' modules are loaded on first use only, so a worker that never sees a sandbox key never loads them. */
export const sandboxProviders = ({ db }: { db: Db }): SandboxProviders => ({
  bank: async () => (await import('./bank')).startBankSimulator({ db }),
  cardProvider: async () => (await import('./card-provider')).startCardProviderSimulator({ db }),
});
