/**
 * Data versions of the storefront. Triggers (migration 20261122030000) bump a version on every
 * statement that writes the tables behind it, so a cache keyed by the version is never stale,
 * whoever wrote: the seed, an operator's SQL, another gateway instance.
 */
import type { Db } from '../db/knex';

export type VersionName = 'catalog' | 'prices' | 'inventory';
export type Versions = Record<VersionName, number> & { changedAt: Record<VersionName, Date> };

export async function readVersions(db: Db): Promise<Versions> {
  const rows = await db('storefront_versions').select<{ name: VersionName; version: string; changed_at: Date }[]>(
    'name',
    'version',
    'changed_at',
  );
  const v = { catalog: 0, prices: 0, inventory: 0, changedAt: {} as Record<VersionName, Date> } as Versions;
  for (const r of rows) {
    v[r.name] = Number(r.version);
    v.changedAt[r.name] = r.changed_at;
  }
  return v;
}

/**
 * readVersions reused for `ttlMs` (0: read every time), one query in flight at a time: the
 * catalog's hot answers need no query of their own. A change made anywhere shows within `ttlMs`.
 */
export function cachedVersions(
  db: Db,
  ttlMs: number,
  now: () => number = () => performance.now(),
): () => Promise<Versions> {
  let cached: { at: number; v: Promise<Versions> } | undefined;
  return () => {
    if (ttlMs <= 0) return readVersions(db);
    if (cached && now() - cached.at < ttlMs) return cached.v;
    const v = readVersions(db);
    const entry = { at: now(), v };
    cached = entry;
    v.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return v;
  };
}
