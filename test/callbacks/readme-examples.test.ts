/** The worked signature examples published in the README ("Callback API and webhooks") stay true. */
import { signedPayloadText } from '../../src/callbacks/verify';
import { hmacSha256Hex, verifyFieldSignature, verifyHeaderSignature } from '../../src/callbacks/verify';
import { testConfig } from '../support/stack';
import { signWebhook } from '../../src/webhooks/signing';

const secrets = testConfig().callbacks.providers;

it('QR: canonical JSON without `signature`, then HMAC with the QR secret', () => {
  const payload = {
    paymentId: 'pay_0123456789abcdef0123456789abcdef',
    status: 'success',
    amount: 250.5,
    orderId: 'ORD-1001',
    timestamp: '2026-11-22T08:00:00Z',
    signature: '59769e672ce4a4b13efebf3eba8db6dd94ad4ce34f22af7457e14326ddfd8d76',
  };
  expect(secrets.QR.secret).toBe('talat-dev-secret-qr');
  expect(signedPayloadText(payload)).toBe(
    '{"amount":250.5,"orderId":"ORD-1001","paymentId":"pay_0123456789abcdef0123456789abcdef","status":"success","timestamp":"2026-11-22T08:00:00Z"}',
  );
  expect(verifyFieldSignature(secrets.QR.secret, payload)).toBe(true);
});

it('card form and bank app: HMAC of `<X-Timestamp>.<raw body>`', () => {
  const form = 'objectId=chrg_test_0123456789abcdef01234567&token=tok_test&status=true&message=&saveCard=false';
  expect(
    verifyHeaderSignature(
      secrets.CARD.secret,
      '1795334400',
      form,
      '4d4190c541843ba9dca0e66e492f2738401ec344eea9c9236c9561ac47749892',
    ),
  ).toBe(true);
  const json =
    '{"orderId":"ORD-1001","paymentId":"pay_0123456789abcdef0123456789abcdef","success":true,"userId":"u-1","amount":250.5}';
  expect(hmacSha256Hex(secrets.BANKAPP.secret, `1795334400.${json}`)).toBe(
    '0b52f418e0ff34007ea53a583b69c98a21729ce523816d8fca5871a279b2ad35',
  );
});

it('webhook: Standard Webhooks signature of the example message', () => {
  const body =
    '{"event":"payment.status.updated","data":{"orderId":"ORD-1001","status":"paid","amount":250.5,"timestamp":"2026-11-22T08:00:01.234Z"}}';
  expect(
    signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_0123456789abcdef0123456789abcdef', 1795334401, body),
  ).toBe('v1,yGBzS6sU4D/xVvg02OBxeLVk0DAywQ/6QQRR7cs7ymQ=');
});
