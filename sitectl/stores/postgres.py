"""PostgreSQL store (the forum and GitLab): golden copy in the same database, exact change
tracking, restore of only the changed rows, sequences restored.

How it works (sources: research/fast-reset.md §1.6, §1.7 "trigger undo logs", §4.1-4.2;
PostgreSQL docs on triggers, ``session_replication_role`` and sequence functions):

* **Snapshot** ``NAME`` = schema ``sitectl_s_NAME`` in the same database holding a copy of every
  application table (``CREATE TABLE ... AS TABLE``), ``__sequences`` (``last_value``,
  ``is_called`` of every sequence), ``__tables`` (primary keys and definition digests) and
  ``__schema`` (the ``pg_dump --schema-only`` text of the application's schemas, line by line,
  for restores after DDL). Everything a snapshot needs is in the database, so any session
  (``psql`` in the container or psycopg over the network) can restore what another made.
* **Change tracking**: a row trigger on every table (its function runs with its owner's
  rights, ``SECURITY DEFINER``, so the application's own role needs no grant) logs the primary key of each inserted,
  updated or deleted row in ``sitectl.changes``; a statement trigger logs TRUNCATE. DDL is
  caught by comparing each table's definition (columns, types, indexes, constraints) and the
  table list with ``sitectl.baseline``; sequences by comparing their values with the snapshot.
* **Restore**: in one transaction with ``session_replication_role = replica`` (no triggers, no
  foreign-key checks): delete the changed rows by primary key, insert them back from the
  snapshot, ``setval`` each changed sequence. After DDL the application's schemas are
  re-created from the saved schema text (run server-side by ``EXECUTE``) and refilled (the full
  path). The database and the application keep running.
"""
from __future__ import annotations

import json
import uuid

from sitectl.errors import StoreError
from sitectl.stores.base import Changes, Store
from sitectl.stores.literals import pg_value, q_value
from sitectl.stores.sql import SQL_BUDGET, SqlResult, SqlSession

MAX_KEYS_PER_TABLE = 5000
#: Up to this many logged keys in all, they are read with the detection and put in the restore
#: statement as literals (the planner then always uses the primary-key index).
MAX_INLINE_KEYS = 2000
_APP_SCHEMAS = "n.nspname NOT IN ('pg_catalog','information_schema','sitectl') AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname NOT LIKE 'sitectl\\_s\\_%'"

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
CREATE OR REPLACE FUNCTION sitectl.sequences() RETURNS TABLE (s text, l bigint, c boolean)
LANGUAGE plpgsql AS $f$
DECLARE q text;
BEGIN
  FOR q IN SELECT quote_ident(n.nspname) || '.' || quote_ident(c2.relname) FROM pg_class c2
           JOIN pg_namespace n ON n.oid = c2.relnamespace
           WHERE c2.relkind = 'S' AND n.nspname NOT IN ('pg_catalog','information_schema','sitectl')
             AND n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT LIKE 'sitectl\_s\_%' LOOP
    RETURN QUERY EXECUTE format('SELECT %L::text, last_value, is_called FROM %s', q, q);
  END LOOP;
