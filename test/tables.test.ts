/**
 * One owner per table: each table the migrations create is named in SQL or knex by the files of
 * one slice only (tests, seeds, migrations and bench/ aside). Today's shared tables are listed in
 * KNOWN_SHARED; the list only shrinks: a new shared table fails, and so does an entry that is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { featuresIn, filesUnder, namesTable, ROOTS, sharedTables, tableUsers, tablesOf } from './support/slices';

const root = path.resolve(__dirname, '..');
const read = (f: string) => [f, fs.readFileSync(path.join(root, f), 'utf8')] as const;

/**
 * The tables still named by two slices (`table: the slices naming it`). The list only shrinks:
 * a new shared table fails, and so does an entry that is gone.
 */
const KNOWN_SHARED = [
  // reconciliation's set-based matching reads the payments and refunds ledgers in single
  // statements; each owner still has to give it its fragment (as the receipt claim has)
  'payment_conflicts: payments, reconciliation',
  'payment_events: payments, reconciliation',
  'payments: payments, reconciliation',
  'refunds: reconciliation, refunds',
];

const migrations = fs.readdirSync(path.join(root, 'migrations')).map((m) => read(`migrations/${m}`));
const tables = tablesOf(migrations);
const features = featuresIn(root);
const sources = filesUnder(root, ROOTS)
  .filter((f) => f !== 'src/db/seed.ts')
  .map(read);

describe('one owner per table', () => {
  it('reads the tables from migrations/ and the files naming them', () => {
    expect(tables.length).toBeGreaterThan(30);
    expect(tables).toEqual(expect.arrayContaining(['payments', 'refunds', 'callback_receipts', 'webhook_deliveries']));
    expect(tableUsers(sources, tables, features).refunds).toContain('refunds');
  });

  it('no table is named by two slices beyond KNOWN_SHARED', () => {
    const shared = sharedTables(tableUsers(sources, tables, features));
    console.log(`shared tables: ${shared.length} of ${tables.length}\n${shared.join('\n')}`);
    expect({
      new: shared.filter((s) => !KNOWN_SHARED.includes(s)),
      gone: KNOWN_SHARED.filter((s) => !shared.includes(s)),
    }).toEqual({
      new: [],
      gone: [],
    });
  });

  it('the check fails on a second slice naming a table, in SQL or in knex', () => {
    const files = [
      ['src/refunds/repository.ts', "db('refunds').insert(row)"],
      ['src/payments/repository.ts', 'await db.raw(`UPDATE payments SET status = ?`)'],
      ['src/webhooks/delivery.ts', "db.raw('select 1 from refunds r where r.id = ?')"],
      ['src/payments/timeline.ts', "q.leftJoin('refunds', 'refunds.order_id', 'payments.order_id')"],
    ] as const;
    expect(sharedTables(tableUsers(files, ['payments', 'refunds'], features))).toEqual([
      'refunds: payments, refunds, webhooks',
    ]);
    expect(namesTable('the refunds of a payment', 'refunds')).toBe(false);
    expect(tablesOf([['m.ts', "knex.schema.createTable('orders', (t) => {})"]])).toEqual(['orders']);
  });
});
