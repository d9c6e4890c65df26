/**
 * The webhooks' Temporal contract: delivery, retry, replay, resend and recovery workflows
 * (workflows/webhooks/), their ids, inputs and outcomes, and the retry delays.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
import type { PaymentEventStatus, PaymentStatusEvent } from './events';

export const WebhookWorkflowType = {
  webhookDelivery: 'webhookDeliveryWorkflow',
  /** the retries of a webhook whose first attempt (made by the payment workflow) failed */
  webhookRetry: 'webhookRetryWorkflow',
  webhookReplay: 'webhookReplayWorkflow',
  webhookResend: 'webhookResendWorkflow',
  webhookRecover: 'webhookRecoverWorkflow',
} as const;

/**
 * one webhook delivery per payment and status (and per refund: each refund is its own event);
 * webhookDeliveryWorkflow before lean-payment-v1, webhookRetryWorkflow since
 */
export const webhookDeliveryWorkflowId = (paymentId: string, status: PaymentEventStatus, refundId?: string): string =>
  refundId ? `webhook-${paymentId}-${status}-${refundId}` : `webhook-${paymentId}-${status}`;
/** one replay of a dead letter at a time (a second request joins the running one) */
export const webhookReplayWorkflowId = (deadLetterId: string): string => `webhook-replay-${deadLetterId}`;
/** one resend of a message at a time (a second request joins the running one) */
export const webhookResendWorkflowId = (messageId: string): string => `webhook-resend-${messageId}`;
/** one recovery per endpoint at a time (a second request joins the running one) */
export const webhookRecoverWorkflowId = (endpointId: string): string => `webhook-recover-${endpointId}`;

/** Retries of a webhook delivery after the first attempt (the contract "Limits"). */
export const WEBHOOK_RETRY_DELAYS_MS = [1000, 2000, 4000] as const;

/** One delivery attempt as the webhook activities report it. */
export interface AttemptResult {
  ok: boolean;
  /** the endpoint was removed: nothing more to do */
  cancelled?: boolean;
  statusCode?: number;
  error?: string;
}

export interface DeliveryOutcome {
  deliveryId: string;
  state: 'delivered' | 'dead' | 'cancelled';
  attempts: number;
  deadLetterId?: string;
}

export interface WebhookReplayInput {
  deadLetterId: string;
}
export type ReplayOutcome = AttemptResult & { status: 'dead' | 'delivered' };

export type WebhookDeliveryWorkflow = (event: PaymentStatusEvent) => Promise<DeliveryOutcome[]>;

/** The deliveries of one event whose first attempt failed: retried after 1 s, 2 s, 4 s, then dead-lettered. */
export interface WebhookRetryInput {
  event: PaymentStatusEvent;
  deliveryIds: string[];
  /** ms since the epoch when the first attempts began: the 1 s before attempt 2 counts from it */
  firstAttemptAt?: number;
  /**
   * those of deliveryIds the payment workflow did not attempt (the settle step's bulkhead: their
   * endpoint was failing or had enough first attempts in flight): this workflow makes attempt 1 too
   */
  deferred?: string[];
}
export type WebhookRetryWorkflow = (input: WebhookRetryInput) => Promise<DeliveryOutcome[]>;
export type WebhookReplayWorkflow = (input: WebhookReplayInput) => Promise<ReplayOutcome>;

/** Resend one message (delivery) to its endpoint now: one attempt, signed anew. */
export interface WebhookResendInput {
  messageId: string;
  kind: 'resend' | 'recover';
}
export interface WebhookRecoverInput {
  endpointId: string;
  /** ISO 8601: messages created at or after this time that failed every attempt */
  since: string;
  /** continue-as-new state: where the previous run stopped, and its counts */
  cursor?: { createdAt: string; id: string };
  totals?: RecoverOutcome;
}
export interface RecoverOutcome {
  resent: number;
  delivered: number;
  failed: number;
}
export type WebhookResendWorkflow = (input: WebhookResendInput) => Promise<AttemptResult>;
export type WebhookRecoverWorkflow = (input: WebhookRecoverInput) => Promise<RecoverOutcome>;
