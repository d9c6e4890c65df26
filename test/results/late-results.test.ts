/**
 * Issue 14, item 2: a provider's result that contradicts a settled payment was answered
 * "Callback processed" and silently dropped. Now it is a conflict: receipt outcome `conflict`,
 * 200 with a message that says so, one administrator e-mail, an entry in the order's timeline,
 * and for a success on an expired or failed payment LATE_PAYMENT_POLICY: refund (the amount back
 * through the provider, a refunds row) or review (GET /late-payments). Both windows: the payment
 * row already settled when the callback comes (the gateway sees it), and the payment workflow
 * that had decided while the signal was on its way (its handler sees it).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { lateResultWorkflowId, paymentWorkflowIdOf, type LateResultOutcome } from '../../src/payments';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { fieldSigned, headerSigned, post } from '../callbacks/helpers';
import { newKey } from '../payments/support';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';

jest.setTimeout(180_000);

let smtp: SmtpSink;
/** LATE_PAYMENT_POLICY=refund (the default) */
let refund: TestStack;
/** LATE_PAYMENT_POLICY=review */
let review: TestStack;
const keys = new Map<TestStack, { key: string; id: string }>();

beforeAll(async () => {
  smtp = await startSmtpSink();
  const env = { SMTP_URL: smtp.url, QR_EXPIRY_S: '1' };
  refund = await createTestStack({ env });
  review = await createTestStack({ env: { ...env, LATE_PAYMENT_POLICY: 'review' } });
  for (const s of [refund, review]) keys.set(s, await newKey(s.db, { scopes: ['payments:write', 'payments:read'] }));
});
afterAll(async () => {
  await review.close();
  await refund.close();
  await smtp.stop();
});

interface Payment {
  orderId: string;
  paymentId: string;
  amount: number;
}

async function qrPayment(stack: TestStack, amount = 64.25, key = keys.get(stack)!.key): Promise<Payment> {
  const orderId = uniq('late');
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount, customerId: 'c-1' });
  expect(res.status).toBe(200);
  return { orderId, paymentId: res.body.body.paymentId, amount };
}

const settled = (stack: TestStack, p: Payment) =>
  stack.client.workflow.getHandle(paymentWorkflowIdOf(p.paymentId)).result() as Promise<{ status: string }>;
const qrCallback = (stack: TestStack, p: Payment, status: 'success' | 'failed') =>
  post(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', { paymentId: p.paymentId, status, amount: p.amount, orderId: p.orderId }),
  );
const bankappCallback = (stack: TestStack, p: Payment, success: boolean) =>
  post(
    stack.app,
    '/bankappcallback',
    headerSigned(stack.config, 'BANKAPP', 'json', {
      orderId: p.orderId,
      paymentId: p.paymentId,
      success,
      userId: 'u-1',
      amount: p.amount,
    }),
  );
const lateOutcome = (stack: TestStack, p: Payment, status: 'success' | 'failed') =>
  stack.client.workflow.getHandle(lateResultWorkflowId(p.paymentId, status)).result() as Promise<LateResultOutcome>;
const conflictsOf = (stack: TestStack, p: Payment) => stack.db('payment_conflicts').where({ payment_id: p.paymentId });
const mailsAbout = (p: Payment) => smtp.messages.filter((m) => m.subject.includes(p.orderId));
const statusOf = async (stack: TestStack, p: Payment) =>
  (await stack.db('payments').where({ id: p.paymentId }).first()).status as string;
const timeline = async (stack: TestStack, p: Payment) =>
  (await request(stack.app.callback()).get(`/payments/${p.orderId}/timeline`).set('X-API-Key', keys.get(stack)!.key))
    .body.body.entries as { type: string; details: Record<string, unknown> }[];

/** The conflict answer: 200 in the callback envelope, saying it is a conflict and not to retry. */
function expectConflictAnswer(res: request.Response, p: Payment, status: string, paymentStatus: string) {
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    statusCode: 200,
    body: {
      message: expect.stringMatching(
        new RegExp(
          `^Callback recorded as a conflict: the payment had already ended ${paymentStatus};.*Do not retry\\.$`,
        ),
      ),
      orderId: p.orderId,
      status,
    },
  });
}

