/**
 * One owner per table: each table the migrations create is named in SQL or knex by the files of
 * one slice only (tests, seeds, migrations and bench/ aside). None is shared: a slice that needs
 * another's rows takes the owner's function or embeds the owner's SQL fragment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { featuresIn, filesUnder, namesTable, ROOTS, sharedTables, tableUsers, tablesOf } from './support/slices';

const root = path.resolve(__dirname, '..');
const read = (f: string) => [f, fs.readFileSync(path.join(root, f), 'utf8')] as const;

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

  it('no table is named by two slices', () => {
    const shared = sharedTables(tableUsers(sources, tables, features));
    console.log(`shared tables: ${shared.length} of ${tables.length}\n${shared.join('\n')}`);
    expect(shared).toEqual([]);
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
