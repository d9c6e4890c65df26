/**
 * Console sessions: the cookie holds a random token (256 bits); the table holds its sha256 and
 * the key id it signed in with (never the key). HttpOnly, SameSite=Strict, Path=/console, Secure
 * on an https PUBLIC_BASE_URL; idle timeout. The CSRF token of a session is an HMAC of its id;
 * before sign-in a random cookie and its HMAC make the sign-in form's token (double submit).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';

export const SESSION_COOKIE = 'talat_console';
export const PRE_COOKIE = 'talat_console_pre';
export const LANG_COOKIE = 'talat_console_lang';
/** A session unused this long is over (sign in again). */
export const CONSOLE_IDLE_MS = 30 * 60 * 1000;

export const newToken = (): string => randomBytes(32).toString('base64url');
export const sessionIdOf = (token: string): string => createHash('sha256').update(token).digest('hex');
export const csrfOf = (secret: string, purpose: 'session' | 'pre', id: string): string =>
  createHmac('sha256', secret).update(`talat-console-csrf-v1\n${purpose}\n${id}`).digest('base64url');

export const sameToken = (a: unknown, b: string): boolean =>
  typeof a === 'string' && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export function cookieOf(ctx: Context, name: string): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** Set-Cookie by hand (Koa's refuses Secure behind a TLS proxy without app.proxy). */
export function setCookie(ctx: Context, name: string, value: string, opts: { secure: boolean; maxAgeS?: number }) {
  const parts = [`${name}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict'];
  if (opts.secure) parts.push('Secure');
  if (opts.maxAgeS !== undefined) parts.push(`Max-Age=${opts.maxAgeS}`);
  ctx.append('Set-Cookie', parts.join('; '));
}
