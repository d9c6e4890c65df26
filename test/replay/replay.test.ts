/**
 * Replay: the recorded histories of a completed card payment, a completed QR payment and an
 * order's refunds workflow (a partial and a full refund; fixtures beside this file) must replay
 * against today's workflow code, so a change that breaks determinism fails CI. A tampered
 * history proves the check can fail.
 *
 * Two shapes of each are kept: the first recorded (before lean-payment-v1: recordPayment and
 * updatePaymentStatus activities, a webhook delivery child) and the lean one (the patch marker,
 * local activities, no child when the first webhook attempt succeeds). Workflows in flight when
 * a worker is upgraded replay the shape they began with.
 *
 * Record the current shape after an intended, versioned change (new file names in RECORDED):
 * RECORD_REPLAY_FIXTURES=1 npx jest test/replay
 * (RECORD_REPLAY_FIXTURES=refunds records only the refunds history; =bulkhead only the bulkhead one).
 * refunds.history.json is the refunds shape before refund-record-v1; refunds-record the one since.
 *
 * bulkhead-v1 (a third QR shape): the first webhook attempt failed, so the payment workflow
 * starts its webhookRetryWorkflow child on the webhooks task queue, behind the patch marker.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import request from 'supertest';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { OrderIdKey } from '../../src/domain/search-attributes';
import { Patch, taskQueueOf } from '../../src/domain/temporal';
import { paymentWorkflowId, PaymentWorkflowType } from '../../src/payments';
import { webhookDeliveryWorkflowId, webhookKeepTryingWorkflowId, WebhookWorkflowType } from '../../src/webhooks';
import { refundsWorkflowId, refundUpdate, RefundsWorkflowType, type OrderRefundsWorkflow } from '../../src/refunds';
import { findTemporalCli } from '../../src/stack/temporal';
import type { KeyRing } from '../../src/key-ring';
import { decrypted } from '../support/history';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { newKey, resultAware } from '../payments/support';
import { startSmtpSink } from '../../src/simulators/smtp-sink';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { apiKey as webhookKey, registerEndpoint, startReceiver, type Receiver } from '../webhooks/helpers';
import { createTestStack, provenResult, testLogger, uniq, waitFor, type TestStack } from '../support/stack';
import { historyFromJson } from '../../src/temporal/history';
import { signRefund } from '../../src/proofs';
import { recordRefundRequest } from '../../src/refunds/repository';
import { paymentRecords } from '../../src/payments/repository';
import { V2_BASELINE } from '../../workflows/patches';
import { paidPaymentWorkflowId } from '../../src/callbacks';
import { unmatchedPaidOrderWorkflowId } from '../../src/callbacks/wallet-handler';
import { cardPayment, fieldSigned, post } from '../callbacks/helpers';

/** The file names the current code records to: the v2 payment workflows (workflows/patches.ts). */
const RECORDED = {
  card: 'card-payment-v2.history.json',
  qr: 'qr-payment-v2.history.json',
  /** result-proof-v1: a forged result rejected, then the proven one settles paid */
  proof: 'qr-payment-v2-proof.history.json',
  /** late-result-v1: expired, then a late proven success recorded, refunded and e-mailed in the workflow */
  late: 'qr-payment-v2-late.history.json',
};
/** v3 (qrPaymentWorkflowV3): the delayed start, paid by signal-with-start, and one expired at its delay's end */
const V3 = { paid: 'qr-payment-v3.history.json', expired: 'qr-payment-v3-expired.history.json' };
/** refund-record-v1: the refunds workflow refunding rows POST /refund recorded, each update with its proof */
const REFUNDS_RECORDED = 'refunds-record.history.json';
/** bulkhead-v1: a paid QR payment whose first webhook attempt failed: its retry child on the webhooks queue */
const BULKHEAD = 'qr-payment-v2-bulkhead.history.json';
/**
 * webhookRetryWorkflow whose four attempts all fail: before webhook-keep-trying-v1 (`old`) the dead
 * letter ends it; since (`file`), the patch marker and a webhookKeepTryingWorkflow child, whose
 * own history (`keepTrying`: one wait of the endpoint's schedule, then the receiver is back) is kept too.
 */
