/**
 * Replay of orderSettlementWorkflow: recorded histories of a card order (authorised, adjusted
 * twice, finalised: partial capture) and a QR order (paid, adjusted, finalised: the difference
 * refunded) replay against today's code; a tampered one fails. Also counts the events per settled
 * order (docs/orders.md). Record again after an intended, versioned change:
 * RECORD_REPLAY_FIXTURES=orders npx jest test/replay/orders. The card order finalised above its
 * authorisation (order-card-reauth-v1; recorded after it): RECORD_REPLAY_FIXTURES=orders-card-up;
 * order-approvals-v1's fixture: RECORD_REPLAY_FIXTURES=order-approval. The card and QR flows
 * again after order-webhooks-v1 (the order.* events, an endpoint registered):
 * RECORD_REPLAY_FIXTURES=orders-webhooks. A QR order with a paid top-up since order ids are
 * scoped (order-<paymentId>, the top-up's child payment-<its paymentId>, both ids from the
 * activities' answers): RECORD_REPLAY_FIXTURES=orders-scoped.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { KeyRing } from '../../src/key-ring';
import { orderWorkflowOf } from '../orders/support';
import { findTemporalCli } from '../../src/stack/temporal';
import { AesGcmCodec, ENCRYPTED_ENCODING } from '../../src/temporal/codec';
import { historyFromJson } from '../../src/temporal/history';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { paymentWorkflowIdOf } from '../../src/payments';
import { newKey, paidQr, request } from '../payments/support';
import { registerEndpoint, startReceiver } from '../webhooks/helpers';
import { createTestStack, provenResult, testLogger, uniq, waitFor, type TestStack } from '../support/stack';

const FIXTURES = {
  card: 'order-card.history.json',
  qr: 'order-qr.history.json',
  cardUp: 'order-card-up.history.json',
  approval: 'order-approval.history.json',
  cardWebhooks: 'order-card-webhooks.history.json',
  qrWebhooks: 'order-qr-webhooks.history.json',
  qrTopUpScoped: 'order-qr-topup-scoped.history.json',
};
const fixturePath = (f: string) => path.join(__dirname, f);
type History = { events: Record<string, unknown>[] };
const load = (f: string): History => JSON.parse(fs.readFileSync(fixturePath(f), 'utf8'));

async function decrypted(node: unknown, keys: KeyRing): Promise<unknown> {
  if (Array.isArray(node)) return Promise.all(node.map((n) => decrypted(n, keys)));
  if (!node || typeof node !== 'object') return node;
  const o = node as Record<string, unknown>;
  const meta = o.metadata as Record<string, string> | undefined;
  if (meta?.encoding && Buffer.from(meta.encoding, 'base64').toString() === ENCRYPTED_ENCODING) {
    const [clear] = await new AesGcmCodec(keys).decode([
      {
        metadata: Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
        data: Buffer.from(String(o.data ?? ''), 'base64'),
      },
    ]);
    return {
      metadata: Object.fromEntries(
        Object.entries(clear.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v as Uint8Array).toString('base64')]),
      ),
      data: Buffer.from(clear.data ?? new Uint8Array()).toString('base64'),
    };
  }
  return Object.fromEntries(await Promise.all(Object.entries(o).map(async ([k, v]) => [k, await decrypted(v, keys)])));
}

async function save(stack: TestStack, orderId: string, file: string) {
  await stack.client.workflow.getHandle(await orderWorkflowOf(stack.db, orderId)).result();
  const json = spawnSync(
    findTemporalCli(process.env.TEMPORAL_CLI_PATH),
    [
      'workflow',
      'show',
      '--workflow-id',
      await orderWorkflowOf(stack.db, orderId),
      '--address',
      process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
      '--namespace',
      'default',
      '--output',
      'json',
    ],
    { encoding: 'utf8' },
  );
  if (json.status !== 0) throw new Error(`temporal workflow show failed: ${json.stderr}`);
  const clear = await decrypted(JSON.parse(json.stdout), stack.config.temporal.codecKeys);
  fs.writeFileSync(fixturePath(file), JSON.stringify(clear, null, 1) + '\n');
}

if (process.env.RECORD_REPLAY_FIXTURES === 'orders') {
  it('records a settled card order and a settled QR order', async () => {
    const stack = await createTestStack();
    try {
      const { key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
      const api = () => request(stack.app.callback());
      const card = uniq('replay-order');
      const res = await api()
        .post('/cardpayment')
        .type('form')
        .set('X-API-Key', key)
        .send({ orderId: card, userId: 'u-replay', amount: '500', token: 'tok_visa', capture: 'false' });
      await stack.client.workflow
        .getHandle(await orderWorkflowOf(stack.db, card))
        .signal(
          'paymentResult',
          provenResult(stack.config, res.body.body.paymentId, { status: 'success', provider: 'card' }),
        );
      await waitFor(() => stack.db('orders').where({ order_id: card, status: 'open' }).first());
      for (const amount of [-45.5, 12.25])
        await api()
          .post(`/orders/${card}/adjustments`)
          .set('X-API-Key', key)
          .send({ lines: [{ description: 'replay line', amount, reason: 'weight' }] });
      expect((await api().post(`/orders/${card}/finalize`).set('X-API-Key', key)).body.body.status).toBe('settled');
      await save(stack, card, FIXTURES.card);

      const qr = await paidQr(stack, key, 300, 'replay-order');
      await api()
        .post(`/orders/${qr.orderId}/adjustments`)
        .set('X-API-Key', key)
        .send({ lines: [{ description: 'replay line', amount: -20, reason: 'out_of_stock' }] });
      expect((await api().post(`/orders/${qr.orderId}/finalize`).set('X-API-Key', key)).body.body.status).toBe(
        'settled',
      );
      await save(stack, qr.orderId, FIXTURES.qr);
    } finally {
      await stack.close();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === 'orders-card-up') {
  it('records a card order finalised above its authorisation (a new authorisation of the difference)', async () => {
    const stack = await createTestStack();
    try {
      const { key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
      const api = () => request(stack.app.callback());
      const card = uniq('replay-order-up');
      const res = await api()
        .post('/cardpayment')
        .type('form')
        .set('X-API-Key', key)
        .send({ orderId: card, userId: 'u-replay', amount: '500', token: 'tok_visa', capture: 'false' });
      await stack.client.workflow
        .getHandle(await orderWorkflowOf(stack.db, card))
        .signal(
          'paymentResult',
          provenResult(stack.config, res.body.body.paymentId, { status: 'success', provider: 'card' }),
        );
      await waitFor(() => stack.db('orders').where({ order_id: card, status: 'open' }).first());
      await api()
        .post(`/orders/${card}/adjustments`)
        .set('X-API-Key', key)
        .send({ lines: [{ description: 'replay line', amount: 75, reason: 'substitution' }] });
      const fin = (await api().post(`/orders/${card}/finalize`).set('X-API-Key', key)).body.body;
      expect(fin).toMatchObject({ status: 'settled', capturedAmount: 575 });
      await save(stack, card, FIXTURES.cardUp);
    } finally {
      await stack.close();
    }
  });
}

/**
 * order-approvals-v1: a substitution approved on its page, another timed out (declined), each
 * announced (the order event order.approval_requested to an endpoint), then finalised.
 */
