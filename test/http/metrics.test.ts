/**
 * GET /metrics: Prometheus text with the HTTP, callback, rate-limit, dead-letter and payment
 * metrics; with METRICS_ACCESS=key (production's default) only for a key with the scope metrics.
 */
import request from 'supertest';
import { fieldSigned, post } from '../callbacks/helpers';
import { logFieldsOf } from '../../activities/instrument';
import { createLogger } from '../../src/logger';
import { withLogFields } from '../../src/log-context';
import { paymentTransitions } from '../../src/metrics';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { newKey } from '../payments/support';
import { loadConfig } from '../../src/config';
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

describe('/metrics with METRICS_ACCESS=key', () => {
  let keyed: TestStack;
  beforeAll(async () => {
    keyed = await createTestStack({ worker: false, env: { METRICS_ACCESS: 'key' } });
  });
  afterAll(() => keyed.close());
  const get = (headers: Record<string, string> = {}) => request(keyed.app.callback()).get('/metrics').set(headers);

  it('refuses no key, an unknown key and a key without the scope metrics', async () => {
    const none = await get();
    expect(none.status).toBe(401);
    expect(none.body.body).toMatchObject({
      error: 'An API key with the scope metrics is required (X-API-Key or Authorization: Bearer)',
      details: { reason: 'missing' },
    });
    expect(none.text).not.toContain('talat_');
    expect((await get({ Authorization: `Bearer tk_test_${'x'.repeat(40)}` })).status).toBe(401);
    const merchant = await newKey(keyed.db, { scopes: ['payments:write', 'payments:read'] });
    const other = await get({ 'X-API-Key': merchant.key });
    expect(other.status).toBe(403);
    expect(other.body.body).toMatchObject({ details: { requiredScope: 'metrics' } });
  });

  it('answers a key with the scope metrics, as X-API-Key or as a Bearer token (Prometheus)', async () => {
    const scraper = await newKey(keyed.db, { scopes: ['metrics'] });
    const ways: Record<string, string>[] = [{ 'X-API-Key': scraper.key }, { Authorization: `Bearer ${scraper.key}` }];
    for (const headers of ways) {
      const res = await get(headers);
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/^talat_process_cpu_seconds_total /m);
    }
  });

  it('is public outside production unless told (production: test/cli/production-env.test.ts)', () => {
    expect(loadConfig({}).metricsNeedKey).toBe(false);
    expect(loadConfig({ METRICS_ACCESS: 'key' }).metricsNeedKey).toBe(true);
  });
});
