/**
 * The knex CLI's configuration: `npx knex migrate:status`, `migrate:latest`, `migrate:rollback`,
 * `migrate:up|down`, `migrate:make <name>`.
 * Database: DATABASE_URL, else the embedded Postgres of `npm start` (127.0.0.1:PG_PORT, database
 * talat, the password of DATA_DIR/pg.password; it must be running). Migrations: the same source as the application (src/db/knex.ts,
 * names without extension, loaded through tsx), so the CLI and `npm run migrate` agree on what
 * is applied; `migrate:make` writes a TypeScript migration into migrations/.
 */
require('tsx/cjs');
const path = require('node:path');
const { migrationSource } = require('./src/db/knex.ts');
const { embeddedPassword } = require('./src/stack/postgres.ts');

const making = process.argv.some((a) => a === 'migrate:make');

module.exports = {
  client: 'pg',
  connection:
    process.env.DATABASE_URL ||
    `postgres://postgres:${encodeURIComponent(embeddedPassword(path.join(process.env.DATA_DIR || '.data', 'pg'), false) || '')}@127.0.0.1:${process.env.PG_PORT || 5433}/talat`,
  pool: { min: 0, max: 2 },
  // knex ignores a migrationSource next to directory options, so only `make` gets the directory
  migrations: making
    ? { directory: './migrations', extension: 'ts', stub: './migrations/.stub.ts' }
    : { migrationSource },
};
