/**
 * Costlier substitutions wait for the customer (docs/orders.md "Approvals"), on the real stack: a
 * substitution line above ORDER_APPROVAL_THRESHOLD (here 5 THB) gets a signed approval link in the
 * adjustment's answer; finalize is 409 while it waits; approved it counts, declined or timed out
 * (ORDER_APPROVAL_TIMEOUT_S, here 8 s, default decline) it does not; the order event
 * order.approval_requested carries the links (signed outside the workflow's history). The page: a
 * second decision changes nothing; tampered, foreign and expired links are refused; the
 * workflow's decideApproval update without the gateway's proof decides nothing.
 */
import type { Client } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { orderWorkflowOf } from './support';
import { signApprovalToken } from '../../src/orders/approval-token';
import { signOrderStep } from '../../src/proofs';
import { createTestStack, outsiderTemporalClient, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paidQr, request } from '../payments/support';
import { registerEndpoint, startReceiver, verifiesWithStandardWebhooks, type Receiver } from '../webhooks/helpers';

let stack: TestStack;
let raw: Client;
let key: string;
let other: string;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver(200);
  stack = await createTestStack({
    env: { ORDER_APPROVAL_THRESHOLD: '5', ORDER_APPROVAL_TIMEOUT_S: '8', ORDER_APPROVAL_DEFAULT: 'decline' },
  });
  raw = await outsiderTemporalClient();
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] })).key;
  other = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
});
afterAll(async () => {
  await raw.connection.close();
  await stack.close();
  await receiver.stop();
});

const api = () => request(stack.app.callback());
const adjust = (orderId: string, lines: unknown[]) =>
  api().post(`/orders/${orderId}/adjustments`).set('X-API-Key', key).send({ lines });
const finalize = (orderId: string) => api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key).send();
const orderOf = async (orderId: string) => (await api().get(`/orders/${orderId}`).set('X-API-Key', key)).body.body;
const pathOf = (url: string) => new URL(url).pathname;
const decide = (url: string, decision: string, lang = 'en') =>
  api()
    .post(`${pathOf(url)}?lang=${lang}`)
    .type('form')
    .send({ decision });
const approvalRow = (id: string) => stack.db('order_approvals').where({ id }).first();

const costlier = { description: 'Milk 1 L: organic brand instead', amount: 12, reason: 'substitution' };
const cheaper = { description: 'Yoghurt: another flavour', amount: 3, reason: 'substitution' };
const lighter = { description: 'Chicken weighed less', amount: -20, reason: 'weight' };

/** A paid 100 THB QR order adjusted with the costlier substitution; its approval as answered. */
async function waitingOrder(lines = [costlier, cheaper, lighter]) {
  const { orderId } = await paidQr(stack, key, 100, 'oa');
  const res = await adjust(orderId, lines);
  expect(res.status).toBe(200);
  const [line, ...rest] = res.body.body.adjustments[0].lines;
  for (const l of rest) expect(l.approval).toBeUndefined(); // below the threshold, or not a substitution
  expect(line.approval).toMatchObject({
    status: 'pending',
    decidedAt: null,
    approvalId: expect.stringMatching(/^apr_/),
  });
  return { orderId, approval: line.approval as { approvalId: string; url: string; expiresAt: string } };
}

it('the defaults docs/configuration.md gives: above 50 THB, 1800 s, then decline', () => {
  expect(loadConfig({}).orders).toMatchObject({
    approvalThresholdSatang: 5000,
    approvalTimeoutSeconds: 1800,
    approvalDefault: 'decline',
  });
});

