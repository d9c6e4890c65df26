/**
 * Who the codec endpoint (/codec/decode, /codec/encode) answers: a key with the scope `codec`,
 * or Temporal Web in the browser (its origin, loopback, a Host on the allow-list) as the dev
 * UI calls it; nobody else: not a loopback caller without a key, not a DNS-rebinding page (its
 * own origin, or Temporal Web's origin sent with a foreign Host), not a key without the scope.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmCodec } from '../../src/temporal/codec';
import { createTestStack, type TestStack } from '../support/stack';
import { newKey, request } from '../payments/support';

let stack: TestStack;
let wire: { payloads: { metadata: Record<string, string>; data: string }[] };
let webOrigin: string;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  webOrigin = stack.config.temporal.webOrigins[0];
  const [sealed] = await new AesGcmCodec(stack.config.temporal.codecKeys).encode([
    defaultPayloadConverter.toPayload({ orderId: 'ORD-SECRET', amountSatang: 10003 }),
  ]);
  wire = {
    payloads: [
      {
        metadata: Object.fromEntries(
          Object.entries(sealed.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
        data: Buffer.from(sealed.data!).toString('base64'),
      },
    ],
  };
});
afterAll(() => stack.close());

const decode = (headers: Record<string, string>) =>
  request(stack.app.callback()).post('/codec/decode').set(headers).send(wire);
const leaks = (body: { payloads?: { data?: string }[] }) =>
  (body.payloads ?? []).some((p) =>
    Buffer.from(p.data ?? '', 'base64')
      .toString()
      .includes('ORD-SECRET'),
  );

describe('/codec answers only its callers', () => {
  it('a loopback caller without a key and without Temporal Web origin gets 401 and no plaintext', async () => {
    const res = await decode({});
    expect(res.status).toBe(401);
    expect(leaks(res.body)).toBe(false);
    expect((await request(stack.app.callback()).post('/codec/encode').send(wire)).status).toBe(401);
  });

  it("a DNS-rebinding page (its own origin, or Temporal Web's with a foreign Host) gets nothing", async () => {
    for (const headers of <Record<string, string>[]>[
      { Origin: 'http://rebind.example:3000', Host: 'rebind.example:3000' },
      { Origin: webOrigin, Host: 'rebind.example:3000' },
      { Host: 'rebind.example:3000' },
    ]) {
      const res = await decode(headers);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(leaks(res.body)).toBe(false);
    }
  });

  it('a key without the scope codec gets 403; one with it gets the payloads', async () => {
    const plain = await newKey(stack.db, { scopes: ['payments:read'] });
    expect((await decode({ 'X-API-Key': plain.key })).status).toBe(403);
    const codec = await newKey(stack.db, { scopes: ['codec'] });
    const res = await decode({ Authorization: `Bearer ${codec.key}`, Host: 'gateway.example' });
    expect(res.status).toBe(200);
    expect(leaks(res.body)).toBe(true);
  });

  it('Temporal Web as the dev UI calls it (preflight, then POST from its origin to 127.0.0.1) still works', async () => {
    for (const host of ['127.0.0.1:3000', 'localhost:3000']) {
      const pre = await request(stack.app.callback())
        .options('/codec/decode')
        .set({ Origin: webOrigin, Host: host, 'Access-Control-Request-Method': 'POST' })
        .set('Access-Control-Request-Headers', 'content-type,x-namespace');
      expect(pre.status).toBe(204);
      const res = await decode({ Origin: webOrigin, Host: host, 'X-Namespace': 'default' });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(webOrigin);
      expect(JSON.parse(Buffer.from(res.body.payloads[0].data, 'base64').toString())).toEqual({
        orderId: 'ORD-SECRET',
        amountSatang: 10003,
      });
    }
  });
});
