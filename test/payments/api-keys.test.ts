/**
 * X-API-Key on every payment API endpoint: 401 UNAUTHORIZED without a key, with an unknown or a
 * revoked one; 403 FORBIDDEN without the endpoint's scope; keys stored hashed; the apikey command.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { revokeApiKey } from '../../src/http/middleware/api-key';
import { testDatabaseUrl, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';
import { newKey, paymentError, request } from './support';

const stack = useTestStack({ worker: false });

const endpoints: { method: 'get' | 'post'; path: string; scope: string; body?: object }[] = [
  {
    method: 'post',
    path: '/qrpayment',
    scope: 'payments:write',
    body: { orderId: 'o', userId: 'u', amount: 1, customerId: 'c' },
  },
  { method: 'get', path: '/checkstatus/ord-1', scope: 'payments:read' },
  {
    method: 'post',
    path: '/calculate-cost',
    scope: 'cost:read',
    body: { items: [{ productId: 'x', quantity: 1 }], branchId: 'B001', deliveryOption: 'pickup', paymentMethod: 'qr' },
  },
  { method: 'post', path: '/bank/createorder', scope: 'bank:write', body: { orderId: 'o', userId: 'u', amount: 1 } },
  { method: 'post', path: '/bank/createuser', scope: 'bank:write', body: { userId: 'u', name: 'n' } },
  { method: 'get', path: '/bank/user/u-1', scope: 'bank:read' },
];

const call = (e: (typeof endpoints)[number], key?: string) => {
  let req = request(stack.app.callback())[e.method](e.path);
  if (key !== undefined) req = req.set('X-API-Key', key);
  return e.body ? req.send(e.body) : req;
};

describe.each(endpoints)('$method $path', (e) => {
  it('401 UNAUTHORIZED without a key', async () => {
    const res = await call(e);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(paymentError('UNAUTHORIZED', { reason: 'missing' }));
    expect(res.body.statusCode).toBe(401);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('401 UNAUTHORIZED with a malformed or an unknown key', async () => {
    for (const k of ['nope', `tk_test_${'A'.repeat(40)}`]) {
      const res = await call(e, k);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(paymentError('UNAUTHORIZED', { reason: 'invalid' }));
    }
  });

  it('401 UNAUTHORIZED with a revoked key', async () => {
    const k = await newKey(stack.db, { scopes: [e.scope] });
    await revokeApiKey(stack.db, k.id);
    const res = await call(e, k.key);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(paymentError('UNAUTHORIZED', { reason: 'revoked' }));
  });

  it(`403 FORBIDDEN without the scope ${e.scope}`, async () => {
    const others = [
      'payments:write',
      'payments:read',
      'cost:read',
      'bank:write',
      'bank:read',
      'webhooks:manage',
    ].filter((s) => s !== e.scope);
    const k = await newKey(stack.db, { scopes: others });
    const res = await call(e, k.key);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(paymentError('FORBIDDEN', { requiredScope: e.scope }));
    expect(res.body.statusCode).toBe(403);
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
  });
});

describe('key storage', () => {
  it('keeps only the sha256 hash and a display prefix', async () => {
    const k = await newKey(stack.db, { scopes: ['payments:read'], mode: 'live' });
    expect(k.key).toMatch(/^tk_live_[A-Za-z0-9_-]{40}$/);
    const row = await stack.db('api_keys').where({ id: k.id }).first();
    expect(row).toMatchObject({
      key_hash: createHash('sha256').update(k.key).digest('hex'),
      prefix: k.key.slice(0, 12),
      mode: 'live',
      scopes: ['payments:read'],
    });
    expect(JSON.stringify(row)).not.toContain(k.key);
  });
});

describe('npm run apikey', () => {
  const cli = (...args: string[]) =>
    // as the docs print it: `npm run -s apikey -- <args>` (through scripts/run.cjs)
    spawnSync('npm', ['run', '-s', 'apikey', '--', ...args], {
      cwd: path.join(__dirname, '../..'),
      encoding: 'utf8',
      env: {
        ...process.env,
        DATABASE_URL: testDatabaseUrl(`talat_test_w${process.env.JEST_WORKER_ID ?? '1'}`),
        NODE_ENV: 'test',
      },
      timeout: 60_000,
    });

  it('create prints the key alone on its last line; list shows it without the key; revoke makes it 401', async () => {
    const name = uniq('cli');
    const created = cli('create', '--name', name, '--scopes', 'payments:read,cost:read', '--sandbox');
    expect(created.status).toBe(0);
    const lines = created.stdout.trim().split('\n');
    const key = lines[lines.length - 1];
    expect(key).toMatch(/^tk_test_[A-Za-z0-9_-]{40}$/);
    const id = /created (key_[0-9a-f]+)/.exec(created.stdout)![1];

    const ok = await request(stack.app.callback())
      .get(`/checkstatus/${uniq('none')}`)
      .set('X-API-Key', key);
    expect(ok.status).toBe(404); // authenticated: the order simply does not exist
    expect(ok.body).toEqual(paymentError('NOT_FOUND'));

    const listed = cli('list');
    expect(listed.status).toBe(0);
    const line = listed.stdout.split('\n').find((l) => l.startsWith(id))!;
    expect(line).toContain(key.slice(0, 12));
    expect(line).toContain('sandbox');
    expect(line).toContain('payments:read,cost:read');
    expect(listed.stdout).not.toContain(key);

    const revoked = cli('revoke', id);
    expect(revoked.status).toBe(0);
    const refused = await request(stack.app.callback())
      .get(`/checkstatus/${uniq('none')}`)
      .set('X-API-Key', key);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(paymentError('UNAUTHORIZED', { reason: 'revoked' }));
    expect(
      cli('list')
        .stdout.split('\n')
        .find((l) => l.startsWith(id)),
    ).toMatch(/revoked/);
  });

  it('refuses an unknown scope or a missing name, and an unknown id to revoke', () => {
    const bad = cli('create', '--name', 'x', '--scopes', 'payments:everything');
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown scope/);
    expect(cli('create', '--scopes', 'payments:read').status).not.toBe(0);
    expect(cli('revoke', 'key_doesnotexist').status).not.toBe(0);
  });
});