describe('the customer approves or declines a costlier substitution', () => {
  it('approved: finalize is 409 while it waits, then the line counts; a second decision changes nothing', async () => {
    const { orderId, approval } = await waitingOrder();
    const early = await finalize(orderId);
    expect(early.status).toBe(409);
    expect(early.body.body.error).toMatch(/waits for the customer's approval/);
    expect((await orderOf(orderId)).status).toBe('open');

    const page = await api().get(pathOf(approval.url)).set('Accept-Language', 'en');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/form-action 'self'/);
    expect(page.text).toContain('Milk 1 L: organic brand instead');
    expect(page.text).toMatch(/<dd id="amount">\+(THB|฿)\s?12\.00<\/dd>/);
    const yes = await decide(approval.url, 'approve');
    expect(yes.status).toBe(303);
    expect(yes.headers.location).toBe(`${pathOf(approval.url)}?lang=en`);
    expect((await approvalRow(approval.approvalId)).status).toBe('approved');
    // the first decision stands: the page answers it (200), nothing recorded
    const again = await decide(approval.url, 'decline');
    expect(again.status).toBe(200);
    expect(again.text).toContain('You approved the substitution');
    expect(await approvalRow(approval.approvalId)).toMatchObject({ status: 'approved', requested: 'approve' });
    expect((await api().get(pathOf(approval.url))).text).toContain('You approved the substitution');

    const fin = await finalize(orderId);
    expect(fin.status).toBe(200);
    expect(fin.body.body).toMatchObject({ status: 'settled', finalAmount: 95, refundedAmount: 5 });
    expect(fin.body.body.adjustments[0].lines[0].approval).toMatchObject({
      status: 'approved',
      decidedAt: expect.any(String),
    });
  });

  it('declined: the line is not in the final amount', async () => {
    const { orderId, approval } = await waitingOrder([costlier, lighter]);
    const no = await decide(approval.url, 'decline', 'th');
    expect(no.status).toBe(303);
    const th = await api().get(no.headers.location);
    expect(th.text).toContain('คุณปฏิเสธสินค้าทดแทนแล้ว');
    expect((await approvalRow(approval.approvalId)).status).toBe('declined');
    const fin = await finalize(orderId);
    expect(fin.body.body).toMatchObject({ status: 'settled', finalAmount: 80, refundedAmount: 20 });
    expect(fin.body.body.adjustments[0].lines[0].approval.status).toBe('declined');
  });

  it('timed out: the shop default (decline) applies durably; a decision after that changes nothing', async () => {
    const { orderId, approval } = await waitingOrder([costlier, lighter]);
    const timedOut = await waitFor(
      async () => {
        const o = await orderOf(orderId);
        return o.adjustments[0].lines[0].approval.status === 'timed_out' ? o : undefined;
      },
      30_000,
      'the approval timed out',
    );
    expect(timedOut.status).toBe('open');
    expect(await approvalRow(approval.approvalId)).toMatchObject({ counted: false, requested: null });
    expect((await decide(approval.url, 'approve')).status).toBe(200);
    expect((await approvalRow(approval.approvalId)).status).toBe('timed_out');
    expect((await api().get(pathOf(approval.url))).text).toContain('as the shop set, the substitution was declined');
    expect((await finalize(orderId)).body.body).toMatchObject({ status: 'settled', finalAmount: 80 });
  });

  it('a card order: the approved substitution is captured with the rest', async () => {
    const orderId = uniq('oa-card');
    const res = await api()
      .post('/cardpayment')
      .type('form')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u-1', amount: '100', token: 'tok_test_visa', capture: 'false' });
    await stack.client.workflow
      .getHandle(await orderWorkflowOf(stack.db, orderId))
      .signal(
        'paymentResult',
        provenResult(stack.config, res.body.body.paymentId, { status: 'success', provider: 'card' }),
      );
    await waitFor(async () => (await orderOf(orderId)).status === 'open', 20_000, 'open');
    const adj = await adjust(orderId, [{ ...costlier, amount: 8 }]);
    const { url } = adj.body.body.adjustments[0].lines[0].approval;
    expect((await decide(url, 'approve')).status).toBe(303);
    expect((await finalize(orderId)).body.body).toMatchObject({ status: 'settled', capturedAmount: 108 });
  });
});

