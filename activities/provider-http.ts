/**
 * One JSON request to a provider (the partner bank, the card provider) and how its reply is
 * classified: 2xx returned, 4xx a non-retryable ApplicationFailure, 5xx and transport errors
 * retried by Temporal. Shared by the bank, card and refund activities.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityFailureType } from '../src/domain/temporal';

export interface HttpReply {
  status: number;
  body: unknown;
}

/** One JSON request with a timeout; never throws for an HTTP status, only for transport errors. */
export async function httpJson(
  url: string,
  opts: { method: string; body?: unknown; headers?: Record<string, string>; timeoutMs: number },
): Promise<HttpReply> {
  const res = await fetch(url, {
    method: opts.method,
    headers: {
      accept: 'application/json',
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.timeoutMs),
    redirect: 'error',
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body };
}

/** Classify a provider reply: 2xx returned, 4xx non-retryable of `type`, 5xx retryable. */
export function expectSuccess(reply: HttpReply, type: ActivityFailureType, what: string): HttpReply {
  if (reply.status >= 200 && reply.status < 300) return reply;
  const message = messageOf(reply.body) ?? `HTTP ${reply.status}`;
  if (reply.status >= 400 && reply.status < 500)
    throw ApplicationFailure.nonRetryable(message, type, { status: reply.status, body: reply.body });
  throw new Error(`${what} answered ${reply.status}: ${message}`);
}

const messageOf = (body: unknown): string | undefined =>
  body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string'
    ? (body as { message: string }).message
    : undefined;
