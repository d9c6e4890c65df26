/**
 * Card payment workflow (id payment-<orderId>): records the payment, creates the charge at the
 * card provider (update `charge` answers once it exists), settles at once when the provider
 * decided, else waits for the provider's callback (signal `paymentResult`) until the timeout.
 */
import { condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { PROVIDER_CALL, providerFailureReason } from '../provider-call';
import { ActivityFailureType } from '../../src/domain/temporal';
import { chargeUpdate, type CardPaymentInput, type PaymentOutcome } from '../../src/payments';
import { paymentMachine, recordActivities } from './machine';
import { v2Patches, askPatched, type HasPatch } from '../patches';

const { attachCharge } = recordActivities;

const { createCardCharge } = proxyActivities<Activities>(PROVIDER_CALL);

/** lean-payment-v1: the charge and its id on the payments row in one local activity, same retries. */
const { chargeCard } = proxyLocalActivities<Activities>(PROVIDER_CALL);

/** A provider failure as a short reason for the payment's history. */
const providerFailure = (e: unknown): string =>
  providerFailureReason(
    e,
    [ActivityFailureType.CardRejected, ActivityFailureType.ProviderNotConfigured],
    (f) =>
      f.type === ActivityFailureType.CardRejected ? `card provider rejected the charge: ${f.message}` : f.message,
    'card provider unavailable',
  );

async function cardPayment(input: CardPaymentInput, has: HasPatch): Promise<PaymentOutcome> {
  const m = paymentMachine(input, 'card', has);
  let chargeStepDone = false;
  setHandler(chargeUpdate, async () => {
    await condition(() => chargeStepDone || m.view.status !== 'pending');
    return m.view;
  });

  await m.record();
  try {
    const chargeInput = {
      paymentId: input.paymentId,
      orderId: input.orderId,
      amountSatang: input.amountSatang,
      token: input.token,
      mode: input.mode,
      returnUri: input.returnUri,
    };
    // the charge's own check (activities/payments/index.ts, vouched): the start proof over the whole input
    const vouchedCharge = { ...chargeInput, apiKeyId: input.apiKeyId, proof: input.proof, start: input };
    let charge;
    if (m.lean) charge = await chargeCard(vouchedCharge);
    else {
      charge = await createCardCharge(chargeInput);
      await attachCharge({
        paymentId: input.paymentId,
        providerRef: charge.id,
        details: { charge: { status: charge.status, authorizeUri: charge.authorizeUri } },
      });
    }
    m.view.charge = charge;
    // a charge may be decided at once (no 3-D Secure step): settle without waiting for a callback
    if (charge.status === 'successful') await m.settle('paid', 'card provider: charge successful');
    else if (charge.status === 'failed') await m.settle('failed', 'card provider: charge failed');
    chargeStepDone = true;
    if (m.view.status !== 'pending') return m.finish();
  } catch (e) {
    await m.settle('failed', providerFailure(e));
    return m.finish();
  }
  return m.awaitResult(input.timeoutSeconds * 1000, 'no result from the card provider in time');
}

/** v2 (PaymentWorkflowType.card, what the gateway starts): every patch, no marker (workflows/patches.ts). */
export async function cardPaymentWorkflowV2(input: CardPaymentInput): Promise<PaymentOutcome> {
  return cardPayment(input, v2Patches);
}

/** v1: executions started before v2, replaying as they ran. */
export async function cardPaymentWorkflow(input: CardPaymentInput): Promise<PaymentOutcome> {
  return cardPayment(input, askPatched);
}