/** Every payload of a workflow's history in clear (decrypted as Temporal Web's codec endpoint would). */
async function historyInClear(workflowId: string): Promise<string> {
  const { AesGcmCodec } = await import('../../src/temporal/codec');
  const codec = new AesGcmCodec(stack.config.temporal.codecKeys);
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const payloads: unknown[] = [];
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    if (v instanceof Uint8Array) return;
    const o = v as { data?: unknown; metadata?: unknown };
    if (o.data instanceof Uint8Array && o.metadata && typeof o.metadata === 'object') payloads.push(v);
    else for (const x of Object.values(v)) walk(x);
  };
  walk(history.events);
  const clear = await Promise.all(payloads.map((p) => codec.decode([p as never]).catch(() => [p as never])));
  return clear.map(([p]) => Buffer.from((p as { data: Uint8Array }).data).toString('utf8')).join('\n');
}

describe('order.approval_requested: one of the order events (order.updated)', () => {
  it('carries the links; subscribers of it, of order.updated and endpoints without a filter get it', async () => {
    const ep = await registerEndpoint(stack, key, {
      url: `${receiver.url}/approvals`,
      eventTypes: ['order.approval_requested'],
    });
    const every = await registerEndpoint(stack, key, { url: `${receiver.url}/every` });
    const steps = await registerEndpoint(stack, key, { url: `${receiver.url}/steps`, eventTypes: ['order.updated'] });
    const adjusted = await registerEndpoint(stack, key, {
      url: `${receiver.url}/adjusted`,
      eventTypes: ['order.adjusted'],
    });
    const { orderId, approval } = await waitingOrder([costlier, lighter]);
    const hook = await waitFor(
      async () => receiver.log.find((r) => r.path.endsWith('/approvals') && r.body.includes(approval.approvalId)),
      20_000,
      'order.approval_requested',
    );
    expect(verifiesWithStandardWebhooks(hook, ep.secret)).toBe(true);
    const body = JSON.parse(hook.body);
    const { adjustment_id: adjustmentId } = await stack
      .db('order_approvals')
      .where({ id: approval.approvalId })
      .first('adjustment_id');
    expect(Object.keys(body)).toEqual(['event', 'type', 'data']);
    expect(body).toMatchObject({
      event: 'order.updated',
      type: 'order.approval_requested',
      data: {
        orderId,
        paymentId: expect.stringMatching(/^pay_/),
        mode: 'sandbox',
        timestamp: expect.any(String),
        adjustmentId,
        approvals: [
          {
            approvalId: approval.approvalId,
            description: costlier.description,
            amount: 12,
            status: 'pending',
            url: approval.url,
            expiresAt: approval.expiresAt,
          },
        ],
      },
    });
    // the link from the webhook opens the page
    expect((await api().get(pathOf(body.data.approvals[0].url))).status).toBe(200);
    // the subscribed endpoint takes only this type: none of the order's other events reached it
    expect(receiver.log.filter((r) => r.path.endsWith('/approvals') && r.body.includes(orderId))).toHaveLength(1);
    // one message per endpoint and adjustment, planned with the order's other events' rule
    const planned = await stack
      .db('webhook_deliveries')
      .where({ order_id: orderId, event_status: `order.approval_requested:${adjustmentId}` })
      .select('endpoint_id');
    expect(planned.map((d) => String(d.endpoint_id)).sort()).toEqual([ep.id, every.id, steps.id].map(String).sort());
    for (const path of ['/every', '/steps'])
      await waitFor(
        async () => receiver.log.find((r) => r.path.endsWith(path) && r.body.includes(approval.approvalId)),
        20_000,
        `order.approval_requested at ${path}`,
      );
    expect(receiver.log.some((r) => r.path.endsWith('/adjusted') && r.body.includes('order.approval_requested'))).toBe(
      false,
    );
    // the signed link is in no payload of the order's workflow history, decrypted
    const token = pathOf(approval.url).split('/')[2];
    const history = await historyInClear(await orderWorkflowOf(stack.db, orderId));
    expect(history).toContain(adjustmentId);
    expect(history).not.toContain(token);
    for (const e of [ep, every, steps, adjusted])
      await request(stack.app.callback()).delete(`/webhooks/endpoints/${e.id}`).set('X-API-Key', key);
  });
});

