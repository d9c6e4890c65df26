/** The worked signature examples published in the README ("Callback API and webhooks") stay true. */
import { signedPayloadText } from '../../src/callbacks/verify';
import { hmacSha256Hex, verifyFieldSignature, verifyHeaderSignature } from '../../src/callbacks/verify';
import { testConfig } from '../support/stack';
import { signWebhook } from '../../src/webhooks/signing';

// the docs' worked examples use example secrets of their own (`npm start` generates its own: DATA_DIR/keys.env)
const secrets = testConfig({
  PROVIDER_SECRET_QR: 'example-secret-qr',
  PROVIDER_SECRET_CARD: 'example-secret-card',
  PROVIDER_SECRET_BANKAPP: 'example-secret-bankapp',
}).callbacks.providers;

it('QR: canonical JSON without `signature`, then HMAC with the QR secret', () => {
  const payload = {
    paymentId: 'pay_0123456789abcdef0123456789abcdef',
    status: 'success',
    amount: 250.5,
    orderId: 'ORD-1001',
    timestamp: '2026-11-22T08:00:00Z',
    signature: 'c61490988926999e93634b1114a956d668e0d197aec6962d2f6e4f4889d8048c',
  };
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
      'd00f9dd1cadf0549f453ba1946464d47a05340da77e6899baa174ee32abf4a12',
    ),
  ).toBe(true);
  const json =
    '{"orderId":"ORD-1001","paymentId":"pay_0123456789abcdef0123456789abcdef","success":true,"userId":"u-1","amount":250.5}';
  expect(hmacSha256Hex(secrets.BANKAPP.secret, `1795334400.${json}`)).toBe(
    '07c80c19d3dfaeb8ce22ad01fa102efb9c28d170177ae5bcf810170c5ac04932',
  );
});

it('webhook: Standard Webhooks signature of the example message', () => {
  const body =
    '{"event":"payment.status.updated","data":{"orderId":"ORD-1001","status":"paid","amount":250.5,"timestamp":"2026-11-22T08:00:01.234Z"}}';
  expect(
    signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_0123456789abcdef0123456789abcdef', 1795334401, body),
  ).toBe('v1,yGBzS6sU4D/xVvg02OBxeLVk0DAywQ/6QQRR7cs7ymQ=');
});
