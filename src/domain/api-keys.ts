/**
 * API keys of the payment API: scopes, modes and the key format. Pure code (hashing lives in
 * src/http/middleware/api-key.ts, which may use node:crypto).
 *
 * A key looks like `tk_live_<40 base64url chars>` or `tk_test_<...>` (sandbox); only its sha256
 * hash and its first characters (for display) are stored.
 */
import { MODES, type Mode } from './mode';

export const SCOPES = [
  'payments:write',
  'payments:read',
  'cost:read',
  'bank:write',
  'bank:read',
  'webhooks:manage',
  'codec',
  // GET /metrics when METRICS_ACCESS is key (the default in production)
  'metrics',
  // operator scopes: every merchant's reconciliation (docs/reconciliation.md); refunds of keyless
  // (public) payments (docs/payment-api.md)
  'reconciliation:read',
  'reconciliation:manage',
  'refunds:public',
] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

export const API_KEY_MODES = MODES;
export type ApiKeyMode = Mode;

/** What a handler knows about the caller once the key is verified (ctx.state.apiKey). */
export interface ApiKeyInfo {
  id: string;
  name: string;
  scopes: string[];
  mode: ApiKeyMode;
  /** the merchant account the key belongs to (api_keys.account_id; absent: the key's own id): scopes order ids */
  accountId?: string;
}

export const API_KEY_PATTERN = /^tk_(live|test)_[A-Za-z0-9_-]{40}$/;
export const API_KEY_PREFIX_LENGTH = 12;
export const keyPrefixOf = (mode: ApiKeyMode): string => (mode === 'live' ? 'tk_live_' : 'tk_test_');
