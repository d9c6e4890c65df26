/**
 * API keys of the payment API (header X-API-Key).
 *
 * Contract:
 *  - Keys are stored only as their sha256 hash, with a short prefix for display, scopes and a
 *    mode (live | sandbox). The key itself is shown once, when it is created.
 *  - `requireApiKey(scope)`: no key, an unknown key or a revoked key -> 401 UNAUTHORIZED; a valid
 *    key without `scope` -> 403 FORBIDDEN; otherwise ctx.state.apiKey = {id, name, scopes, mode}.
 *  - `apiKeyContext(db)` (run once per request by createApp) gives each request a memoised lookup, so
 *    the rate limiter and requireApiKey share one database round trip.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware, Next } from 'koa';
import type { Db } from '../../db/knex';
import {
  API_KEY_PATTERN,
  API_KEY_PREFIX_LENGTH,
  keyPrefixOf,
  isScope,
  type ApiKeyInfo,
  type ApiKeyMode,
} from '../../domain/api-keys';
import { AppError, ErrorCode } from '../../domain/errors';
import { newId } from '../../ids';
import { REVOKED_CHANNEL, revocationFeed, type RevocationFeed } from './key-revocations';

export type { ApiKeyInfo };

/** Result of looking up the request's X-API-Key. */
export type KeyLookup = { status: 'valid'; key: ApiKeyInfo } | { status: 'missing' | 'invalid' | 'revoked' };

declare module 'koa' {
  interface DefaultState {
    apiKey?: ApiKeyInfo;
    /** memoised lookup of this request's X-API-Key (installed by apiKeyContext) */
    lookupApiKey?: () => Promise<KeyLookup>;
  }
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  mode: ApiKeyMode;
  created_at: Date;
  revoked_at: Date | null;
  account_id?: string;
}

export async function createApiKey(
  db: Db,
  opts: { name: string; scopes: string[]; mode: ApiKeyMode },
): Promise<{ id: string; key: string; prefix: string; name: string; scopes: string[]; mode: ApiKeyMode }> {
  const name = opts.name.trim();
  if (!name || name.length > 100) throw new Error('name: 1 to 100 characters');
  const scopes = [...new Set(opts.scopes.map((s) => s.trim()).filter(Boolean))];
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new Error(`unknown scope(s): ${unknown.join(', ')}`);
  if (scopes.length === 0) throw new Error('at least one scope is needed');
  const key = keyPrefixOf(opts.mode) + randomBytes(30).toString('base64url');
  const id = newId('key');
  const prefix = key.slice(0, API_KEY_PREFIX_LENGTH);
  await db('api_keys').insert({ id, name, prefix, key_hash: hashApiKey(key), scopes, mode: opts.mode });
  return { id, key, prefix, name, scopes, mode: opts.mode };
}

/** Every key, newest last: never the key itself (it is not stored), nor its hash. */
export async function listApiKeys(db: Db): Promise<ApiKeyRow[]> {
  return db('api_keys')
    .select('id', 'name', 'prefix', 'scopes', 'mode', 'created_at', 'revoked_at', 'account_id')
    .orderBy('created_at');
}

/**
 * Link key `id` into the account of key `to` (docs/concepts.md: order ids are unique per account
 * and mode): its new payments share that account's order ids; its earlier payments keep theirs.
 * Refused (the reason) when either key is unknown or revoked, `id` is already in that account or
 * linked to another, or other keys are linked to `id`. The notice on REVOKED_CHANNEL makes every
 * gateway's key cache read the key's new account at once.
 */
export async function linkApiKey(db: Db, id: string, to: string): Promise<{ accountId: string } | { refused: string }> {
  return db.transaction(async (trx) => {
    const rows = await trx('api_keys').whereIn('id', [id, to]).forUpdate().select('id', 'account_id', 'revoked_at');
    const key = rows.find((r) => r.id === id);
    const account = rows.find((r) => r.id === to);
    for (const [k, kid] of [
      [key, id],
      [account, to],
    ] as const) {
      if (!k) return { refused: `no API key ${kid}` };
      if (k.revoked_at) return { refused: `API key ${kid} is revoked` };
    }
    if (key.account_id === account.account_id)
      return { refused: `API key ${id} is already in account ${key.account_id}` };
    if (key.account_id !== key.id) return { refused: `API key ${id} is already linked to account ${key.account_id}` };
    const members = await trx('api_keys').where({ account_id: id }).whereNot({ id }).orderBy('id').pluck('id');
    if (members.length > 0)
      return { refused: `API key ${id} is the account of ${members.join(', ')}: link those keys instead` };
    await trx('api_keys').where({ id }).update({ account_id: account.account_id });
    await trx.raw('select pg_notify(?, ?)', [REVOKED_CHANNEL, id]);
    return { accountId: String(account.account_id) };
  });
}

