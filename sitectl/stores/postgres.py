"""PostgreSQL store (the forum and GitLab): golden copy in the same database, exact change
tracking of rows and of every schema object, restore of only what changed.

How it works (sources: research/fast-reset.md §1.6, §1.7 "trigger undo logs", §4.1-4.2;
PostgreSQL 13-15 docs: "Overview of Trigger Behavior" (row triggers on a partitioned table are
cloned onto its partitions; an UPDATE that moves a row to another partition fires the AFTER
DELETE triggers of the old partition and the AFTER INSERT triggers of the new one; TRUNCATE of a
parent fires each partition's TRUNCATE triggers), ``session_replication_role``, sequence
functions, ``pg_dump``):

* **Snapshot** ``NAME`` = schema ``sitectl_s_NAME`` in the same database holding a copy of every
  application table that holds rows (plain tables and the leaf partitions, never a partitioned
  parent, which holds none; ``CREATE TABLE ... AS SELECT * FROM ONLY``), each named ``c`` + the
  MD5 of the table's qualified name (any identifier of any length maps to a distinct 33-byte
  name), indexed by its primary key; ``__tables`` (every table and partitioned parent: leaf or
  not, root or partition, the root's primary key, the columns an INSERT may write),
  ``__sequences``, ``__objects`` (a digest of every schema object), ``__matviews``,
  ``__schemas`` and ``__schema`` (the plain ``pg_dump --schema-only`` text, line by line, for
  restores after DDL), ``__format`` (:data:`FORMAT`). Everything is in the database, so any
  session (``psql`` in the container or psycopg over the network) can restore what another made.
* **Change tracking**: a row trigger on every root table and partitioned parent (PostgreSQL
  clones it onto every partition, present and future) logs the primary key of each inserted,
  updated or deleted row in ``sitectl.changes`` under the leaf's name; a statement trigger on
  every leaf logs TRUNCATE (``null`` key, the whole table). Foreign-key actions (CASCADE, SET
  NULL, SET DEFAULT) run as ordinary row changes of the referencing table and are logged the
  same way. Schema objects (tables with their columns, indexes, constraints, partition bounds,
  rules, policies, owners and grants; views, materialized views, foreign tables, sequences,
  functions, procedures and aggregates, triggers, types and domains, extensions, schemas, event
  triggers) are compared with ``sitectl.baseline`` by a definition digest and their OID, server
  side: only the objects that differ travel.
* **Restore** (delta): in one transaction with ``session_replication_role = replica`` (no
  trigger fires, neither the application's nor sitectl's, and no foreign-key action): objects
  created since the snapshot are dropped (by OID, nothing pasted), the changed rows are deleted
  by primary key and inserted back from the copy, changed sequences are set back. Any other
  schema change (an object changed or dropped) takes the **full** path: the application's
  schemas are emptied (a schema the dump creates is dropped; ``public``, which it does not
  create, loses its objects but keeps its owner and grants), the saved plain dump is replayed
  server-side, every table refilled, every sequence set, populated materialized views
  refreshed, tracking reinstalled. The database and the application keep running.
"""
from __future__ import annotations

import hashlib
import json
import re
import uuid

from sitectl.errors import CheckpointUnavailable, StoreError
from sitectl.stores.base import Changes, DiffLimits, Store, hex_names, row_changes
from sitectl.stores.literals import pg_value
from sitectl.stores.sql import SQL_BUDGET, SqlResult, SqlSession, retry_deadlocks, take_when_quiet
from sitectl.stores.transport import budget_chunks

#: Layout of a snapshot schema and of the tracking; a snapshot of another format is refused
#: with the next step (take it again).
FORMAT = 3
MAX_KEYS_PER_TABLE = 5000
#: Up to this many logged keys in all, they are read with the detection and put in the restore
#: statement as literals (the planner then always uses the primary-key index).
MAX_INLINE_KEYS = 2000

#: The application's schemas: everything but PostgreSQL's own and sitectl's.
_APP = ("n.nspname NOT IN ('pg_catalog','information_schema','sitectl') AND n.nspname NOT LIKE 'pg\\_%' "
        "AND n.nspname NOT LIKE 'sitectl\\_%'")


def _not_member(catalog: str, oid: str) -> str:
    """SQL: the object is not part of an extension (those come back with the extension)."""
    return (f"NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = '{catalog}'::regclass AND e.objid = {oid} "
            "AND e.deptype = 'e')")


TRACKING_SQL = r"""
CREATE SCHEMA IF NOT EXISTS sitectl;
CREATE TABLE IF NOT EXISTS sitectl.changes (tbl text NOT NULL, pk jsonb NOT NULL, PRIMARY KEY (tbl, pk));
CREATE TABLE IF NOT EXISTS sitectl.baseline (tbl text PRIMARY KEY, defn text NOT NULL);
CREATE TABLE IF NOT EXISTS sitectl.meta (snapshot text);
CREATE OR REPLACE FUNCTION sitectl.log_row() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE r jsonb;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    r := to_jsonb(OLD);
    INSERT INTO sitectl.changes VALUES (quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME),
      COALESCE((SELECT jsonb_agg(r -> k ORDER BY o) FROM unnest(TG_ARGV) WITH ORDINALITY AS a(k, o)), 'null'))
      ON CONFLICT DO NOTHING;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    r := to_jsonb(NEW);
    INSERT INTO sitectl.changes VALUES (quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME),
      COALESCE((SELECT jsonb_agg(r -> k ORDER BY o) FROM unnest(TG_ARGV) WITH ORDINALITY AS a(k, o)), 'null'))
      ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $f$;
DROP FUNCTION IF EXISTS sitectl.sequences();
-- Every application sequence's (last_value, is_called): pg_sequence_last_value() where it was
-- called, a read of the sequence itself where not (only that read tells is_called).
CREATE FUNCTION sitectl.sequences() RETURNS TABLE (s text, l bigint, c boolean)
LANGUAGE plpgsql AS $f$
DECLARE q text;
BEGIN
  RETURN QUERY SELECT x.s, x.l, true FROM (SELECT quote_ident(n.nspname) || '.' || quote_ident(c2.relname) AS s,
      CASE WHEN c2.relkind = 'S' THEN pg_sequence_last_value(c2.oid) END AS l
    FROM pg_class c2 JOIN pg_namespace n ON n.oid = c2.relnamespace
    WHERE c2.relkind = 'S' AND n.nspname NOT IN ('pg_catalog','information_schema','sitectl')
      AND n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT LIKE 'sitectl\_%') x WHERE x.l IS NOT NULL;
  FOR q IN SELECT quote_ident(n.nspname) || '.' || quote_ident(c2.relname) FROM pg_class c2
           JOIN pg_namespace n ON n.oid = c2.relnamespace
           WHERE c2.relkind = 'S' AND n.nspname NOT IN ('pg_catalog','information_schema','sitectl')
             AND n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT LIKE 'sitectl\_%'
             AND (CASE WHEN c2.relkind = 'S' THEN pg_sequence_last_value(c2.oid) END) IS NULL LOOP
    RETURN QUERY EXECUTE format('SELECT %L::text, last_value, is_called FROM %s', q, q);
  END LOOP;
END $f$;
-- Schema changes: every DDL command of any session but sitectl's own restores (which set
-- sitectl.restoring) on anything outside sitectl's schemas and temporary ones is logged in
-- sitectl.ddl; only then does the detection compare every object's definition (on GitLab's
-- schema that comparison takes about a second, the log's check a millisecond).
CREATE TABLE IF NOT EXISTS sitectl.ddl (n bigserial PRIMARY KEY, tag text NOT NULL, at timestamptz NOT NULL DEFAULT now());
CREATE OR REPLACE FUNCTION sitectl.log_ddl() RETURNS event_trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
  IF current_setting('sitectl.restoring', true) = 'on' THEN
    RETURN;
  END IF;
  IF TG_EVENT = 'sql_drop' THEN
    -- (a dropped table's TOAST table is listed too, in pg_toast)
    IF EXISTS (SELECT 1 FROM pg_event_trigger_dropped_objects() d WHERE NOT d.is_temporary
               AND COALESCE(d.schema_name, '') NOT LIKE 'pg\_%'
               AND COALESCE(d.schema_name, d.object_name, '') <> 'sitectl'
               AND COALESCE(d.schema_name, d.object_name, '') NOT LIKE 'sitectl\_%') THEN
      INSERT INTO sitectl.ddl (tag) VALUES (TG_TAG);
    END IF;
  ELSIF TG_TAG NOT LIKE 'DROP %' THEN
    IF NOT EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands())
       OR EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() d
                  WHERE COALESCE(d.schema_name, d.object_identity, '') <> 'sitectl'
                    AND COALESCE(d.schema_name, d.object_identity, '') NOT LIKE 'sitectl\_%'
                    AND COALESCE(d.schema_name, '') NOT LIKE 'pg\_%') THEN
      INSERT INTO sitectl.ddl (tag) VALUES (TG_TAG);
    END IF;
  END IF;
END $f$;
"""

#: The event triggers that fill the DDL log (re-created by a delta that finds them missing).
EVENT_TRIGGERS_SQL = r"""
DROP EVENT TRIGGER IF EXISTS sitectl_ddl;
DROP EVENT TRIGGER IF EXISTS sitectl_drop;
CREATE EVENT TRIGGER sitectl_ddl ON ddl_command_end EXECUTE FUNCTION sitectl.log_ddl();
CREATE EVENT TRIGGER sitectl_drop ON sql_drop EXECUTE FUNCTION sitectl.log_ddl();
-- Fired under session_replication_role = replica too.
ALTER EVENT TRIGGER sitectl_ddl ENABLE ALWAYS;
ALTER EVENT TRIGGER sitectl_drop ENABLE ALWAYS;
"""

TRACKING_SQL += EVENT_TRIGGERS_SQL + r"""
CREATE OR REPLACE FUNCTION sitectl.log_truncate() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
  INSERT INTO sitectl.changes VALUES (quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME), 'null')
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $f$;
-- Drops sitectl's own tracking triggers (partition clones go with their parent's).
CREATE OR REPLACE FUNCTION sitectl.untrack() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE t record;
BEGIN
  FOR t IN SELECT g.oid, g.tgname, g.tgrelid FROM pg_trigger g
           WHERE g.tgname IN ('sitectl_row', 'sitectl_trunc') AND g.tgparentid = 0 LOOP
    IF EXISTS (SELECT 1 FROM pg_trigger WHERE oid = t.oid) THEN
      EXECUTE format('DROP TRIGGER %I ON %s', t.tgname, t.tgrelid::regclass);
    END IF;
  END LOOP;
END $f$;
-- Drops one object created since the snapshot, found by its OID (no name is pasted anywhere).
CREATE OR REPLACE FUNCTION sitectl.drop_object(k text, o oid) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE q text;
BEGIN
  IF k IN ('table', 'view', 'materialized view', 'foreign table', 'sequence') THEN
    -- (an identity column's sequence goes with its table)
    SELECT format('DROP %s %s CASCADE', upper(k), o::regclass) INTO q FROM pg_class WHERE oid = o
      AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass AND e.objid = o
                      AND e.deptype = 'i' AND e.refobjid <> o);
  ELSIF k = 'routine' THEN
    SELECT format('DROP ROUTINE %s CASCADE', o::regprocedure) INTO q FROM pg_proc WHERE oid = o;
  ELSIF k = 'trigger' THEN
    SELECT format('DROP TRIGGER %I ON %s', tgname, tgrelid::regclass) INTO q FROM pg_trigger
      WHERE oid = o AND tgparentid = 0;
  ELSIF k IN ('type', 'domain') THEN
    SELECT format('DROP %s %s CASCADE', upper(k), o::regtype) INTO q FROM pg_type WHERE oid = o;
  ELSIF k = 'extension' THEN
    SELECT format('DROP EXTENSION %I CASCADE', extname) INTO q FROM pg_extension WHERE oid = o;
  ELSIF k = 'schema' THEN
    SELECT format('DROP SCHEMA %I CASCADE', nspname) INTO q FROM pg_namespace WHERE oid = o;
  ELSIF k = 'event trigger' THEN
    SELECT format('DROP EVENT TRIGGER %I', evtname) INTO q FROM pg_event_trigger WHERE oid = o;
  ELSE
    RAISE EXCEPTION 'sitectl: no way to drop a % (oid %)', k, o;
  END IF;
  IF q IS NOT NULL THEN
    EXECUTE q;
  END IF;
END $f$;
-- Every table's rows and every sequence back from snapshot schema `snap` (server-side: the
-- statement stays small whatever the number of tables). One TRUNCATE of every root (it takes
-- the partitions along; foreign keys between the tables allow no other order-free way).
CREATE OR REPLACE FUNCTION sitectl.fill(snap text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE r record; roots text; cols text; sel text;
BEGIN
  EXECUTE format('SELECT string_agg(tbl, '', '') FROM %I.__tables WHERE root', snap) INTO roots;
  IF roots IS NOT NULL THEN
    EXECUTE 'TRUNCATE ' || roots;
  END IF;
  FOR r IN EXECUTE format('SELECT tbl, cols FROM %I.__tables WHERE leaf', snap) LOOP
    -- Column by column by name; a column the copy keeps as text is cast to the live column's
    -- type (format_type here: after a replay the search path is empty, so names come qualified).
    SELECT string_agg(quote_ident(e ->> 0), ', ' ORDER BY o),
           string_agg(CASE WHEN e ->> 1 = '' THEN 'x.' || quote_ident(e ->> 0)
             ELSE 'x.' || quote_ident(e ->> 0) || '::' || (SELECT format_type(a.atttypid, a.atttypmod)
               FROM pg_attribute a WHERE a.attrelid = r.tbl::regclass AND a.attname = e ->> 0) END, ', ' ORDER BY o)
      INTO cols, sel FROM json_array_elements(r.cols::json) WITH ORDINALITY AS j(e, o);
    IF cols IS NULL THEN
      EXECUTE format('INSERT INTO %s OVERRIDING SYSTEM VALUE SELECT * FROM %I.%I', r.tbl, snap,
                     'c' || md5(convert_to(r.tbl, 'UTF8')));
    ELSE
      EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %I.%I x', r.tbl, cols, sel, snap,
                     'c' || md5(convert_to(r.tbl, 'UTF8')));
    END IF;
  END LOOP;
  EXECUTE format('SELECT count(setval(g.s, g.l, g.c)) FROM %I.__sequences g', snap);
  DELETE FROM sitectl.changes;
END $f$;
-- Before the saved schema text is replayed: every application schema the dump creates is
-- dropped; one it does not create (public) loses its objects but keeps its owner and grants;
-- extensions and event triggers the snapshot lacks go, the others' are re-created by the dump.
CREATE OR REPLACE FUNCTION sitectl.clear_schemas(snap text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE s record; r record; keep boolean;
BEGIN
  FOR r IN SELECT evtname FROM pg_event_trigger LOOP
    EXECUTE format('DROP EVENT TRIGGER %I', r.evtname);
  END LOOP;
  FOR s IN SELECT n.oid, n.nspname FROM pg_namespace n
           WHERE n.nspname NOT IN ('pg_catalog','information_schema','sitectl')
             AND n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT LIKE 'sitectl\_%' LOOP
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.__schemas WHERE name = $1 AND NOT created)', snap)
      INTO keep USING s.nspname;
    IF NOT keep THEN
      EXECUTE format('DROP SCHEMA %I CASCADE', s.nspname);
      CONTINUE;
    END IF;
    FOR r IN SELECT c.oid, c.relkind FROM pg_class c WHERE c.relnamespace = s.oid AND NOT c.relispartition
             AND c.relkind IN ('r','p','v','m','f','S','c')
             AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass AND e.objid = c.oid
                             AND (e.deptype = 'e' OR (e.deptype = 'i' AND e.refobjid <> c.oid))) LOOP
      IF EXISTS (SELECT 1 FROM pg_class WHERE oid = r.oid) THEN
        EXECUTE format('DROP %s %s CASCADE', CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
          WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'S' THEN 'SEQUENCE' WHEN 'c' THEN 'TYPE' ELSE 'TABLE' END,
          CASE r.relkind WHEN 'c' THEN (SELECT reltype::regtype::text FROM pg_class WHERE oid = r.oid)
          ELSE r.oid::regclass::text END);
      END IF;
    END LOOP;
    FOR r IN SELECT p.oid FROM pg_proc p WHERE p.pronamespace = s.oid
             AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid
                             AND e.deptype IN ('e', 'i')) LOOP
      IF EXISTS (SELECT 1 FROM pg_proc WHERE oid = r.oid) THEN
        EXECUTE format('DROP ROUTINE %s CASCADE', r.oid::regprocedure);
      END IF;
    END LOOP;
    FOR r IN SELECT t.oid, t.typtype FROM pg_type t WHERE t.typnamespace = s.oid AND t.typrelid = 0
             AND t.typtype IN ('e','d','r','b') AND NOT (t.typtype = 'b' AND t.typcategory = 'A')
             AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_type'::regclass AND e.objid = t.oid
                             AND e.deptype = 'e') LOOP
      IF EXISTS (SELECT 1 FROM pg_type WHERE oid = r.oid) THEN
        EXECUTE format('DROP %s %s CASCADE', CASE r.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, r.oid::regtype);
      END IF;
    END LOOP;
    FOR r IN SELECT c.oid FROM pg_collation c WHERE c.collnamespace = s.oid
             AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_collation'::regclass
                             AND e.objid = c.oid AND e.deptype = 'e') LOOP
      EXECUTE format('DROP COLLATION %s CASCADE', r.oid::regcollation);
    END LOOP;
    FOR r IN SELECT c.oid FROM pg_ts_config c WHERE c.cfgnamespace = s.oid
             AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_ts_config'::regclass
                             AND e.objid = c.oid AND e.deptype = 'e') LOOP
      EXECUTE format('DROP TEXT SEARCH CONFIGURATION %s CASCADE', r.oid::regconfig);
    END LOOP;
    FOR r IN SELECT d.oid FROM pg_ts_dict d WHERE d.dictnamespace = s.oid
             AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_ts_dict'::regclass
                             AND e.objid = d.oid AND e.deptype = 'e') LOOP
      EXECUTE format('DROP TEXT SEARCH DICTIONARY %s CASCADE', r.oid::regdictionary);
    END LOOP;
  END LOOP;
  FOR r IN SELECT x.extname FROM pg_extension x LOOP
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.__objects WHERE obj = $1)', snap)
      INTO keep USING 'extension ' || quote_ident(r.extname);
    IF NOT keep THEN
      EXECUTE format('DROP EXTENSION %I CASCADE', r.extname);
    END IF;
  END LOOP;
  FOR r IN EXECUTE format('SELECT name FROM %I.__schemas WHERE NOT created', snap) LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = r.name) THEN
      EXECUTE format('CREATE SCHEMA %I', r.name);
    END IF;
  END LOOP;
END $f$;
"""

# A column whose type or collation the application (or an extension) defines: its copy keeps it
# as text (``COLLATE "default"``), so dropping or re-creating the type in a full restore never
# touches the snapshot, and the restore casts it back.
_APP_TYPED = ("((SELECT ty.typnamespace <> 'pg_catalog'::regnamespace FROM pg_type ty WHERE ty.oid = a.atttypid) "
              "OR (a.attcollation <> 0 AND (SELECT co.collnamespace <> 'pg_catalog'::regnamespace FROM pg_collation co "
              "WHERE co.oid = a.attcollation)))")

