/**
 * Cursor pagination of every list endpoint (Stripe's shape): `limit` (1..200, default 50) and
 * `starting_after` = the id of the last item of the previous page; the answer carries `hasMore`
 * and `nextCursor` (the id to pass as `starting_after` next, null on the last page). Lists are
 * keyset-paginated on (created_at, id), so a page is stable while new items arrive.
 */
import type { Knex } from 'knex';
import { z } from './openapi';

export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ description: 'items per page (1..200)', example: 20 }),
  starting_after: z.string().min(1).max(80).optional().openapi({
    description: 'cursor: the id of the last item of the previous page (its nextCursor)',
    example: 'pay_9d85008165c15b44c1dfeac49cca3667',
  }),
});
export type PageQuery = z.infer<typeof PageQuery>;

export const pageFields = {
  hasMore: z.boolean(),
  nextCursor: z
    .string()
    .nullable()
    .openapi({ description: 'pass as starting_after for the next page; null on the last page', example: null }),
};

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/**
 * Keyset condition: rows after the cursor row in (created_at, id) order, `desc` for newest
 * first. `table` is the table (with alias) the cursor id names; an unknown cursor matches nothing.
 */
export function afterCursor(
  q: Knex.QueryBuilder,
  opts: { alias: string; table: string; cursor?: string; order: 'asc' | 'desc'; createdColumn?: string },
): Knex.QueryBuilder {
  const created = opts.createdColumn ?? 'created_at';
  q.orderBy([
    { column: `${opts.alias}.${created}`, order: opts.order },
    { column: `${opts.alias}.id`, order: opts.order },
  ]);
  if (!opts.cursor) return q;
  const op = opts.order === 'desc' ? '<' : '>';
  return q.whereRaw(`(??, ??) ${op} (select c.??, c.id from ?? as c where c.id = ?)`, [
    `${opts.alias}.${created}`,
    `${opts.alias}.id`,
    created,
    opts.table,
    opts.cursor,
  ]);
}

/** Run a query for limit + 1 rows and cut the page. */
export async function pageOf<R, T extends { id: string }>(
  q: Knex.QueryBuilder,
  limit: number,
  map: (r: R) => T,
): Promise<Page<T>> {
  const rows = (await q.limit(limit + 1)) as R[];
  const items = rows.slice(0, limit).map(map);
  const hasMore = rows.length > limit;
  return { items, hasMore, nextCursor: hasMore ? items[items.length - 1].id : null };
}
