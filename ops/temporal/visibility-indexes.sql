-- Temporal's visibility indexes on a search attribute, partial: only rows that have the attribute.
-- The v12 schema indexes every search-attribute slot (Keyword01..10, Int01..03, the Temporal*
-- ones, ...) for every row version, NULL or not, so each visibility write updates ~70 indexes.
-- A query on an attribute (`OrderId = 'x'`) implies it IS NOT NULL and still uses the index.
-- Idempotent; applied after every update-schema (npm run cluster, docker-compose.yml), so an
-- index a later schema version adds is converted too. docs/cluster.md, "The visibility indexes".
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT c.relname AS name, a.attname AS col, pg_get_indexdef(i.indexrelid) AS def
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[1]
     WHERE i.indrelid = 'executions_visibility'::regclass
       AND i.indpred IS NULL
       AND NOT i.indisprimary
       AND (a.attgenerated = 's' OR a.attname IN ('parent_workflow_id', 'parent_run_id'))
  LOOP
    EXECUTE format('DROP INDEX %I', r.name);
    EXECUTE r.def || format(' WHERE %I IS NOT NULL', r.col);
  END LOOP;
END $$;