describe('LATE_PAYMENT_POLICY=refund (default)', () => {
  it('a success after the payment expired: conflict, 200 saying so, refunded through the provider, one e-mail, in the timeline, no paid webhook', async () => {
    const p = await qrPayment(refund);
    await expect(settled(refund, p)).resolves.toMatchObject({ status: 'expired' });

    const res = await qrCallback(refund, p, 'success');
    expectConflictAnswer(res, p, 'success', 'expired');
    expect(res.body.body.message).toContain('the payment will be refunded automatically');
    await expect(lateOutcome(refund, p, 'success')).resolves.toMatchObject({
      verdict: 'recorded',
      resolution: 'refunded',
    });

    expect(await refund.db('callback_receipts').where({ payment_id: p.paymentId }).pluck('outcome')).toEqual([
      'conflict',
    ]);
    expect(await statusOf(refund, p)).toBe('expired');
    const [c] = await conflictsOf(refund, p);
    expect(c).toMatchObject({
      result_status: 'success',
      payment_status: 'expired',
      provider: 'qr',
      resolution: 'refunded',
    });
    const refunds = await refund.db('refunds').where({ payment_id: p.paymentId });
    expect(refunds).toEqual([
      expect.objectContaining({ id: c.refund_id, status: 'succeeded', amount_satang: String(p.amount * 100) }),
    ]);
    expect(refunds[0].provider_ref).toBeTruthy();
    const mails = mailsAbout(p);
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toContain('qr success after the payment expired');
    expect(mails[0].text).toContain('refunded in full through the provider');

    const entries = await timeline(refund, p);
    expect(entries.find((e) => e.type === 'payment.conflict')?.details).toMatchObject({
      result: 'success',
      paymentStatus: 'expired',
      resolution: 'refunded',
    });
    expect(entries.find((e) => e.type === 'callback.received')?.details).toMatchObject({ outcome: 'conflict' });
    expect(await refund.db('webhook_deliveries').where({ payment_id: p.paymentId, event_status: 'paid' })).toEqual([]);
  });

  it('a success after the payment failed: conflict, refunded', async () => {
    const p = await qrPayment(refund, 30.5);
    expect((await qrCallback(refund, p, 'failed')).body.body.message).toBe('Callback processed');
    await expect(settled(refund, p)).resolves.toMatchObject({ status: 'failed' });

    expectConflictAnswer(await qrCallback(refund, p, 'success'), p, 'success', 'failed');
    await expect(lateOutcome(refund, p, 'success')).resolves.toMatchObject({ resolution: 'refunded' });
    expect(await statusOf(refund, p)).toBe('failed');
    expect(
      await refund.db('callback_receipts').where({ payment_id: p.paymentId }).orderBy('created_at').pluck('outcome'),
    ).toEqual(['signalled', 'conflict']);
    expect(await refund.db('refunds').where({ payment_id: p.paymentId }).pluck('status')).toEqual(['succeeded']);
    expect(mailsAbout(p)).toHaveLength(1);
  });

  it('a failure after the payment was paid: conflict, the payment stays paid, nothing refunded, one e-mail', async () => {
    const p = await qrPayment(refund);
    // paid at once, before the 1 s expiry
    expect((await qrCallback(refund, p, 'success')).body.body.message).toBe('Callback processed');
    await expect(settled(refund, p)).resolves.toMatchObject({ status: 'paid' });

    const res = await qrCallback(refund, p, 'failed');
    expectConflictAnswer(res, p, 'failed', 'paid');
    expect(res.body.body.message).toContain('the payment keeps its status');
    await expect(lateOutcome(refund, p, 'failed')).resolves.toMatchObject({
      verdict: 'recorded',
      resolution: 'recorded',
    });
    expect(await statusOf(refund, p)).toBe('paid');
    expect(await conflictsOf(refund, p)).toEqual([
      expect.objectContaining({
        result_status: 'failed',
        payment_status: 'paid',
        resolution: 'recorded',
        refund_id: null,
      }),
    ]);
    expect(await refund.db('refunds').where({ payment_id: p.paymentId })).toEqual([]);
    expect(mailsAbout(p)).toHaveLength(1);
    expect(mailsAbout(p)[0].subject).toContain('qr failed after the payment paid');
  });

  it('the same conflict again (a retry, another provider) gets the same answer and costs no second e-mail or refund', async () => {
    const p = await qrPayment(refund, 12);
    await expect(settled(refund, p)).resolves.toMatchObject({ status: 'expired' });
    const first = await qrCallback(refund, p, 'success');
    expectConflictAnswer(first, p, 'success', 'expired');
    await lateOutcome(refund, p, 'success');
    const again = await qrCallback(refund, p, 'success');
    expect(again.body).toEqual(first.body);
    const other = await bankappCallback(refund, p, true);
    expectConflictAnswer(other, p, 'success', 'expired');
    // one resolution per payment and status: the second conflict found the first one's workflow
    await expect(lateOutcome(refund, p, 'success')).resolves.toMatchObject({
      verdict: 'recorded',
      resolution: 'refunded',
    });
    expect(await refund.db('callback_receipts').where({ payment_id: p.paymentId }).pluck('outcome')).toEqual([
      'conflict',
      'conflict',
    ]);
    expect(await conflictsOf(refund, p)).toHaveLength(1);
    expect(await refund.db('refunds').where({ payment_id: p.paymentId })).toHaveLength(1);
    expect(mailsAbout(p)).toHaveLength(1);
  });

  it('the race: the workflow had decided `expired` when the signal came (Temporal accepted it): recorded and refunded, not dropped', async () => {
    // a webhook endpoint that answers after 3 s holds the expiry's settle step open: the workflow
    // has decided `expired` and still runs, as when the timer and the callback are 28 ms apart
    const slow = await slowReceiver(3000);
    const owner = await newKey(refund.db, { scopes: ['payments:write', 'payments:read'] });
    await createEndpoint(refund.db, refund.config, { id: owner.id, mode: 'sandbox' }, { url: slow.url });
    try {
      const p = await qrPayment(refund, 20, owner.key);
      await waitFor(async () => slow.requests > 0, 20_000, 'the expired webhook attempt');
      await refund.client.workflow
        .getHandle(paymentWorkflowIdOf(p.paymentId))
        .signal(
          'paymentResult',
          provenResult(refund.config, p.paymentId, { status: 'success', provider: 'qr', reference: 'txn-race' }),
        );
      await expect(settled(refund, p)).resolves.toMatchObject({ status: 'expired' });
      expect(await conflictsOf(refund, p)).toEqual([
        expect.objectContaining({
          result_status: 'success',
          payment_status: 'expired',
          resolution: 'refunded',
          reference: 'txn-race',
          handled_by: paymentWorkflowIdOf(p.paymentId),
        }),
      ]);
      expect(await refund.db('refunds').where({ payment_id: p.paymentId }).pluck('status')).toEqual(['succeeded']);
      expect(mailsAbout(p)).toHaveLength(1);
      expect(await statusOf(refund, p)).toBe('expired');
      // and no paid webhook: the endpoint got the expired event only
      expect(slow.bodies.map((b) => JSON.parse(b).data.status)).toEqual(['expired']);
    } finally {
      await slow.stop();
    }
  });
});