/**
 * Revoke a key; false when there is no such key. Revoking twice keeps the first time. The notice
 * on REVOKED_CHANNEL goes out with the commit: every gateway's key cache forgets at once.
 */
export async function revokeApiKey(db: Db, id: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const found = await trx('api_keys').where({ id }).first('id');
    if (!found) return false;
    await trx('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
    await trx.raw('select pg_notify(?, ?)', [REVOKED_CHANNEL, id]);
    return true;
  });
}

/** A key by its id, as a verified key would look (undefined when unknown or revoked): for a key's stored objects. */
export async function apiKeyInfoById(db: Db, id: string): Promise<ApiKeyInfo | undefined> {
  const row = await db('api_keys').where({ id }).whereNull('revoked_at').first<ApiKeyRow | undefined>();
  return row
    ? { id: row.id, name: row.name, scopes: row.scopes, mode: row.mode, accountId: row.account_id }
    : undefined;
}

/** A lookup that needs no database: no key, or one that cannot be a key. */
const lookupWithoutDb = (presented: string | undefined): KeyLookup | undefined =>
  !presented ? { status: 'missing' } : !API_KEY_PATTERN.test(presented) ? { status: 'invalid' } : undefined;

export async function lookupApiKey(db: Db, presented: string | undefined): Promise<KeyLookup> {
  const known = lookupWithoutDb(presented);
  if (known) return known;
  const row = await db('api_keys')
    .where({ key_hash: hashApiKey(presented!) })
    .first<ApiKeyRow | undefined>('id', 'name', 'scopes', 'mode', 'revoked_at', 'account_id');
  if (!row) return { status: 'invalid' };
  if (row.revoked_at) return { status: 'revoked' };
  const key = { id: row.id, name: row.name, scopes: row.scopes, mode: row.mode, accountId: row.account_id };
  return { status: 'valid', key };
}

export type KeyLookups = ((presented: string | undefined) => Promise<KeyLookup>) & {
  /** the lookup when it is known now (no key, a malformed one, a settled fresh entry), else undefined */
  peek(presented: string | undefined): KeyLookup | undefined;
};

/**
 * Key lookups reused for `ttlMs` (0: never): valid, unknown and revoked alike, so neither an
 * integrator's calls nor a flood of bad keys costs a query each. A revocation is seen at once:
 * an entry counts only in the revocation feed's generation it was made in (./key-revocations.ts),
 * and nothing is cached while the feed is not listening. Bounded: the oldest go first past `max`.
 */
export function keyLookupCache(
  db: Db,
  ttlMs: number,
  max = 10_000,
  now: () => number = () => performance.now(),
  feed: RevocationFeed | undefined = ttlMs > 0 ? revocationFeed(db) : undefined,
): KeyLookups {
  type Entry = { at: number; gen: number; lookup: Promise<KeyLookup>; settled?: KeyLookup };
  const entries = new Map<string, Entry>();
  const fresh = (hit: Entry | undefined, gen: number | undefined): hit is Entry =>
    !!hit && hit.gen === gen && now() - hit.at < ttlMs;
  const lookups = (presented: string | undefined): Promise<KeyLookup> => {
    const gen = feed?.generation();
    if (ttlMs <= 0 || !presented || gen === undefined) return lookupApiKey(db, presented);
    const hit = entries.get(presented);
    if (fresh(hit, gen)) return hit.lookup;
    const lookup = lookupApiKey(db, presented);
    const entry: Entry = { at: now(), gen, lookup };
    entries.delete(presented);
    entries.set(presented, entry);
    lookup.then(
      (found) => void (entry.settled = found),
      () => entries.get(presented) === entry && entries.delete(presented), // a failed query is not remembered
    );
    if (entries.size > max) entries.delete(entries.keys().next().value!);
    return lookup;
  };
  return Object.assign(lookups, {
    peek(presented: string | undefined): KeyLookup | undefined {
      const known = lookupWithoutDb(presented);
      if (known || ttlMs <= 0) return known;
      const hit = entries.get(presented!);
      return fresh(hit, feed?.generation()) ? hit.settled : undefined;
    },
  });
}

