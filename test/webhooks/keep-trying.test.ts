/**
 * Webhooks that keep trying (webhook-keep-trying-v1): after the first attempt and the retries
 * 1, 2 and 4 s later, a dead letter is retried on its endpoint's retrySchedule (durable timers
 * in webhookKeepTryingWorkflow) until a 2xx. The done-when of the issue, compressed: a receiver
 * that is down far longer than the 7 s of the contract's retries gets every event after it comes
 * back, with no replay; one that never comes back gives up at the end of its schedule.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { DEFAULT_RETRY_SCHEDULE_S, EVENT_TYPES, webhookBody, webhookKeepTryingWorkflowId } from '../../src/webhooks';
import { paymentWorkflowIdOf } from '../../src/payments';
import { STEPS_PER_RUN } from '../../workflows/webhooks/keep-trying';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { apiKey, registerEndpoint, startReceiver, type Receiver } from './helpers';
import { resultAware } from '../payments/support';

const root = path.join(__dirname, '../..');

describe('the body', () => {
  it("adds type, data.paymentId and data.mode after the contract's fields, whose JSON text begins as before", () => {
    for (const status of ['paid', 'failed', 'expired', 'refunded', 'partially_refunded'] as const) {
      const e = {
        paymentId: 'pay_1',
        orderId: 'ORD-1',
        status,
        amountSatang: 12_050,
        timestamp: '2026-11-27T08:00:00.000Z',
        mode: 'live' as const,
        ...(status.includes('refunded') ? { refundId: 're_1' } : {}),
      };
      const text = JSON.stringify(webhookBody(e));
      expect(
        text.startsWith(
          `{"event":"payment.status.updated","data":{"orderId":"ORD-1","status":"${status}","amount":120.5,"timestamp":"2026-11-27T08:00:00.000Z"`,
        ),
      ).toBe(true);
      const body = JSON.parse(text);
      expect(body).toMatchObject({ type: `payment.${status}`, data: { paymentId: 'pay_1', mode: 'live' } });
      expect(EVENT_TYPES).toContain(body.type);
    }
  });
});

describe('the default schedule', () => {
  it('adds up to at least three days, and the docs publish exactly it', () => {
    const total = DEFAULT_RETRY_SCHEDULE_S.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(3 * 86_400);
    expect(total).toBe(272_760); // 3 days 3 h 46 min, as published
    const docs = fs.readFileSync(path.join(root, 'docs/webhooks.md'), 'utf8');
    expect(docs).toContain('3 days 3 h 46 min');
    expect(docs).toContain(`[${DEFAULT_RETRY_SCHEDULE_S.join(', ')}]`);
    expect(docs).toContain('1 min, 5 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 24 h and 24 h');
  });

  it('a receiver down for an hour gets every event of that hour within an hour of coming back (as docs/webhooks.md says)', () => {
    const outage = 3600;
    // the attempts of an event at `t`: t, then 1, 2 and 4 s apart, then the default waits
    const attemptsOf = (t: number) => {
      const at = [t];
      for (const d of [1, 2, 4, ...DEFAULT_RETRY_SCHEDULE_S]) at.push(at[at.length - 1] + d);
      return at;
    };
    let worst = 0;
    for (let t = 0; t < outage; t++) {
      const delivered = attemptsOf(t).find((a) => a >= outage);
      expect(delivered).toBeDefined();
      worst = Math.max(worst, delivered! - outage);
    }
    expect(worst).toBeLessThanOrEqual(3600);
    expect(fs.readFileSync(path.join(root, 'docs/webhooks.md'), 'utf8')).toContain('within an hour of coming back');
  });
});

describe('on the real stack', () => {
  let stack: TestStack;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    stack = await createTestStack();
  });
  afterAll(async () => {
    await stack.close();
    for (const r of receivers) await r.stop();
  });
  const api = () => request(stack.app.callback());

  async function paidPayment(key: string, amount: number) {
    const orderId = uniq('kt');
    const res = await api()
      .post('/qrpayment')
      .set('X-API-Key', key)
      .send({ orderId, userId: 'u-kt', amount, customerId: 'c-kt' });
    expect(res.status).toBe(200);
    const paymentId = res.body.body.paymentId as string;
    await resultAware(stack, stack.client.workflow.getHandle(paymentWorkflowIdOf(paymentId))).signal(
      'paymentResult',
      provenResult(stack.config, paymentId, { status: 'success', provider: 'qr', reference: `txn-${orderId}` }),
    );
    return { orderId, paymentId };
  }

  it('retrySchedule: shown in effect (the default when unset), validated with a 400, changed by PATCH', async () => {
    const key = await apiKey(stack);
    const url = 'http://127.0.0.1:9/hooks';
    const plain = await registerEndpoint(stack, key.key, { url });
    expect((plain as unknown as { retrySchedule: number[] }).retrySchedule).toEqual([...DEFAULT_RETRY_SCHEDULE_S]);
    for (const bad of [[0], [1.5], [-1], ['60'], [86_401], Array(31).fill(1), Array(8).fill(86_400), 'fast']) {
      const res = await api().post('/webhooks/endpoints').set('X-API-Key', key.key).send({ url, retrySchedule: bad });
      expect({ bad, status: res.status, code: res.body.body?.code }).toEqual({
        bad,
        status: 400,
        code: 'INVALID_INPUT',
      });
    }
    const own = await api()
      .post('/webhooks/endpoints')
      .set('X-API-Key', key.key)
      .send({ url, retrySchedule: [5, 60] });
    expect(own.status).toBe(201);
    expect(own.body.body.retrySchedule).toEqual([5, 60]);
    const none = await api()
      .patch(`/webhooks/endpoints/${own.body.body.id}`)
      .set('X-API-Key', key.key)
      .send({ retrySchedule: [] });
    expect(none.body.body.retrySchedule).toEqual([]);
    const reset = await api()
      .patch(`/webhooks/endpoints/${own.body.body.id}`)
      .set('X-API-Key', key.key)
      .send({ retrySchedule: null });
    expect(reset.body.body.retrySchedule).toEqual([...DEFAULT_RETRY_SCHEDULE_S]);
    const stranger = await apiKey(stack);
    expect(
      (
        await api()
          .patch(`/webhooks/endpoints/${own.body.body.id}`)
          .set('X-API-Key', stranger.key)
          .send({ retrySchedule: [1] })
      ).status,
    ).toBe(404);
  });

  it('a receiver down long after the 1, 2, 4 s retries gets every event once it is back, with no replay', async () => {
    const receiver = await startReceiver(503);
    receivers.push(receiver);
    const key = await apiKey(stack);
    // the test's "hour": down for ~14 s, twice the contract's retries; retried every 3 s after them
    const endpoint = await registerEndpoint(stack, key.key, { url: receiver.url, retrySchedule: Array(8).fill(3) });
    const downSince = Date.now();
    const payments = [await paidPayment(key.key, 71), await paidPayment(key.key, 72), await paidPayment(key.key, 73)];

    // all three dead-lettered after their fourth attempt, still retrying, with the next attempt's time
    const retrying = await waitFor(
      async () => {
        const res = await api().get('/webhooks/dead-letters?state=retrying').set('X-API-Key', key.key);
        return res.body.body.deadLetters.length === 3 ? res.body.body.deadLetters : undefined;
      },
      30_000,
      'three retrying dead letters',
    );
    for (const d of retrying)
      expect(d).toMatchObject({ status: 'dead', state: 'retrying', nextAttemptAt: expect.any(String) });
    await waitFor(
      async () => receiver.log.filter((r) => r.status === 503).length >= 3 * 5 || undefined,
      20_000,
      'attempts of the longer schedule',
    );
    await new Promise((r) => setTimeout(r, Math.max(0, 14_000 - (Date.now() - downSince))));
    receiver.status = 200;
    const backAt = Date.now();

    const delivered = await waitFor(
      async () => {
        const ok = payments.filter((p) =>
          receiver.log.some((r) => r.status === 200 && JSON.parse(r.body).data.orderId === p.orderId),
        );
        return ok.length === payments.length ? ok : undefined;
      },
      15_000,
      'every event after the receiver came back',
    );
    expect(delivered).toHaveLength(3);
    expect(Date.now() - backAt).toBeLessThan(3000 + 2000);
    for (const p of payments) {
      const got = receiver.log.filter((r) => JSON.parse(r.body).data.orderId === p.orderId);
      expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(got.every((r) => receiver.verified(r, endpoint.secret))).toBe(true);
      expect(got.length).toBeGreaterThanOrEqual(6); // 4 + at least 2 of the longer schedule
      expect(JSON.parse(got.at(-1)!.body)).toEqual({
        event: 'payment.status.updated',
        type: 'payment.paid',
        data: {
          orderId: p.orderId,
          status: 'paid',
          amount: expect.any(Number),
          timestamp: expect.any(String),
          paymentId: p.paymentId,
          mode: 'sandbox',
        },
      });
    }
    // no replay was made: every attempt is automatic; the dead letters show delivered
    const kinds = await stack
      .db('webhook_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .whereIn(
        'd.payment_id',
        payments.map((p) => p.paymentId),
      )
      .distinct('a.kind');
    expect(kinds).toEqual([{ kind: 'automatic' }]);
    const all = await waitFor(
      async () => {
        const res = await api().get('/webhooks/dead-letters?state=delivered').set('X-API-Key', key.key);
        return res.body.body.deadLetters.length === 3 ? res.body.body.deadLetters : undefined;
      },
      5000,
      'three delivered dead letters',
    );
    for (const d of all) expect(d).toMatchObject({ status: 'delivered', state: 'delivered', replays: 0 });
    expect(
      (await api().get('/webhooks/dead-letters?state=retrying').set('X-API-Key', key.key)).body.body,
    ).toMatchObject({ deadLetters: [] });
  }, 90_000);

  it('a receiver that never comes back: the dead letter gives up after its schedule, in short histories', async () => {
    const receiver = await startReceiver(500);
    receivers.push(receiver);
    const key = await apiKey(stack);
    const steps = STEPS_PER_RUN + 2; // one continue-as-new
    await registerEndpoint(stack, key.key, { url: receiver.url, retrySchedule: Array(steps).fill(1) });
    const { orderId } = await paidPayment(key.key, 74);
    const gaveUp = await waitFor(
      async () => {
        const res = await api().get('/webhooks/dead-letters?state=gave_up').set('X-API-Key', key.key);
        return res.body.body.deadLetters[0];
      },
      60_000,
      'the dead letter gives up',
    );
    expect(gaveUp).toMatchObject({ status: 'dead', state: 'gave_up', nextAttemptAt: null, attempts: 4 + steps });
    expect(receiver.log.filter((r) => r.body.includes(orderId))).toHaveLength(4 + steps);
    // still replayable by hand
    receiver.status = 200;
    const replayed = await api().post(`/webhooks/dead-letters/${gaveUp.id}/replay`).set('X-API-Key', key.key);
    expect(replayed.body.body).toMatchObject({ attempt: { ok: true }, deadLetter: { state: 'delivered' } });

    // the keep-trying workflow continued as new once; each run's history stays short
    const handle = stack.client.workflow.getHandle(webhookKeepTryingWorkflowId(gaveUp.messageId));
    expect(await handle.result()).toMatchObject({ state: 'gave_up', attempts: steps });
    const runs = [];
    for await (const w of stack.client.workflow.list({
      query: `WorkflowId = '${webhookKeepTryingWorkflowId(gaveUp.messageId)}'`,
    }))
      runs.push(w);
    expect(runs).toHaveLength(2);
    // about 12 events a step (timer, attempt, their workflow tasks), plus the run's start and end
    for (const w of runs) expect(w.historyLength).toBeLessThanOrEqual(12 * STEPS_PER_RUN + 10);
  }, 90_000);
});
