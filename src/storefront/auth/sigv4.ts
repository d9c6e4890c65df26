/**
 * Verification of SigV4 presigned query parameters, as the storefront's sign-in sends them to GET
 * /auth/apikey/get. A request verifies when, and only when: X-Amz-Algorithm is AWS4-HMAC-SHA256;
 * X-Amz-Credential is <key id>/<yyyymmdd>/<region>/<service>/aws4_request for the day of
 * X-Amz-Date and this verifier's region and service; the time is within the skew and
 * X-Amz-Expires (<= 7 days); X-Amz-SignedHeaders is sorted, lower-case, includes host and names
 * present headers; the key is known, live, and X-Amz-Security-Token matches when temporary; and
 * X-Amz-Signature equals the one @smithy/signature-v4 recomputes (constant-time compare).
 * Parameter names are the X-Amz- spelling of the contract's X-<vendor>- parameters.
 */
import { timingSafeEqual } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

export const SIGV4 = {
  algorithm: 'X-Amz-Algorithm',
  credential: 'X-Amz-Credential',
  date: 'X-Amz-Date',
  expires: 'X-Amz-Expires',
  signedHeaders: 'X-Amz-SignedHeaders',
  signature: 'X-Amz-Signature',
  securityToken: 'X-Amz-Security-Token',
} as const;
const REQUIRED = ['algorithm', 'credential', 'date', 'expires', 'signedHeaders', 'signature'] as const;
const ALGORITHM = 'AWS4-HMAC-SHA256';
const MAX_EXPIRES = 604_800;

export interface PresignedRequest {
  method: string;
  path: string;
  /** the query string as received, without the leading `?` */
  rawQuery: string;
  /** request headers, lower-case names */
  headers: Record<string, string | string[] | undefined>;
}

/** Credentials the identity service knows for an access key id. */
export interface ResolvedCredential<P> {
  secretAccessKey: string;
  /** temporary credentials carry a session token; null for long-term keys */
  sessionToken: null | { matches(token: string): boolean };
  revoked: boolean;
  expiresAt: Date | null;
  principal: P;
}

export interface CredentialResolver<P> {
  resolve(accessKeyId: string): Promise<ResolvedCredential<P> | null>;
}

/** Why a request did not verify. `malformed` and `missing` are the caller's syntax (400); the rest is 401. */
export type Sigv4Failure =
  | 'missing'
  | 'malformed'
  | 'algorithm'
  | 'scope'
  | 'not_yet_valid'
  | 'expired'
  | 'signed_headers'
  | 'unknown_key'
  | 'revoked'
  | 'credentials_expired'
  | 'security_token'
  | 'signature';

export type Sigv4Result<P> =
  | { ok: true; accessKeyId: string; principal: P; signedAt: Date; expiresAt: Date }
  | { ok: false; reason: Sigv4Failure; field?: string; message: string };

export interface VerifyOptions<P> {
  resolver: CredentialResolver<P>;
  region: string;
  service: string;
  now: Date;
  /** clock skew tolerated before X-Amz-Date (seconds, default 300) */
  maxSkewSeconds?: number;
}

const fail = <P>(reason: Sigv4Failure, message: string, field?: string): Sigv4Result<P> => ({
  ok: false,
  reason,
  message,
  ...(field ? { field } : {}),
});

/** Query pairs decoded with decodeURIComponent (`+` stays a plus, as SigV4 encodes spaces as %20). */
export function parseQuery(raw: string): [string, string][] | null {
  const pairs: [string, string][] = [];
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    try {
      pairs.push(
        eq < 0
          ? [decodeURIComponent(part), '']
          : [decodeURIComponent(part.slice(0, eq)), decodeURIComponent(part.slice(eq + 1))],
      );
    } catch {
      return null;
    }
  }
  return pairs;
}

function parseAmzDate(s: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return null;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
  return d.toISOString().replace(/[-:]|\.\d{3}/g, '') === s ? d : null;
}

function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h.join(',') : h;
}

