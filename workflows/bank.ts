/**
 * One call to the partner bank (create a user, look one up, create an order) as a short
 * workflow, so the call gets Temporal's retry policy: a few quick retries on network errors and
 * 5xx answers, none on a 4xx (the activity throws those as non-retryable). The outcome is always
 * returned as a value, never thrown, so the gateway maps it to one response.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ActivityFailureType } from '../src/domain/temporal';
import type { BankCall, BankOutcome } from '../src/bank';

const { callBank } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '300 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '2 seconds',
    maximumAttempts: 3,
  },
});

export async function bankRequestWorkflow(call: BankCall): Promise<BankOutcome> {
  try {
    const reply = await callBank(call);
    return { ok: true, status: reply.status, body: reply.body };
  } catch (e) {
    const cause = e instanceof ActivityFailure ? e.cause : e;
    if (cause instanceof ApplicationFailure && cause.type === ActivityFailureType.BankRejected) {
      const d = (cause.details?.[0] ?? {}) as { status?: number; body?: unknown };
      return { ok: false, kind: 'rejected', status: d.status ?? 400, body: d.body ?? null, message: cause.message };
    }
    if (cause instanceof ApplicationFailure && cause.type === ActivityFailureType.ProviderNotConfigured) {
      return { ok: false, kind: 'unavailable', message: cause.message };
    }
    return { ok: false, kind: 'unavailable', message: 'the bank did not answer' };
  }
}
