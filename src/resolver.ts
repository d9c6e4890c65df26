/** How host names are resolved (webhook destinations); its own module so the app's deps need no feature. */
import dns from 'node:dns';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** All addresses of a host name (dns.lookup with all: true by default; tests inject their own). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });
