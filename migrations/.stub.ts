import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema;
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema;
}
