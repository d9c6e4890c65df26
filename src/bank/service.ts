/**
 * Gateway side of the partner bank calls: each call runs as a short bankRequestWorkflow (the
 * activity has Temporal's retry policy) and the gateway waits for its outcome, bounded: Temporal
 * unreachable, no worker, or a bank that never answers -> 503 SERVICE_UNAVAILABLE, never a hang.
 */
import type { Client } from '@temporalio/client';
import { AppError, ErrorCode } from '../domain/errors';
import {
  bankRequestWorkflowId,
  BankWorkflowType,
  type BankCall,
  type BankRequestWorkflow,
  type BankOutcome,
} from './index';
import { newId } from '../ids';
import { withinDeadline } from '../temporal/calls';
import { withStartProof } from '../proofs';

/** Upper bound of a bank call as the client sees it: 3 attempts of at most PROVIDER_TIMEOUT_MS plus back-off. */
export const bankDeadlineMs = (providerTimeoutMs: number): number => 3 * providerTimeoutMs + 5_000;

export async function callBankViaWorkflow(
  client: Client,
  opts: { taskQueue: string; call: BankCall; providerTimeoutMs: number; signingKey: string },
): Promise<BankOutcome> {
  const ms = bankDeadlineMs(opts.providerTimeoutMs);
  const workflowId = bankRequestWorkflowId(opts.call.op, newId('req').slice(4));
  // the worker calls the bank only for a start the gateway proves (talat-start-v1, whole input)
  const call = withStartProof(opts.signingKey, BankWorkflowType.bank, workflowId, opts.call);
  return withinDeadline(
    client,
    ms,
    () =>
      client.workflow.execute<BankRequestWorkflow>(BankWorkflowType.bank, {
        taskQueue: opts.taskQueue,
        workflowId,
        args: [call],
        workflowExecutionTimeout: ms + 5_000,
        memo: { op: opts.call.op, mode: opts.call.mode },
      }),
    () => {
      throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'The bank did not answer in time, try again later', {
        service: 'bank',
      });
    },
  );
}