export async function verifyPresigned<P>(req: PresignedRequest, opts: VerifyOptions<P>): Promise<Sigv4Result<P>> {
  const pairs = parseQuery(req.rawQuery);
  if (!pairs) return fail('malformed', 'the query string is not valid percent-encoding');
  const params: Partial<Record<keyof typeof SIGV4, string>> = {};
  const names = Object.entries(SIGV4) as [keyof typeof SIGV4, string][];
  for (const [k, v] of pairs) {
    const hit = names.find(([, name]) => name === k);
    if (!hit) continue;
    if (params[hit[0]] !== undefined) return fail('malformed', `${k} is given more than once`, k);
    params[hit[0]] = v;
  }
  for (const key of REQUIRED) if (!params[key]) return fail('missing', `${SIGV4[key]} is required`, SIGV4[key]);
  const p = params as Record<(typeof REQUIRED)[number], string> & { securityToken?: string };

  const signedAt = parseAmzDate(p.date);
  if (!signedAt) return fail('malformed', `${SIGV4.date} must be a UTC time as yyyymmddThhmmssZ`, SIGV4.date);
  if (!/^\d{1,6}$/.test(p.expires) || +p.expires < 1 || +p.expires > MAX_EXPIRES)
    return fail(
      'malformed',
      `${SIGV4.expires} must be a whole number of seconds from 1 to ${MAX_EXPIRES}`,
      SIGV4.expires,
    );
  if (!/^[0-9a-f]{64}$/.test(p.signature))
    return fail('malformed', `${SIGV4.signature} must be 64 lower-case hex digits`, SIGV4.signature);
  const scope = p.credential.split('/');
  if (scope.length !== 5 || scope.some((s) => !s))
    return fail(
      'malformed',
      `${SIGV4.credential} must be <key id>/<date>/<region>/<service>/aws4_request`,
      SIGV4.credential,
    );
  const signedHeaders = p.signedHeaders.split(';');
  if (signedHeaders.some((h) => !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(h)))
    return fail(
      'malformed',
      `${SIGV4.signedHeaders} must list lower-case header names separated by ;`,
      SIGV4.signedHeaders,
    );

  if (p.algorithm !== ALGORITHM) return fail('algorithm', `${SIGV4.algorithm} must be ${ALGORITHM}`, SIGV4.algorithm);
  const [accessKeyId, day, region, service, terminator] = scope;
  if (day !== p.date.slice(0, 8) || region !== opts.region || service !== opts.service || terminator !== 'aws4_request')
    return fail(
      'scope',
      `the credential scope must be <key id>/${p.date.slice(0, 8)}/${opts.region}/${opts.service}/aws4_request`,
      SIGV4.credential,
    );

  const expiresAt = new Date(signedAt.getTime() + +p.expires * 1000);
  const skew = (opts.maxSkewSeconds ?? 300) * 1000;
  if (opts.now.getTime() < signedAt.getTime() - skew)
    return fail('not_yet_valid', `${SIGV4.date} is in the future`, SIGV4.date);
  if (opts.now.getTime() > expiresAt.getTime())
    return fail('expired', 'the presigned request has expired', SIGV4.expires);

  const sortedUnique = [...new Set(signedHeaders)].sort();
  if (sortedUnique.join(';') !== p.signedHeaders || !signedHeaders.includes('host'))
    return fail(
      'signed_headers',
      `${SIGV4.signedHeaders} must be sorted, without repeats, and include host`,
      SIGV4.signedHeaders,
    );
  const headers: Record<string, string> = {};
  for (const h of signedHeaders) {
    const v = headerValue(req.headers[h]);
    if (v === undefined) return fail('signed_headers', `signed header ${h} is not in the request`, SIGV4.signedHeaders);
    headers[h] = v;
  }

  const cred = await opts.resolver.resolve(accessKeyId);
  if (!cred) return fail('unknown_key', 'the access key is not known', SIGV4.credential);
  if (cred.revoked) return fail('revoked', 'the credentials have been invalidated', SIGV4.credential);
  if (cred.expiresAt && opts.now.getTime() > cred.expiresAt.getTime())
    return fail('credentials_expired', 'the credentials have expired', SIGV4.credential);
  const token = params.securityToken;
  if (cred.sessionToken ? !token || !cred.sessionToken.matches(token) : token !== undefined)
    return fail('security_token', `${SIGV4.securityToken} does not belong to these credentials`, SIGV4.securityToken);

  // Recompute: every query parameter but the ones presign sets itself, the signed headers only.
  const own = new Set<string>(Object.values(SIGV4));
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of pairs) {
    if (own.has(k)) continue;
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const signer = new SignatureV4({
    credentials: { accessKeyId, secretAccessKey: cred.secretAccessKey, sessionToken: token },
    region,
    service,
    sha256: Sha256,
    uriEscapePath: true,
  });
  const unsigned = new HttpRequest({
    method: req.method.toUpperCase(),
    protocol: 'https:',
    hostname: headers.host,
    path: req.path,
    query,
    headers,
  });
  const signedSet = new Set(signedHeaders);
  const expected = await signer.presign(unsigned, {
    signingDate: signedAt,
    expiresIn: +p.expires,
    signableHeaders: signedSet,
    unhoistableHeaders: signedSet,
  });
  const given = Buffer.from(p.signature, 'utf8');
  const computed = Buffer.from(String(expected.query?.[SIGV4.signature]), 'utf8');
  const same =
    computed.length === given.length &&
    timingSafeEqual(computed, given) &&
    expected.query?.[SIGV4.signedHeaders] === p.signedHeaders;
  if (!same) return fail('signature', 'the signature does not match', SIGV4.signature);
  return { ok: true, accessKeyId, principal: cred.principal, signedAt, expiresAt };
}

/** A presigned URL (client side): used by the identity simulator's docs, the tests and the bench scripts. */
export async function presignUrl(opts: {
  url: string;
  method?: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  region: string;
  service: string;
  signingDate?: Date;
  expiresIn?: number;
}): Promise<string> {
  const u = new URL(opts.url);
  const query: Record<string, string> = {};
  u.searchParams.forEach((v, k) => (query[k] = v));
  const signer = new SignatureV4({
    credentials: opts.credentials,
    region: opts.region,
    service: opts.service,
    sha256: Sha256,
    uriEscapePath: true,
  });
  const signed = await signer.presign(
    new HttpRequest({
      method: opts.method ?? 'GET',
      protocol: u.protocol,
      hostname: u.hostname,
      port: u.port ? +u.port : undefined,
      path: u.pathname,
      query,
      headers: { host: u.host },
    }),
    { signingDate: opts.signingDate, expiresIn: opts.expiresIn ?? 300 },
  );
  const qs = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return `${u.origin}${u.pathname}?${qs}`;
}
