/**
 * The provider-call failure mapping shared by the card payment and refund workflows
 * (workflows/provider-call.ts): the reasons their histories and rows carry are unchanged.
 */
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { ActivityFailureType } from '../../src/domain/temporal';
import { providerFailure as refundFailure } from '../../workflows/refunds';
import { providerFailureReason, PROVIDER_CALL } from '../../workflows/provider-call';

const failed = (type: string, message: string) =>
  new ActivityFailure(
    'activity failed',
    'requestProviderRefund',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    undefined,
    ApplicationFailure.nonRetryable(message, type),
  );

describe('provider calls', () => {
  it('a refused refund reads as refused, anything else as unavailable', () => {
    expect(refundFailure(failed(ActivityFailureType.RefundRejected, 'declined'))).toBe('refund refused: declined');
    expect(refundFailure(failed(ActivityFailureType.ProviderNotConfigured, 'no provider'))).toBe(
      'refund refused: no provider',
    );
    expect(refundFailure(failed(ActivityFailureType.CardRejected, 'x'))).toBe('refund provider unavailable');
    expect(refundFailure(new Error('timeout'))).toBe('refund provider unavailable');
  });

  it('maps the failure itself as well as the ActivityFailure around it', () => {
    const refused = (f: ApplicationFailure) => `refused: ${f.message}`;
    const bare = ApplicationFailure.nonRetryable('card_declined', ActivityFailureType.CardRejected);
    expect(providerFailureReason(bare, [ActivityFailureType.CardRejected], refused, 'down')).toBe(
      'refused: card_declined',
    );
    expect(providerFailureReason(failed('Other', 'x'), [ActivityFailureType.CardRejected], refused, 'down')).toBe(
      'down',
    );
  });

  it('retries a provider call a few times only', () => {
    expect(PROVIDER_CALL.retry?.maximumAttempts).toBe(4);
  });
});