END $f$;
CREATE OR REPLACE FUNCTION sitectl.log_truncate() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
  INSERT INTO sitectl.changes VALUES (quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME), 'null')
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $f$;
"""

# Per application table: qualified name, primary-key columns with types, definition digest.
TABLES_SQL = f"""
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS tbl,
  COALESCE((SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY k.o)
            FROM pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, o), pg_attribute a
            WHERE i.indrelid = c.oid AND i.indisprimary AND a.attrelid = c.oid AND a.attnum = k.attnum), '') AS pk,
  md5(COALESCE((SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull
                  || ':' || COALESCE(pg_get_expr(d.adbin, d.adrelid), ''), ',' ORDER BY a.attnum)
                FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
      || '|' || COALESCE((SELECT string_agg(pg_get_indexdef(i.indexrelid), ';' ORDER BY 1) FROM pg_index i WHERE i.indrelid = c.oid), '')
      || '|' || COALESCE((SELECT string_agg(pg_get_constraintdef(x.oid), ';' ORDER BY 1) FROM pg_constraint x WHERE x.conrelid = c.oid), '')
      || '|' || c.oid::text) AS defn
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND {_APP_SCHEMAS}
ORDER BY 1"""

SEQUENCES_SQL = f"""
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'S' AND {_APP_SCHEMAS} ORDER BY 1"""


def _group(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out


def _literal_keys(keys: list[str] | None, cols: list[list[str]]) -> str | None:
    """The logged keys of one table as SQL literals cast to the key columns' types
    (``'5'::bigint`` or ``('a'::text, '2'::integer)``), or None when they are not all there
    or a TRUNCATE was logged (``null``)."""

    if not keys or "null" in keys:
        return None
    out = []
    for k in keys:
        vals = json.loads(k)
        if not isinstance(vals, list) or len(vals) != len(cols) or any(v is None for v in vals):
            return None
        lit = [f"{pg_value(v if isinstance(v, str) else json.dumps(v))}::{typ}" for v, (_, typ) in zip(vals, cols)]
        out.append(lit[0] if len(lit) == 1 else "(" + ", ".join(lit) + ")")
    return ", ".join(out)


def _qname(tbl: str) -> str:
    """``schema.table`` (already quoted) → the snapshot table's name within the snapshot schema."""
    return '"' + tbl.replace('"', "").replace(".", "__") + '"'


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
        """Run statements in one transaction; return the rows of every statement, in order.

        Raises:
            StoreError: the server refused (names the site and ``what``).
        """
        return self.session.query(statements, what)

    def snap_schema(self, name: str) -> str:
        return f"sitectl_s_{name}"

    # -- facts ----------------------------------------------------------------------------
    def _tables(self) -> list[tuple[str, str, str]]:
        return [tuple(r) for r in self.sql(TABLES_SQL, "list tables")]

    def _sequence_values_sql(self, seqs: list[str]) -> str:
        if not seqs:
            return "SELECT NULL::text, NULL::bigint, NULL::boolean WHERE false"
        return " UNION ALL ".join(f"SELECT {pg_value(s)}, last_value, is_called FROM {s}" for s in seqs)

    # -- tracking -------------------------------------------------------------------------
    def _install_tracking(self, name: str) -> None:
        tables = self._tables()
        self.sql(TRACKING_SQL, "install change tracking")
        parts = []
        for tbl, pk, _ in tables:
            cols = ", ".join(q_value(c.split(" ")[0].strip('"')) for c in pk.split(",")) if pk else ""
            parts.append(f"DROP TRIGGER IF EXISTS sitectl_row ON {tbl}; DROP TRIGGER IF EXISTS sitectl_trunc ON {tbl}; "
                         f"CREATE TRIGGER sitectl_row AFTER INSERT OR UPDATE OR DELETE ON {tbl} FOR EACH ROW "
                         f"EXECUTE FUNCTION sitectl.log_row({cols}); "
                         f"CREATE TRIGGER sitectl_trunc AFTER TRUNCATE ON {tbl} FOR EACH STATEMENT "
                         "EXECUTE FUNCTION sitectl.log_truncate();")
        self.session.query_chunks(parts, "install change tracking")
        self._reset_baseline(name)

    def _reset_baseline(self, name: str) -> None:
        self.sql(
            "DELETE FROM sitectl.baseline; DELETE FROM sitectl.changes; DELETE FROM sitectl.meta; "
            f"INSERT INTO sitectl.meta VALUES ({pg_value(name)}); "
            f"INSERT INTO sitectl.baseline SELECT tbl, defn FROM ({TABLES_SQL}) t;", "record baseline")

    # -- Store API ------------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        rows = self.sql(f"SELECT count(*) FROM pg_namespace WHERE nspname = {pg_value(self.snap_schema(name))}")
        return rows[0][0] == "1"

    def snapshot(self, name: str) -> dict:
        s = self.snap_schema(name)
        tables = self._tables()
        seqs = [r[0] for r in self.sql(SEQUENCES_SQL, "list sequences")]
        parts = [f"DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s};"]
        parts += [f"CREATE TABLE {s}.{_qname(t)} AS TABLE {t};" for t, _, _ in tables]
        # Index each copy by its primary key: a delta restore reads only the changed rows.
        parts += [f"CREATE INDEX ON {s}.{_qname(t)} ({', '.join(c.split(' ', 1)[0] for c in pk.split(','))});"
                  for t, pk, _ in tables if pk]
        parts.append(f"CREATE TABLE {s}.__sequences AS {self._sequence_values_sql(seqs)};")
        parts.append(f"CREATE TABLE {s}.__tables AS SELECT * FROM ({TABLES_SQL}) t;")
        parts.append(f"CREATE TABLE {s}.__schema (n serial PRIMARY KEY, line text NOT NULL);")
        self.session.query_chunks(parts, f"snapshot {name}")
        self.session.dump_into_table(self.DUMP_ARGS, f"{s}.__schema", f"{self.label} schema dump")
        self._install_tracking(name)
        size = self.sql(f"SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
                        f"ON n.oid = c.relnamespace WHERE n.nspname = {pg_value(s)}")
        return {"fingerprint": self.fingerprint(name), "size": int(size[0][0]), "tables": len(tables)}

    #: ``pg_dump --schema-only`` of the application's schemas. ``--clean --if-exists``: the text
    #: drops each object before re-creating it, so schemas (owners, grants) are kept.
    DUMP_ARGS = ["--schema-only", "--clean", "--if-exists", "-N", "sitectl", "-N", "sitectl_s_*"]

    def _replay_schema_sql(self, name: str) -> str:
        """A statement that runs the saved schema text server-side. Lines of ``psql``
        meta-commands that pg_dump adds (``\\restrict``/``\\unrestrict``, since PostgreSQL 15.14)
        are left out: they are not SQL."""
        s = self.snap_schema(name)
        return (f"DO $sitectl$ BEGIN EXECUTE (SELECT string_agg(line, chr(10) ORDER BY n) FROM {s}.__schema "
                "WHERE line !~ ('^' || chr(92) || chr(92) || '(un)?restrict [A-Za-z0-9]*$')); END $sitectl$;")

    def detect_requests(self, name: str) -> list:
        s = self.snap_schema(name)
        sql = ("SELECT 'M', snapshot, '' FROM sitectl.meta UNION ALL "
               "SELECT 'K', tbl, count(*)::text FROM sitectl.changes GROUP BY tbl UNION ALL "
               f"SELECT 'R', tbl, pk::text FROM sitectl.changes WHERE (SELECT count(*) FROM sitectl.changes) <= {MAX_INLINE_KEYS} UNION ALL "
               "SELECT 'B', tbl, defn FROM sitectl.baseline UNION ALL "
               f"SELECT 'S', tbl, defn FROM ({TABLES_SQL}) t UNION ALL "
               f"SELECT 'Q', COALESCE(v.s, g.{self._seqcol(0)}), 'x' FROM sitectl.sequences() v "
               f"FULL JOIN {s}.__sequences g ON g.{self._seqcol(0)} = v.s "
               f"WHERE g.{self._seqcol(1)} IS DISTINCT FROM v.l OR g.{self._seqcol(2)} IS DISTINCT FROM v.c "
               # The snapshot's primary keys of the logged tables: the restore needs no extra trip.
               f"UNION ALL SELECT 'P', g.tbl, g.pk FROM {s}.__tables g WHERE g.tbl IN (SELECT tbl FROM sitectl.changes)")
        return [self.session.request(sql)]

    def parse_changes(self, name: str, results: list[SqlResult]) -> Changes:
        (res,) = results
        if not res.ok:  # no tracking yet, or no such snapshot schema
            return Changes([f"{self.label}: baseline is not snapshot {name!r} ({res.error[-200:]})"], {"full": True})
        rows = res.rows
        meta = [r[1] for r in rows if r[0] == "M"]
        if meta != [name]:
            return Changes([f"{self.label}: baseline is not snapshot {name!r}"], {"full": True})
        keys = {r[1]: int(r[2]) for r in rows if r[0] == "K"}
        base = {r[1]: r[2] for r in rows if r[0] == "B"}
        now = {r[1]: r[2] for r in rows if r[0] == "S"}
        seq_changed = sorted(r[1] for r in rows if r[0] == "Q")
        ddl = sorted(t for t in set(base) | set(now) if base.get(t) != now.get(t))
        items = sorted({*(f"table {t} (structure, created or dropped)" for t in ddl),
                        *(f"table {t} ({n} rows)" for t, n in keys.items() if t not in ddl),
                        *(f"sequence {q}" for q in seq_changed)})
        return Changes(items, {"keys": {t: n for t, n in keys.items() if t not in ddl}, "ddl": ddl,
                               "sequences": seq_changed, "full": bool(ddl),
                               "pk": {r[1]: r[2] for r in rows if r[0] == "P"},
                               "rows": _group([(r[1], r[2]) for r in rows if r[0] == "R"])})

    @staticmethod
    def _seqcol(i: int) -> str:
        # Columns of the __sequences table made by CREATE TABLE AS over the UNION query.
        return ["\"?column?\"", "last_value", "is_called"][i]

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        # A missing snapshot makes the change detection fail, which asks for the full path;
        # only the paths that do not come from a detection check that the snapshot exists.
        if changes is None or changes.detail.get("full"):
            if not self.exists(name):
                raise StoreError(f"{self.site}: {self.label} has no snapshot {name!r}")
        if changes is None:
            changes = self.changes(name)
            if not changes.detail.get("full"):
                return self._restore_all_rows(name)
        if changes.detail.get("full"):
            return self._restore_full(name)
        if not changes:
            return []
        pks = changes.detail.get("pk")
        if pks is None or any(t not in pks for t in changes.detail["keys"]):
            pks = {r[0]: r[1] for r in self.sql(f"SELECT tbl, pk FROM {self.snap_schema(name)}.__tables", "read primary keys")}
        self.sql(self._delta_sql(name, changes, pks), f"restore rows from {name}")
        return changes.items

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if not changes:
            return []
        pks = changes.detail.get("pk")
        if changes.detail.get("full") or pks is None or any(t not in pks for t in changes.detail["keys"]):
            return None
        return [self.session.request(self._delta_sql(name, changes, pks))]

    def _delta_sql(self, name: str, changes: Changes, pks: dict[str, str]) -> str:
        """One transaction that puts the changed rows and sequences back (triggers and foreign
        keys off) and clears their entries in the change log.

        The restored tables are locked first (``EXCLUSIVE``: the application can read, its
        writes wait the few milliseconds of the restore), so the change log of a locked table
        cannot move meanwhile. Keys read by the detection are restored and cleared one by one
        (a key logged after the detection stays logged for the closing check); tables with
        many keys use the log itself, server-side. The text stays under :data:`SQL_BUDGET`
        bytes: the tables with the most keys move to the server-side path."""
        rows = changes.detail.get("rows", {})
        literal = {t for t in changes.detail["keys"] if t in rows}
        while True:
            sql = self._delta_text(name, changes, pks, literal)
            if len(sql.encode()) <= SQL_BUDGET or not literal:
                return sql
            literal.discard(max(literal, key=lambda t: len(rows[t])))

    def _delta_text(self, name: str, changes: Changes, pks: dict[str, str], literal: set[str]) -> str:
        s = self.snap_schema(name)
        keys_of = changes.detail["keys"]
        stmts = ["SET LOCAL session_replication_role = replica;"]
        if keys_of:
            stmts.append(f"LOCK TABLE {', '.join(sorted(keys_of))} IN EXCLUSIVE MODE;")
        for tbl, n in sorted(keys_of.items()):
            snap = f"{s}.{_qname(tbl)}"
            pk = pks.get(tbl, "")
            clear = f"DELETE FROM sitectl.changes WHERE tbl = {pg_value(tbl)};"
            if not pk or n > MAX_KEYS_PER_TABLE:
                stmts.append(f"DELETE FROM {tbl}; INSERT INTO {tbl} SELECT * FROM {snap}; {clear}")
                continue
            cols = [c.split(" ", 1) for c in pk.split(",")]
            lits = _literal_keys(changes.detail["rows"][tbl], cols) if tbl in literal else None
            if lits is not None:
                where = f"({', '.join('x.' + c for c, _ in cols)}) IN ({lits})" if len(cols) > 1 else f"x.{cols[0][0]} IN ({lits})"
                keys = ",".join(f"{pg_value(k)}::jsonb" for k in changes.detail["rows"][tbl])
                stmts.append(f"DELETE FROM {tbl} x WHERE {where}; INSERT INTO {tbl} SELECT x.* FROM {snap} x WHERE {where};"
                             f" DELETE FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk IN ({keys});")
                continue
            keyset = f"(SELECT pk FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk <> 'null')"
            whole = f"EXISTS (SELECT 1 FROM sitectl.changes WHERE tbl = {pg_value(tbl)} AND pk = 'null')"
            match = " AND ".join(f"x.{c} = (k.pk ->> {i})::{typ}" for i, (c, typ) in enumerate(cols))
            # A logged TRUNCATE ('null' key) means the whole table.
            stmts.append(
                f"DO $r$ BEGIN IF {whole} THEN DELETE FROM {tbl}; INSERT INTO {tbl} SELECT * FROM {snap}; ELSE "
                f"DELETE FROM {tbl} x USING {keyset} k WHERE {match}; "
                f"INSERT INTO {tbl} SELECT x.* FROM {snap} x JOIN {keyset} k ON {match}; END IF; END $r$; {clear}")
        for q in changes.detail["sequences"]:
            stmts.append(f"SELECT setval({pg_value(q)}, g.last_value, g.is_called) FROM {s}.__sequences g "
                         f"WHERE g.{self._seqcol(0)} = {pg_value(q)};")
        return "BEGIN;\n" + "\n".join(stmts) + "\nCOMMIT;"

    def _fill_sql(self, name: str, tables: list[str]) -> str:
        s = self.snap_schema(name)
        fill = ["SET session_replication_role = replica;"]
        # One TRUNCATE of every table (foreign keys between them allow no other order-free
        # way); far cheaper than deleting millions of rows one by one.
        if tables:
            fill.append(f"TRUNCATE {', '.join(tables)};")
        fill += [f"INSERT INTO {t} SELECT * FROM {s}.{_qname(t)};" for t in tables]
        fill.append(f"SELECT setval(g.\"?column?\", g.last_value, g.is_called) FROM {s}.__sequences g;")
        fill.append("DELETE FROM sitectl.changes;")
        return "\n".join(fill)

    def _restore_all_rows(self, name: str) -> list[str]:
        """Every table's rows and every sequence back from the snapshot (structure unchanged)."""
        s = self.snap_schema(name)
        tables = [r[0] for r in self.sql(f"SELECT tbl FROM {s}.__tables", "read tables")]
        self.sql("BEGIN;\n" + self._fill_sql(name, tables) + "\nCOMMIT;", f"restore all rows from {name}")
        return [f"{self.label}: all {len(tables)} tables (rows)"]

    def _restore_full(self, name: str) -> list[str]:
        """After DDL: drop tables the snapshot lacks, replay the saved schema dump (which drops
        and re-creates each object, owners and grants included), refill every table, set
        every sequence; one transaction."""
        s = self.snap_schema(name)
        tables = [r[0] for r in self.sql(f"SELECT tbl FROM {s}.__tables", "read tables")]
        if self.sql(f"SELECT to_regclass({pg_value(s + '.__schema')}) IS NULL")[0][0] == "t":
            raise StoreError(f"{self.site}: snapshot {name!r} of {self.label} was made by an older sitectl (it keeps "
                             "no schema text in the database); take it again with `sitectl snapshot create`")
        extra = [t for t, _, _ in self._tables() if t not in tables]
        drop = "".join(f"DROP TABLE IF EXISTS {t} CASCADE;" for t in extra)
        self.sql(f"BEGIN;\n{drop}\n{self._replay_schema_sql(name)}\n{self._fill_sql(name, tables)}\nCOMMIT;",
                 f"full restore from {name}")
        self._install_tracking(name)
        return [f"{self.label}: all {len(tables)} tables (schema and rows)"]

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        if name:
            s = self.snap_schema(name)
            tables = [r[0] for r in self.sql(f"SELECT tbl FROM {s}.__tables")]
            src = {t: f"{s}.{_qname(t)}" for t in tables}
            seq = f"SELECT g.\"?column?\", g.last_value || ':' || g.is_called FROM {s}.__sequences g"
        else:
            tables = [r[0] for r in self._tables()]
            src = {t: t for t in tables}
            seqs = [r[0] for r in self.sql(SEQUENCES_SQL, "list sequences")]
            seq = f"SELECT v.s, v.l || ':' || v.c FROM ({self._sequence_values_sql(seqs)}) v(s, l, c)"
        out: dict[str, str] = {}
        sel = [f"SELECT {pg_value(t)}, count(*) || ':' || COALESCE(md5(string_agg(h, '' ORDER BY h)), '') "
               f"FROM (SELECT md5(x::text) h FROM {src[t]} x) y" for t in tables]
        for i in range(0, len(sel), 50):
            for t, d in self.sql(" UNION ALL ".join(sel[i:i + 50]), "fingerprint tables"):
                out[f"table {t}"] = d
        for q, v in self.sql(seq, "fingerprint sequences"):
            out[f"sequence {q}"] = v
        return out

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
