/** Entry point of the workflow bundle: every workflow type the worker registers. */
import type * as contract from '../src/domain/workflow-contract';
import { paidOrderProcessingWorkflow } from './paid-order';
import { bankRequestWorkflow } from './payment-bank';
import { cardPaymentWorkflow, cardPaymentWorkflowV2 } from './payment-card';
import { qrPaymentWorkflow, qrPaymentWorkflowV2 } from './payment-qr';
import { webhookDeliveryWorkflow, webhookReplayWorkflow, webhookRetryWorkflow } from './webhook';
import { webhookRecoverWorkflow, webhookResendWorkflow } from './webhook-recovery';
import { orderRefundsWorkflow } from './refunds';
import { lateResultWorkflow } from './late-result';
import { reconcileSettlementWorkflow } from './reconciliation';

export {
  cardPaymentWorkflow,
  cardPaymentWorkflowV2,
  paidOrderProcessingWorkflow,
  webhookDeliveryWorkflow,
  webhookRetryWorkflow,
  webhookReplayWorkflow,
  webhookResendWorkflow,
  webhookRecoverWorkflow,
  qrPaymentWorkflow,
  qrPaymentWorkflowV2,
  bankRequestWorkflow,
  orderRefundsWorkflow,
  lateResultWorkflow,
  reconcileSettlementWorkflow,
};

/** Compile-time check: each workflow has the name and the signature the contract gives the gateway. */
export type RegisteredWorkflows = {
  [K in (typeof contract.WorkflowType)[keyof typeof contract.WorkflowType]]: {
    cardPaymentWorkflow: contract.CardPaymentWorkflow;
    cardPaymentWorkflowV2: contract.CardPaymentWorkflow;
    qrPaymentWorkflow: contract.QrPaymentWorkflow;
    qrPaymentWorkflowV2: contract.QrPaymentWorkflow;
    bankRequestWorkflow: contract.BankRequestWorkflow;
    paidOrderProcessingWorkflow: contract.PaidOrderProcessingWorkflow;
    webhookDeliveryWorkflow: contract.WebhookDeliveryWorkflow;
    webhookRetryWorkflow: contract.WebhookRetryWorkflow;
    webhookReplayWorkflow: contract.WebhookReplayWorkflow;
    webhookResendWorkflow: contract.WebhookResendWorkflow;
    webhookRecoverWorkflow: contract.WebhookRecoverWorkflow;
    orderRefundsWorkflow: contract.OrderRefundsWorkflow;
    lateResultWorkflow: contract.LateResultWorkflow;
  }[K];
};
const registered: RegisteredWorkflows = {
  cardPaymentWorkflow,
  cardPaymentWorkflowV2,
  qrPaymentWorkflow,
  qrPaymentWorkflowV2,
  bankRequestWorkflow,
  paidOrderProcessingWorkflow,
  webhookDeliveryWorkflow,
  webhookRetryWorkflow,
  webhookReplayWorkflow,
  webhookResendWorkflow,
  webhookRecoverWorkflow,
  orderRefundsWorkflow,
  lateResultWorkflow,
};
void registered;
