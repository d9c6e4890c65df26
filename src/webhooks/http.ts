/**
 * The webhook POST: node:http(s) with a hard timeout, the response drained and dropped, and the
 * destination policy (./url-policy.ts) applied again at connect: the static rules first, then
 * every address checked by the lookup the socket connects with. Connections are kept alive per
 * policy (4 s idle, at most 16 idle per host); a POST a reused socket fails before any answer is
 * sent once more on a new connection, within the same timeout. What the integrator sees of a
 * failure is neutral (`connection failed`, `timeout`); the precise cause goes to the log only, so
 * the webhook API cannot be used to map ports or services.
 */
import http from 'node:http';
import https from 'node:https';
import { systemResolver, type Resolver } from '../resolver';
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

const KEEP_ALIVE: http.AgentOptions = { keepAlive: true, timeout: 4_000, maxFreeSockets: 16, scheduling: 'lifo' };
const pools = new WeakMap<Resolver, Map<boolean, { http: http.Agent; https: https.Agent }>>();

/** The kept-alive agent of a policy (its resolver and loopback rule) for `protocol`. */
function agentFor(policy: UrlPolicy, protocol: string): http.Agent {
  const resolver = policy.resolve ?? systemResolver;
  let byLoopback = pools.get(resolver);
  if (!byLoopback) pools.set(resolver, (byLoopback = new Map()));
  let pool = byLoopback.get(policy.allowLoopback);
  if (!pool)
    byLoopback.set(
      policy.allowLoopback,
      (pool = { http: new http.Agent(KEEP_ALIVE), https: new https.Agent(KEEP_ALIVE) }),
    );
  return protocol === 'https:' ? pool.https : pool.http;
}

/**
 * A reused socket that failed before any answer: most often the server closed it as we wrote.
 * (It may also have taken the request and then died: the POST sent again carries the same
 * webhook-id, as every retry does, and receivers deduplicate on it.)
 */
const staleSocket = (req: http.ClientRequest, e: NodeJS.ErrnoException) =>
  req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');

export function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; policy: UrlPolicy; onProgress?: () => void },
): Promise<PostResult> {
  const started = Date.now();
  const done = (r: Omit<PostResult, 'durationMs'>): PostResult => ({ ...r, durationMs: Date.now() - started });
  const refused = staticUrlProblem(target, opts.policy);
  if (refused) return Promise.resolve(done({ error: CONNECTION_FAILED, detail: refused }));
  const url = new URL(target);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let timedOut = false;
    let current: http.ClientRequest | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      current?.destroy(new Error(`no response within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    const beat = opts.onProgress ? setInterval(opts.onProgress, 1000) : undefined;
    const finish = (r: Omit<PostResult, 'durationMs'>) => {
      clearTimeout(timer);
      if (beat) clearInterval(beat);
      resolve(done(r));
    };
    const send = (agent: http.Agent | false) => {
      let answered = false;
      const req = client.request(
        url,
        {
          method: 'POST',
          headers: {
            ...headers,
            'content-length': String(Buffer.byteLength(body)),
            'user-agent': 'Talat-Webhooks/1.0',
          },
          lookup: policyLookup(opts.policy) as never,
          agent,
        },
        (res) => {
          answered = true;
          let seen = 0;
          res.on('data', (chunk: Buffer) => {
            seen += chunk.length;
            if (seen > 64 * 1024) res.destroy();
          });
          res.on('close', () => finish({ statusCode: res.statusCode }));
          res.on('error', () => undefined);
        },
      );
      current = req;
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (!answered && !timedOut && staleSocket(req, e)) return send(false);
        finish({ error: timedOut ? TIMEOUT : CONNECTION_FAILED, detail: e.message });
      });
      req.end(body);
    };
    send(agentFor(opts.policy, url.protocol));
  });
}
