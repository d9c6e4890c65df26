/** /openapi.json describes every payment API endpoint: request, responses, security, headers. */
import { createTestStack, type TestStack } from '../support/stack';
import { request } from './support';

let stack: TestStack;
let doc: {
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown[];
        requestBody?: { content: Record<string, { schema: unknown }> };
        parameters?: { name: string; in: string }[];
        responses: Record<string, { headers?: Record<string, unknown> }>;
      }
    >
  >;
  components: {
    schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }>;
    securitySchemes: Record<string, unknown>;
  };
};
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  doc = (await request(stack.app.callback()).get('/openapi.json')).body;
});
afterAll(() => stack.close());

const endpoints = [
  ['post', '/cardpayment', 'application/x-www-form-urlencoded', false],
  ['post', '/qrpayment', 'application/json', true],
  ['post', '/calculate-cost', 'application/json', true],
  ['get', '/checkstatus/{orderId}', null, true],
  ['post', '/bank/createorder', 'application/json', true],
  ['post', '/bank/createuser', 'application/json', true],
  ['get', '/bank/user/{userId}', null, true],
] as const;

describe('/openapi.json', () => {
  it.each(endpoints)(
    '%s %s: request, 200 and error responses with the rate-limit headers',
    (method, path, contentType, keyed) => {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      if (contentType) expect(op.requestBody!.content[contentType].schema).toBeDefined();
      if (keyed) expect(op.security).toEqual([{ ApiKeyAuth: [] }]);
      else expect(op.security).toEqual([]);
      expect(op.responses['200']).toBeDefined();
      for (const code of ['400', '429']) expect(op.responses[code]?.headers).toHaveProperty('X-RateLimit-Remaining');
      expect(op.responses['200'].headers).toHaveProperty('X-RateLimit-Limit');
      if (method === 'post')
        expect(op.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header')).toBe(true);
    },
  );

  it('names the required request fields', () => {
    const s = doc.components.schemas;
    expect(s.QrPaymentRequest.required).toEqual(expect.arrayContaining(['orderId', 'userId', 'amount', 'customerId']));
    expect(s.CalculateCostRequest.required).toEqual(
      expect.arrayContaining(['items', 'branchId', 'deliveryOption', 'paymentMethod']),
    );
    expect(s.BankCreateUserRequest.required).toEqual(expect.arrayContaining(['userId', 'name']));
    expect(s.BankCreateOrderRequest.required).toEqual(expect.arrayContaining(['orderId', 'userId', 'amount']));
    expect(s.CostBreakdown.properties).toHaveProperty('totals');
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
  });
});
