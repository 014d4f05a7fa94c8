-- seed(table, row) for the PostgreSQL seeds of sitectl's store tests (loaded in the same
-- session before each seed file): inserts one row, the given columns, and for every other NOT
-- NULL column without a default a value of its type. A session-local function: nothing of it
-- stays in the database.
CREATE FUNCTION pg_temp.seed(t regclass, given jsonb) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE row jsonb := given; a record;
BEGIN
  FOR a IN SELECT att.attname, ty.typname, ty.typcategory, ty.typtype, ty.oid AS typ FROM pg_attribute att
           JOIN pg_type ty ON ty.oid = att.atttypid
           WHERE att.attrelid = t AND att.attnum > 0 AND NOT att.attisdropped AND att.attnotnull
             AND NOT att.atthasdef AND att.attidentity = '' AND NOT given ? att.attname LOOP
    row := row || jsonb_build_object(a.attname, CASE
      WHEN a.typname IN ('json', 'jsonb') THEN '{}'::jsonb
      WHEN a.typname = 'bytea' THEN to_jsonb('\x00'::text)
      WHEN a.typname = 'uuid' THEN to_jsonb('00000000-0000-0000-0000-000000000001'::text)
      WHEN a.typname = 'inet' THEN to_jsonb('127.0.0.1'::text)
      WHEN a.typcategory = 'A' THEN '[]'::jsonb
      WHEN a.typcategory = 'N' THEN to_jsonb(1)
      WHEN a.typcategory = 'B' THEN to_jsonb(false)
      WHEN a.typcategory = 'D' THEN to_jsonb('2026-11-15 10:00:00+00'::text)
      WHEN a.typtype = 'e' THEN to_jsonb((SELECT enumlabel FROM pg_enum WHERE enumtypid = a.typ ORDER BY enumsortorder LIMIT 1))
      ELSE to_jsonb('x'::text) END);
  END LOOP;
  EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM jsonb_populate_record(NULL::%s, $1) r', t,
                 (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_object_keys(row) k),
                 (SELECT string_agg('r.' || quote_ident(k), ', ') FROM jsonb_object_keys(row) k), t)
    USING row;
END $f$;
