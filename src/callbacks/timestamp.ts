/**
 * Callback timestamps: ISO 8601 UTC in JSON payloads, unix seconds in X-Timestamp. A timestamp
 * older than CALLBACK_MAX_AGE_S or more than 60 s in the future is refused (INVALID_TIMESTAMP).
 */
import { AppError, ErrorCode } from '../domain/errors';

const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]00:?00)$/;
const UNIX_SECONDS = /^\d{1,12}$/;

/** Milliseconds since the epoch of an ISO 8601 UTC timestamp, or undefined when it is not one. */
export function parseIsoUtc(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = ISO_UTC.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${(m[7] ?? '').slice(0, 4)}Z`);
  if (Number.isNaN(ms)) return undefined;
  // reject dates that Date.parse rolls over (2026-02-30)
  const d = new Date(ms);
  if (d.getUTCDate() !== Number(m[3]) || d.getUTCMonth() + 1 !== Number(m[2])) return undefined;
  return ms;
}

export function parseUnixSeconds(text: unknown): number | undefined {
  return typeof text === 'string' && UNIX_SECONDS.test(text) ? Number(text) * 1000 : undefined;
}

export interface TimestampWindow {
  maxAgeSeconds: number;
  maxFutureSeconds: number;
}

/** Throws INVALID_TIMESTAMP unless `ms` lies in [now - maxAge, now + maxFuture]. */
export function assertFresh(ms: number | undefined, window: TimestampWindow, nowMs = Date.now()): void {
  if (ms === undefined) throw new AppError(ErrorCode.INVALID_TIMESTAMP, 'timestamp is not a valid timestamp');
  if (ms < nowMs - window.maxAgeSeconds * 1000)
    throw new AppError(ErrorCode.INVALID_TIMESTAMP, `timestamp is older than ${window.maxAgeSeconds} seconds`);
  if (ms > nowMs + window.maxFutureSeconds * 1000)
    throw new AppError(
      ErrorCode.INVALID_TIMESTAMP,
      `timestamp is more than ${window.maxFutureSeconds} seconds in the future`,
    );
}
