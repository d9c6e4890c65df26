/**
 * POST /qrpayment on the real stack: the PromptPay payload and image, the workflow and its row,
 * the same order again, conflicts, validation, the result signal, webhook emission, expiry.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { qrImage } from '../../src/qr-image';
import { PaymentWorkflowType } from '../../src/payments';
import {
  orderReference,
  parseTlv,
  paymentReference,
  payloadFields,
  promptPayPayload,
  verifyCrc,
} from '../../src/domain/promptpay';
import { fieldSigned, post as postCallback } from '../callbacks/helpers';
import { createTestStack, provenResult, uniq, type TestStack } from '../support/stack';
import {
  eventsOf,
  gatewayWith,
  newKey,
  paymentError,
  request,
  rowOf,
  storedRef1,
  waitFor,
  webhookWitness,
} from './support';
import { paymentHandle } from './support';

let stack: TestStack;
let key: string;
let keyId: string;
beforeAll(async () => {
  stack = await createTestStack({ env: { PROMPTPAY_ID: '0801234567', QR_EXPIRY_S: '900' } });
  ({ key, id: keyId } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] }));
});
afterAll(() => stack.close());

const post = (body: unknown, k = key) =>
  request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', k)
    .send(body as object);

describe('POST /qrpayment', () => {
  it('returns the PromptPay payload, its CRC, a PNG QR image and the expiry, and starts the workflow', async () => {
    const orderId = uniq('qr');
    const before = Date.now();
    const res = await post({ orderId, userId: 'u-1', amount: 4.22, customerId: 'c-1' });
    expect(res.status).toBe(200);
    // MERCHANT_NAME's default is set: tag 59; the payment's reference (from its unique id, stored
    // with it; not the order id, which only its account and mode keep unique) is tag 62's label
    const ref1 = await storedRef1(stack.db, res.body.body.paymentId);
    expect(ref1).toBe(paymentReference(res.body.body.paymentId));
    expect(ref1).not.toBe(orderReference(orderId));
    const expected = promptPayPayload({
      id: '0801234567',
      amountSatang: 422,
      merchantName: 'SALA MARKET',
      referenceLabel: ref1,
    });
    expect(res.body).toEqual({
      statusCode: 200,
      body: {
        paymentId: expect.stringMatching(/^pay_/),
        orderId,
        method: 'qr',
        status: 'pending',
        amount: 4.22,
        currency: 'THB',
        customerId: 'c-1',
        expiresAt: expect.any(String),
        qr: {
          payload: expected.payload,
          crc: expected.crc,
          image: expect.stringMatching(/^data:image\/png;base64,/),
          reference: ref1,
        },
        checkoutUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/checkout\/pay_/),
      },
    });
    const fields = Object.fromEntries(parseTlv(res.body.body.qr.payload).map((f) => [f.tag, f.value]));
    expect(fields).toMatchObject({ '00': '01', '01': '12', '53': '764', '54': '4.22', '58': 'TH' });
    expect(verifyCrc(res.body.body.qr.payload)).toBe(true);
    const expiry = Date.parse(res.body.body.expiresAt);
    expect(expiry).toBeGreaterThanOrEqual(before + 900_000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 900_000);
    // the image is the payload as a QR code (same bytes as rendering the payload ourselves)
    const png = Buffer.from(res.body.body.qr.image.split(',')[1], 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // the pixels qrcode draws (test/payments/qr-image.test.ts), as a 1-bit PNG
    expect(res.body.body.qr.image).toBe(qrImage(expected.payload));

    const row = await waitFor(() => rowOf(stack.db, orderId));
    expect(row).toMatchObject({
      id: res.body.body.paymentId,
      method: 'qr',
      status: 'pending',
      amount_satang: '422',
      mode: 'sandbox',
      customer_id: 'c-1',
      workflow_id: `payment-${res.body.body.paymentId}`,
      details: { qr: { payload: expected.payload, crc: expected.crc } },
    });
    expect(row.expires_at.toISOString()).toBe(res.body.body.expiresAt);
    const desc = await (await paymentHandle(stack, orderId)).describe();
    expect(desc.type).toBe(PaymentWorkflowType.qrDelayed);
    expect(desc.searchAttributes).toMatchObject({
      OrderId: [orderId],
      PaymentMethod: ['qr'],
      PaymentStatus: ['pending'],
    });
    await (await paymentHandle(stack, orderId)).terminate('test cleanup');
  });

  it('the same order and amount again returns the same payment and QR code; another amount is 409 CONFLICT', async () => {
    const orderId = uniq('qr');
    const body = { orderId, userId: 'u-2', amount: '100.00', customerId: 'c-2' };
    const first = await post(body);
    const again = await post({ ...body, amount: 100 });
    expect(again.status).toBe(200);
    expect(again.body.body).toEqual(first.body.body);

    const other = await post({ ...body, amount: '100.01' });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      statusCode: 409,
      body: {
        error: `Order ${orderId} already has a payment of 100.00 THB by qr: use the same amount and method to get it, or a new order id`,
        code: 'CONFLICT',
        details: expect.objectContaining({ orderId }),
      },
    });

    // another key (another account) gets a payment of its own under the same order id (docs/concepts.md)
    const otherKey = (await newKey(stack.db, { scopes: ['payments:write'] })).key;
    const theirs = await post(body, otherKey);
    expect(theirs.status).toBe(200);
    expect(theirs.body.body.paymentId).not.toBe(first.body.body.paymentId);
    for (const r of await stack.db('payments').where({ order_id: orderId }))
      await stack.client.workflow.getHandle(String(r.workflow_id)).terminate('test cleanup');
  });

  it('a success signal settles it paid, keeps the search attribute current and emits payment.status.updated', async () => {
    const witness = await webhookWitness(stack, { id: keyId });
    const orderId = uniq('qr');
    const res = await post({ orderId, userId: 'u-3', amount: 55, customerId: 'c-3' });
    const paymentId = res.body.body.paymentId;
    const handle = await paymentHandle(stack, orderId);
    await handle.signal(
      'paymentResult',
      provenResult(stack.config, paymentId, { status: 'success', provider: 'qr', reference: 'txn-1' }),
    );
    // a second, contradicting result without a proof changes nothing
    await handle.signal('paymentResult', { status: 'failed', provider: 'qr' }).catch(() => undefined);
    await expect(handle.result()).resolves.toEqual({ paymentId, orderId, status: 'paid' });
    expect((await rowOf(stack.db, orderId)).status).toBe('paid');
    expect(await eventsOf(stack.db, paymentId)).toEqual(['pending', 'paid']);
    expect((await handle.describe()).searchAttributes).toMatchObject({ PaymentStatus: ['paid'] });
    await witness.received(orderId, 'paid');
    await witness.stop();
  });

  it.each([
    [{ amount: undefined }, 'MISSING_FIELD', 'amount'],
    [{ customerId: undefined }, 'MISSING_FIELD', 'customerId'],
    [{ amount: 1.234 }, 'INVALID_INPUT', 'amount'],
    [{ amount: 0 }, 'INVALID_INPUT', 'amount'],
    [{ amount: 1_000_000.01 }, 'INVALID_INPUT', 'amount'],
    [{ orderId: 'has space' }, 'INVALID_INPUT', 'orderId'],
    [{ extra: true }, 'INVALID_INPUT', 'extra'],
  ])('rejects %p with %s naming %s and starts nothing', async (patch, code, field) => {
    const orderId = uniq('qr');
    const res = await post({ orderId, userId: 'u', amount: 10, customerId: 'c', ...patch });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError(code, { field }));
    expect(res.body.statusCode).toBe(400);
    expect(await rowOf(stack.db, orderId)).toBeUndefined();
    await expect((await paymentHandle(stack, orderId)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});

describe('bill payment QR (PROMPTPAY_BILLER_ID)', () => {
  it('emits tag 30 with Ref1 = the payment reference, Ref2, merchant name and city; a QR callback may name the payment by Ref1', async () => {
    const env = {
      PROMPTPAY_BILLER_ID: '010552300935002',
      MERCHANT_NAME: 'SALA MARKET SUKHUMVIT',
      MERCHANT_CITY: 'BANGKOK',
    };
    const app = gatewayWith(stack, env);
    const orderId = uniq('qr-bill');
    const res = await request(app.callback())
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u', amount: 123.5, customerId: 'c', ref2: 'BRANCH01' });
    expect(res.status).toBe(200);
    const ref1 = await storedRef1(stack.db, res.body.body.paymentId);
    expect(res.body.body.qr.reference).toBe(ref1);
    const payload = res.body.body.qr.payload;
    expect(verifyCrc(payload)).toBe(true);
    expect(payloadFields(payload)).toEqual({
      '00': '01',
      '01': '12',
      '30': { '00': 'A000000677010112', '01': '010552300935002', '02': ref1, '03': 'BRANCH01' },
      '53': '764',
      '54': '123.50',
      '58': 'TH',
      '59': 'SALA MARKET SUKHUMVIT',
      '60': 'BANGKOK',
      '62': { '05': ref1 },
      '63': payload.slice(-4),
    });
    const row = await waitFor(() => rowOf(stack.db, orderId));
    const cb = await postCallback(
      app,
      '/qrcallback',
      fieldSigned(stack.config, 'QR', { paymentId: ref1, status: 'success', amount: 123.5, orderId }),
    );
    expect(cb.status).toBe(200);
    await expect((await paymentHandle(stack, orderId)).result()).resolves.toEqual({
      paymentId: row.id,
      orderId,
      status: 'paid',
    });
    // another payment's reference, or the order's own derived one, does not name this payment
    for (const paymentId of [orderReference(uniq('x')), orderReference(orderId)]) {
      const wrong = await postCallback(
        app,
        '/qrcallback',
        fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 123.5, orderId }),
      );
      expect([paymentId, wrong.status]).toEqual([paymentId, 404]);
    }
  });
});

describe('QR expiry', () => {
  it('ends expired when no result arrives in time, emits the webhook, and a later signal changes nothing', async () => {
    const short = gatewayWith(stack, { QR_EXPIRY_S: '1' }); // the worker is the stack's: the expiry travels in the workflow input
    const owner = await newKey(stack.db, { scopes: ['payments:write'] });
    const k = owner.key;
    const witness = await webhookWitness(stack, owner);
    const orderId = uniq('qr-exp');
    const res = await request(short.callback())
      .post('/qrpayment')
      .set('X-API-Key', k)
      .send({ orderId, userId: 'u', amount: 9, customerId: 'c' });
    expect(res.status).toBe(200);
    const paymentId = res.body.body.paymentId;
    const handle = await paymentHandle(stack, orderId);
    await expect(handle.result()).resolves.toEqual({ paymentId, orderId, status: 'expired' });
    expect((await rowOf(stack.db, orderId)).status).toBe('expired');
    expect((await handle.describe()).searchAttributes).toMatchObject({ PaymentStatus: ['expired'] });
    await witness.received(orderId, 'expired');
    await witness.stop();

    // the payment has ended: a late success cannot reach it, and the record stays expired
    await expect(handle.signal('paymentResult', { status: 'success', provider: 'qr' })).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    expect((await rowOf(stack.db, orderId)).status).toBe('expired');
    expect(await eventsOf(stack.db, paymentId)).toEqual(['pending', 'expired']);
    expect(await stack.db('webhook_deliveries').where({ payment_id: paymentId, event_status: 'paid' })).toHaveLength(0);

    // asking again for the order returns the ended payment, not a new one
    const again = await request(short.callback())
      .post('/qrpayment')
      .set('X-API-Key', k)
      .send({ orderId, userId: 'u', amount: 9, customerId: 'c' });
    expect(again.body.body).toMatchObject({ paymentId, status: 'expired', expiresAt: res.body.body.expiresAt });
  });
});
