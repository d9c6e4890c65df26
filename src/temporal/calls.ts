/**
 * Every gateway call to Temporal is bounded: Temporal unreachable or not answering in time is a
 * 503 SERVICE_UNAVAILABLE, never a hang (withTemporal, withinDeadline).
 */
import type { Client } from '@temporalio/client';
import { AppError, ErrorCode } from '../domain/errors';
import { temporalReachable } from './client';

/** Longest time a gateway call to Temporal may take before the request is answered 503. */
export const TEMPORAL_CALL_TIMEOUT_MS = 10_000;

/**
 * gRPC UNAVAILABLE / DEADLINE_EXCEEDED / CANCELLED or a refused connection: Temporal cannot be
 * reached, or did not answer in time. CANCELLED is a deadline too: when a call's deadline passes,
 * the server may end the stream itself (RST_STREAM CANCEL) before the client's own timer fires,
 * and grpc-js then reports "1 CANCELLED: Call cancelled" instead of DEADLINE_EXCEEDED.
 */
export function isUnavailable(e: unknown): boolean {
  const err = e as { code?: number; cause?: unknown; message?: string; name?: string; details?: unknown };
  if (!err) return false;
  if (err.code === 14 || err.code === 4) return true;
  if (err.code === 1 && typeof err.details === 'string') return true; // a gRPC status, not another code 1
  if (err.name === 'ServiceError' && /UNAVAILABLE|DEADLINE|ECONNREFUSED|connect/i.test(String(err.message)))
    return true;
  return err.cause !== undefined && err.cause !== e ? isUnavailable(err.cause) : false;
}

const unavailable = () =>
  new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Payment engine is unavailable, try again later', {
    service: 'temporal',
  });

export async function withTemporal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isUnavailable(e)) throw unavailable();
    throw e;
  }
}

/** How long after withinDeadline's timer a call's own gRPC deadline passes (the timer answers first). */
export const CALL_DEADLINE_GRACE_MS = 1_000;

/** A call still running after this long makes the gateway ask whether Temporal is reachable at all. */
export const PROBE_AFTER_MS = 1_000;

/**
 * Run `fn` (calls on `client`) with a deadline: when it passes, the calls are aborted and the
 * result is `onTimeout()` (by default a 503 SERVICE_UNAVAILABLE). The calls also carry a gRPC
 * deadline CALL_DEADLINE_GRACE_MS later, so a call that does not honour the abort still ends soon
 * after the answer was given (a client on a NativeConnection ignores it: seen going on for 30 s
 * with a Temporal that accepted connections and never answered).
 * The client retries an unreachable server for a long time, so a call that has not finished after
 * PROBE_AFTER_MS is checked with a short reachability probe: Temporal down -> 503 at once instead
 * of at the deadline.
 */
export async function withinDeadline<T>(
  client: Client,
  ms: number,
  fn: () => Promise<T>,
  onTimeout?: () => T,
): Promise<T> {
  const ctrl = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  const timedOut = Symbol('timeout');
  const down = Symbol('down');
  try {
    const r = await Promise.race([
      withTemporal(() =>
        client.withDeadline(Date.now() + ms + CALL_DEADLINE_GRACE_MS, () => client.withAbortSignal(ctrl.signal, fn)),
      ),
      new Promise<typeof timedOut>((resolve) => timers.push(setTimeout(() => resolve(timedOut), ms))),
      new Promise<typeof down>((resolve) =>
        timers.push(
          setTimeout(
            () => {
              void temporalReachable(client, 2_000).then((up) => up || resolve(down));
            },
            Math.min(PROBE_AFTER_MS, ms),
          ),
        ),
      ),
    ]);
    if (r !== timedOut && r !== down) return r;
    ctrl.abort();
    if (r === timedOut && onTimeout) return onTimeout();
    throw unavailable();
  } finally {
    timers.forEach(clearTimeout);
  }
}
