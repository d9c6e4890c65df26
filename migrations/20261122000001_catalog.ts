import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');

  await knex.schema.createTable('categories', (t) => {
    t.text('id').primary();
    t.text('slug').notNullable().unique();
    t.text('kind').notNullable(); // aisle | subcategory | collection
    t.text('parent_id').references('categories.id');
    t.text('name_en').notNullable();
    t.text('name_th').notNullable();
    t.integer('position').notNullable();
    t.text('icon');
    t.integer('icon_order'); // position in the app's icon row (iconOrder), null when not shown
    t.check("kind IN ('aisle','subcategory','collection')");
  });

  await knex.schema.createTable('product_groups', (t) => {
    t.text('group_id').primary();
    t.text('name_en').notNullable();
    t.text('name_th').notNullable();
    t.text('brand').notNullable();
    t.text('category_id').notNullable().references('categories.id');
    t.specificType('collections', 'text[]').notNullable().defaultTo('{}');
    t.string('country_code', 2).notNullable();
    t.text('description_en').notNullable();
    t.text('description_th').notNullable();
    t.specificType('keywords', 'text[]').notNullable().defaultTo('{}');
    t.text('storage').notNullable();
    t.check("storage IN ('ambient','chilled','frozen')");
    t.index(['category_id']);
  });

  await knex.schema.createTable('products', (t) => {
    t.text('product_id').primary();
    t.text('group_id').notNullable().references('product_groups.group_id');
    t.text('variant').notNullable();
    t.text('name_en').notNullable();
    t.text('name_th').notNullable();
    t.string('barcode', 13).notNullable().unique();
    t.text('unit').notNullable();
    t.decimal('size', 12, 3).notNullable();
    t.integer('weight_grams').notNullable();
    t.boolean('vatable').notNullable();
    t.index(['group_id']);
  });

  await knex.schema.createTable('prices', (t) => {
    t.text('product_id').primary().references('products.product_id');
    t.bigInteger('price_satang').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check('price_satang > 0');
  });

  await knex.schema.createTable('branches', (t) => {
    t.text('branch_id').primary();
    t.text('name_en').notNullable();
    t.text('name_th').notNullable();
    t.text('district').notNullable();
    t.double('lat').notNullable();
    t.double('lng').notNullable();
    t.decimal('delivery_radius_km', 5, 1).notNullable();
  });

  await knex.schema.createTable('inventory', (t) => {
    t.text('branch_id').notNullable().references('branches.branch_id');
    t.text('product_id').notNullable().references('products.product_id');
    t.integer('quantity').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['branch_id', 'product_id']);
    t.check('quantity >= 0');
  });

  await knex.schema.createTable('promotions', (t) => {
    t.text('promotion_id').primary();
    t.text('type').notNullable();
    t.specificType('group_ids', 'text[]').notNullable();
    t.specificType('product_ids', 'text[]'); // null = every variant of the groups
    t.text('promotion_group_id');
    t.integer('buy_quantity').notNullable().defaultTo(1);
    t.bigInteger('pay_price_satang');
    t.decimal('percent', 5, 2);
    t.timestamp('starts_at', { useTz: true }).notNullable();
    t.timestamp('ends_at', { useTz: true }).notNullable();
    t.text('title_en').notNullable();
    t.text('title_th').notNullable();
    t.check("type IN ('multi_buy','percent_off','fixed_price')");
    t.index(['promotion_group_id']);
  });

  await knex.schema.createTable('banners', (t) => {
    t.text('id').primary();
    t.text('placement').notNullable();
    t.text('category_id').references('categories.id');
    t.text('title_en').notNullable();
    t.text('title_th').notNullable();
    t.text('image_key').notNullable();
    t.text('link').notNullable();
    t.integer('position').notNullable();
    t.timestamp('starts_at', { useTz: true }).notNullable();
    t.timestamp('ends_at', { useTz: true }).notNullable();
    t.check("placement IN ('sticky','home','category')");
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const t of [
    'banners',
    'promotions',
    'inventory',
    'branches',
    'prices',
    'products',
    'product_groups',
    'categories',
  ]) {
    await knex.schema.dropTableIfExists(t);
  }
}