# Every table and partitioned parent of the application: qualified name, whether it holds rows
# (a leaf), whether it is a root (not a partition), its root's primary key ([[column, type]]: the
# columns its cloned row trigger logs), the columns an INSERT writes ([[column, cast]], generated
# ones left out; cast is the column's type when its copy keeps it as text, else ""), and the
# select list that makes its copy.
RELS_SQL = f"""
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS tbl, c.relkind = 'r' AS leaf,
  NOT c.relispartition AS root,
  COALESCE((SELECT json_agg(json_build_array(a.attname, format_type(a.atttypid, a.atttypmod)) ORDER BY k.o)
            FROM pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, o), pg_attribute a
            WHERE i.indrelid = COALESCE(pg_partition_root(c.oid), c.oid) AND i.indisprimary
              AND a.attrelid = i.indrelid AND a.attnum = k.attnum), '[]')::text AS pk,
  COALESCE((SELECT json_agg(json_build_array(a.attname, CASE WHEN {_APP_TYPED} THEN format_type(a.atttypid, a.atttypmod)
            ELSE '' END) ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0
            AND NOT a.attisdropped AND a.attgenerated = ''), '[]')::text AS cols,
  COALESCE((SELECT string_agg(CASE WHEN {_APP_TYPED} THEN format('%I::text COLLATE "default" AS %I', a.attname, a.attname)
            ELSE quote_ident(a.attname) END, ', ' ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = c.oid
            AND a.attnum > 0 AND NOT a.attisdropped), '') AS sel
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND {_APP}"""

# sitectl's triggers on every table anew, server-side (one statement, so a caller's transaction
# holds them with whatever else it does): a row trigger on each root (cloned onto its partitions,
# present and future) logging the root's primary key, a TRUNCATE trigger on each leaf.
TRACKING_SQL += f"""
CREATE OR REPLACE FUNCTION sitectl.track() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE r record;
BEGIN
  PERFORM sitectl.untrack();
  FOR r IN SELECT t.tbl, t.leaf, t.root, t.pk FROM ({RELS_SQL}) t ORDER BY t.tbl LOOP
    IF r.root THEN
      EXECUTE format('CREATE TRIGGER sitectl_row AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW '
                     'EXECUTE FUNCTION sitectl.log_row(%s)', r.tbl,
                     (SELECT string_agg(quote_literal(e ->> 0), ', ' ORDER BY o)
                      FROM json_array_elements(r.pk::json) WITH ORDINALITY x(e, o)));
    END IF;
    IF r.leaf THEN
      EXECUTE format('CREATE TRIGGER sitectl_trunc AFTER TRUNCATE ON %s FOR EACH STATEMENT '
                     'EXECUTE FUNCTION sitectl.log_truncate()', r.tbl);
    END IF;
  END LOOP;
END $f$;
"""

# Every leaf copied into snapshot schema ``snap`` (as ``_qname`` names them) and indexed by its
# root's primary key, server-side: one statement, so a REPEATABLE READ transaction makes all
# the copies of one moment while the application keeps writing.
TRACKING_SQL += f"""
CREATE OR REPLACE FUNCTION sitectl.copy_all(snap text) RETURNS integer LANGUAGE plpgsql AS $f$
DECLARE r record; n integer := 0; q text;
BEGIN
  FOR r IN SELECT t.tbl, t.pk, t.sel FROM ({RELS_SQL}) t WHERE t.leaf ORDER BY t.tbl LOOP
    q := 'c' || md5(convert_to(r.tbl, 'UTF8'));
    EXECUTE format('CREATE TABLE %I.%I AS SELECT %s FROM ONLY %s', snap, q, CASE WHEN r.sel = '' THEN '*' ELSE r.sel END,
                   r.tbl);
    IF r.pk <> '[]' THEN
      EXECUTE format('CREATE INDEX ON %I.%I (%s)', snap, q, (SELECT string_agg(quote_ident(e ->> 0), ', ' ORDER BY o)
                     FROM json_array_elements(r.pk::json) WITH ORDINALITY x(e, o)));
    END IF;
    n := n + 1;
  END LOOP;
  RETURN n;
END $f$;
"""

_QUAL = "quote_ident(n.nspname) || '.' || quote_ident({0})"
_REL_KIND = ("CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' "
             "WHEN 'S' THEN 'sequence' ELSE 'table' END")

# Every schema object of the application: (obj: kind and name, defn: digest of its definition,
# id: its OID, kind). The baseline keeps defn and id; a fingerprint compares defn only (a full
# restore re-creates objects with new OIDs). sitectl's own triggers are objects of the baseline
# (one disabled or dropped is a change: the full path reinstalls them), not of fingerprints.
OBJECTS_SQL = f"""
SELECT {_REL_KIND} || ' ' || {_QUAL.format('c.relname')} AS obj, md5(format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s',
  c.relkind, c.relpersistence, c.relreplident, c.relrowsecurity, c.relforcerowsecurity, pg_get_userbyid(c.relowner),
  c.relacl, c.reloptions,
  (SELECT string_agg(format('%s:%s:%s:%s:%s:%s:%s:%s', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
            pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.attgenerated, a.attcollation::regcollation, a.attacl),
            ',' ORDER BY a.attnum)
     FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT string_agg(pg_get_indexdef(i.indexrelid) || ':' || i.indisvalid || i.indisclustered, ';'
            ORDER BY pg_get_indexdef(i.indexrelid)) FROM pg_index i WHERE i.indrelid = c.oid),
  (SELECT string_agg(x.conname || ':' || pg_get_constraintdef(x.oid) || ':' || x.convalidated, ';'
            ORDER BY x.conname, pg_get_constraintdef(x.oid)) FROM pg_constraint x WHERE x.conrelid = c.oid),
  CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END,
  (SELECT string_agg(quote_ident(pn.nspname) || '.' || quote_ident(pc.relname), ',' ORDER BY h.inhseqno)
     FROM pg_inherits h JOIN pg_class pc ON pc.oid = h.inhparent JOIN pg_namespace pn ON pn.oid = pc.relnamespace
     WHERE h.inhrelid = c.oid),
  pg_get_expr(c.relpartbound, c.oid),
  (SELECT string_agg(pg_get_ruledef(w.oid), ';' ORDER BY w.rulename) FROM pg_rewrite w
     WHERE w.ev_class = c.oid AND w.rulename <> '_RETURN'),
  (SELECT string_agg(format('%s:%s:%s:%s:%s:%s', p.polname, p.polcmd, p.polpermissive, p.polroles,
            pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)), ';' ORDER BY p.polname)
     FROM pg_policy p WHERE p.polrelid = c.oid),
  CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END
  || CASE WHEN c.relkind = 'S' THEN (SELECT format('%s:%s:%s:%s:%s:%s:%s', q.seqtypid::regtype, q.seqstart,
       q.seqincrement, q.seqmax, q.seqmin, q.seqcache, q.seqcycle) FROM pg_sequence q WHERE q.seqrelid = c.oid)
     || COALESCE((SELECT ':' || quote_ident(dn.nspname) || '.' || quote_ident(dc.relname) || '.' || da.attname
       FROM pg_depend d JOIN pg_class dc ON dc.oid = d.refobjid JOIN pg_namespace dn ON dn.oid = dc.relnamespace
       JOIN pg_attribute da ON da.attrelid = d.refobjid AND da.attnum = d.refobjsubid
       WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_class'::regclass
         AND d.deptype IN ('a', 'i') LIMIT 1), '') END)) AS defn,
  c.oid::text AS id, {_REL_KIND} AS kind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND {_APP} AND {_not_member('pg_class', 'c.oid')}
UNION ALL
SELECT 'routine ' || {_QUAL.format('p.proname')} || '(' || pg_get_function_identity_arguments(p.oid) || ')',
  md5(format('%s|%s|%s', CASE WHEN p.prokind = 'a' THEN (SELECT format('%s:%s:%s:%s:%s', g.aggtransfn, g.aggfinalfn,
    g.aggtranstype::regtype, g.agginitval, g.aggkind) FROM pg_aggregate g WHERE g.aggfnoid = p.oid)
    ELSE pg_get_functiondef(p.oid) END, pg_get_userbyid(p.proowner), p.proacl)),
  p.oid::text, 'routine'
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE {_APP} AND {_not_member('pg_proc', 'p.oid')}
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'i')
UNION ALL
SELECT 'trigger ' || quote_ident(t.tgname) || ' on ' || {_QUAL.format('c.relname')},
  md5(pg_get_triggerdef(t.oid) || ':' || t.tgenabled::text), t.oid::text, 'trigger'
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE NOT t.tgisinternal AND {_APP}
UNION ALL
SELECT CASE t.typtype WHEN 'd' THEN 'domain ' ELSE 'type ' END || {_QUAL.format('t.typname')},
  md5(format('%s|%s|%s|%s|%s|%s|%s', t.typtype, pg_get_userbyid(t.typowner), t.typacl,
    (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
    CASE WHEN t.typtype = 'd' THEN format('%s:%s:%s', format_type(t.typbasetype, t.typtypmod), t.typnotnull,
      t.typdefault) END
    || COALESCE((SELECT string_agg(x.conname || ':' || pg_get_constraintdef(x.oid), ';' ORDER BY x.conname)
       FROM pg_constraint x WHERE x.contypid = t.oid), ''),
    (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum)
       FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped),
    (SELECT r.rngsubtype::regtype::text FROM pg_range r WHERE r.rngtypid = t.oid))),
  t.oid::text, CASE t.typtype WHEN 'd' THEN 'domain' ELSE 'type' END
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE {_APP} AND t.typtype IN ('e', 'd', 'r', 'c', 'b') AND NOT (t.typtype = 'b' AND t.typcategory = 'A')
  AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
  AND {_not_member('pg_type', 't.oid')}
UNION ALL
SELECT 'extension ' || quote_ident(x.extname), md5(x.extversion || ':' || x.extnamespace::regnamespace::text),
  x.oid::text, 'extension' FROM pg_extension x
UNION ALL
SELECT 'schema ' || quote_ident(n.nspname), md5(format('%s|%s', pg_get_userbyid(n.nspowner), n.nspacl)),
  n.oid::text, 'schema' FROM pg_namespace n WHERE {_APP}
UNION ALL
SELECT 'event trigger ' || quote_ident(v.evtname), md5(format('%s|%s|%s|%s', v.evtevent, v.evtfoid::regproc,
  v.evtenabled, v.evttags)), v.oid::text, 'event trigger' FROM pg_event_trigger v
WHERE v.evtname NOT IN ('sitectl_ddl', 'sitectl_drop')"""


