/**
 * Calls to a payment provider (a charge, a refund), shared by workflows/payments/card.ts,
 * workflows/refunds.ts and workflows/payments/late-result.ts: their activity options and how a failed
 * call reads in a payment's or refund's history. Options are not workflow commands: changing
 * them keeps recorded histories replaying.
 */
import { ActivityFailure, ApplicationFailure, type ActivityOptions } from '@temporalio/workflow';

/** A few quick retries for network errors and 5xx; a 4xx is thrown non-retryable by the activity. */
export const PROVIDER_CALL: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    maximumAttempts: 4,
  },
};

/**
 * A failed provider call as a short reason: `refused(failure)` when the provider refused it (an
 * ApplicationFailure of one of `refusals`, through its ActivityFailure), else `unavailable`.
 */
export function providerFailureReason(
  e: unknown,
  refusals: readonly string[],
  refused: (failure: ApplicationFailure) => string,
  unavailable: string,
): string {
  const cause = e instanceof ActivityFailure ? e.cause : e;
  return cause instanceof ApplicationFailure && refusals.includes(cause.type ?? '') ? refused(cause) : unavailable;
}