/** A step run once per request by createApp: a memoised key lookup in ctx.state.lookupApiKey. */
export function apiKeyContext(lookup: (presented: string | undefined) => Promise<KeyLookup>): (ctx: Context) => void {
  return (ctx: Context) => {
    let memo: Promise<KeyLookup> | undefined;
    ctx.state.lookupApiKey = () => (memo ??= lookup(ctx.get('X-API-Key') || undefined));
  };
}

function lookupOf(ctx: Context): Promise<KeyLookup> {
  if (!ctx.state.lookupApiKey) throw new Error('apiKeyContext(db) is not installed on this app');
  return ctx.state.lookupApiKey();
}

/** The 401 of a request without a usable key. */
export const unauthorized = (reason: 'missing' | 'invalid' | 'revoked') =>
  new AppError(
    ErrorCode.UNAUTHORIZED,
    reason === 'missing'
      ? 'An API key is required (header X-API-Key)'
      : reason === 'revoked'
        ? 'The API key has been revoked'
        : 'Invalid API key',
    { reason },
  );

/** A request's headers by name: a Koa context, or `headersOf` a plain node request (the worker's port). */
export type HeaderSource = { get(name: string): string };
export const headersOf = (req: IncomingMessage): HeaderSource => ({
  get: (name) => String(req.headers[name.toLowerCase()] ?? ''),
});

/** The key of a call to an operator endpoint: X-API-Key, or `Authorization: Bearer` (what a Prometheus scraper sends). */
export const presentedKey = (h: HeaderSource): string | undefined =>
  h.get('X-API-Key') || /^Bearer\s+(.+)$/i.exec(h.get('Authorization'))?.[1] || undefined;

/** An operator endpoint's check: a valid key (X-API-Key or Bearer) with `scope`; `orElse` ends the 401's text. */
export async function requireOperatorKey(db: Db, h: HeaderSource, scope: string, orElse = ''): Promise<void> {
  const found = await lookupApiKey(db, presentedKey(h));
  if (found.status !== 'valid')
    throw new AppError(
      ErrorCode.UNAUTHORIZED,
      `An API key with the scope ${scope} is required (X-API-Key or Authorization: Bearer)${orElse}`,
      { reason: found.status },
    );
  if (!found.key.scopes.includes(scope))
    throw new AppError(ErrorCode.FORBIDDEN, `The API key lacks the scope ${scope}`, { requiredScope: scope });
}

/** requireApiKey()'s middleware carries its scope here, for the edge (src/app/edge.ts). */
export const REQUIRED_SCOPE = Symbol('required scope');

/** Require a valid key with `scope`; sets ctx.state.apiKey. */
export function requireApiKey(scope: string): Middleware {
  const middleware = async (ctx: Context, next: Next) => {
    const found = await lookupOf(ctx);
    if (found.status !== 'valid') throw unauthorized(found.status);
    if (!found.key.scopes.includes(scope)) {
      throw new AppError(ErrorCode.FORBIDDEN, `The API key lacks the scope ${scope}`, {
        requiredScope: scope,
        scopes: found.key.scopes,
      });
    }
    ctx.state.apiKey = found.key;
    await next();
  };
  return Object.assign(middleware, { [REQUIRED_SCOPE]: scope });
}

/**
 * For public endpoints that accept a key when one is given (POST /cardpayment): no header ->
 * anonymous; a header -> it must be valid and carry `scope`.
 */
export function optionalApiKey(scope: string): Middleware {
  const required = requireApiKey(scope);
  return async (ctx: Context, next: Next) => {
    if (!ctx.get('X-API-Key')) return next();
    return required(ctx, next);
  };
}