#: Starts every transaction of sitectl's own DDL: the DDL log leaves it out (the setting lasts
#: until the transaction ends).
_QUIET = "SET LOCAL sitectl.restoring = 'on';"
#: Each call is a session of its own (``psql -c``, or a new connection): JIT compiling off for
#: it, since the planner's cost of sitectl's catalog queries passes ``jit_above_cost`` and the
#: compiling takes longer (about 0.3 s on GitLab's schema) than running them.
_NO_JIT = "SET jit = off;"
#: True when the DDL log has entries or the event triggers that fill it are not both there and
#: enabled (then the detection compares every object: nothing is taken on trust).
_DDL_LOGGED = ("((SELECT count(*) FROM pg_event_trigger WHERE evtname IN ('sitectl_ddl', 'sitectl_drop') "
               "AND evtenabled = 'A' AND evtfoid = 'sitectl.log_ddl()'::regprocedure) = 2)")
_DDL_SEEN = f"(EXISTS (SELECT 1 FROM sitectl.ddl) OR NOT {_DDL_LOGGED})"


#: SQL: an object row that is not one of sitectl's own tracking triggers.
_NOT_OURS = "obj !~ '^trigger sitectl_(row|trunc) on '"


#: A table's name as the tracking logs it (``quote_ident`` of schema and table, joined by a dot):
#: the only shape a checkpoint record's table names may have (a hand-edited record's text never
#: reaches SQL otherwise).
_QUALIFIED = re.compile(r'^(?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)\.(?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)\Z')


def _ckpt_tables(entry: dict) -> dict[str, dict]:
    """A checkpoint entry's tables, each name checked (:data:`_QUALIFIED`).

    Raises:
        StoreError: a name of another shape (a damaged or hand-edited record).
    """
    tables = entry.get("tables") or {}
    bad = [t for t in tables if not isinstance(t, str) or not _QUALIFIED.match(t)]
    if bad:
        raise StoreError(f"the checkpoint's record names a table {bad[0]!r:.80} that is no table name; delete the "
                         "checkpoint and save it again")
    return tables


def _ident(name: str) -> str:
    """A PostgreSQL identifier, always double-quoted (legal for any name)."""
    return '"' + name.replace('"', '""') + '"'


def _qname(tbl: str) -> str:
    """``schema.table`` (as ``quote_ident`` wrote it) → its copy's name within the snapshot
    schema: ``c`` + the MD5 of the qualified name, 33 bytes whatever the name's length or
    characters, distinct for distinct tables."""
    return '"c' + hashlib.md5(tbl.encode()).hexdigest() + '"'


def _literal_keys(keys: list[str] | None, cols: list[list[str]]) -> str | None:
    """The logged keys of one table as SQL literals cast to the key columns' types
    (``'5'::bigint`` or ``('a'::text, '2'::integer)``), or None when they are not all there
    or a TRUNCATE was logged (``null``). Numbers keep every digit they were logged with."""

    if not keys or "null" in keys:
        return None
    out = []
    for k in keys:
        vals = json.loads(k, parse_float=str, parse_int=str)
        if not isinstance(vals, list) or len(vals) != len(cols) or any(v is None for v in vals):
            return None
        lit = [f"{pg_value(v if isinstance(v, str) else json.dumps(v))}::{typ}" for v, (_, typ) in zip(vals, cols)]
        out.append(lit[0] if len(lit) == 1 else "(" + ", ".join(lit) + ")")
    return ", ".join(out)


def _copy_col(name: str, cols: list[list[str]]) -> str:
    """Column ``name`` of a copy (aliased ``x``) as its table's type: cast back when the copy
    keeps it as text."""
    cast = next((c for n, c in cols if n == name), "")
    return f"x.{_ident(name)}" + (f"::{cast}" if cast else "")


def _key_match(pk: list[list[str]], cols: list[list[str]]) -> tuple[str, str]:
    """Conditions that match a row of a table (aliased ``x``) and of its copy (aliased ``x``) to
    a logged key ``k.pk`` (a JSON array of the key's values): ``(live, copy)``, each key column
    compared with the logged value cast to its type."""
    names = [f"x.{_ident(c)}" for c, _ in pk]
    copy = [_copy_col(c, cols) for c, _ in pk]
    return tuple(" AND ".join(f"{c} = (k.pk ->> {i})::{typ}" for i, (c, (_, typ)) in enumerate(zip(side, pk)))
                 for side in (names, copy))


def _insert(tbl: str, snap: str, cols: list[list[str]], tail: str = "") -> str:
    """``INSERT`` of rows of the copy ``snap`` (aliased ``x``) into ``tbl``, column by column by
    name (generated columns left to the server, identity columns take the copy's values, columns
    the copy keeps as text cast back)."""
    if not cols:
        return f"INSERT INTO {tbl} OVERRIDING SYSTEM VALUE SELECT x.* FROM {snap} x{tail};"
    names = ", ".join(_ident(c) for c, _ in cols)
    return (f"INSERT INTO {tbl} ({names}) OVERRIDING SYSTEM VALUE "
            f"SELECT {', '.join(_copy_col(c, cols) for c, _ in cols)} FROM {snap} x{tail};")


