/**
 * The partner bank's HTTP API (BANK_API_URL in live mode, the built-in simulator on loopback in
 * sandbox mode). Contract of the bank API we call (the simulator implements it, README documents it):
 *   POST /v1/users  {userId, name, email?, phone?}                       -> 201|200 user, 409, 400
 *   GET  /v1/users/{userId}                                               -> 200 user with orders, 404
 *   POST /v1/orders {orderId, userId, amountSatang, currency, description?} -> 201|200 order, 404, 409, 400
 * Requests carry `Authorization: Bearer BANK_API_KEY` (when set) and an Idempotency-Key.
 *
 * Errors: a 4xx answer is thrown as a non-retryable ApplicationFailure of type BankRejected
 * (details: status and body); network errors, timeouts and 5xx are plain errors that Temporal retries.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { verifyStartProof } from '../src/proofs';
import type { Logger } from '../src/logger';
import type { Config } from '../src/config';
import { ActivityFailureType } from '../src/domain/temporal';
import type { BankCall } from '../src/bank';
import { providerEndpoint, type SandboxProviders } from './provider-endpoint';
import { expectSuccess, httpJson, type HttpReply } from './provider-http';

export function createBankActivities({
  config,
  sandbox,
  logger,
}: {
  config: Config;
  sandbox: SandboxProviders;
  logger?: Logger;
}) {
  const baseUrl = providerEndpoint({
    label: 'bank',
    simulatorsOn: config.simulators,
    startSimulator: sandbox.bank,
    liveUrl: config.payments.bankApiUrl,
    liveUrlVar: 'BANK_API_URL',
  });

  return {
    async callBank(call: BankCall): Promise<HttpReply> {
      // issue 38: only a start the gateway proves (talat-start-v1 over type, id and the whole call)
      const { workflowExecution, workflowType } = Context.current().info;
      const input = { workflowType: workflowType ?? '', workflowId: workflowExecution?.workflowId ?? '', input: call };
      if (!verifyStartProof(config.results.signingKey, input)) {
        logger?.error(
          { securityEvent: 'bank_request_forged', workflowId: input.workflowId, op: call.op },
          'security: a bank request the gateway did not start; the bank was not called',
        );
        throw ApplicationFailure.nonRetryable('not a request of the gateway', ActivityFailureType.BankRejected, {
          status: 403,
          body: null,
        });
      }
      const base = await baseUrl(call.mode);
      const headers: Record<string, string> = {};
      if (call.mode === 'live' && config.payments.bankApiKey)
        headers.authorization = `Bearer ${config.payments.bankApiKey}`;
      const timeoutMs = config.payments.providerTimeoutMs;
      let reply: HttpReply;
      try {
        switch (call.op) {
          case 'createUser':
            reply = await httpJson(`${base}/v1/users`, {
              method: 'POST',
              body: call.body,
              headers: { ...headers, 'idempotency-key': `user-${call.body.userId}` },
              timeoutMs,
            });
            break;
          case 'getUser':
            reply = await httpJson(`${base}/v1/users/${encodeURIComponent(call.userId)}`, {
              method: 'GET',
              headers,
              timeoutMs,
            });
            break;
          case 'createOrder':
            reply = await httpJson(`${base}/v1/orders`, {
              method: 'POST',
              body: call.body,
              headers: { ...headers, 'idempotency-key': `order-${call.body.orderId}` },
              timeoutMs,
            });
            break;
        }
      } catch (e) {
        throw new Error(`bank unreachable: ${(e as Error).message}`);
      }
      return expectSuccess(reply, ActivityFailureType.BankRejected, 'bank');
    },
  };
}