const WEBHOOK_RETRY = {
  old: 'webhook-retry.history.json',
  file: 'webhook-retry-keep-trying.history.json',
  keepTrying: 'webhook-keep-trying.history.json',
};
const WEBHOOK_FIXTURES = [
  { file: WEBHOOK_RETRY.old, workflowType: WebhookWorkflowType.webhookRetry },
  { file: WEBHOOK_RETRY.file, workflowType: WebhookWorkflowType.webhookRetry },
  { file: WEBHOOK_RETRY.keepTrying, workflowType: WebhookWorkflowType.webhookKeepTrying },
];
const WEBHOOK_RETRY_ENDPOINT = { retrySchedule: [1, 1] };
async function recordKeepTrying(stack: TestStack, receiver: Receiver, paymentId: string): Promise<void> {
  const d = await stack.db('webhook_deliveries').where({ payment_id: paymentId }).first('id');
  receiver.status = 200;
  await saveWorkflow(stack, WEBHOOK_RETRY.keepTrying, webhookKeepTryingWorkflowId(d.id));
}
/** What the v1 types recorded (before v2), behind their patch markers: they must replay too. */
const V1 = {
  card: 'card-payment-lean.history.json',
  qr: 'qr-payment-lean.history.json',
  proof: 'qr-payment-proof.history.json',
  late: 'qr-payment-late.history.json',
  bulkhead: 'qr-payment-bulkhead.history.json',
};
/** paidOrderProcessingWorkflow: a wallet post confirmed, and one rejected (several payments, none named) */
const PAID_ORDER = { confirmed: 'paid-order-confirmed.history.json', several: 'paid-order-several.history.json' };
const FIXTURES = [
  { file: 'card-payment.history.json', workflowType: PaymentWorkflowType.cardV1, status: 'paid' },
  { file: 'qr-payment.history.json', workflowType: PaymentWorkflowType.qrV1, status: 'paid' },
  { file: V1.card, workflowType: PaymentWorkflowType.cardV1, status: 'paid' },
  { file: V1.qr, workflowType: PaymentWorkflowType.qrV1, status: 'paid' },
  { file: V1.proof, workflowType: PaymentWorkflowType.qrV1, status: 'paid' },
  { file: V1.late, workflowType: PaymentWorkflowType.qrV1, status: 'expired' },
  { file: V1.bulkhead, workflowType: PaymentWorkflowType.qrV1, status: 'paid' },
  { file: 'refunds.history.json', workflowType: 'orderRefundsWorkflow', status: undefined },
  { file: REFUNDS_RECORDED, workflowType: 'orderRefundsWorkflow', status: undefined },
  { file: RECORDED.card, workflowType: PaymentWorkflowType.card, status: 'paid' },
  { file: RECORDED.qr, workflowType: PaymentWorkflowType.qr, status: 'paid' },
  { file: RECORDED.proof, workflowType: PaymentWorkflowType.qr, status: 'paid' },
  { file: RECORDED.late, workflowType: PaymentWorkflowType.qr, status: 'expired' },
  { file: BULKHEAD, workflowType: PaymentWorkflowType.qr, status: 'paid' },
  { file: V3.paid, workflowType: PaymentWorkflowType.qrDelayed, status: 'paid' },
  { file: V3.expired, workflowType: PaymentWorkflowType.qrDelayed, status: 'expired' },
  { file: PAID_ORDER.confirmed, workflowType: 'paidOrderProcessingWorkflow', status: 'confirmed' },
  { file: PAID_ORDER.several, workflowType: 'paidOrderProcessingWorkflow', status: 'rejected' },
];
const fixturePath = (f: string) => path.join(__dirname, f);
const replayOptions = () => ({ workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! } });

/** The history in Temporal's standard JSON form, as `temporal workflow show --output json` writes it. */
async function save(
  client: Client,
  keys: KeyRing,
  orderId: string,
  file: string,
  workflowId = paymentWorkflowId(orderId),
) {
  await client.workflow.getHandle(workflowId).result();
  const shown = spawnSync(
    findTemporalCli(process.env.TEMPORAL_CLI_PATH),
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
      '--namespace',
      'default',
      '--output',
      'json',
    ],
    { encoding: 'utf8' },
  );
  if (shown.status !== 0) throw new Error(`temporal workflow show failed: ${shown.stderr}`);
  const json = await decrypted(JSON.parse(shown.stdout), keys);
  fs.writeFileSync(fixturePath(file), JSON.stringify(json, null, 1) + '\n');
}
/** save() of workflow `workflowId` of `stack` to `file`. */
const saveWorkflow = (stack: TestStack, file: string, workflowId: string) =>
  save(stack.client, stack.config.temporal.codecKeys, '', file, workflowId);