describe('the approval door', () => {
  it('tampered, foreign and expired links are refused; a bad decision is 400; nothing is decided', async () => {
    const { approval } = await waitingOrder([costlier, lighter]);
    const token = pathOf(approval.url).split('/')[2];
    const [id, exp, tag] = token.split('.');
    const flipped = `${id}.${exp}.${tag[0] === 'A' ? 'B' : 'A'}${tag.slice(1)}`;
    const foreign = signApprovalToken('another-secret-of-another-gateway', id, Date.now() + 60_000);
    const expired = signApprovalToken(stack.config.identity.secret, id, Date.now() - 2 * 86_400_000);
    for (const [t, status] of [
      [flipped, 404],
      [foreign, 404],
      [`${id}.${exp}`, 404],
      [expired, 410],
    ] as const) {
      expect((await api().get(`/approvals/${t}`)).status).toBe(status);
      expect((await api().post(`/approvals/${t}`).type('form').send({ decision: 'approve' })).status).toBe(status);
    }
    const bad = await api().post(pathOf(approval.url)).type('form').send({ decision: 'maybe' });
    expect(bad.status).toBe(400);
    expect(await approvalRow(approval.approvalId)).toMatchObject({ status: 'pending', requested: null });
  });

  it("another merchant's key and no key see nothing of the order's approvals", async () => {
    const { orderId } = await waitingOrder([costlier, lighter]);
    const foreign = await api().get(`/orders/${orderId}`).set('X-API-Key', other);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain('apr_');
    expect((await api().get(`/orders/${orderId}`)).status).toBe(401);
  });

  it('a raw decideApproval update without the proof (none, made up, or of another kind) decides nothing', async () => {
    const { orderId, approval } = await waitingOrder([costlier, lighter]);
    const stepId = approval.approvalId;
    // as an outsider would: the decision written on the row, then the update without a valid proof
    await stack.db('order_approvals').where({ id: stepId }).update({ requested: 'approve' });
    const attempts = [
      null,
      { stepId },
      { stepId, proof: '0'.repeat(64) },
      { stepId, proof: signOrderStep(stack.config.results.signingKey, { kind: 'adjust', stepId, orderId }) },
    ];
    for (const req of attempts) {
      const out = await raw.workflow
        .getHandle(await orderWorkflowOf(stack.db, orderId))
        .executeUpdate('decideApproval', { args: [req] })
        .catch((e: Error) => ({ error: e.message }));
      expect(out).not.toMatchObject({ ok: true });
    }
    expect((await approvalRow(stepId)).status).toBe('pending');
  });

  it("an adjust update replayed with the gateway's proof (copied from a history) adds no second wait", async () => {
    const { orderId, approval } = await waitingOrder([costlier, lighter]);
    const adjustmentId = (await approvalRow(approval.approvalId)).adjustment_id as string;
    const proof = signOrderStep(stack.config.results.signingKey, { kind: 'adjust', stepId: adjustmentId, orderId });
    // a client with the codec (the raw one cannot read the encrypted answer)
    const again = await stack.client.workflow
      .getHandle(await orderWorkflowOf(stack.db, orderId))
      .executeUpdate('adjust', { args: [{ stepId: adjustmentId, proof }], updateId: uniq('copied') });
    expect(again).toMatchObject({ ok: true });
    expect(await stack.db('order_approvals').where({ order_id: orderId })).toHaveLength(1);
    expect((await decide(approval.url, 'approve')).status).toBe(303);
    const fin = await finalize(orderId);
    expect(fin.body.body).toMatchObject({ status: 'settled', finalAmount: 92 });
  });
});
