/**
 * The payment workflow's memo is one field (issue 41: one sealed payload, not ten); executions
 * started before keep one field per key, and the gateway reads both (paymentMemoOf).
 */
import { PAYMENT_MEMO_FIELD, paymentMemoOf } from '../../src/payments/workflow-client';

const memo = { paymentId: 'pay_1', orderId: 'o-1', method: 'qr', amountSatang: 100, mode: 'sandbox', startProof: 'p' };

it('reads the one-field memo', () => {
  expect(paymentMemoOf({ [PAYMENT_MEMO_FIELD]: memo })).toEqual(memo);
});

it('reads the memo of an execution started before, one field per key', () => {
  expect(paymentMemoOf({ ...memo })).toEqual(memo);
});

it('reads no memo as empty: nothing to adopt, nothing to answer from', () => {
  expect(paymentMemoOf(undefined)).toEqual({});
  expect(paymentMemoOf({}).paymentId).toBeUndefined();
});