if (process.env.RECORD_REPLAY_FIXTURES === 'order-approval') {
  it('records a QR order with an approved and a timed-out substitution', async () => {
    const stack = await createTestStack({
      env: { ORDER_APPROVAL_THRESHOLD: '0', ORDER_APPROVAL_TIMEOUT_S: '3', ORDER_APPROVAL_DEFAULT: 'decline' },
    });
    const receiver = await startReceiver(200);
    try {
      const { key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] });
      // an endpoint: each adjustment with an approval plans its order.approval_requested delivery
      await registerEndpoint(stack, key, { url: `${receiver.url}/h`, eventTypes: ['order.approval_requested'] });
      const api = () => request(stack.app.callback());
      const qr = await paidQr(stack, key, 300, 'replay-order');
      const adjust = async (lines: unknown[]) =>
        (await api().post(`/orders/${qr.orderId}/adjustments`).set('X-API-Key', key).send({ lines })).body.body;
      const first = await adjust([
        { description: 'replay substitute', amount: 20, reason: 'substitution' },
        { description: 'replay line', amount: -50, reason: 'weight' },
      ]);
      const { url } = first.adjustments[0].lines[0].approval;
      expect((await api().post(new URL(url).pathname).send({ decision: 'approve' })).status).toBe(303);
      await adjust([{ description: 'replay substitute 2', amount: 15, reason: 'substitution' }]);
      await waitFor(() => stack.db('order_approvals').where({ order_id: qr.orderId, status: 'timed_out' }).first());
      const fin = await api().post(`/orders/${qr.orderId}/finalize`).set('X-API-Key', key);
      expect(fin.body.body).toMatchObject({ status: 'settled', finalAmount: 270 });
      await save(stack, qr.orderId, FIXTURES.approval);
      const announced = receiver.log.map((r) => JSON.parse(r.body) as { event: string; type: string });
      expect(announced).toEqual([
        expect.objectContaining({ event: 'order.updated', type: 'order.approval_requested' }),
        expect.objectContaining({ event: 'order.updated', type: 'order.approval_requested' }),
      ]);
    } finally {
      await receiver.stop();
      await stack.close();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === 'orders-webhooks') {
  it('records the card and QR orders again with their order.* webhook events (order-webhooks-v1)', async () => {
    const stack = await createTestStack();
    const receiver = await startReceiver(200);
    try {
      const { key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] });
      await registerEndpoint(stack, key, { url: receiver.url });
      const api = () => request(stack.app.callback());
      const card = uniq('replay-order-wh');
      const res = await api()
        .post('/cardpayment')
        .type('form')
        .set('X-API-Key', key)
        .send({ orderId: card, userId: 'u-replay', amount: '500', token: 'tok_visa', capture: 'false' });
      await stack.client.workflow
        .getHandle(await orderWorkflowOf(stack.db, card))
        .signal(
          'paymentResult',
          provenResult(stack.config, res.body.body.paymentId, { status: 'success', provider: 'card' }),
        );
      await waitFor(() => stack.db('orders').where({ order_id: card, status: 'open' }).first());
      for (const amount of [-45.5, 12.25])
        await api()
          .post(`/orders/${card}/adjustments`)
          .set('X-API-Key', key)
          .send({ lines: [{ description: 'replay line', amount, reason: 'weight' }] });
      expect((await api().post(`/orders/${card}/finalize`).set('X-API-Key', key)).body.body.status).toBe('settled');
      await save(stack, card, FIXTURES.cardWebhooks);

      const qr = await paidQr(stack, key, 300, 'replay-order-wh');
      await api()
        .post(`/orders/${qr.orderId}/adjustments`)
        .set('X-API-Key', key)
        .send({ lines: [{ description: 'replay line', amount: -20, reason: 'out_of_stock' }] });
      expect((await api().post(`/orders/${qr.orderId}/finalize`).set('X-API-Key', key)).body.body.status).toBe(
        'settled',
      );
      await save(stack, qr.orderId, FIXTURES.qrWebhooks);
      expect(receiver.log.filter((r) => r.body.includes('"event":"order.updated"'))).toHaveLength(6);
    } finally {
      await stack.close();
      await receiver.stop();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === 'orders-scoped') {
  it('records a QR order finalised above what was paid, its top-up paid (scoped ids)', async () => {
    const stack = await createTestStack();
    try {
      const { key } = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
      const api = () => request(stack.app.callback());
      const qr = await paidQr(stack, key, 300, 'replay-order-top');
      await api()
        .post(`/orders/${qr.orderId}/adjustments`)
        .set('X-API-Key', key)
        .send({ lines: [{ description: 'replay line', amount: 20.5, reason: 'weight' }] });
      const fin = (await api().post(`/orders/${qr.orderId}/finalize`).set('X-API-Key', key)).body.body;
      expect(fin.status).toBe('awaiting_topup');
      const top = stack.client.workflow.getHandle(paymentWorkflowIdOf(fin.topUps[0].paymentId));
      await waitFor(async () => !!(await top.describe().catch(() => undefined)), 20_000, 'top-up started');
      await top.signal(
        'paymentResult',
        provenResult(stack.config, fin.topUps[0].paymentId, { status: 'success', provider: 'qr' }),
      );
      await save(stack, qr.orderId, FIXTURES.qrTopUpScoped);
    } finally {
      await stack.close();
    }
  });
}

describe('recorded order histories replay against the current workflow code', () => {
  beforeAll(() => installTemporalRuntime(testLogger, 'WARN'));
  const replayOptions = () => ({ workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! } });

  it('are complete histories of orderSettlementWorkflow ending settled; events per settled order', () => {
    const counts: Record<string, number> = {};
    for (const [kind, file] of Object.entries(FIXTURES)) {
      const h = load(file);
      const started = h.events[0].workflowExecutionStartedEventAttributes as { workflowType: { name: string } };
      expect(started.workflowType.name).toBe('orderSettlementWorkflow');
      const last = h.events[h.events.length - 1] as {
        eventType: string;
        workflowExecutionCompletedEventAttributes: { result: { payloads: { data: string }[] } };
      };
      expect(last.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
      const result = JSON.parse(
        Buffer.from(last.workflowExecutionCompletedEventAttributes.result.payloads[0].data, 'base64').toString(),
      );
      expect(result.status).toBe('settled');
      counts[kind] = h.events.length;
    }
    // docs/orders.md "Measured" quotes these counts: a change of shape must update it
    expect(counts).toEqual({
      card: expect.any(Number),
      qr: expect.any(Number),
      cardUp: expect.any(Number),
      approval: expect.any(Number),
      cardWebhooks: expect.any(Number),
      qrWebhooks: expect.any(Number),
      qrTopUpScoped: expect.any(Number),
    });
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'orders.md'), 'utf8');
    expect(doc).toContain(`card order: ${counts.card} events`);
    expect(doc).toContain(`QR order: ${counts.qr} events`);
    expect(doc).toContain(`card order above its authorisation: ${counts.cardUp} events`);
    expect(doc).toContain(`QR order with two approvals: ${counts.approval} events`);
    expect(doc).toContain(`card order with its order events: ${counts.cardWebhooks} events`);
    expect(doc).toContain(`QR order with its order events: ${counts.qrWebhooks} events`);
    expect(doc).toContain(`QR order with a paid top-up: ${counts.qrTopUpScoped} events`);
    // the histories recorded after order-webhooks-v1 carry its marker; those before do not
    const marked = (f: string) =>
      load(f).events.some((e) => {
        const m = e.markerRecordedEventAttributes as
          { markerName: string; details: { 'patch-data': { payloads: { data: string }[] } } } | undefined;
        if (m?.markerName !== 'core_patch') return false;
        const data = Buffer.from(m.details['patch-data'].payloads[0].data, 'base64').toString();
        return (JSON.parse(data) as { id: string }).id === 'order-webhooks-v1';
      });
    expect([FIXTURES.card, FIXTURES.qr, FIXTURES.cardUp].map(marked)).toEqual([false, false, false]);
    // the approval requests are order events (issue 37): re-recorded with the marker
    expect([FIXTURES.approval, FIXTURES.cardWebhooks, FIXTURES.qrWebhooks].map(marked)).toEqual([true, true, true]);
    // since order ids are scoped the top-up's child is its payment's own workflow, payment-pay_...
    const children = load(FIXTURES.qrTopUpScoped)
      .events.map(
        (e) =>
          (e.startChildWorkflowExecutionInitiatedEventAttributes as { workflowId: string } | undefined)?.workflowId,
      )
      .filter(Boolean);
    expect(children).toEqual([expect.stringMatching(/^payment-pay_[0-9a-f]{32}$/)]);
  });

  it('replay without a determinism error', async () => {
    const histories = Object.values(FIXTURES).map((f, i) => ({
      workflowId: `replay-order-${i}`,
      history: historyFromJson(load(f)),
    }));
    const results = [];
    for await (const r of Worker.runReplayHistories(replayOptions(), histories)) results.push(r);
    expect(results).toHaveLength(Object.keys(FIXTURES).length);
    for (const r of results) expect(r.error).toBeUndefined();
  });

  it('a history that disagrees with the code fails the replay (the check can fail)', async () => {
    const h = load(FIXTURES.card);
    // the first activity the workflow scheduled, renamed: the code schedules another one
    const scheduled = h.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED') as
      { activityTaskScheduledEventAttributes: { activityType: { name: string } } } | undefined;
    const marker = h.events.find((e) => e.eventType === 'EVENT_TYPE_MARKER_RECORDED') as
      { markerRecordedEventAttributes: { markerName: string } } | undefined;
    if (scheduled) scheduled.activityTaskScheduledEventAttributes.activityType.name = 'notAnActivity';
    else marker!.markerRecordedEventAttributes.markerName = 'notAMarker';
    const result = await Worker.runReplayHistory(replayOptions(), historyFromJson(h), 'replay-order-tampered').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(result).toBeInstanceOf(DeterminismViolationError);
  });
});