class PostgresStore(Store):
    """A PostgreSQL database, reached through a SQL session (``sitectl.stores.sql``): ``psql``
    inside the container, or psycopg over the network.

    Args:
        site: site name, for messages.
        session: a ``postgres`` :class:`~sitectl.stores.sql.SqlSession` of the application's
            database (``postmill``, ``gitlabhq_production``) as a superuser.
    """

    kind = "postgres"

    def __init__(self, site: str, session: SqlSession):
        super().__init__(site, f"postgres:{session.database}")
        self.session = session
        self.transport = getattr(session, "transport", None)
        self.db = session.database

    def sql(self, statements: str, what: str = "SQL") -> list[list[str]]:
        """Run statements in one transaction (again when the server ends it as a deadlock's
        victim: :func:`sitectl.stores.sql.retry_deadlocks`); return the rows of every
        statement, in order.

        Raises:
            StoreError: the server refused (names the site and ``what``).
        """
        return retry_deadlocks(lambda: self.session.query(f"{_NO_JIT} {statements}", what))

    def snap_schema(self, name: str) -> str:
        return f"sitectl_s_{name}"

    # -- facts ----------------------------------------------------------------------------
    def _rels(self, source: str | None = None) -> list[tuple[str, bool, bool, list, list]]:
        """(table, leaf, root, primary key [[column, type]], insert columns) of every table and
        partitioned parent: live (``source`` None) or as snapshot schema ``source`` saved them."""
        src = f"({RELS_SQL})" if source is None else f"{source}.__tables"
        rows = self.sql(f"SELECT to_json(r.tbl)::text, r.leaf, r.root, r.pk, r.cols FROM {src} r ORDER BY r.tbl",
                        "list tables")
        return [(json.loads(t), leaf == "t", root == "t", json.loads(pk), json.loads(cols))
                for t, leaf, root, pk, cols in rows]

    def _sequence_values_sql(self, seqs: list[str]) -> str:
        if not seqs:
            return "SELECT NULL::text, NULL::bigint, NULL::boolean WHERE false"
        return " UNION ALL ".join(f"SELECT {pg_value(s)}, last_value, is_called FROM {s}" for s in seqs)

    # -- tracking -------------------------------------------------------------------------
    def _baseline_sql(self, name: str, when: str = "") -> str:
        """Statements, for the caller's transaction, that record the baseline: snapshot
        ``name``, every object's digest and OID. Without ``when`` the change and DDL logs are
        emptied too (a full restore: its rows are golden's). With ``when`` (an SQL condition; a
        snapshot's "no DDL meanwhile") the baseline is recorded only where it holds and the
        logs are left as they are."""
        w = f" WHERE {when}" if when else ""
        clear = "" if when else "DELETE FROM sitectl.changes; DELETE FROM sitectl.ddl; DELETE FROM sitectl.meta; "
        return (f"{clear}DELETE FROM sitectl.baseline{w}; INSERT INTO sitectl.meta SELECT {pg_value(name)}{w}; "
                f"INSERT INTO sitectl.baseline SELECT obj, defn || ':' || id FROM ({OBJECTS_SQL}) o{w};")

    # -- Store API ------------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        rows = self.sql(f"SELECT count(*) FROM pg_namespace WHERE nspname = {pg_value(self.snap_schema(name))}")
        return rows[0][0] == "1"

    def snapshot(self, name: str) -> dict:
        """Take snapshot ``name`` (see the module's docstring and :meth:`_take`) with no write
        lost: the copies are one moment, and what is written meanwhile is logged. An attempt
        during which the schema changed (DDL) is taken again, up to :data:`sitectl.stores.sql.SNAPSHOT_ATTEMPTS`
        times.

        Raises:
            StoreError: the schema kept changing through every attempt (the message names the
                statements), or a statement failed.
        """
        leaves = take_when_quiet(lambda: self._take(name), f"{self.site}: {self.label}'s schema changed while snapshot {name!r} was copied",
                                 "Stop what changes the site's schema (migrations, partition jobs)")
        s = self.snap_schema(name)
        size = self.sql(f"SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
                        f"ON n.oid = c.relnamespace WHERE n.nspname = {pg_value(s)}")
        return {"fingerprint": self.fingerprint(name), "size": int(size[0][0]), "tables": leaves}

    def _take(self, name: str) -> tuple[int, list[str]]:
        """One attempt at snapshot ``name``: (leaves copied, the DDL run meanwhile: empty when
        the baseline is set).

        Tracking goes in first and the logs are emptied, then every table is copied in one
        ``REPEATABLE READ`` transaction: the copies are one moment of the database while the
        application keeps writing, and every write that is not in them is in the change log
        (the next reset undoes it; one that is in them is logged too, and restoring it changes
        nothing). Only DDL meanwhile (the schema dump is a session of its own) makes the
        attempt count as written."""
        s = self.snap_schema(name)
        # Until the end no baseline is set, so a reset meanwhile restores in full.
        self.sql(f"{_QUIET}{TRACKING_SQL}DELETE FROM sitectl.meta; SELECT sitectl.track(); "
                 "DELETE FROM sitectl.changes; DELETE FROM sitectl.ddl;", "install change tracking")
        self.sql(f"{_QUIET} DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s};", f"snapshot {name}")
        rows = self.sql(
            f"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; {_QUIET} "
            f"CREATE TABLE {s}.__tables AS SELECT tbl, leaf, root, pk, cols FROM ({RELS_SQL}) t; "
            f"CREATE TABLE {s}.__sequences AS SELECT s, l, c FROM sitectl.sequences(); "
            f"CREATE TABLE {s}.__objects AS SELECT obj, defn FROM ({OBJECTS_SQL}) o WHERE {_NOT_OURS}; "
            f"CREATE TABLE {s}.__matviews AS SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) "
            f"AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            f"WHERE c.relkind = 'm' AND c.relispopulated AND {_APP}; "
            f"CREATE TABLE {s}.__schema (n serial PRIMARY KEY, line text NOT NULL); "
            f"SELECT sitectl.copy_all({pg_value(s)});", f"snapshot {name}")
        leaves = int(rows[0][0]) if rows and rows[0] else 0
        self.session.dump_into_table(self.DUMP_ARGS, f"{s}.__schema", f"{self.label} schema dump")
        self.sql(f"CREATE TABLE {s}.__schemas AS SELECT n.nspname::text AS name, EXISTS (SELECT 1 FROM {s}.__schema d "
                 f"WHERE d.line = 'CREATE SCHEMA ' || quote_ident(n.nspname) || ';') AS created "
                 f"FROM pg_namespace n WHERE {_APP}; CREATE TABLE {s}.__format AS SELECT {FORMAT} AS version;",
                 f"snapshot {name}")
        # One view of the DDL log (one transaction): empty, the baseline is set; else nothing is.
        rows = self.sql(
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; "
            + self._baseline_sql(name, when="NOT EXISTS (SELECT 1 FROM sitectl.ddl)")
            + " SELECT DISTINCT to_json('DDL: ' || tag)::text FROM sitectl.ddl ORDER BY 1;", f"snapshot {name}")
        return leaves, [json.loads(r[0]) for r in rows]

    #: Plain ``pg_dump --schema-only`` of the application's schemas: replayed into emptied
    #: schemas by a full restore (a ``--clean`` text cannot drop the indexes and constraints
    #: that partitions inherit).
    DUMP_ARGS = ["--schema-only", "-N", "sitectl", "-N", "sitectl_*"]

    def _replay_schema_sql(self, name: str) -> str:
        """A statement that runs the saved schema text server-side. Lines of ``psql``
        meta-commands that pg_dump adds (``\\restrict``/``\\unrestrict``, since PostgreSQL 15.14)
        are left out: they are not SQL."""
        s = self.snap_schema(name)
        return (f"DO $sitectl$ BEGIN EXECUTE (SELECT string_agg(line, chr(10) ORDER BY n) FROM {s}.__schema "
                "WHERE line !~ ('^' || chr(92) || chr(92) || '(un)?restrict [A-Za-z0-9]*$')); END $sitectl$;")

    def detect_requests(self, name: str) -> list:
        s = self.snap_schema(name)
        sql = (f"{_NO_JIT} "
               f"WITH o AS MATERIALIZED ({OBJECTS_SQL}) "
               "SELECT 'M', to_json(snapshot)::text, '' FROM sitectl.meta UNION ALL "
               f"SELECT 'F', version::text, '' FROM {s}.__format UNION ALL "
               f"SELECT 'X', COALESCE(string_agg(n::text, ','), ''), {_DDL_LOGGED}::text FROM sitectl.ddl UNION ALL "
               "SELECT 'K', to_json(tbl)::text, count(*)::text FROM sitectl.changes GROUP BY tbl UNION ALL "
               "SELECT 'T', to_json(tbl)::text, '' FROM sitectl.changes WHERE pk = 'null' UNION ALL "
               "SELECT 'R', to_json(tbl)::text, pk::text FROM sitectl.changes "
               f"WHERE (SELECT count(*) FROM sitectl.changes) <= {MAX_INLINE_KEYS} UNION ALL "
               # Objects that differ from the baseline: new ones with their kind and OID.
               "SELECT 'D', to_json(COALESCE(b.tbl, o.obj))::text, CASE WHEN b.tbl IS NULL THEN o.id || ' ' || o.kind "
               "WHEN o.obj IS NULL THEN 'gone' ELSE 'changed' END FROM sitectl.baseline b FULL JOIN o ON o.obj = b.tbl "
               f"WHERE {_DDL_SEEN} AND b.defn IS DISTINCT FROM o.defn || ':' || o.id UNION ALL "
               f"SELECT 'Q', to_json(COALESCE(v.s, g.s))::text, '' FROM sitectl.sequences() v "
               f"FULL JOIN {s}.__sequences g ON g.s = v.s WHERE g.l IS DISTINCT FROM v.l OR g.c IS DISTINCT FROM v.c "
               # The snapshot's keys and insert columns of the logged tables: the restore needs no extra trip.
               f"UNION ALL SELECT 'P', to_json(g.tbl)::text, json_build_array(g.pk::json, g.cols::json)::text "
               f"FROM {s}.__tables g WHERE g.tbl IN (SELECT tbl FROM sitectl.changes)")
        return [self.session.request(sql)]

    def parse_changes(self, name: str, results: list[SqlResult]) -> Changes:
        (res,) = results
        if not res.ok:  # no tracking yet, no such snapshot schema, or one of an older format
            return Changes([f"{self.label}: baseline is not snapshot {name!r} ({res.error[-200:]})"], {"full": True})
        rows = res.rows
        meta = [json.loads(r[1]) for r in rows if r[0] == "M"]
        fmt = [r[1] for r in rows if r[0] == "F"]
        if meta != [name] or fmt != [str(FORMAT)]:
            return Changes([f"{self.label}: baseline is not snapshot {name!r}"], {"full": True})
        keys = {json.loads(r[1]): int(r[2]) for r in rows if r[0] == "K"}
        # Objects that differ: created ("<oid> <kind>"), "gone" or "changed".
        objs = {json.loads(r[1]): r[2] for r in rows if r[0] == "D"}
        retrack = any(r[0] == "X" and r[2] != "true" for r in rows)
        # The DDL log's entries the detection saw (it compared every object after them).
        ddl_seen = sorted(int(n) for r in rows if r[0] == "X" and r[1] for n in r[1].split(","))
        if ddl_seen and not objs and not retrack:
            # DDL that left every tracked definition as it was (a COMMENT, a GRANT already
            # held): the restore clears the entries, so later detections stop comparing.
            objs["DDL with no tracked difference"] = "nothing"
        if retrack:  # the objects were compared in full all the same; the delta puts the triggers back
            objs["sitectl's DDL log (its event triggers were missing or off)"] = "sitectl"
        added = {o: tuple(v.split(" ", 1)) for o, v in objs.items() if v not in ("gone", "changed", "sitectl", "nothing")}
        full = any(v in ("gone", "changed") for v in objs.values())
        seq_changed = sorted(json.loads(r[1]) for r in rows if r[0] == "Q")
        word = {"gone": "dropped", "changed": "changed", "sitectl": "reinstalled", "nothing": "log cleared"}
        items = sorted({*(f"{o} ({word.get(v, 'created')})" for o, v in objs.items()),
                        *(f"table {t} ({n} rows)" for t, n in keys.items()),
                        *(f"sequence {q}" for q in seq_changed)})
        pk = {}
        for r in rows:
            if r[0] == "P":
                p, cols = json.loads(r[2])
                pk[json.loads(r[1])] = {"pk": p, "cols": cols}
        return Changes(items, {
            "keys": keys, "ddl_seen": ddl_seen, "retrack": retrack,
            "whole": sorted({json.loads(r[1]) for r in rows if r[0] == "T"}),
            "added": [[o, *added[o]] for o in sorted(added)], "ddl": sorted(objs), "sequences": seq_changed,
            "full": full, "pk": pk, "rows": _group([(json.loads(r[1]), r[2]) for r in rows if r[0] == "R"])})

    def diffable(self, changes: Changes) -> bool:
        # A detection that read the log has its keys, even when it asks for a full restore.
        return "keys" in changes.detail

    def change_marks(self, changes: Changes) -> set[str]:
        # Keys are listed while the log holds at most MAX_INLINE_KEYS rows; beyond, the counts.
        rows = changes.detail.get("rows") or {}
        counts = {f"table {t} ({n} rows)" for t, n in (changes.detail.get("keys") or {}).items() if t in rows}
        return ({i for i in changes.items if i not in counts}
                | {f"row {t}\t{k}" for t, ks in rows.items() for k in ks})

    def diff(self, name: str, changes: Changes, limits: DiffLimits) -> dict:
        """The changed rows of each logged table (partitions by leaf), read from the live table
        and from snapshot ``name``'s copy by the logged primary keys, each row as ``to_jsonb``
        gives it (docs/diff.md); objects created, dropped or changed and sequences moved as
        schema changes. A table whose TRUNCATE was logged, or without a primary key, gets its
        count of logged keys only."""
        d = changes.detail
        # Each object's change as the detection named it ("<object> (<change>)"); sitectl's own
        # DDL-log entries ("reinstalled", "log cleared") are not the application's objects.
        schema = [{"object": o, "change": c} for o in d.get("ddl", []) for i in changes.items if i.startswith(o + " (")
                  for c in [i[len(o) + 2:-1]] if c in ("created", "dropped", "changed")]
        out = {"items": list(changes.items), "schema": schema, "sequences": list(d.get("sequences", [])), "tables": []}
        s = self.snap_schema(name)
        selects, listed = [], set()
        for tbl in sorted(d.get("keys") or {}):
            info = (d.get("pk") or {}).get(tbl)
            entry = {"table": tbl, "key_columns": [c for c, _ in (info or {}).get("pk", [])],
                     "rows_logged": d["keys"][tbl]}
            out["tables"].append(entry)
            if info is None or not info["pk"] or tbl in d.get("whole", []):
                entry["rows"] = ("not listed: the snapshot has no copy of it (created since)" if info is None
                                 else "not listed: the table has no primary key" if not info["pk"]
                                 else "not listed: a TRUNCATE was logged")
                continue
            listed.add(tbl)
            match, cmatch = _key_match(info["pk"], info["cols"])
            if info["cols"]:
                live_cols = ", ".join(f"x.{_ident(c)}" for c, _ in info["cols"])
                copy_cols = ", ".join(f"{_copy_col(c, info['cols'])} AS {_ident(c)}" for c, _ in info["cols"])
            else:
                live_cols = copy_cols = "x.*"
            # The count is read with the keys (one statement, one view of the log).
            selects.append(
                f"SELECT to_json({pg_value(tbl)}::text)::text, k.pk::text, "
                f"(SELECT count(*) FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk <> 'null')::text, "
                f"COALESCE((SELECT to_jsonb(r)::text FROM (SELECT {live_cols} FROM ONLY {tbl} x WHERE {match} LIMIT 1) r), '-'), "
                f"COALESCE((SELECT to_jsonb(r)::text FROM (SELECT {copy_cols} FROM {s}.{_qname(tbl)} x WHERE {cmatch} LIMIT 1) r), '-') "
                f"FROM (SELECT pk FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk <> 'null' "
                f"ORDER BY pk LIMIT {int(limits.rows)}) k")
        got: dict[str, list] = {}
        counts: dict[str, int] = {}
        for chunk in budget_chunks(selects, SQL_BUDGET - 100):
            for tbl, key, count, now, then in self.sql(" UNION ALL ".join(chunk) + ";",
                                                       f"read changed rows against {name}"):
                counts[json.loads(tbl)] = int(count)
                # numeric values as their exact text (a float would round them)
                got.setdefault(json.loads(tbl), []).append((
                    json.loads(key, parse_float=str), None if then == "-" else json.loads(then, parse_float=str),
                    None if now == "-" else json.loads(now, parse_float=str)))
        for entry in out["tables"]:
            if entry["table"] in listed:
                pairs = got.get(entry["table"], [])
                entry["rows_logged"] = counts.get(entry["table"], entry["rows_logged"])
                entry.update(row_changes(entry["key_columns"], pairs, limits))
                entry["truncated"] = entry["rows_logged"] > len(pairs)
        return out

    def diff_checkpoint(self, ckpt: str, entry: dict, golden: str, changes: Changes, limits: DiffLimits) -> dict:
        """What changed since checkpoint ``ckpt`` (``entry``: this store's entry of its record),
        in :meth:`diff`'s terms: per leaf the rows at the keys logged now or in the checkpoint,
        then as the checkpoint's copy holds them (golden's copy where the checkpoint holds
        nothing) and now; the sequences whose value is not the checkpoint's (golden's where it
        holds none); schema changes since golden (a checkpoint holds none)."""
        d = changes.detail
        out = self.diff(golden, Changes(changes.items, {**d, "keys": {}}), limits)
        s, cs = self.snap_schema(golden), self.ckpt_schema(ckpt)
        whole = {t for t, info in (entry.get("tables") or {}).items() if info.get("whole")}
        rels = {t: (pk, cols) for t, leaf, _, pk, cols in self._rels(s) if leaf}
        logged = sorted({t for r in self.sql(
            f"SELECT DISTINCT to_json(tbl)::text FROM sitectl.changes UNION SELECT DISTINCT to_json(tbl)::text FROM {cs}.__keys",
            f"read checkpoint {ckpt}") for t in [json.loads(r[0])] if _QUALIFIED.match(t)})
        out["sequences"] = sorted(json.loads(r[0]) for r in self.sql(
            f"SELECT to_json(v.s)::text FROM sitectl.sequences() v LEFT JOIN {cs}.__sequences c ON c.s = v.s "
            f"LEFT JOIN {s}.__sequences g ON g.s = v.s WHERE CASE WHEN c.s IS NOT NULL THEN (c.l, c.c) IS DISTINCT FROM "
            "(v.l, v.c) ELSE (g.l, g.c) IS DISTINCT FROM (v.l, v.c) END", f"read checkpoint {ckpt}"))
        selects, listed = [], set()
        for tbl in logged:
            info = rels.get(tbl)
            row = {"table": tbl, "key_columns": [c for c, _ in (info or ([], []))[0]], "rows_logged": 0}
            out["tables"].append(row)
            if info is None or not info[0] or tbl in whole or tbl in (d.get("whole") or []):
                row["rows"] = ("not listed: the snapshot has no copy of it (created since)" if info is None
                               else "not listed: the table has no primary key" if not info[0]
                               else "not listed: the checkpoint keeps the table whole" if tbl in whole
                               else "not listed: a TRUNCATE was logged")
                continue
            listed.add(tbl)
            pk, cols = info
            match, cmatch = _key_match(pk, cols)
            live_cols = ", ".join(f"x.{_ident(c)}" for c, _ in cols) if cols else "x.*"
            copy_cols = ", ".join(f"{_copy_col(c, cols)} AS {_ident(c)}" for c, _ in cols) if cols else "x.*"
            keyset = (f"SELECT pk FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk <> 'null' UNION "
                      f"SELECT pk FROM {cs}.__keys WHERE tbl = {pg_value(tbl)} AND pk <> 'null'")
            copy = (f"SELECT to_jsonb(r)::text FROM (SELECT {copy_cols} FROM {cs}.{_qname(tbl)} x WHERE {cmatch} LIMIT 1) r"
                    if tbl in (entry.get("tables") or {}) else "SELECT NULL::text")
            selects.append(
                f"SELECT to_json({pg_value(tbl)}::text)::text, k.pk::text, (SELECT count(*) FROM ({keyset}) u)::text, "
                f"COALESCE((SELECT to_jsonb(r)::text FROM (SELECT {live_cols} FROM ONLY {tbl} x WHERE {match} LIMIT 1) r), '-'), "
                f"CASE WHEN EXISTS (SELECT 1 FROM {cs}.__keys c WHERE c.tbl = {pg_value(tbl)} AND c.pk = k.pk) "
                f"THEN COALESCE(({copy}), '-') ELSE COALESCE((SELECT to_jsonb(r)::text FROM (SELECT {copy_cols} FROM "
                f"{s}.{_qname(tbl)} x WHERE {cmatch} LIMIT 1) r), '-') END "
                f"FROM (SELECT pk FROM ({keyset}) u ORDER BY pk LIMIT {int(limits.rows)}) k")
        got: dict[str, list] = {}
        counts: dict[str, int] = {}
        for chunk in budget_chunks(selects, SQL_BUDGET - 100):
            for tbl, key, count, now, then in self.sql(" UNION ALL ".join(chunk) + ";", f"read changed rows against {ckpt}"):
                counts[json.loads(tbl)] = int(count)
                got.setdefault(json.loads(tbl), []).append((
                    json.loads(key, parse_float=str), None if then == "-" else json.loads(then, parse_float=str),
                    None if now == "-" else json.loads(now, parse_float=str)))
        for row in out["tables"]:
            if row["table"] in listed:
                pairs = got.get(row["table"], [])
                row["rows_logged"] = counts.get(row["table"], 0)
                row.update(row_changes(row["key_columns"], pairs, limits))
                row["truncated"] = row["rows_logged"] > len(pairs)
        return out

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        # A missing snapshot makes the change detection fail, which asks for the full path;
        # only the paths that do not come from a detection check that the snapshot exists.
        if changes is None or changes.detail.get("full"):
            if not self.exists(name):
                raise StoreError(f"{self.site}: {self.label} has no snapshot {name!r}")
        if changes is None:
            changes = self.changes(name)
            if not changes.detail.get("full"):
                if changes.detail.get("added"):  # objects created since: dropped first
                    self.sql(self._delta_sql(name, changes, self._keys_of(name, changes)), f"restore from {name}")
                return self._restore_all_rows(name)
        if changes.detail.get("full"):
            return self._restore_full(name)
        if not changes:
            return []
        self.sql(self._delta_sql(name, changes, self._keys_of(name, changes)), f"restore rows from {name}")
        return changes.items

    def _keys_of(self, name: str, changes: Changes) -> dict:
        """The snapshot's key and insert columns of every logged table still there."""
        pks = changes.detail.get("pk")
        if pks is not None and all(t in pks for t in self._restored_tables(changes)):
            return pks
        return {t: {"pk": pk, "cols": cols} for t, _, _, pk, cols in self._rels(self.snap_schema(name))}

    @staticmethod
    def _restored_tables(changes: Changes) -> list[str]:
        """The logged tables a delta puts back: all but those created since the snapshot."""
        new = {o[len("table "):] for o, _, kind in changes.detail.get("added", []) if kind == "table"}
        return sorted(t for t in changes.detail["keys"] if t not in new)

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if not changes:
            return []
        pks = changes.detail.get("pk")
        if changes.detail.get("full") or pks is None or any(t not in pks for t in self._restored_tables(changes)):
            return None
        return [self.session.request(self._delta_sql(name, changes, pks))]

    def _delta_sql(self, name: str, changes: Changes, pks: dict[str, dict]) -> str:
        """One transaction that drops the objects created since the snapshot, puts the changed
        rows and sequences back (triggers and foreign-key actions off) and clears their entries
        in the change log.

        The restored tables are locked first (``EXCLUSIVE``: the application can read, its
        writes wait the few milliseconds of the restore), so the change log of a locked table
        cannot move meanwhile. Keys read by the detection are restored and cleared one by one
        (a key logged after the detection stays logged for the closing check); tables with
        many keys use the log itself, server-side (a TRUNCATE logged after the detection stays
        logged too). The text stays under :data:`SQL_BUDGET` bytes: the tables with the most
        keys move to the server-side path."""
        rows = changes.detail.get("rows", {})
        literal = {t for t in self._restored_tables(changes) if t in rows}
        while True:
            sql = self._delta_text(name, changes, pks, literal)
            if len(sql.encode()) <= SQL_BUDGET or not literal:
                return sql
            literal.discard(max(literal, key=lambda t: len(rows[t])))

    def _delta_text(self, name: str, changes: Changes, pks: dict[str, dict], literal: set[str]) -> str:
        s = self.snap_schema(name)
        keys_of = changes.detail["keys"]
        tables = self._restored_tables(changes)
        whole_logged = set(changes.detail.get("whole", []))
        stmts = ["SET LOCAL session_replication_role = replica;", _QUIET]
        added = changes.detail.get("added", [])
        if added:
            stmts += [f"SELECT sitectl.drop_object({pg_value(kind)}, {int(oid)});" for _, oid, kind in added]
            stmts.append("DELETE FROM sitectl.changes WHERE to_regclass(tbl) IS NULL;")
        if tables:
            stmts.append(f"LOCK TABLE {', '.join('ONLY ' + t for t in tables)} IN EXCLUSIVE MODE;")
        for tbl in tables:
            snap = f"{s}.{_qname(tbl)}"
            info = pks.get(tbl, {"pk": [], "cols": []})
            pk, cols = info["pk"], info["cols"]
            clear = f"DELETE FROM sitectl.changes WHERE tbl = {pg_value(tbl)};"
            if not pk or keys_of[tbl] > MAX_KEYS_PER_TABLE or tbl in whole_logged:
                stmts.append(f"DELETE FROM ONLY {tbl}; {_insert(tbl, snap, cols)} {clear}")
                continue
            names = [_ident(c) for c, _ in pk]
            copy = [_copy_col(c, cols) for c, _ in pk]
            lits = _literal_keys(changes.detail["rows"][tbl], pk) if tbl in literal else None
            if lits is not None:
                where = (f"({', '.join('x.' + c for c in names)}) IN ({lits})" if len(names) > 1
                         else f"x.{names[0]} IN ({lits})")
                cwhere = f"({', '.join(copy)}) IN ({lits})" if len(names) > 1 else f"{copy[0]} IN ({lits})"
                keys = ",".join(f"{pg_value(k)}::jsonb" for k in changes.detail["rows"][tbl])
                stmts.append(f"DELETE FROM ONLY {tbl} x WHERE {where}; {_insert(tbl, snap, cols, ' WHERE ' + cwhere)}"
                             f" DELETE FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk IN ({keys});")
                continue
            keyset = f"(SELECT pk FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk <> 'null')"
            match, cmatch = _key_match(pk, cols)
            stmts.append(f"DELETE FROM ONLY {tbl} x USING {keyset} k WHERE {match}; "
                         f"{_insert(tbl, snap, cols, f' JOIN {keyset} k ON {cmatch}')} "
                         f"DELETE FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk <> 'null';")
        new = {o[len("sequence "):] for o, _, kind in added if kind == "sequence"}
        for q in changes.detail["sequences"]:
            if q not in new:
                stmts.append(f"SELECT setval({pg_value(q)}, g.l, g.c) FROM {s}.__sequences g WHERE g.s = {pg_value(q)};")
        if changes.detail.get("retrack"):
            stmts.append(EVENT_TRIGGERS_SQL)
        if changes.detail.get("ddl_seen"):
            # The detection compared every object after these entries: the restore undoes
            # what they did (entries it did not see stay for the closing check).
            seen = ", ".join(str(int(n)) for n in changes.detail["ddl_seen"])
            stmts.append(f"DELETE FROM sitectl.ddl WHERE n IN ({seen});")
        return f"{_NO_JIT}\nBEGIN;\n" + "\n".join(stmts) + "\nCOMMIT;"

    def _fill_sql(self, name: str) -> str:
        return f"SET LOCAL session_replication_role = replica;\nSELECT sitectl.fill({pg_value(self.snap_schema(name))});"

    def _check_format(self, name: str) -> None:
        s = self.snap_schema(name)
        ok = self.sql(f"SELECT to_regclass({pg_value(s + '.__format')}) IS NOT NULL", "read snapshot format")[0][0] == "t"
        if not ok or self.sql(f"SELECT version FROM {s}.__format", "read snapshot format") != [[str(FORMAT)]]:
            raise StoreError(f"{self.site}: snapshot {name!r} of {self.label} was made by another version of sitectl "
                             f"(format {FORMAT} needed); take it again with `sitectl snapshot create {name}`")

    def _restore_all_rows(self, name: str) -> list[str]:
        """Every table's rows and every sequence back from the snapshot (structure unchanged)."""
        self._check_format(name)
        rels = self._rels(self.snap_schema(name))
        self.sql(_QUIET + TRACKING_SQL, "install change tracking")  # its functions do the work
        self.sql("BEGIN;\n" + self._fill_sql(name) + "\nCOMMIT;", f"restore all rows from {name}")
        return [f"{self.label}: all {sum(1 for r in rels if r[1])} tables (rows)"]

    def _restore_full(self, name: str) -> list[str]:
        """After DDL: empty the application's schemas, replay the saved plain schema dump
        (owners and grants included), refill every table, set every sequence, refresh the
        materialized views the snapshot had populated; one transaction; then tracking anew."""
        self._check_format(name)
        s = self.snap_schema(name)
        rels = self._rels(s)
        self.sql(_QUIET + TRACKING_SQL, "install change tracking")  # its functions do the work
        refresh = (f"DO $sitectl$ DECLARE v text; BEGIN FOR v IN SELECT name FROM {s}.__matviews LOOP "
                   "EXECUTE 'REFRESH MATERIALIZED VIEW ' || v; END LOOP; END $sitectl$;")
        try:
            # Tracking anew and the baseline in the same transaction: a write waits for its
            # table's lock and is logged after the commit, never lost between the two. The
            # dump's settings (search_path '', ...) are reset first: the digests depend on them.
            self.sql(f"BEGIN;\n{_QUIET}\nSELECT sitectl.clear_schemas({pg_value(s)});\n{self._replay_schema_sql(name)}\n"
                     f"{self._fill_sql(name)}\n{refresh}\nRESET ALL; {_NO_JIT} {_QUIET}\nSELECT sitectl.track();\n"
                     f"{self._baseline_sql(name)}\nCOMMIT;",
                     f"full restore from {name}")
        except StoreError as err:
            if "max_locks_per_transaction" not in str(err):
                raise
            limits = self.sql("SELECT current_setting('max_locks_per_transaction'), current_setting('max_connections')")
            raise StoreError(
                f"{self.site}: the full restore of {self.label} re-creates every object in one transaction and the "
                f"server's lock table is too small for it (max_locks_per_transaction {limits[0][0]} x max_connections "
                f"{limits[0][1]}); nothing was changed. Raise max_locks_per_transaction (GitLab omnibus: 128 with 400 "
                "connections) and restart the server, then reset again") from None
        differ = [json.loads(r[0]) for r in self.sql(
            f"SELECT to_json(COALESCE(g.obj, o.obj))::text FROM {s}.__objects g FULL JOIN (SELECT obj, defn FROM "
            f"({OBJECTS_SQL}) o WHERE {_NOT_OURS}) o ON o.obj = g.obj WHERE g.defn IS DISTINCT FROM o.defn ORDER BY 1",
            "check the restored schema")]
        if differ:
            raise StoreError(f"{self.site}: the full restore of {self.label} left schema objects unlike snapshot "
                             f"{name!r}: {', '.join(differ[:10])}{' ...' if len(differ) > 10 else ''}; take the snapshot "
                             "again, or re-create the site (`sitectl reset --recreate`)")
        return [f"{self.label}: all {sum(1 for r in rels if r[1])} tables (schema and rows)"]

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        if name:
            s = self.snap_schema(name)
            tables = [t for t, leaf, *_ in self._rels(s) if leaf]
            src = {t: f"{s}.{_qname(t)}" for t in tables}
            seq = f"SELECT to_json(g.s)::text, g.l || ':' || g.c FROM {s}.__sequences g"
            objs = f"SELECT to_json(obj)::text, defn FROM {s}.__objects WHERE {_NOT_OURS}"
        else:
            tables = [t for t, leaf, *_ in self._rels() if leaf]
            src = {t: f"ONLY {t}" for t in tables}
            seqs = [json.loads(r[0]) for r in self.sql(
                f"SELECT to_json(quote_ident(n.nspname) || '.' || quote_ident(c.relname))::text FROM pg_class c "
                f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND {_APP} ORDER BY 1",
                "list sequences")]
            seq = f"SELECT to_json(v.s)::text, v.l || ':' || v.c FROM ({self._sequence_values_sql(seqs)}) v(s, l, c)"
            objs = f"SELECT to_json(obj)::text, defn FROM ({OBJECTS_SQL}) o WHERE {_NOT_OURS}"
        out: dict[str, str] = {}
        sel = [f"SELECT {pg_value(t)}, count(*) || ':' || COALESCE(md5(string_agg(h, '' ORDER BY h)), '') "
               f"FROM (SELECT md5(x::text) h FROM {src[t]} x) y" for t in tables]
        for i in range(0, len(sel), 50):
            for t, d in self.sql(" UNION ALL ".join(sel[i:i + 50]), "fingerprint tables"):
                out[f"table {t}"] = d
        for q, v in self.sql(seq, "fingerprint sequences"):
            out[f"sequence {json.loads(q)}"] = v
        for o, d in self.sql(objs, "fingerprint schema objects"):
            out[f"object {json.loads(o)}"] = d
        return out

    # -- checkpoints (docs/checkpoints.md) ------------------------------------------------
    def ckpt_schema(self, ckpt: str) -> str:
        """The schema that holds checkpoint ``ckpt``'s rows."""
        return f"sitectl_c_{ckpt}"

    def checkpoint_refusal(self, changes: Changes) -> str:
        d = changes.detail
        if not self.diffable(changes):
            return "its change log does not follow golden (" + "; ".join(changes.items[:2]) + ")"
        if d.get("full") or d.get("added"):
            what = [o for o in d.get("ddl") or [] if "DDL with no tracked" not in o and "sitectl's DDL log" not in o]
            return f"schema objects changed since golden ({', '.join(what[:5])})"
        return ""

    def checkpoint_save(self, ckpt: str, golden: str, changes: Changes) -> dict:
        """Checkpoint ``ckpt`` as schema ``sitectl_c_CKPT``, in one ``REPEATABLE READ``
        transaction: ``__keys``, the change log as it is (every key logged since golden, a
        TRUNCATE's ``null`` too); per logged leaf a copy (named as a snapshot's) of its live rows
        at those keys, or of all its rows when it has no primary key or was truncated (columns of
        the application's types kept as text, as in a snapshot); ``__sequences``, the changed
        sequences' values. Matched to the log server-side by the keys' typed values.

        Raises:
            CheckpointUnavailable: the change log does not follow ``golden``, or schema objects
                were created, changed or dropped since (a checkpoint keeps rows, not definitions).
        """
        why = self.checkpoint_refusal(changes)
        if why:
            raise CheckpointUnavailable(f"{self.site}: {self.label}: {why}")
        d = changes.detail
        pks = self._keys_of(golden, changes)
        cs = self.ckpt_schema(ckpt)
        whole_logged = set(d.get("whole") or [])
        stmts = ["SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;", _QUIET,
                 f"DROP SCHEMA IF EXISTS {cs} CASCADE; CREATE SCHEMA {cs};",
                 f"CREATE TABLE {cs}.__keys AS SELECT tbl, pk FROM sitectl.changes;"]
        seqs = ", ".join(pg_value(q) for q in d.get("sequences") or [])
        stmts.append(f"CREATE TABLE {cs}.__sequences AS SELECT s, l, c FROM sitectl.sequences()"
                     + (f" WHERE s IN ({seqs});" if seqs else " WHERE false;"))
        entry: dict[str, dict] = {}
        for t in sorted(d["keys"]):
            info = pks.get(t)
            if info is None:
                raise CheckpointUnavailable(f"{self.site}: {self.label}: table {t} is not in golden; a checkpoint "
                                            "keeps changed rows only")
            pk, cols = info["pk"], info["cols"]
            sel = ", ".join(f"x.{_ident(c)}::text COLLATE \"default\" AS {_ident(c)}" if cast else f"x.{_ident(c)}"
                            for c, cast in cols) or "x.*"
            copy = f"{cs}.{_qname(t)}"
            whole = not pk or t in whole_logged
            if whole:
                stmts.append(f"CREATE TABLE {copy} AS SELECT {sel} FROM ONLY {t} x;")
            else:
                match, _ = _key_match(pk, cols)
                stmts.append(f"CREATE TABLE {copy} AS SELECT {sel} FROM ONLY {t} x JOIN (SELECT pk FROM {cs}.__keys "
                             f"WHERE tbl = {pg_value(t)} AND pk <> 'null') k ON {match};")
            entry[t] = {"whole": whole, "pk": pk, "cols": cols}
        # What the restore's closing check compares: the live rows and sequences, read with the
        # copies (kept in a table of the checkpoint, read by the last statement: psql before 15
        # prints only the last statement's rows).
        digest = self._ckpt_digest_sql(ckpt, entry, list(d.get("sequences") or []))
        stmts.append(f"CREATE TABLE {cs}.__digests (k text, v text);")
        stmts += [f"INSERT INTO {cs}.__digests {q}" for q in digest]
        rows = self.sql("BEGIN;\n" + "\n".join(stmts) + "\nCOMMIT;\n"
                        f"SELECT k, v FROM {cs}.__digests UNION ALL SELECT '', COALESCE(sum(pg_total_relation_size(c.oid)), 0)"
                        f"::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = {pg_value(cs)};",
                        f"checkpoint {ckpt}")
        return {"tables": entry, "sequences": list(d.get("sequences") or []),
                "digests": {json.loads(k): v for k, v in rows if k}, "size": next((int(v) for k, v in rows if not k), 0)}

    def _ckpt_digest_sql(self, ckpt: str, tables: dict[str, dict], sequences: list[str]) -> list[str]:
        """Queries giving ``(name as JSON, digest)``: per checkpointed leaf, the count and an MD5
        over the sorted MD5s of its live rows (as text) at the checkpoint's keys (all rows when
        kept whole); per changed sequence, its value and whether it was called."""
        cs = self.ckpt_schema(ckpt)
        sels = []
        for t, info in sorted(tables.items()):
            if info.get("whole"):
                src = f"ONLY {t} x"
            else:
                match, _ = _key_match(info["pk"], info["cols"])
                src = (f"ONLY {t} x JOIN (SELECT pk FROM {cs}.__keys WHERE tbl = {pg_value(t)} AND pk <> 'null') k "
                       f"ON {match}")
            sels.append(f"SELECT to_json({pg_value('table ' + t)}::text)::text, count(*)::text || ':' || "
                        f"COALESCE(md5(string_agg(md5(x::text), '' ORDER BY md5(x::text))), '') FROM {src}")
        if sequences:
            sels.append("SELECT to_json('sequence ' || v.s)::text, v.l::text || ':' || v.c::text FROM sitectl.sequences() v "
                        f"WHERE v.s IN ({', '.join(pg_value(q) for q in sequences)})")
        return [" UNION ALL ".join(sels[i:i + 50]) + ";" for i in range(0, len(sels), 50)]

    def checkpoint_check_requests(self, ckpt: str, entry: dict) -> list:
        tables, seqs = _ckpt_tables(entry), entry.get("sequences") or []
        return [self.session.request(f"{_NO_JIT} {q}") for q in self._ckpt_digest_sql(ckpt, tables, seqs)]

    def checkpoint_check(self, entry: dict, results: list, detected: list) -> list[str]:
        want = entry.get("digests") or {}
        got = {json.loads(k): v for res in results for k, v in (res.rows if res.ok else [])}
        bad = [r.error[-200:] for r in results if not r.ok]
        return bad + [f"{k} (now {got.get(k, 'unread')}, saved {want[k]})" for k in sorted(want) if got.get(k) != want[k]]

    def checkpoint_apply_requests(self, ckpt: str, golden: str, entry: dict) -> list:
        """One transaction, run on golden's state, with ``session_replication_role = replica``
        (no trigger and no foreign-key action fires: what the application's triggers wrote
        before the checkpoint is in it): each checkpointed leaf loses its rows at the
        checkpoint's keys (all of them when kept whole) and gets the checkpoint's rows; the
        checkpoint's keys go into the change log, which then follows golden as if the
        application had written them; the changed sequences take the checkpoint's values."""
        tables = _ckpt_tables(entry)
        cs = self.ckpt_schema(ckpt)
        stmts = ["SET LOCAL session_replication_role = replica;", _QUIET]
        if tables:
            stmts.append(f"LOCK TABLE {', '.join('ONLY ' + t for t in sorted(tables))} IN EXCLUSIVE MODE;")
        for t, info in sorted(tables.items()):
            copy = f"{cs}.{_qname(t)}"
            if info.get("whole"):
                stmts.append(f"DELETE FROM ONLY {t};")
            else:
                match, cmatch = _key_match(info["pk"], info["cols"])
                stmts.append(f"DELETE FROM ONLY {t} x USING (SELECT pk FROM {cs}.__keys WHERE tbl = {pg_value(t)} "
                             f"AND pk <> 'null') k WHERE {match};")
                # the copy's rows at the checkpoint's keys only (the container's copy is not trusted)
                stmts.append(_insert(t, copy, info["cols"], f" JOIN (SELECT pk FROM {cs}.__keys WHERE tbl = {pg_value(t)} "
                                                          f"AND pk <> 'null') k ON {cmatch}"))
                continue
            stmts.append(_insert(t, copy, info["cols"]))
        stmts.append(f"INSERT INTO sitectl.changes SELECT tbl, pk FROM {cs}.__keys ON CONFLICT DO NOTHING;")
        seqs = ", ".join(pg_value(q) for q in entry.get("sequences") or [])
        if seqs:
            stmts.append(f"SELECT setval(g.s::regclass, g.l, g.c) FROM {cs}.__sequences g WHERE g.s IN ({seqs});")
        return [self.session.request(f"{_NO_JIT}\nBEGIN;\n" + "\n".join(stmts) + "\nCOMMIT;")]

    def checkpoint_drop(self, ckpt: str) -> None:
        self.sql(f"DROP SCHEMA IF EXISTS {self.ckpt_schema(ckpt)} CASCADE", f"drop checkpoint {ckpt}")

    def checkpoint_held(self) -> set[str]:
        rows = self.sql("SELECT encode(convert_to(nspname, 'UTF8'), 'hex') FROM pg_namespace "
                        "WHERE nspname LIKE 'sitectl\\_c\\_%'")
        return hex_names("\n".join(r[0] for r in rows), "sitectl_c_")

    def export_payload(self, name: str, stage: str) -> str | None:
        # The snapshot schema as a custom-format dump (its __schema table included).
        out = f"{stage}/postgres-{self.db}.dump"
        self.session.dump(["-Fc", "-n", self.snap_schema(name)], out, f"{self.label} export")
        return out

    def import_payload(self, name: str, path: str, original: str) -> None:
        target, source = self.snap_schema(name), self.snap_schema(original)
        parked = f"sitectl_park_{uuid.uuid4().hex[:12]}"
        # The dump re-creates schema `source`; park a live schema of that name meanwhile.
        self.sql(f"DROP SCHEMA IF EXISTS {target} CASCADE;"
                 + (f"ALTER SCHEMA {source} RENAME TO {parked};" if source != target and self.exists(original) else ""),
                 "prepare import")
        try:
            self.session.load("pg_restore", [], path, f"{self.label} import")
            if source != target:
                self.sql(f"ALTER SCHEMA {source} RENAME TO {target}", "rename imported snapshot")
        finally:
            if source != target:
                self.sql(f"DO $p$ BEGIN IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '{parked}') THEN "
                         f"ALTER SCHEMA {parked} RENAME TO {source}; END IF; END $p$", "restore parked schema")

    def drop(self, name: str) -> None:
        self.sql(f"DROP SCHEMA IF EXISTS {self.snap_schema(name)} CASCADE", f"drop snapshot {name}")

    def held(self) -> set[str]:
        rows = self.sql("SELECT encode(convert_to(nspname, 'UTF8'), 'hex') FROM pg_namespace "
                        "WHERE nspname LIKE 'sitectl\\_s\\_%'")
        return hex_names("\n".join(r[0] for r in rows), "sitectl_s_")


def _group(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out