if (process.env.RECORD_REPLAY_FIXTURES === '1') {
  it('records the fixtures from payments run to completion on the real stack', async () => {
    const stack = await createTestStack();
    try {
      const card = uniq('replay-card');
      const res = await request(stack.app.callback()).post('/cardpayment').type('form').send({
        orderId: card,
        userId: 'u-replay',
        amount: '250.50',
        token: 'tok_visa',
        callback: 'https://shop.example/done',
      });
      expect(res.body.body.chargeId).toBeTruthy();
      await stack.client.workflow.getHandle(paymentWorkflowId(card)).signal(
        'paymentResult',
        provenResult(stack.config, res.body.body.paymentId, {
          status: 'success',
          provider: 'card',
          reference: res.body.body.chargeId,
        }),
      );
      await save(stack.client, stack.config.temporal.codecKeys, card, RECORDED.card);

      const { key } = await newKey(stack.db, { scopes: ['payments:write'] });
      const qr = uniq('replay-qr');
      const created = await request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .send({ orderId: qr, userId: 'u-replay', amount: 99.5, customerId: 'c-replay' });
      await stack.client.workflow.getHandle(paymentWorkflowId(qr)).signal(
        'paymentResult',
        provenResult(stack.config, created.body.body.paymentId, {
          status: 'success',
          provider: 'qr',
          reference: 'txn-replay',
        }),
      );
      await save(stack.client, stack.config.temporal.codecKeys, qr, RECORDED.qr);
    } finally {
      await stack.close();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === '1' || process.env.RECORD_REPLAY_FIXTURES === 'v3') {
  it('records the v3 fixtures: a delayed-start QR payment paid by its callback, and one expired', async () => {
    const stack = await createTestStack({ env: { QR_EXPIRY_S: '2' } });
    try {
      const { key } = await newKey(stack.db, { scopes: ['payments:write'] });
      const create = (orderId: string) =>
        request(stack.app.callback())
          .post('/qrpayment')
          .set('X-API-Key', key)
          .send({ orderId, userId: 'u-replay', amount: 99.5, customerId: 'c-replay' });
      const paid = uniq('replay-v3');
      const created = await create(paid);
      const row = await stack.db('payments').where({ id: created.body.body.paymentId }).first();
      await resultAware(stack, stack.client.workflow.getHandle(row.workflow_id)).signal(
        'paymentResult',
        provenResult(stack.config, row.id, { status: 'success', provider: 'qr', reference: 'txn-replay-v3' }),
      );
      await save(stack.client, stack.config.temporal.codecKeys, paid, V3.paid, row.workflow_id);
      const expired = await create(uniq('replay-v3-exp'));
      const workflowId = `payment-${expired.body.body.paymentId as string}`;
      await saveWorkflow(stack, V3.expired, workflowId);
    } finally {
      await stack.close();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === '1' || process.env.RECORD_REPLAY_FIXTURES === 'proof') {
  it('records the result-proof-v1 and late-result-v1 fixtures', async () => {
    const smtp = await startSmtpSink();
    const stack = await createTestStack({ env: { SMTP_URL: smtp.url, QR_EXPIRY_S: '2' } });
    const slow = http.createServer((req, res) => {
      req.resume();
      setTimeout(() => res.writeHead(200).end('ok'), 2000);
    });
    let slowHits = 0;
    slow.on('request', () => slowHits++);
    try {
      const { key, id } = await newKey(stack.db, { scopes: ['payments:write'] });
      // a forged result (no proof), then the proven one
      const proof = uniq('replay-proof');
      const a = await request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .send({ orderId: proof, userId: 'u-replay', amount: 10, customerId: 'c-replay' });
      const handle = stack.client.workflow.getHandle(paymentWorkflowId(proof));
      await handle.signal('paymentResult', { status: 'success', provider: 'qr' });
      await new Promise((r) => setTimeout(r, 500));
      await handle.signal(
        'paymentResult',
        provenResult(stack.config, a.body.body.paymentId, {
          status: 'success',
          provider: 'qr',
          reference: 'txn-proof',
        }),
      );
      await save(stack.client, stack.config.temporal.codecKeys, proof, RECORDED.proof);

      // the expiry's settle step held open by a slow webhook endpoint; a proven success comes meanwhile
      await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
      await createEndpoint(
        stack.db,
        stack.config,
        { id, mode: 'sandbox' },
        { url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hooks` },
      );
      const late = uniq('replay-late');
      const b = await request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .send({ orderId: late, userId: 'u-replay', amount: 20, customerId: 'c-replay' });
      await waitFor(async () => slowHits > 0, 20_000, 'the expired webhook attempt');
      await stack.client.workflow.getHandle(paymentWorkflowId(late)).signal(
        'paymentResult',
        provenResult(stack.config, b.body.body.paymentId, {
          status: 'success',
          provider: 'qr',
          reference: 'txn-late',
        }),
      );
      await save(stack.client, stack.config.temporal.codecKeys, late, RECORDED.late);
    } finally {
      await stack.close();
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
      await smtp.stop();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === '1' || process.env.RECORD_REPLAY_FIXTURES === 'refunds') {
  it('records the refunds fixture: a paid QR payment refunded in part, then in full (refund-record-v1); the workflow ends idle', async () => {
    const stack = await createTestStack();
    try {
      const { key, id: apiKeyId } = await newKey(stack.db, { scopes: ['payments:write'] });
      const orderId = uniq('replay-refund');
      const created = await request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .send({ orderId, userId: 'u-replay', amount: 100, customerId: 'c-replay' });
      const paymentId = created.body.body.paymentId as string;
      await stack.client.workflow.getHandle(paymentWorkflowId(orderId)).signal(
        'paymentResult',
        provenResult(stack.config, paymentId, {
          status: 'success',
          provider: 'qr',
          reference: 'txn-replay',
        }),
      );
      await stack.client.workflow.getHandle(paymentWorkflowId(orderId)).result();
      for (const amountSatang of [3000, undefined]) {
        // as POST /refund does: the row first, then the update with the gateway's proof of it
        const recorded = await recordRefundRequest(stack.db, paymentRecords, {
          paymentId,
          orderId,
          apiKeyId,
          amountSatang,
        });
        if (!recorded.ok) throw new Error(recorded.message);
        const { refundId } = recorded.refund;
        const proof = signRefund(stack.config.results.signingKey, {
          refundId,
          paymentId,
          orderId,
          amountSatang: recorded.refund.amountSatang,
        });
        const startWorkflowOperation = new WithStartWorkflowOperation<OrderRefundsWorkflow>(
          RefundsWorkflowType.refunds,
          {
            taskQueue: stack.taskQueue,
            workflowId: refundsWorkflowId(orderId),
            args: [{ orderId, idleSeconds: 2 }],
            workflowIdConflictPolicy: 'USE_EXISTING',
            typedSearchAttributes: [{ key: OrderIdKey, value: orderId }],
          },
        );
        const out = await stack.client.workflow.executeUpdateWithStart(refundUpdate, {
          args: [{ refundId, proof }],
          updateId: refundId,
          startWorkflowOperation,
        });
        expect(out).toMatchObject({ ok: true, status: 'succeeded' });
      }
      await save(stack.client, stack.config.temporal.codecKeys, orderId, REFUNDS_RECORDED, refundsWorkflowId(orderId));
    } finally {
      await stack.close();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === '1' || process.env.RECORD_REPLAY_FIXTURES === 'bulkhead') {
  it('records the bulkhead fixture: a paid QR payment whose first webhook attempt failed', async () => {
    const stack = await createTestStack();
    const receiver = await startReceiver(500);
    try {
      const { key } = await webhookKey(stack);
      await registerEndpoint(stack, key, { url: receiver.url });
      const orderId = uniq('replay-blk');
      const res = await request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .send({ orderId, userId: 'u-replay', amount: 42, customerId: 'c-replay' });
      await stack.client.workflow.getHandle(paymentWorkflowId(orderId)).signal(
        'paymentResult',
        provenResult(stack.config, res.body.body.paymentId, {
          status: 'success',
          provider: 'qr',
          reference: 'txn-replay',
        }),
      );
      await save(stack.client, stack.config.temporal.codecKeys, orderId, BULKHEAD);
      receiver.status = 200;
      await stack.client.workflow.getHandle(webhookDeliveryWorkflowId(res.body.body.paymentId, 'paid')).result();
    } finally {
      await stack.close();
      await receiver.stop();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === '1' || process.env.RECORD_REPLAY_FIXTURES === 'webhook-retry') {
  it("records the webhook retry fixture: every attempt of a paid QR payment's webhook fails", async () => {
    const stack = await createTestStack();
    const receiver = await startReceiver(500);
    try {
      const { key } = await webhookKey(stack);
      await registerEndpoint(stack, key, { url: receiver.url, ...WEBHOOK_RETRY_ENDPOINT });
      const orderId = uniq('replay-whr');
      const res = await request(stack.app.callback())
        .post('/qrpayment')
        .set('X-API-Key', key)
        .send({ orderId, userId: 'u-replay', amount: 43, customerId: 'c-replay' });
      await stack.client.workflow.getHandle(paymentWorkflowId(orderId)).signal(
        'paymentResult',
        provenResult(stack.config, res.body.body.paymentId, {
          status: 'success',
          provider: 'qr',
          reference: 'txn-replay',
        }),
      );
      const retryId = webhookDeliveryWorkflowId(res.body.body.paymentId, 'paid');
      await waitFor(
        () =>
          stack.client.workflow
            .getHandle(retryId)
            .describe()
            .then(
              () => true,
              () => false,
            ),
        20_000,
        'the webhook retry workflow',
      );
      await save(stack.client, stack.config.temporal.codecKeys, orderId, WEBHOOK_RETRY.file, retryId);
      await recordKeepTrying(stack, receiver, res.body.body.paymentId as string);
    } finally {
      await stack.close();
      await receiver.stop();
    }
  });
}

if (process.env.RECORD_REPLAY_FIXTURES === '1' || process.env.RECORD_REPLAY_FIXTURES === 'paid-order') {
  it('records the paid-order fixtures: a wallet post confirmed, and one for an order id of two payments', async () => {
    const smtp = await startSmtpSink(); // the rejection e-mails the administrator
    const stack = await createTestStack({ env: { PAID_ORDER_CONFIRM_WINDOW_S: '2', SMTP_URL: smtp.url } });
    const wallet = (body: Record<string, unknown>) =>
      request(stack.app.callback()).post('/wallet/callback').set('Content-Type', 'application/json').send(body);
    try {
      const p = await cardPayment(stack, { amount: 31 });
      const paid = fieldSigned(stack.config, 'WALLET', {
        walletId: 'wal_1',
        status: 'success',
        amount: p.amount,
        orderId: p.orderId,
      });
      expect((await post(stack.app, '/walletcallback', paid)).status).toBe(200);
      await stack.client.workflow.getHandle(p.workflowId).result();
      await wallet({ orderId: p.orderId, paymentId: p.paymentId, success: true, userId: 'u-replay', amount: p.amount });
      await saveWorkflow(stack, PAID_ORDER.confirmed, paidPaymentWorkflowId(p.paymentId));
      const orderId = uniq('replay-two');
      for (const k of [await newKey(stack.db), await newKey(stack.db)])
        await cardPayment(stack, { apiKey: k.key, orderId, amount: 10 });
      const body = { orderId, paymentId: 'pay_x', success: true, userId: 'u-replay', amount: 10 };
      await wallet(body);
      const id = unmatchedPaidOrderWorkflowId(orderId, JSON.stringify(body));
      await saveWorkflow(stack, PAID_ORDER.several, id);
    } finally {
      await stack.close();
      await smtp.stop();
    }
  });
}

type Payloads = { payloads: { data: string }[] };
const load = (file: string) =>
  JSON.parse(fs.readFileSync(fixturePath(file), 'utf8')) as { events: Record<string, unknown>[] };

describe('recorded payment histories replay against the current workflow code', () => {
  beforeAll(() => installTemporalRuntime(testLogger, 'WARN'));

  it('the fixtures are complete histories of the expected workflow types, payments ending paid', () => {
    for (const f of FIXTURES) {
      const h = load(f.file);
      const started = h.events[0].workflowExecutionStartedEventAttributes as { workflowType: { name: string } };
      expect(started.workflowType.name).toBe(f.workflowType);
      const last = h.events[h.events.length - 1] as {
        eventType: string;
        workflowExecutionCompletedEventAttributes: { result: { payloads: { data: string }[] } };
      };
      expect(last.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
      if (!f.status) {
        const updates = h.events.filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED');
        expect(updates).toHaveLength(2);
        continue;
      }
      const result = JSON.parse(
        Buffer.from(last.workflowExecutionCompletedEventAttributes.result.payloads[0].data, 'base64').toString(),
      );
      expect({ file: f.file, status: result.status }).toEqual({ file: f.file, status: f.status });
    }
  });

  it('Worker.runReplayHistories replays every fixture without a determinism error', async () => {
    const all = [...FIXTURES, ...WEBHOOK_FIXTURES];
    const histories = all.map((f, i) => ({ workflowId: `replay-${i}`, history: historyFromJson(load(f.file)) }));
    const results = [];
    for await (const r of Worker.runReplayHistories(replayOptions(), histories)) results.push(r);
    expect(results).toHaveLength(all.length);
    for (const r of results) expect(r.error).toBeUndefined();
  });

  it('a history that disagrees with the code fails the replay (the check can fail)', async () => {
    const h = load('qr-payment.history.json');
    const scheduled = h.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')!;
    (scheduled.activityTaskScheduledEventAttributes as { activityType: { name: string } }).activityType.name =
      'someOtherActivity';
    const results = [];
    for await (const r of Worker.runReplayHistories(replayOptions(), [
      { workflowId: 'tampered', history: historyFromJson(h) },
    ]))
      results.push(r);
    expect(results[0].error).toBeInstanceOf(DeterminismViolationError);
  });

  /** The ids of a history's patch markers, in order. */
  const patchesOf = (file: string): string[] =>
    load(file)
      .events.map((e) => e.markerRecordedEventAttributes as { markerName: string; details: Record<string, Payloads> })
      .filter((m) => m?.markerName === 'core_patch')
      .map(
        (m) =>
          (JSON.parse(Buffer.from(m.details['patch-data'].payloads[0].data, 'base64').toString()) as { id: string }).id,
      );
  /** The search attributes a history upserted, in order. */
  const upsertsOf = (file: string): string[] =>
    load(file)
      .events.filter((e) => e.eventType === 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES')
      .flatMap((e) =>
        Object.keys(
          (e.upsertWorkflowSearchAttributesEventAttributes as { searchAttributes: { indexedFields: object } })
            .searchAttributes.indexedFields,
        ),
      );

  it('the refunds shapes: before refund-record-v1 the update recorded the row; since, it loads the recorded one', () => {
    const activitiesOf = (file: string) =>
      load(file)
        .events.map(
          (e) =>
            (e.activityTaskScheduledEventAttributes as { activityType: { name: string } } | undefined)?.activityType
              .name,
        )
        .filter(Boolean);
    expect(patchesOf('refunds.history.json')).toEqual([]);
    expect(activitiesOf('refunds.history.json')).toContain('recordRefund');
    expect(patchesOf(REFUNDS_RECORDED)).toEqual([Patch.refundRecord, Patch.bulkhead]);
    const oneRefund = ['loadRecordedRefund', 'requestProviderRefund', 'settleRefund'];
    expect(activitiesOf(REFUNDS_RECORDED)).toEqual([...oneRefund, ...oneRefund]);
  });

  it('the webhook retry shapes: the dead letter ends it before webhook-keep-trying-v1; since, a keep-trying child', () => {
    const childrenOf = (file: string) =>
      load(file)
        .events.filter((e) => e.eventType === 'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED')
        .map(
          (e) =>
            (e.startChildWorkflowExecutionInitiatedEventAttributes as { workflowType: { name: string } }).workflowType
              .name,
        );
    for (const f of WEBHOOK_FIXTURES) {
      const h = load(f.file);
      const started = h.events[0].workflowExecutionStartedEventAttributes as { workflowType: { name: string } };
      expect({ file: f.file, type: started.workflowType.name }).toEqual({ file: f.file, type: f.workflowType });
      expect(h.events.at(-1)!.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    }
    expect(patchesOf(WEBHOOK_RETRY.old)).toEqual([]);
    expect(childrenOf(WEBHOOK_RETRY.old)).toEqual([]);
    expect(patchesOf(WEBHOOK_RETRY.file)).toEqual([Patch.webhookKeepTrying]);
    expect(childrenOf(WEBHOOK_RETRY.file)).toEqual([WebhookWorkflowType.webhookKeepTrying]);
    const activities = load(WEBHOOK_RETRY.keepTrying)
      .events.map(
        (e) =>
          (e.activityTaskScheduledEventAttributes as { activityType: { name: string } } | undefined)?.activityType.name,
      )
      .filter(Boolean);
    expect(activities[0]).toBe('beginWebhookRetries');
    expect(activities.slice(1).every((a) => a === 'keepTryingWebhook')).toBe(true);
  });

  it('the v2 baseline is the four patches in place when v2 began (v2 executions in flight replay on it)', () => {
    expect([...V2_BASELINE].sort()).toEqual(
      [Patch.leanPayment, Patch.resultProof, Patch.lateResult, Patch.bulkhead].sort(),
    );
  });

  it('the bulkhead shape: the retry child on the webhooks queue (v1: behind the bulkhead-v1 marker; v2: no marker)', () => {
    for (const [file, patches] of [
      [V1.bulkhead, [Patch.leanPayment, Patch.bulkhead]],
      [BULKHEAD, []],
    ] as const) {
      const h = load(file);
      const started = h.events[0].workflowExecutionStartedEventAttributes as { taskQueue: { name: string } };
      const child = h.events.find((e) => e.eventType === 'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED')!
        .startChildWorkflowExecutionInitiatedEventAttributes as {
        workflowType: { name: string };
        taskQueue: { name: string };
      };
      expect(child.workflowType.name).toBe(WebhookWorkflowType.webhookRetry);
      expect(child.taskQueue.name).toBe(taskQueueOf('webhooks', started.taskQueue.name));
      expect({ file, patches: patchesOf(file) }).toEqual({ file, patches });
    }
  });

  it('the lean shape: local activities and few events; v2 without the patch marker and its TemporalChangeVersion upsert', () => {
    for (const [file, max, patches] of [
      [V1.qr, 14, [Patch.leanPayment]],
      [V1.card, 17, [Patch.leanPayment]],
      [RECORDED.qr, 12, []],
      [RECORDED.card, 15, []],
    ] as const) {
      const h = load(file);
      const types = h.events.map((e) => String(e.eventType).replace('EVENT_TYPE_', ''));
      expect(types).toContain('MARKER_RECORDED');
      expect(types).not.toContain('ACTIVITY_TASK_SCHEDULED');
      expect({ file, under: types.length <= max }).toEqual({ file, under: true });
      expect({ file, patches: patchesOf(file) }).toEqual({ file, patches });
      // v1 upserts TemporalChangeVersion with each new patch, then PaymentStatus; v2 PaymentStatus alone
      expect({ file, upserts: upsertsOf(file) }).toEqual({
        file,
        upserts: [...(patches.length ? ['TemporalChangeVersion'] : []), 'PaymentStatus'],
      });
    }
  });

  it('the shapes of result-proof-v1 and late-result-v1: v1 records their markers only where a result was rejected or came late, v2 none', () => {
    expect(patchesOf(V1.qr)).toEqual(['lean-payment-v1']);
    expect(patchesOf(V1.proof)).toEqual(['lean-payment-v1', 'result-proof-v1']);
    expect(patchesOf(V1.late)).toEqual(['lean-payment-v1', 'late-result-v1']);
    for (const file of [RECORDED.qr, RECORDED.proof, RECORDED.late])
      expect({ file, patches: patchesOf(file) }).toEqual({ file, patches: [] });
    for (const file of [V1.late, RECORDED.late]) {
      const late = load(file).events.map(
        (e) =>
          (e.activityTaskScheduledEventAttributes as { activityType: { name: string } } | undefined)?.activityType.name,
      );
      expect({ file, activities: late.filter(Boolean) }).toEqual({
        file,
        activities: [
          'recordLateResult',
          'recordRefund',
          'requestProviderRefund',
          'settleRefund',
          'settleLateResult',
          'notifyAdmin',
        ],
      });
    }
  });
});
