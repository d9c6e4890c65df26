/**
 * Refund activities: the refund workflow's only way to read the payment, write refunds rows and
 * call the provider. The provider is the card provider for card payments (POST
 * /charges/{charge}/refunds) and the bank for the others (POST /v1/refunds): the sandbox
 * simulator in sandbox mode, CARD_PROVIDER_URL / BANK_API_URL in live mode, as for charges.
 * The refund id (its row's, written before) is the provider's Idempotency-Key, so a retried call
 * is the same refund at the provider.
 * A 4xx is a non-retryable RefundRejected; network errors, timeouts and 5xx are retried.
 */
import type { ProviderRefundInput } from '../src/refunds';
import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db/knex';
import { ActivityFailureType } from '../src/domain/temporal';
import { verifyRefundProof } from '../src/proofs';
import {
  insertRefund,
  refundablePayment,
  refundablePaymentById,
  refundById,
  settleRefund,
  type PaymentsOver,
  type RecordedRefund,
  type RefundablePayment,
} from '../src/refunds/repository';
import { expectSuccess, httpJson, type HttpReply } from './provider-http';
import { providerEndpoint, type SandboxProviders } from './provider-endpoint';

export type { ProviderRefundInput } from '../src/refunds';

/** What the refund workflow may refund: the recorded refund and its payment, or nothing. */
export type { RefundablePayment };
export type RecordedRefundToRun = { ok: true; refund: RecordedRefund; payment: RefundablePayment } | { ok: false };

export function createRefundActivities({
  db,
  config,
  sandbox,
  payments,
}: {
  db: Db;
  config: Config;
  sandbox: SandboxProviders;
  /** the payments slice's records (src/payments/repository.ts paymentRecords) */
  payments: PaymentsOver;
}) {
  const cardBase = providerEndpoint({
    label: 'card provider',
    simulatorsOn: config.simulators,
    startSimulator: sandbox.cardProvider,
    liveUrl: config.payments.cardProviderUrl,
    liveUrlVar: 'CARD_PROVIDER_URL',
  });
  const bankBase = providerEndpoint({
    label: 'bank',
    simulatorsOn: config.simulators,
    startSimulator: sandbox.bank,
    liveUrl: config.payments.bankApiUrl,
    liveUrlVar: 'BANK_API_URL',
  });

  return {
    async loadRefundablePayment(orderId: string): Promise<RefundablePayment | null> {
      return refundablePayment(db, payments, orderId);
    },

    /**
     * refund-record-v1: the refund `refundId` of order `orderId` as POST /refund recorded it, when
     * `proof` is the gateway's proof of exactly that row; else nothing (a forged or copied update).
     */
    async loadRecordedRefund(input: {
      orderId: string;
      refundId: string;
      proof?: string;
    }): Promise<RecordedRefundToRun> {
      const refund = await refundById(db, input.refundId);
      if (!refund || refund.orderId !== input.orderId) return { ok: false };
      const claim = {
        refundId: refund.refundId,
        paymentId: refund.paymentId,
        orderId: refund.orderId,
        amountSatang: refund.amountSatang,
      };
      if (!verifyRefundProof(config.results.signingKey, claim, input.proof)) return { ok: false };
      // the recorded refund's own payment (an order id may be another account's or mode's too)
      const payment = await refundablePaymentById(db, payments, refund.paymentId);
      if (!payment || payment.orderId !== input.orderId) return { ok: false };
      return { ok: true, refund, payment };
    },

    async recordRefund(input: {
      refundId: string;
      paymentId: string;
      orderId: string;
      amountSatang: number;
      reason?: string;
      apiKeyId?: string;
    }): Promise<void> {
      await insertRefund(db, input);
    },

    async settleRefund(input: {
      refundId: string;
      paymentId: string;
      status: 'succeeded' | 'failed';
      providerRef?: string;
      failureReason?: string;
    }) {
      return settleRefund(db, payments, input);
    },

    /** Ask the provider to refund; returns its refund id. */
    async requestProviderRefund(input: ProviderRefundInput): Promise<{ providerRef: string }> {
      const headers: Record<string, string> = { 'idempotency-key': input.refundId };
      const timeoutMs = config.payments.providerTimeoutMs;
      let reply: HttpReply;
      let what: string;
      try {
        if (input.method === 'card') {
          what = 'card provider';
          if (!input.providerRef)
            throw ApplicationFailure.nonRetryable(
              'the card payment has no charge to refund',
              ActivityFailureType.RefundRejected,
            );
          const base = await cardBase(input.mode);
          if (input.mode === 'live' && config.payments.cardProviderKey)
            headers.authorization = `Bearer ${config.payments.cardProviderKey}`;
          reply = await httpJson(`${base}/charges/${encodeURIComponent(input.providerRef)}/refunds`, {
            method: 'POST',
            headers,
            timeoutMs,
            body: { amount: input.amountSatang, reason: input.reason },
          });
        } else {
          what = 'bank';
          const base = await bankBase(input.mode);
          if (input.mode === 'live' && config.payments.bankApiKey)
            headers.authorization = `Bearer ${config.payments.bankApiKey}`;
          reply = await httpJson(`${base}/v1/refunds`, {
            method: 'POST',
            headers,
            timeoutMs,
            body: {
              paymentId: input.paymentId,
              orderId: input.orderId,
              amountSatang: input.amountSatang,
              currency: 'THB',
              reason: input.reason,
            },
          });
        }
      } catch (e) {
        if (e instanceof ApplicationFailure) throw e;
        throw new Error(`refund provider unreachable: ${(e as Error).message}`);
      }
      const body = expectSuccess(reply, ActivityFailureType.RefundRejected, what).body as {
        id?: unknown;
        refundId?: unknown;
      };
      const ref =
        typeof body?.id === 'string' ? body.id : typeof body?.refundId === 'string' ? body.refundId : undefined;
      if (!ref) throw new Error(`${what} answered a refund without an id`);
      return { providerRef: ref };
    },
  };
}
