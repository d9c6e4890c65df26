/**
 * The SigV4 presigned-request verifier on the published vectors (test/fixtures/vectors/sigv4):
 * each verifies at its timestamp, and fails when any part is changed or the time is past expiry.
 */
import fs from 'node:fs';
import path from 'node:path';
import { verifyPresigned, type CredentialResolver, type Sigv4Failure } from '../../src/storefront/auth/sigv4';

const ROOT = path.resolve(__dirname, '..', 'fixtures', 'vectors', 'sigv4');

interface Vector {
  name: string;
  method: string;
  path: string;
  rawQuery: string;
  host: string;
  context: {
    credentials: { access_key_id: string; secret_access_key: string; token?: string };
    expiration_in_seconds: number;
    region: string;
    service: string;
    timestamp: string;
  };
}

const vectors: Vector[] = fs
  .readdirSync(ROOT)
  .filter((d) => fs.existsSync(path.join(ROOT, d, 'query-signed-request.txt')))
  .sort()
  .map((name) => {
    const [requestLine, hostLine] = fs
      .readFileSync(path.join(ROOT, name, 'query-signed-request.txt'), 'utf8')
      .split('\n');
    const [method, target] = requestLine.split(' ');
    const [p, q = ''] = target.split('?');
    return {
      name,
      method,
      path: p,
      rawQuery: q,
      host: hostLine.slice(hostLine.indexOf(':') + 1).trim(),
      context: JSON.parse(fs.readFileSync(path.join(ROOT, name, 'context.json'), 'utf8')),
    };
  });

const resolverOf = (v: Vector): CredentialResolver<string> => ({
  async resolve(id) {
    const c = v.context.credentials;
    if (id !== c.access_key_id) return null;
    return {
      secretAccessKey: c.secret_access_key,
      sessionToken: c.token ? { matches: (t) => t === c.token } : null,
      revoked: false,
      expiresAt: null,
      principal: 'example',
    };
  },
});

interface Change {
  query?: (pairs: [string, string][]) => [string, string][];
  path?: string;
  host?: string;
  method?: string;
  at?: number; // seconds after the vector's timestamp
}

const parse = (raw: string) => raw.split('&').map((p) => p.split('=').map(decodeURIComponent) as [string, string]);
const encode = (pairs: [string, string][]) =>
  pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
const set = (name: string, value: (old: string) => string) => (pairs: [string, string][]) =>
  pairs.map(([k, v]): [string, string] => [k, k === name ? value(v) : v]);

function verify(v: Vector, change: Change = {}) {
  const rawQuery = change.query ? encode(change.query(parse(v.rawQuery))) : v.rawQuery;
  return verifyPresigned(
    {
      method: change.method ?? v.method,
      path: change.path ?? v.path,
      rawQuery,
      headers: { host: change.host ?? v.host },
    },
    {
      resolver: resolverOf(v),
      region: v.context.region,
      service: v.context.service,
      now: new Date(Date.parse(v.context.timestamp) + (change.at ?? 0) * 1000),
    },
  );
}

it('finds the three published vectors', () => {
  expect(vectors.map((v) => v.name)).toEqual([
    'get-vanilla-query',
    'get-vanilla-query-order-key-case',
    'get-vanilla-with-session-token',
  ]);
});

