/** GET /metrics: Prometheus text with the HTTP, callback, rate-limit, dead-letter and payment metrics. */
import request from 'supertest';
import { fieldSigned, post } from '../callbacks/helpers';
import { logFieldsOf } from '../../activities/instrument';
import { createLogger } from '../../src/logger';
import { withLogFields } from '../../src/log-context';
import { paymentTransitions } from '../../src/metrics';
import { uniq } from '../support/stack';
import { useTestStack } from '../support/servers';

const stack = useTestStack({ worker: false });

const scrape = async () => {
  const res = await request(stack.app.callback()).get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  return res.text;
};

describe('/metrics', () => {
  it('counts requests by route pattern (not raw path), status and duration', async () => {
    await request(stack.app.callback()).get(`/api/group/read/${uniq('G')}`);
    const text = await scrape();
    expect(text).toMatch(
      /talat_http_requests_total\{method="GET",route="\/api\/group\/read\/:groupId",status="404"\} \d+/,
    );
    expect(text).toMatch(
      /talat_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/group\/read\/:groupId",status="404"\}/,
    );
    expect(text).not.toMatch(/route="\/api\/group\/read\/G-/);
  });

  it('counts rejected callbacks by provider and reason', async () => {
    const sent = fieldSigned(stack.config, 'QR', { paymentId: 'p', status: 'success', amount: 1, orderId: uniq('o') });
    // the signature's first hex digit changed (to 0, or to 1 when it was 0: one run in 16 it was, and the callback verified)
    const raw = sent.raw.replace(/"signature":"([0-9a-f])/, (_, d: string) => `"signature":"${d === '0' ? '1' : '0'}`);
    await post(stack.app, '/qrcallback', { ...sent, raw });
    expect(await scrape()).toMatch(
      /talat_callbacks_total\{provider="qr",outcome="rejected",reason="INVALID_SIGNATURE"\} [1-9]/,
    );
  });

  it('reads the open dead letters from Postgres, has the process metrics, and payment transitions', async () => {
    paymentTransitions.inc({ method: 'qr', to: 'paid' });
    const text = await scrape();
    expect(text).toMatch(/^talat_webhook_dead_letters_open \d+$/m);
    expect(text).toMatch(/^talat_process_cpu_seconds_total /m);
    expect(text).toMatch(/talat_payment_transitions_total\{method="qr",to="paid"\} [1-9]/);
  });
});

describe('activity log fields', () => {
  it('log lines inside an activity carry orderId, paymentId and workflowId', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (l: string) => void lines.push(l) });
    withLogFields(logFieldsOf({ orderId: 'ORD-1', paymentId: 'pay_1' }), () => logger.info('inside'));
    expect(JSON.parse(lines[0])).toMatchObject({ orderId: 'ORD-1', paymentId: 'pay_1', msg: 'inside' });
  });
});
