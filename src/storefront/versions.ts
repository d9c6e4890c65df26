/**
 * Data versions of the storefront. Triggers (migration 20261122030000) bump a version on every
 * statement that writes the tables behind it, so a cache keyed by the version is never stale,
 * whoever wrote: the seed, an operator's SQL, another gateway instance.
 */
import type { Db } from '../db/knex';

export type VersionName = 'catalog' | 'prices' | 'inventory';
export type Versions = Record<VersionName, number> & { changedAt: Record<VersionName, Date> };

export async function readVersions(db: Db): Promise<Versions> {
  const rows = await db('storefront_versions').select<{ name: VersionName; version: string; changed_at: Date }[]>('name', 'version', 'changed_at');
  const v = { catalog: 0, prices: 0, inventory: 0, changedAt: {} as Record<VersionName, Date> } as Versions;
  for (const r of rows) {
    v[r.name] = Number(r.version);
    v.changedAt[r.name] = r.changed_at;
  }
  return v;
}
