/**
 * Abuse of the public wallet handler: the same failure e-mails the administrator once per order
 * and error per window (a digest for the rest), and the handler is rate limited per client
 * address, except for the allow-listed wallet gateway.
 */
import request from 'supertest';
import { createAlertThrottle } from '../../src/alerts';
import { createApp } from '../../src/app/app';
import type { AdminEmail, Notifier } from '../../src/notifier';
import { testConfig, testLogger, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';

const stack = useTestStack({ worker: false });

function recordingNotifier(): Notifier & { mails: AdminEmail[] } {
  const mails: AdminEmail[] = [];
  return {
    mails,
    sendAdminEmail: async (m) => void mails.push(m),
    reportError: async () => undefined,
    close: async () => undefined,
  };
}

const invalid = (orderId: string) => JSON.stringify({ orderId, paymentId: 'p-1', success: true, userId: '' });

describe('administrator e-mails of wallet handler failures', () => {
  it('one e-mail per order and error per window; the repeats go into one digest', async () => {
    const notifier = recordingNotifier();
    let now = Date.now();
    const alerts = createAlertThrottle({ notifier, logger: testLogger, windowMs: 3_600_000, clock: () => now });
    const app = createApp({
      config: stack.config,
      db: stack.db,
      temporal: { client: stack.client, taskQueue: 'x' },
      logger: testLogger,
      notifier,
      alerts,
    });
    const a = uniq('o');
    const b = uniq('o');
    for (const orderId of [a, a, a, b]) {
      const res = await request(app.callback())
        .post('/wallet/callback')
        .set('Content-Type', 'application/json')
        .send(invalid(orderId));
      expect(res.status).toBe(500); // the contract's answer is unchanged
    }
    expect(notifier.mails.map((m) => m.subject)).toEqual([expect.stringContaining(a), expect.stringContaining(b)]);
    expect(await stack.db('callback_errors').where({ order_id: a }).count<{ count: string }[]>('* as count')).toEqual([
      { count: '3' },
    ]); // the error log keeps every one

    await alerts.flushDigest();
    expect(notifier.mails).toHaveLength(3);
    expect(notifier.mails[2].subject).toMatch(/Digest: 2 repeated alerts/);
    expect(notifier.mails[2].text).toContain(a);

    now += 3_600_001; // a new window: e-mailed again
    await request(app.callback()).post('/wallet/callback').set('Content-Type', 'application/json').send(invalid(a));
    expect(notifier.mails).toHaveLength(4);
    await alerts.close();
  });
});

describe('rate limit of /wallet/callback per client address', () => {
  const post = (app: ReturnType<typeof createApp>) =>
    request(app.callback())
      .post('/wallet/callback')
      .set('Content-Type', 'application/json')
      .send(invalid(uniq('o')));

  it('refuses with 429 RATE_LIMITED in the callback envelope beyond the limit, with the X-RateLimit headers', async () => {
    const notifier = recordingNotifier();
    const t = Date.now() + 1_000_000_000; // a second of its own: no other test shares this bucket window
    const app = createApp({
      config: testConfig({ WALLET_RATE_PER_SECOND: '2' }),
      db: stack.db,
      temporal: { client: stack.client, taskQueue: 'x' },
      logger: testLogger,
      notifier,
      clock: () => t,
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await post(app));
    expect(statuses.map((r) => r.status)).toEqual([500, 500, 429]);
    expect(statuses[0].headers['x-ratelimit-limit']).toBe('2');
    expect(statuses[2].body).toEqual({ statusCode: 429, body: { error: 'RATE_LIMITED', message: expect.any(String) } });
    expect(statuses[2].headers['retry-after']).toBeDefined();
  });

  it('does not limit the allow-listed wallet gateway', async () => {
    const notifier = recordingNotifier();
    const t = Date.now() + 2_000_000_000;
    const app = createApp({
      config: testConfig({ WALLET_RATE_PER_SECOND: '1', WALLET_RATE_ALLOW: '127.0.0.0/8,::1/128' }),
      db: stack.db,
      temporal: { client: stack.client, taskQueue: 'x' },
      logger: testLogger,
      notifier,
      clock: () => t,
    });
    for (let i = 0; i < 4; i++) expect((await post(app)).status).toBe(500);
  });
});
