/**
 * The one policy of webhook destinations, applied at registration and again at every connection
 * (./http.ts), with the same resolver: http(s) only, no credentials, https only in production; a
 * host name must be a dotted public name (no single labels, `localhost`, `.internal`, `.local`,
 * `.localdomain`, `.home.arpa`); every address, resolved or literal in any form the URL parser
 * takes, must be in ipaddr.js's `unicast` range (no loopback, private, link-local, CGNAT,
 * reserved...). Development only: loopback when WEBHOOK_ALLOW_LOOPBACK=on. Checking again at
 * connect, with the addresses the socket uses, defeats DNS rebinding.
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type dns from 'node:dns';
import { systemResolver, type ResolvedAddress, type Resolver } from '../resolver';

export interface UrlPolicy {
  /** only https URLs (production) */
  requireHttps: boolean;
  /** loopback destinations allowed (WEBHOOK_ALLOW_LOOPBACK=on, development and tests only) */
  allowLoopback: boolean;
  /** how host names are resolved; dns.lookup when absent */
  resolve?: Resolver;
}

const REFUSED_SUFFIX = /(^|\.)(localhost|internal|local|localdomain|home\.arpa)$/;

/** The URL's host without brackets and trailing dots, lower case (the URL parser lowercases). */
const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');

/** Whether the policy lets a connection go to this address (any textual form ipaddr.js parses). */
export function addressAllowed(address: string, policy: Pick<UrlPolicy, 'allowLoopback'>): boolean {
  if (!ipaddr.isValid(address)) return false;
  const range = ipaddr.process(address).range(); // IPv4-mapped IPv6 is judged as the IPv4 address
  return range === 'unicast' || (policy.allowLoopback && range === 'loopback');
}

/** What can be said of a URL without resolving it: the reason it is refused, or undefined. */
export function staticUrlProblem(raw: string, policy: UrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'url must be an http(s) URL';
  if (url.username || url.password) return 'url must not carry credentials';
  if (policy.requireHttps && url.protocol !== 'https:') return 'url must be https';
  const host = hostOf(url);
  if (net.isIP(host)) return addressAllowed(host, policy) ? undefined : 'url must point to a public address';
  if (host === 'localhost' && policy.allowLoopback) return undefined;
  if (REFUSED_SUFFIX.test(host) || !host.includes('.')) return 'url must name a public host';
  return undefined;
}

/** The addresses of `hostname` if every one of them is allowed; otherwise the reason it is refused. */
export async function resolveAllowed(
  hostname: string,
  policy: UrlPolicy,
): Promise<{ ok: true; addresses: ResolvedAddress[] } | { ok: false; reason: string }> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await (policy.resolve ?? systemResolver)(hostname);
  } catch {
    return { ok: false, reason: 'url host does not resolve' };
  }
  if (addresses.length === 0) return { ok: false, reason: 'url host does not resolve' };
  if (addresses.some((a) => !addressAllowed(a.address, policy)))
    return { ok: false, reason: 'url host resolves to a non-public address' };
  return { ok: true, addresses };
}

/** Registration-time check: the static rules, then the host name resolved. */
export async function urlProblem(raw: string, policy: UrlPolicy): Promise<string | undefined> {
  const problem = staticUrlProblem(raw, policy);
  if (problem) return problem;
  const host = hostOf(new URL(raw));
  if (net.isIP(host) || host === 'localhost') return undefined;
  const r = await resolveAllowed(host, policy);
  return r.ok ? undefined : r.reason;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request that resolves with the policy's resolver and refuses (code
 * EPOLICY) when any address is not allowed: the socket connects only to addresses checked here.
 */
export function policyLookup(policy: UrlPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    const name = hostname.replace(/\.+$/, '');
    if (name === 'localhost' && !policy.allowLoopback) {
      callback(Object.assign(new Error('url must name a public host'), { code: 'EPOLICY' }), '', 0);
      return;
    }
    void resolveAllowed(name, policy).then((r) => {
      if (!r.ok) return callback(Object.assign(new Error(r.reason), { code: 'EPOLICY' }), '', 0);
      const list = r.addresses.filter((a) => !options.family || a.family === options.family);
      if (list.length === 0)
        return callback(Object.assign(new Error('url host does not resolve'), { code: 'EPOLICY' }), '', 0);
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
