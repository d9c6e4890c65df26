/**
 * Where an outside provider is reached: sandbox mode -> the built-in simulator (started on
 * loopback on first use, once per worker); live mode -> the configured URL. Neither available
 * is a non-retryable ProviderNotConfigured failure.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Mode } from '../src/domain/mode';
import { ActivityFailureType } from '../src/domain/temporal';

/** The built-in sandbox providers, injected by the worker's owner (src/simulators/providers.ts). */
export interface SandboxProviders {
  bank: () => Promise<{ url: string }>;
  cardProvider: () => Promise<{ url: string }>;
}

export function providerEndpoint(opts: {
  label: string; // e.g. 'bank', 'card provider'
  simulatorsOn: boolean;
  startSimulator: () => Promise<{ url: string }>;
  liveUrl: string | undefined;
  liveUrlVar: string; // e.g. 'BANK_API_URL'
}): (mode: Mode) => Promise<string> {
  let simulator: Promise<string> | undefined;
  return async (mode) => {
    if (mode === 'sandbox') {
      if (!opts.simulatorsOn)
        throw ApplicationFailure.nonRetryable(
          `the ${opts.label} simulator is off (SIMULATORS=off)`,
          ActivityFailureType.ProviderNotConfigured,
        );
      simulator ??= opts.startSimulator().then((s) => s.url);
      return simulator;
    }
    if (!opts.liveUrl)
      throw ApplicationFailure.nonRetryable(
        `${opts.liveUrlVar} is not configured`,
        ActivityFailureType.ProviderNotConfigured,
      );
    return opts.liveUrl.replace(/\/+$/, '');
  };
}
