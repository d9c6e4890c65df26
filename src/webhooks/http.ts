/**
 * The webhook POST: node:http(s) with a hard timeout, the response drained and dropped, and the
 * destination policy of src/webhooks/url-policy.ts applied again at connect time: the static
 * rules before anything is sent, then every address of a host name checked by the lookup the
 * socket connects with (so a name that now resolves to a private address is refused).
 *
 * What the integrator sees of a failure (attempts, dead letters) is neutral: `connection
 * failed` for anything before an HTTP response (a refused destination, DNS, a closed port,
 * a reset, something that does not speak HTTP) and `timeout`; the precise cause goes to the
 * log only, so the webhook API cannot be used to map ports or services.
 */
import http from 'node:http';
import https from 'node:https';
import { policyLookup, staticUrlProblem, type UrlPolicy } from './url-policy';

export interface PostResult {
  statusCode?: number;
  /** the neutral category shown to the integrator: `connection failed` or `timeout` */
  error?: string;
  /** the precise cause, for the log only */
  detail?: string;
  durationMs: number;
}

export const CONNECTION_FAILED = 'connection failed';
export const TIMEOUT = 'timeout';

export function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; policy: UrlPolicy; onProgress?: () => void },
): Promise<PostResult> {
  const started = Date.now();
  const done = (r: Omit<PostResult, 'durationMs'>): PostResult => ({ ...r, durationMs: Date.now() - started });
  return new Promise((resolve) => {
    const refused = staticUrlProblem(target, opts.policy);
    if (refused) return resolve(done({ error: CONNECTION_FAILED, detail: refused }));
    const url = new URL(target);
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Talat-Webhooks/1.0' },
        lookup: policyLookup(opts.policy) as never,
        agent: false,
      },
      (res) => {
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > 64 * 1024) res.destroy();
        });
        res.on('close', () => {
          clearTimeout(timer);
          resolve(done({ statusCode: res.statusCode }));
        });
        res.on('error', () => undefined);
      },
    );
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`no response within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    const beat = opts.onProgress ? setInterval(opts.onProgress, 1000) : undefined;
    req.on('close', () => beat && clearInterval(beat));
    req.on('error', (e) => {
      clearTimeout(timer);
      resolve(done({ error: timedOut ? TIMEOUT : CONNECTION_FAILED, detail: e.message }));
    });
    req.end(body);
  });
}