describe.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
  it('verifies at its timestamp, and up to the last second of X-Amz-Expires', async () => {
    expect(await verify(v)).toMatchObject({ ok: true, accessKeyId: 'AKIDEXAMPLE', principal: 'example' });
    expect((await verify(v, { at: v.context.expiration_in_seconds })).ok).toBe(true);
  });

  it.each<[string, Change, Sigv4Failure]>([
    ['past expiry', { at: 3601 }, 'expired'],
    ['long past expiry', { at: 86_400 * 30 }, 'expired'],
    ['more than the allowed skew before X-Amz-Date', { at: -301 }, 'not_yet_valid'],
    ['X-Amz-Algorithm', { query: set('X-Amz-Algorithm', () => 'AWS4-HMAC-SHA512') }, 'algorithm'],
    [
      'the access key id',
      { query: set('X-Amz-Credential', (c) => c.replace('AKIDEXAMPLE', 'AKIDEXAMPLF')) },
      'unknown_key',
    ],
    ['the scope date', { query: set('X-Amz-Credential', (c) => c.replace('20150830', '20150831')) }, 'scope'],
    ['the scope region', { query: set('X-Amz-Credential', (c) => c.replace('us-east-1', 'us-west-2')) }, 'scope'],
    ['the scope service', { query: set('X-Amz-Credential', (c) => c.replace('/service/', '/s3/')) }, 'scope'],
    [
      'the scope terminator',
      { query: set('X-Amz-Credential', (c) => c.replace('aws4_request', 'aws5_request')) },
      'scope',
    ],
    ['X-Amz-Date (same day)', { query: set('X-Amz-Date', () => '20150830T123601Z') }, 'signature'],
    ['X-Amz-Expires', { query: set('X-Amz-Expires', () => '3599') }, 'signature'],
    [
      'X-Amz-SignedHeaders (a header that is not sent)',
      { query: set('X-Amz-SignedHeaders', () => 'host;x-amz-meta') },
      'signed_headers',
    ],
    ['X-Amz-SignedHeaders (without host)', { query: set('X-Amz-SignedHeaders', () => 'x-amz-date') }, 'signed_headers'],
    ['X-Amz-Signature', { query: set('X-Amz-Signature', (s) => (s[0] === 'a' ? 'b' : 'a') + s.slice(1)) }, 'signature'],
    ['the path', { path: '/other' }, 'signature'],
    ['the method', { method: 'POST' }, 'signature'],
    ['the host', { host: 'example.amazonaws.com.evil' }, 'signature'],
    ['an added query parameter', { query: (p) => [...p, ['Param3', 'value3']] }, 'signature'],
  ])('fails when %s is changed', async (_what, change, reason) => {
    expect(await verify(v, change)).toMatchObject({ ok: false, reason });
  });

  it.each([
    'X-Amz-Algorithm',
    'X-Amz-Credential',
    'X-Amz-Date',
    'X-Amz-Expires',
    'X-Amz-SignedHeaders',
    'X-Amz-Signature',
  ])('fails without %s', async (name) => {
    expect(await verify(v, { query: (p) => p.filter(([k]) => k !== name) })).toMatchObject({
      ok: false,
      reason: 'missing',
      field: name,
    });
  });

  it('fails on malformed values (date, expiry beyond 7 days, signature, a repeated parameter)', async () => {
    for (const change of [
      { query: set('X-Amz-Date', () => '2015-08-30T12:36:00Z') },
      { query: set('X-Amz-Expires', () => '604801') },
      { query: set('X-Amz-Expires', () => '-1') },
      { query: set('X-Amz-Signature', (s) => s.toUpperCase()) },
      { query: (p: [string, string][]) => [...p, ['X-Amz-Date', '20150830T123600Z']] as [string, string][] },
    ])
      expect(await verify(v, change)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('requires the session token exactly when the credentials have one', async () => {
    if (v.context.credentials.token) {
      expect(
        await verify(v, {
          query: set('X-Amz-Security-Token', (tok) => tok.slice(0, -1) + (tok.endsWith('7') ? '8' : '7')),
        }),
      ).toMatchObject({ ok: false, reason: 'security_token' });
      expect(await verify(v, { query: (p) => p.filter(([k]) => k !== 'X-Amz-Security-Token') })).toMatchObject({
        ok: false,
        reason: 'security_token',
      });
    } else {
      expect(await verify(v, { query: (p) => [...p, ['X-Amz-Security-Token', 'forged']] })).toMatchObject({
        ok: false,
        reason: 'security_token',
      });
    }
  });
});

it('the order-key-case vector also fails when a signed query value changes', async () => {
  const v = vectors.find((x) => x.name === 'get-vanilla-query-order-key-case')!;
  expect(await verify(v, { query: set('Param1', () => 'value2') })).toMatchObject({ ok: false, reason: 'signature' });
  expect(await verify(v, { query: (p) => p.filter(([k]) => k !== 'Param2') })).toMatchObject({
    ok: false,
    reason: 'signature',
  });
});
