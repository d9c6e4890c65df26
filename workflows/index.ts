/** Entry point of the workflow bundle: every workflow type the worker registers. */
import type * as bank from '../src/bank';
import type * as callbacks from '../src/callbacks';
import type * as payments from '../src/payments';
import type * as refunds from '../src/refunds';
import type * as webhooks from '../src/webhooks';
import type * as orders from '../src/orders';
import { paidOrderProcessingWorkflow } from './callbacks';
import { bankRequestWorkflow } from './bank';
import { cardPaymentWorkflow, cardPaymentWorkflowV2 } from './payments/card';
import { qrPaymentWorkflow, qrPaymentWorkflowV2, qrPaymentWorkflowV3 } from './payments/qr';
import { webhookDeliveryWorkflow, webhookReplayWorkflow, webhookRetryWorkflow } from './webhooks/delivery';
import { webhookRecoverWorkflow, webhookResendWorkflow } from './webhooks/recovery';
import { webhookKeepTryingWorkflow } from './webhooks/keep-trying';
import { orderRefundsWorkflow } from './refunds';
import { lateResultWorkflow } from './payments/late-result';
import { paymentRedriveWorkflow } from './payments/redrive';
import { reconcileSettlementWorkflow } from './reconciliation';
import { orderSettlementWorkflow } from './orders';

export {
  cardPaymentWorkflow,
  cardPaymentWorkflowV2,
  paidOrderProcessingWorkflow,
  webhookDeliveryWorkflow,
  webhookRetryWorkflow,
  webhookReplayWorkflow,
  webhookResendWorkflow,
  webhookRecoverWorkflow,
  webhookKeepTryingWorkflow,
  qrPaymentWorkflow,
  qrPaymentWorkflowV2,
  qrPaymentWorkflowV3,
  bankRequestWorkflow,
  orderRefundsWorkflow,
  lateResultWorkflow,
  paymentRedriveWorkflow,
  reconcileSettlementWorkflow,
  orderSettlementWorkflow,
};

/** Compile-time check: each workflow has the name and the signature the contract gives the gateway. */
export type RegisteredWorkflows = {
  [
    K in
      | (typeof payments.PaymentWorkflowType)[keyof typeof payments.PaymentWorkflowType]
      | (typeof refunds.RefundsWorkflowType)[keyof typeof refunds.RefundsWorkflowType]
      | (typeof callbacks.CallbackWorkflowType)[keyof typeof callbacks.CallbackWorkflowType]
      | (typeof bank.BankWorkflowType)[keyof typeof bank.BankWorkflowType]
      | (typeof webhooks.WebhookWorkflowType)[keyof typeof webhooks.WebhookWorkflowType]
      | (typeof orders.OrderWorkflowType)[keyof typeof orders.OrderWorkflowType]
  ]: {
    cardPaymentWorkflow: payments.CardPaymentWorkflow;
    cardPaymentWorkflowV2: payments.CardPaymentWorkflow;
    qrPaymentWorkflow: payments.QrPaymentWorkflow;
    qrPaymentWorkflowV2: payments.QrPaymentWorkflow;
    qrPaymentWorkflowV3: payments.QrPaymentWorkflow;
    bankRequestWorkflow: bank.BankRequestWorkflow;
    paidOrderProcessingWorkflow: callbacks.PaidOrderProcessingWorkflow;
    webhookDeliveryWorkflow: webhooks.WebhookDeliveryWorkflow;
    webhookRetryWorkflow: webhooks.WebhookRetryWorkflow;
    webhookReplayWorkflow: webhooks.WebhookReplayWorkflow;
    webhookResendWorkflow: webhooks.WebhookResendWorkflow;
    webhookRecoverWorkflow: webhooks.WebhookRecoverWorkflow;
    webhookKeepTryingWorkflow: webhooks.WebhookKeepTryingWorkflow;
    orderRefundsWorkflow: refunds.OrderRefundsWorkflow;
    lateResultWorkflow: payments.LateResultWorkflow;
    paymentRedriveWorkflow: payments.PaymentRedriveWorkflow;
    orderSettlementWorkflow: orders.OrderSettlementWorkflow;
  }[K];
};
const registered: RegisteredWorkflows = {
  cardPaymentWorkflow,
  cardPaymentWorkflowV2,
  qrPaymentWorkflow,
  qrPaymentWorkflowV2,
  qrPaymentWorkflowV3,
  bankRequestWorkflow,
  paidOrderProcessingWorkflow,
  webhookDeliveryWorkflow,
  webhookRetryWorkflow,
  webhookReplayWorkflow,
  webhookResendWorkflow,
  webhookRecoverWorkflow,
  webhookKeepTryingWorkflow,
  orderRefundsWorkflow,
  lateResultWorkflow,
  paymentRedriveWorkflow,
  orderSettlementWorkflow,
};
void registered;
