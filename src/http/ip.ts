/**
 * Client address and provider IP allow-lists (docs/callbacks.md): CIDR ranges per provider, IPv4 and
 * IPv6; X-Forwarded-For is believed only when the socket peer is a configured trusted proxy, and
 * then only up to the first address that is not itself a trusted proxy (right to left), so a
 * client cannot spoof its address by sending the header itself.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type CidrList = [Address, number][];

/** IPv4-mapped IPv6 (::ffff:127.0.0.1) is treated as the IPv4 address it carries. */
function parseAddress(text: string | undefined): Address | undefined {
  if (!text) return undefined;
  const t = text
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');
  return ipaddr.isValid(t) ? ipaddr.process(t) : undefined;
}

export const compileCidrs = (cidrs: readonly string[]): CidrList =>
  cidrs.map((c) => {
    const [addr, bits] = ipaddr.parseCIDR(c);
    // ::ffff:10.0.0.0/104 is the IPv4 range 10.0.0.0/8
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
      return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
    return [addr, bits];
  });

export function inCidrs(address: Address | undefined, list: CidrList): boolean {
  if (!address) return false;
  return list.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
}

/**
 * The address a request comes from: the socket peer, or, when the peer is a trusted proxy,
 * the right-most X-Forwarded-For entry that is not a trusted proxy.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedProxies: CidrList,
): Address | undefined {
  let current = parseAddress(socketAddress);
  if (!current || !forwardedFor || !inCidrs(current, trustedProxies)) return current;
  const hops = forwardedFor
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i]);
    if (!hop) return undefined; // a garbled chain from a trusted proxy: no address we can vouch for
    current = hop;
    if (!inCidrs(hop, trustedProxies)) break;
  }
  return current;
}

export const formatAddress = (a: Address | undefined): string => (a ? a.toString() : 'unknown');
