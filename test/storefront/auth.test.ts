/**
 * Storefront sign-in over HTTP: the identity simulator issues temporary credentials, a presigned
 * GET /auth/apikey/get gives the API key, POST /auth/invalidate/invalidate ends the session.
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { presignUrl } from '../../src/storefront/auth/sigv4';
import { storefrontApp, storefrontError, type StorefrontTestApp } from './helpers';

const HOST = 'api.talat.example';
const NOW = '2026-11-25T12:00:00+07:00';
let t: StorefrontTestApp;
beforeAll(async () => {
  t = await storefrontApp({ STOREFRONT_AUTH_RATE_PER_MIN: '10000' });
});
afterAll(() => t.close());
beforeEach(() => t.at(NOW));

interface Credentials {
  IdentityId: string;
  Credentials: { AccessKeyId: string; SecretKey: string; SessionToken: string; Expiration: number };
}

const identity = (target: string, body: unknown) =>
  request(t.app.callback())
    .post('/dev/identity')
    .set('X-Amz-Target', `AWSCognitoIdentityService.${target}`)
    .send(body as object);

async function signIn(login = `user-${Math.random().toString(36).slice(2)}`): Promise<Credentials> {
  const id = await identity('GetId', { IdentityPoolId: 'ap-southeast-1:pool', Logins: { 'talat.dev': login } });
  expect(id.status).toBe(200);
  const creds = await identity('GetCredentialsForIdentity', { IdentityId: id.body.IdentityId });
  expect(creds.status).toBe(200);
  return creds.body;
}

async function presigned(
  c: Credentials['Credentials'],
  opts: { at?: string; region?: string; service?: string; expiresIn?: number; token?: string } = {},
) {
  const url = await presignUrl({
    url: `https://${HOST}/auth/apikey/get`,
    credentials: {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretKey,
      sessionToken: opts.token ?? c.SessionToken,
    },
    region: opts.region ?? 'ap-southeast-1',
    service: opts.service ?? 'execute-api',
    signingDate: new Date(opts.at ?? NOW),
    expiresIn: opts.expiresIn ?? 300,
  });
  return url.slice(url.indexOf('/auth/'));
}
const getKey = (pathAndQuery: string) => request(t.app.callback()).get(pathAndQuery).set('Host', HOST);
const invalidate = (key?: string) => {
  const r = request(t.app.callback()).post('/auth/invalidate/invalidate');
  return key === undefined ? r : r.set('X-API-Key', key);
};

describe('identity simulator (POST /dev/identity)', () => {
  it('GetId: the same identity for the same login, a new guest identity without one', async () => {
    const a = await identity('GetId', { Logins: { 'talat.dev': 'alice' } });
    expect(a.status).toBe(200);
    expect(a.body.IdentityId).toMatch(/^ap-southeast-1:[0-9a-f-]{36}$/);
    expect((await identity('GetId', { Logins: { 'talat.dev': 'alice' } })).body.IdentityId).toBe(a.body.IdentityId);
    const guest = await identity('GetId', {});
    expect(guest.body.IdentityId).not.toBe(a.body.IdentityId);
    expect(a.headers['cache-control']).toBe('no-store');
  });

  it('GetCredentialsForIdentity: temporary credentials; only the hash of the session token is stored, the secret not at all', async () => {
    const c = await signIn();
    expect(c.Credentials.AccessKeyId).toMatch(/^ASIA[A-Z2-7]{16}$/);
    expect(c.Credentials.Expiration).toBe(Date.parse(NOW) / 1000 + 3600);
    const row = await t.stack.db('identity_credentials').where({ access_key_id: c.Credentials.AccessKeyId }).first();
    expect(row.identity_id).toBe(c.IdentityId);
    expect(
      Buffer.compare(row.session_token_hash, createHash('sha256').update(c.Credentials.SessionToken).digest()),
    ).toBe(0);
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(c.Credentials.SessionToken);
    expect(stored).not.toContain(c.Credentials.SecretKey);
  });

  it('404 for an unknown identity, 400 for a missing field or an unknown operation', async () => {
    expect(
      (
        await identity('GetCredentialsForIdentity', {
          IdentityId: 'ap-southeast-1:00000000-0000-0000-0000-000000000000',
        })
      ).body,
    ).toEqual(storefrontError('NOT_FOUND', 404));
    expect((await identity('GetCredentialsForIdentity', {})).body).toEqual(storefrontError('MISSING_FIELD', 400));
    expect((await identity('DeleteIdentities', {})).body).toEqual(storefrontError('INVALID_INPUT', 400));
  });
});

describe('GET /auth/apikey/get', () => {
  it('issues the storefront API key for a valid presigned request, and returns the same key afterwards', async () => {
    const c = await signIn();
    const first = await getKey(await presigned(c.Credentials));
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).toEqual({
      apiKey: expect.stringMatching(/^sfk_[A-Za-z0-9_-]{43}$/),
      keyId: expect.stringMatching(/^sfkid_/),
      identityId: c.IdentityId,
      createdAt: expect.any(String),
      created: true,
    });
    const again = await getKey(await presigned(c.Credentials));
    expect(again.body).toMatchObject({ apiKey: first.body.apiKey, keyId: first.body.keyId, created: false });
    // new credentials of the same identity: still the same key
    const fresh = await identity('GetCredentialsForIdentity', { IdentityId: c.IdentityId });
    expect((await getKey(await presigned(fresh.body.Credentials))).body.apiKey).toBe(first.body.apiKey);

    const row = await t.stack.db('storefront_api_keys').where({ id: first.body.keyId }).first();
    expect(Buffer.compare(row.key_hash, createHash('sha256').update(first.body.apiKey).digest())).toBe(0);
    expect(JSON.stringify(row)).not.toContain(first.body.apiKey);
  });

  it('400 MISSING_FIELD without the signature parameters, INVALID_INPUT for malformed ones', async () => {
    const none = await getKey('/auth/apikey/get');
    expect(none.status).toBe(400);
    expect(none.body).toEqual(storefrontError('MISSING_FIELD', 400));
    expect(none.body.body.details).toMatchObject({ field: 'X-Amz-Algorithm', reason: 'missing' });
    const c = await signIn();
    const bad = (await presigned(c.Credentials)).replace(/X-Amz-Date=[^&]+/, 'X-Amz-Date=yesterday');
    expect((await getKey(bad)).body).toEqual(storefrontError('INVALID_INPUT', 400));
  });

  it.each<[string, (c: Credentials) => Promise<string>, string]>([
    [
      'a changed signature',
      async (c) =>
        (await presigned(c.Credentials)).replace(
          /X-Amz-Signature=(.)/,
          (_m, ch: string) => `X-Amz-Signature=${ch === 'a' ? 'b' : 'a'}`,
        ),
      'signature',
    ],
    ['another region', (c) => presigned(c.Credentials, { region: 'us-east-1' }), 'scope'],
    ['another service', (c) => presigned(c.Credentials, { service: 's3' }), 'scope'],
    [
      'a signature past its expiry',
      (c) => presigned(c.Credentials, { at: '2026-11-25T11:54:59+07:00', expiresIn: 300 }),
      'expired',
    ],
    ['a date in the future', (c) => presigned(c.Credentials, { at: '2026-11-25T12:10:00+07:00' }), 'not_yet_valid'],
    [
      'a session token of other credentials',
      async (c) => presigned(c.Credentials, { token: (await signIn()).Credentials.SessionToken }),
      'security_token',
    ],
    [
      'an unknown access key',
      (c) => presigned({ ...c.Credentials, AccessKeyId: 'ASIAAAAAAAAAAAAAAAAA' }),
      'unknown_key',
    ],
    ['a wrong secret key', (c) => presigned({ ...c.Credentials, SecretKey: 'x'.repeat(40) }), 'signature'],
  ])('401 UNAUTHORIZED for %s', async (_what, make, reason) => {
    const res = await getKey(await make(await signIn()));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(storefrontError('UNAUTHORIZED', 401));
    expect(res.body.body.details.reason).toBe(reason);
  });

  it('401 when the signature is sent to another host than it was made for', async () => {
    const c = await signIn();
    const res = await request(t.app.callback())
      .get(await presigned(c.Credentials))
      .set('Host', 'other.example');
    expect(res.body.body.details.reason).toBe('signature');
  });

  it('401 once the temporary credentials have expired, even with a fresh signature', async () => {
    const c = await signIn();
    t.at('2026-11-25T13:00:01+07:00');
    const res = await getKey(await presigned(c.Credentials, { at: '2026-11-25T13:00:00+07:00' }));
    expect(res.status).toBe(401);
    expect(res.body.body.details.reason).toBe('credentials_expired');
  });
});

describe('POST /auth/invalidate/invalidate', () => {
  it('401 without an API key or with an unknown one', async () => {
    const none = await invalidate();
    expect(none.status).toBe(401);
    expect(none.body).toEqual(storefrontError('UNAUTHORIZED', 401));
    expect((await invalidate('sfk_unknown')).body).toEqual(storefrontError('UNAUTHORIZED', 401));
  });

  it("ends the caller's session: its key and its credentials stop working at once; signing in again gives a new key", async () => {
    const c = await signIn();
    const other = await identity('GetCredentialsForIdentity', { IdentityId: c.IdentityId }); // a second credential of the same identity
    const { apiKey, keyId } = (await getKey(await presigned(c.Credentials))).body;

    const res = await invalidate(apiKey);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ invalidated: true, keyId, identityId: c.IdentityId, revokedCredentials: 2 });

    const reuse = await invalidate(apiKey);
    expect(reuse.status).toBe(401);
    for (const creds of [c.Credentials, other.body.Credentials]) {
      const denied = await getKey(await presigned(creds));
      expect(denied.status).toBe(401);
      expect(denied.body.body.details.reason).toBe('revoked');
    }

    const fresh = await identity('GetCredentialsForIdentity', { IdentityId: c.IdentityId });
    const renewed = await getKey(await presigned(fresh.body.Credentials));
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ created: true, identityId: c.IdentityId });
    expect(renewed.body.apiKey).not.toBe(apiKey);
    expect((await invalidate(apiKey)).status).toBe(401);
  });

  it('405 METHOD_NOT_ALLOWED for GET', async () => {
    expect((await request(t.app.callback()).get('/auth/invalidate/invalidate')).body).toEqual(
      storefrontError('METHOD_NOT_ALLOWED', 405),
    );
  });
});

describe('rate limit of the sign-in endpoints', () => {
  it('reports X-RateLimit-* and answers 429 RATE_LIMITED with Retry-After over the limit', async () => {
    await t.stack.db('storefront_rate_limits').del();
    const limited = t.appWith({ STOREFRONT_AUTH_RATE_PER_MIN: '2' });
    try {
      const first = await request(limited.callback()).get('/auth/apikey/get');
      expect(first.status).toBe(400);
      expect(first.headers['x-ratelimit-limit']).toBe('2');
      expect(first.headers['x-ratelimit-remaining']).toBe('1');
      expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.parse(NOW) / 1000);
      expect(
        (await request(limited.callback()).post('/auth/invalidate/invalidate')).headers['x-ratelimit-remaining'],
      ).toBe('0');
      const over = await request(limited.callback()).get('/auth/apikey/get');
      expect(over.status).toBe(429);
      expect(over.body).toEqual(storefrontError('RATE_LIMITED', 429));
      expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(over.headers['x-ratelimit-remaining']).toBe('0');
    } finally {
      await t.stack.db('storefront_rate_limits').del();
    }
  });
});