describe('LATE_PAYMENT_POLICY=review', () => {
  it('a success after the payment expired is listed in GET /late-payments for a person, nothing refunded, one e-mail', async () => {
    const p = await qrPayment(review, 77);
    await expect(settled(review, p)).resolves.toMatchObject({ status: 'expired' });
    const res = await qrCallback(review, p, 'success');
    expectConflictAnswer(res, p, 'success', 'expired');
    expect(res.body.body.message).toContain('the payment is listed for review');
    await expect(lateOutcome(review, p, 'success')).resolves.toMatchObject({ resolution: 'review' });

    expect(await review.db('refunds').where({ payment_id: p.paymentId })).toEqual([]);
    expect(mailsAbout(p)).toHaveLength(1);
    expect(mailsAbout(p)[0].text).toContain('listed for review');

    const list = await request(review.app.callback())
      .get('/late-payments?resolution=review')
      .set('X-API-Key', keys.get(review)!.key);
    expect(list.status).toBe(200);
    expect(list.body.body.latePayments).toContainEqual(
      expect.objectContaining({
        orderId: p.orderId,
        paymentId: p.paymentId,
        provider: 'qr',
        paymentStatus: 'expired',
        amount: 77,
        resolution: 'review',
        refundId: null,
      }),
    );
    // another integrator's key does not see it; a key without payments:read is refused
    const other = await newKey(review.db, { scopes: ['payments:read'] });
    const seen = await request(review.app.callback()).get('/late-payments').set('X-API-Key', other.key);
    expect(seen.body.body.latePayments.map((l: { orderId: string }) => l.orderId)).not.toContain(p.orderId);
    const writer = await newKey(review.db, { scopes: ['payments:write'] });
    expect((await request(review.app.callback()).get('/late-payments').set('X-API-Key', writer.key)).status).toBe(403);
    expect(
      (await request(review.app.callback()).get('/late-payments?resolution=nope').set('X-API-Key', other.key)).status,
    ).toBe(400);
  });

  it('GET /late-payments and the conflict answer are in /openapi.json', async () => {
    const doc = (await request(review.app.callback()).get('/openapi.json')).body;
    const op = doc.paths['/late-payments'].get;
    expect(op.security).toEqual([{ ApiKeyAuth: [] }]);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'starting_after', 'resolution']),
    );
    expect(doc.components.schemas.LatePayment.required).toEqual(
      expect.arrayContaining(['orderId', 'paymentId', 'paymentStatus', 'amount', 'resolution']),
    );
    expect(doc.paths['/qrcallback'].post.responses['200'].description).toContain('conflict');
  });

  it('a success after the payment failed is listed for review too', async () => {
    const p = await qrPayment(review, 15);
    await qrCallback(review, p, 'failed');
    await expect(settled(review, p)).resolves.toMatchObject({ status: 'failed' });
    expectConflictAnswer(await bankappCallback(review, p, true), p, 'success', 'failed');
    await expect(lateOutcome(review, p, 'success')).resolves.toMatchObject({ resolution: 'review' });
    expect(await conflictsOf(review, p)).toEqual([
      expect.objectContaining({ provider: 'bankapp', payment_status: 'failed', resolution: 'review' }),
    ]);
    expect(mailsAbout(p)).toHaveLength(1);
  });
});

/** A webhook endpoint that answers 200 after `delayMs`. */
async function slowReceiver(
  delayMs: number,
): Promise<{ url: string; requests: number; bodies: string[]; stop(): Promise<void> }> {
  const state = { url: '', requests: 0, bodies: [] as string[], stop: async () => undefined as void };
  const server = http.createServer((req, res) => {
    state.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.bodies.push(Buffer.concat(chunks).toString('utf8'));
      setTimeout(() => res.writeHead(200).end('ok'), delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  state.stop = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}
