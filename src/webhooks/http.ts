/**
 * The webhook POST: node:http(s) with a hard timeout, the response drained and dropped, and,
 * unless private URLs are allowed (development), a guard against requests to loopback, private,
 * link-local and other non-public addresses: literal IPs are checked before connecting and host
 * names at DNS resolution, so a name that resolves to 127.0.0.1 is refused too.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface PostResult {
  statusCode?: number;
  error?: string;
  durationMs: number;
}

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** Registration-time check of an endpoint URL; returns the reason it is refused, if it is. */
export function urlProblem(raw: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'url must be an http(s) URL';
  if (url.username || url.password) return 'url must not carry credentials';
  if (allowPrivate) return undefined;
  if (url.protocol !== 'https:') return 'url must be https';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'url must not point to this machine';
  if (net.isIP(host) && !isPublicAddress(host)) return 'url must point to a public address';
  return undefined;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const bad = list.find((a) => !isPublicAddress(a.address));
    if (bad || list.length === 0)
      return callback(
        Object.assign(new Error(`${hostname} resolves to a non-public address`), { code: 'EPRIVATE' }),
        '',
        0,
      );
    if (options.all) return callback(null, list);
    callback(null, list[0].address, list[0].family);
  });
}

export function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; allowPrivate: boolean; onProgress?: () => void },
): Promise<PostResult> {
  const started = Date.now();
  const done = (r: Omit<PostResult, 'durationMs'>): PostResult => ({ ...r, durationMs: Date.now() - started });
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return resolve(done({ error: 'invalid url' }));
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!opts.allowPrivate && net.isIP(host) && !isPublicAddress(host))
      return resolve(done({ error: 'refused: non-public address' }));
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Talat-Webhooks/1.0' },
        ...(opts.allowPrivate ? {} : { lookup: guardedLookup as never }),
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
    const timer = setTimeout(() => req.destroy(new Error(`no response within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const beat = opts.onProgress ? setInterval(opts.onProgress, 1000) : undefined;
    req.on('close', () => beat && clearInterval(beat));
    req.on('error', (e) => {
      clearTimeout(timer);
      resolve(done({ error: e.message }));
    });
    req.end(body);
  });
}
