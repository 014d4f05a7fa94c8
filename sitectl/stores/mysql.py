"""MySQL/MariaDB store (the Magento pair): golden copy in the same server, exact change
tracking, restore of only the changed rows.

How it works (sources: research/fast-reset.md §1.5-1.6, §4.2; MariaDB docs):

* **Snapshot** ``NAME`` = database ``sitectl_s_NAME`` holding a copy of every base table
  (``CREATE TABLE LIKE`` + ``INSERT ... SELECT``) plus ``__tables`` (``SHOW CREATE TABLE``
  text, AUTO_INCREMENT) and ``__triggers`` (the application's own trigger definitions).
* **Change tracking** (installed with the baseline): three row triggers per table append the
  primary key of every inserted, updated or deleted row to ``sitectl.changes``, and on tables
  other tables reference with a foreign-key action, two more log the keys of the rows the
  action will change (:mod:`sitectl.stores.cascades`: the server fires no trigger for those).
  A table's triggers skip while the session variable ``@sitectl_restoring`` names it (the
  restore's own writes); what the application's triggers write elsewhere meanwhile is logged.
  What row triggers cannot see is caught by comparing each table against
  ``sitectl.baseline``: the InnoDB table id (TRUNCATE and table rebuilds change it), a hash of
  the column, index and foreign-key definitions and of the application's triggers on the
  table (every ALTER, a dropped or added trigger, a foreign key left pointing at a renamed
  table), the AUTO_INCREMENT counter, and the table list itself (CREATE, DROP, RENAME).
* **Session**: every statement runs with ``NO_AUTO_VALUE_ON_ZERO`` added to the session's
  ``sql_mode`` (:data:`sitectl.stores.sql.MYSQL_SESSION`), so rows whose AUTO_INCREMENT key is
  0 (Magento's ``store``, ``store_website``, ``customer_group`` install rows) are copied as 0,
  not renumbered.
* **Restore**: changed rows are deleted and re-inserted from the snapshot by primary key, in
  one transaction with foreign-key checks off; a table whose structure, id or existence changed
  is dropped and re-created from its saved ``CREATE TABLE`` text with its triggers; tables
  that did not exist are dropped; AUTO_INCREMENT counters are set back. The server and the
  application keep running.
"""
from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal

from sitectl.errors import CheckpointUnavailable, StoreError
from sitectl.stores import cascades
from sitectl.stores.base import Changes, DiffLimits, Store, hex_names, row_changes
from sitectl.stores.literals import m_value, q_ident
from sitectl.stores.sql import SQL_BUDGET, TRACK_DB_NAME, SqlResult, SqlSession, take_when_quiet
from sitectl.stores.transport import budget_chunks

TRACK_DB = TRACK_DB_NAME
#: The version of the tracking this module installs (triggers, baseline hashes), kept in
#: ``sitectl.tracking``; a database tracked by another version (or none: sitectl 0.1.0) is
#: restored in full, which installs this one. 2: foreign-key actions, triggers and schema
#: objects tracked. 3: sitectl's own triggers in each table's definition hash. 4: the tables the
#: application's triggers write (``sitectl.trigger_targets``), caught up in the restore's transaction.
#: 5: the definition hashes are SHA-256 (MySQL 9 has no MD5()) and read MySQL 8's table ids too.
#: 6: a table of another engine than InnoDB is identified by its row count (a TRUNCATE is seen).
TRACKING_VERSION = 6
MAX_KEYS_PER_TABLE = 2000
#: Passes a full restore makes over the tables the application's triggers wrote meanwhile.
FULL_PASSES = 4  # above this a table is restored whole (one statement stays small)


def _trigger_name(table: str, ev: str) -> str:
    return f"sitectl_{hashlib.md5(table.encode()).hexdigest()[:16]}_{ev}"


def _without_counter(create: str) -> str:
    """``SHOW CREATE TABLE`` text without its ``AUTO_INCREMENT=N`` table option (the counter is
    restored apart)."""
    return re.sub(r" AUTO_INCREMENT=\d+(?= )", "", create or "")


def _in_own_session(create: str, mode: str | None, cs: str | None, coll: str | None) -> str:
    """A saved ``SHOW CREATE`` statement as a ``DELIMITER $$`` script part that first sets the
    ``sql_mode`` and character set it was created in (the server stores both with the object)."""
    parts = [f"SET SESSION sql_mode={m_value(mode)}$$"] if mode is not None else []
    if cs and coll:
        parts.append(f"SET SESSION character_set_client={m_value(cs)}, collation_connection={m_value(coll)}$$")
    return "\n".join([*parts, create + "$$"])


#: A table a trigger body names after a keyword that writes or reads it (``INSERT INTO t``,
#: ``UPDATE t``, ``DELETE FROM t``, ``REPLACE INTO t``, ``JOIN t``), optionally qualified by its
#: database; quoted with backticks or bare.
_IDENT = r"`(?:[^`]|``)+`|[\w$]+"
_BODY_TABLE = re.compile(rf"\b(?:INTO|UPDATE|FROM|JOIN)\s+((?:{_IDENT})(?:\s*\.\s*(?:{_IDENT}))?)", re.IGNORECASE)
#: Column types whose values JSON_ARRAY writes as plain digits (a key lookup by them is exact).
_INTEGER_TYPES = {"tinyint", "smallint", "mediumint", "int", "bigint"}


def trigger_body_tables(body: str, db: str) -> set[str]:
    """The tables of database ``db`` that a trigger body names after ``INTO``, ``UPDATE``,
    ``FROM`` or ``JOIN`` (the tables it may write, and some it only reads: a superset is
    harmless, the restore then looks at a table nothing wrote). Names qualified with another
    database are left out. A write this misses (``INSERT t`` without ``INTO``, the second
    table of a multi-table ``UPDATE``) is still logged by sitectl's triggers, and the next
    restore round undoes it (:meth:`sitectl.stores.site.SiteStores.restore_rounds`).

    Args:
        body: a trigger's ``ACTION_STATEMENT`` (information_schema.TRIGGERS, MariaDB/MySQL).
        db: the trigger's database (its unqualified names are in it).
    """
    def unquote(part: str) -> str:
        part = part.strip()
        return part[1:-1].replace("``", "`") if part.startswith("`") else part
    out = set()
    for m in _BODY_TABLE.finditer(body):
        parts = re.findall(_IDENT, m.group(1))
        if len(parts) == 2:
            if unquote(parts[0]) != db:
                continue
            out.add(unquote(parts[1]))
        else:
            out.add(unquote(parts[0]))
    return out


def _table_tag(table: str) -> str:
    """What ``@sitectl_restoring`` holds while the restore writes ``table`` (its MD5, hex): its
    triggers then log nothing, and every other table's do (case-sensitive, unlike names under
    the connection's collation)."""
    return hashlib.md5(table.encode()).hexdigest()


#: Bytes above which a foreign-key trigger logs whole tables instead of joining (its statement
#: must fit one argument of ``docker exec`` with room to spare, :data:`~sitectl.stores.transport.ARG_BUDGET`).
MAX_TRIGGER_BYTES = 90_000
#: Every trigger sitectl puts on a table: after insert, update, delete (the row's own key) and
#: before delete, update (the rows foreign-key actions will change, :mod:`sitectl.stores.cascades`).
TRIGGER_EVENTS = ("i", "u", "d", "bd", "bu")


def _key_where(cols: list[str], vals: list) -> str:
    """``(col=value AND ...)``: the row of primary key ``vals`` (values read back from a logged
    key) by its columns ``cols``."""
    return "(" + " AND ".join(f"{q_ident(c)}={m_value(v)}" for c, v in zip(cols, vals)) + ")"


def _key_order(key):
    """Sort key of a logged primary key (a JSON array, decimals as text): numbers before text,
    numbers by value."""
    def one(v):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (0, Decimal(v), "")
        if isinstance(v, str) and _NUMBER.match(v):
            return (0, Decimal(v), "")
        return (1, Decimal(0), str(v))
    return [one(v) for v in (key if isinstance(key, list) else [key])]


_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?\Z")

#: Key column types whose value, as sitectl's triggers log it in a JSON array, a comparison with
#: the column matches exactly (integers cast back to integers, so the primary-key index is used);
#: a table keyed by another type (binary, floating point, JSON, spatial) is kept whole by a
#: checkpoint.
_TEXT_KEY_TYPES = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "date",
                   "datetime", "timestamp", "time", "year", "decimal"}


def _logged_key_match(alias: str, cols: list[tuple[str, str, str]]) -> str | None:
    """Conditions matching the row ``alias`` to the logged key ``k.pk`` (the JSON array
    sitectl's triggers wrote), column by column: ``cols`` are the key's ``(column, data_type,
    column_type)`` as information_schema.COLUMNS gives them. None when a column's type has no
    exact match (:data:`_TEXT_KEY_TYPES`, integers)."""
    parts = []
    for i, (c, dt, ct) in enumerate(cols):
        v = f"JSON_UNQUOTE(JSON_EXTRACT(k.pk, '$[{i}]'))"
        if dt in _INTEGER_TYPES:
            parts.append(f"{alias}.{q_ident(c)} = CAST({v} AS {'UNSIGNED' if 'unsigned' in ct else 'SIGNED'})")
        elif dt in _TEXT_KEY_TYPES:
            parts.append(f"{alias}.{q_ident(c)} = {v}")
        else:
            return None
    return " AND ".join(parts) if parts else None


def _ckpt_copy(table: str, side: str) -> str:
    """The name of a checkpoint's copy of ``table``: ``side`` (``r``: its rows at the logged keys)
    + ``_`` + the MD5 of the name."""
    return f"{side}_{hashlib.md5(table.encode()).hexdigest()}"


class MysqlStore(Store):
    """A MariaDB/MySQL database, reached through a SQL session (``sitectl.stores.sql``): the
    ``mysql`` client inside the container, or mysql-connector-python over the network.

    Args:
        site: site name, for messages.
        session: a ``mysql`` :class:`~sitectl.stores.sql.SqlSession` of the application's
            database (``magentodb``); its account must be allowed to create databases and triggers.
    """

    kind = "mysql"

    def __init__(self, site: str, session: SqlSession):
        super().__init__(site, f"mysql:{session.database}")
        self.session = session
        self.transport = getattr(session, "transport", None)
        self.db = session.database

    # -- SQL plumbing ---------------------------------------------------------------------
    def sql(self, statements: str, what: str = "SQL") -> list[list[str | None]]:
        """Run statements (``;``-separated) and return the rows of every statement, in order.

        Raises:
            StoreError: the server refused (names the site and ``what``).
        """
        return self.session.query(statements, what)

    def snap_db(self, name: str) -> str:
        return f"sitectl_s_{name}"

    # -- schema facts ---------------------------------------------------------------------
    def _tables(self, schema: str) -> list[str]:
        rows = self.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema="
            f"{m_value(schema)} AND table_type='BASE TABLE' ORDER BY table_name", "list tables")
        return [r[0] for r in rows]

    def _state_sql(self, prefix: str = "") -> str:
        """One statement listing, per live table, tagged rows: ``T`` auto_increment, ``I`` InnoDB
        table id, ``C`` column definitions hash, ``X`` index definitions hash (each tag
        preceded by ``prefix``).

        A table of another engine (OSClass's MyISAM descriptions) has no InnoDB id, and its
        TRUNCATE fires no trigger and keeps its creation time on MySQL: its ``I`` is minus one
        minus its row count (exact for MyISAM), so any change of its rows makes the table's
        state differ and the table is restored whole (a TRUNCATE is caught; the price is a
        whole-table copy whenever it changed).

        The referential constraints are read once into a derived table (its LIMIT keeps MariaDB
        from merging it into a nested loop over ``information_schema``: 18 ms instead of 85 ms
        for Magento's 380 foreign keys)."""
        db = m_value(self.db)
        p = prefix
        return f"""
            SELECT '{p}T', table_name, IFNULL(auto_increment, 0) FROM information_schema.tables
              WHERE table_schema = {db} AND table_type = 'BASE TABLE'
            UNION ALL
            SELECT '{p}I', SUBSTRING(name, LENGTH({db}) + 2), table_id FROM {TRACK_DB}.innodb_ids
              WHERE name LIKE CONCAT({db}, '/%')
            UNION ALL
            SELECT '{p}I', table_name, -1 - CAST(table_rows AS SIGNED) FROM information_schema.tables
              WHERE table_schema = {db} AND table_type = 'BASE TABLE' AND engine <> 'InnoDB'
            UNION ALL
            SELECT '{p}C', table_name, SHA2(GROUP_CONCAT(CONCAT_WS(',', column_name, column_type, is_nullable,
                IFNULL(column_default, '~'), extra) ORDER BY ordinal_position SEPARATOR ';'), 256)
              FROM information_schema.columns WHERE table_schema = {db} GROUP BY table_name
            UNION ALL
            SELECT '{p}X', table_name, SHA2(GROUP_CONCAT(CONCAT_WS(',', index_name, seq_in_index, column_name, non_unique)
                ORDER BY index_name, seq_in_index SEPARATOR ';'), 256)
              FROM information_schema.statistics WHERE table_schema = {db} GROUP BY table_name
            UNION ALL
            SELECT '{p}F', k.table_name, SHA2(GROUP_CONCAT(CONCAT_WS(',', k.constraint_name, k.ordinal_position, k.column_name,
                k.referenced_table_schema, k.referenced_table_name, k.referenced_column_name, r.update_rule, r.delete_rule)
                ORDER BY k.constraint_name, k.ordinal_position SEPARATOR ';'), 256)
              FROM information_schema.key_column_usage k JOIN (
                SELECT constraint_schema, constraint_name, table_name, update_rule, delete_rule
                  FROM information_schema.referential_constraints WHERE constraint_schema = {db}
                  LIMIT 18446744073709551615) r
                ON r.constraint_schema = k.constraint_schema AND r.constraint_name = k.constraint_name
                AND r.table_name = k.table_name
              WHERE k.table_schema = {db} AND k.referenced_table_name IS NOT NULL GROUP BY k.table_name
            UNION ALL
            SELECT '{p}G', event_object_table, SHA2(GROUP_CONCAT(CONCAT_WS(',', trigger_name, action_timing,
                event_manipulation, action_order, sql_mode, SHA2(action_statement, 256)) ORDER BY trigger_name SEPARATOR ';'), 256)
              FROM information_schema.triggers WHERE trigger_schema = {db}
              GROUP BY event_object_table;"""

    def _objects_sql(self, prefix: str = "") -> str:
        """One row ``({prefix}O, '', hash)``: a hash of the database's other schema objects (views,
        functions and procedures with their parameters, events), each by name and definition,
        from ``information_schema`` (no creation or modification times)."""
        db = m_value(self.db)
        parts = [
            "SELECT GROUP_CONCAT(CONCAT_WS(',', table_name, SHA2(view_definition, 256), check_option, definer, security_type,"
            f" character_set_client, collation_connection) ORDER BY table_name SEPARATOR ';') FROM information_schema.views"
            f" WHERE table_schema = {db}",
            "SELECT GROUP_CONCAT(CONCAT_WS(',', routine_type, routine_name, SHA2(IFNULL(routine_definition, ''), 256),"
            " IFNULL(dtd_identifier, ''), sql_mode, definer, security_type, is_deterministic, sql_data_access,"
            " SHA2(routine_comment, 256)) ORDER BY routine_type, routine_name SEPARATOR ';') FROM information_schema.routines"
            f" WHERE routine_schema = {db}",
            "SELECT GROUP_CONCAT(CONCAT_WS(',', specific_name, routine_type, ordinal_position, IFNULL(parameter_mode, ''),"
            " IFNULL(parameter_name, ''), dtd_identifier) ORDER BY routine_type, specific_name, ordinal_position"
            f" SEPARATOR ';') FROM information_schema.parameters WHERE specific_schema = {db}",
            "SELECT GROUP_CONCAT(CONCAT_WS(',', event_name, SHA2(event_definition, 256), event_type, IFNULL(execute_at, ''),"
            " IFNULL(interval_value, ''), IFNULL(interval_field, ''), sql_mode, IFNULL(starts, ''), IFNULL(ends, ''),"
            " status, on_completion, definer, time_zone, SHA2(event_comment, 256)) ORDER BY event_name SEPARATOR ';')"
            f" FROM information_schema.events WHERE event_schema = {db}",
        ]
        # 32 hex digits: the baseline's defn column (CHAR(32)) holds it.
        return f"SELECT '{prefix}O', '', LEFT(SHA2(CONCAT_WS('|', " + ", ".join(f"IFNULL(({q}), '')" for q in parts) + "), 256), 32)"

    @staticmethod
    def _parse_state(rows) -> dict[str, tuple]:
        """Rows of :meth:`_state_sql` → ``{table: (table_id, definition hash, auto_increment)}``;
        the definition hash covers the columns, the indexes, the foreign keys (the table's own,
        with the tables they reference) and every trigger on the table, sitectl's own included
        (one dropped or changed means the table's changes may have gone unlogged: the table is
        restored whole and its tracking put back)."""
        by: dict[str, dict] = {}
        for tag, table, value in rows:
            by.setdefault(table, {})[tag] = value
        return {t: (v.get("I", "0"),
                    hashlib.md5(f"{v.get('C')}|{v.get('X')}|{v.get('F')}|{v.get('G')}".encode()).hexdigest(),
                    v.get("T", "0"))
                for t, v in by.items() if "T" in v}

    def _state(self) -> dict[str, tuple]:
        """Per live table: (InnoDB table id, definition hash, AUTO_INCREMENT)."""
        return self._parse_state(self.sql(self._state_sql(), "read table state"))

    def _pk(self, schema: str) -> dict[str, list[str]]:
        rows = self.sql(
            "SELECT table_name, column_name FROM information_schema.statistics WHERE table_schema="
            f"{m_value(schema)} AND index_name='PRIMARY' ORDER BY table_name, seq_in_index", "read primary keys")
        pk: dict[str, list[str]] = {}
        for t, c in rows:
            pk.setdefault(t, []).append(c)
        return pk

    def _foreign_keys(self) -> list[cascades.ForeignKey]:
        """The foreign keys between tables of the application's database."""
        rows = self.sql(
            "SELECT r.constraint_name, r.table_name, r.referenced_table_name, r.update_rule, r.delete_rule,"
            # MySQL's JSON_ARRAYAGG takes no ORDER BY (MariaDB's does): the arrays are made by hand.
            " CONCAT('[', GROUP_CONCAT(JSON_QUOTE(k.column_name) ORDER BY k.ordinal_position), ']'),"
            " CONCAT('[', GROUP_CONCAT(JSON_QUOTE(k.referenced_column_name) ORDER BY k.ordinal_position), ']')"
            " FROM information_schema.referential_constraints r JOIN information_schema.key_column_usage k"
            " ON k.constraint_schema = r.constraint_schema AND k.constraint_name = r.constraint_name"
            " AND k.table_name = r.table_name"
            f" WHERE r.constraint_schema = {m_value(self.db)} AND r.unique_constraint_schema = {m_value(self.db)}"
            " GROUP BY r.constraint_name, r.table_name, r.referenced_table_name, r.update_rule, r.delete_rule",
            "read foreign keys")
        return [cascades.ForeignKey(n, child, parent, tuple(json.loads(cc)), tuple(json.loads(pc)), upd, dele)
                for n, child, parent, upd, dele, cc, pc in rows]

    # -- tracking -------------------------------------------------------------------------
    def _trigger_defs(self, table: str, pk: dict[str, list[str]], fks: list[cascades.ForeignKey]
                      ) -> list[tuple[str, str, str, str]]:
        """sitectl's triggers on ``table``: after each row change, the row's key into the change
        log; before a delete or an update, the keys of the rows foreign-key actions will change
        (:mod:`sitectl.stores.cascades`). None logs while the restore writes this table
        (``@sitectl_restoring``), so what the application's own triggers write elsewhere during a
        restore is logged; the foreign-key ones log nothing with ``FOREIGN_KEY_CHECKS=0``, when
        the server runs no action. A foreign-key trigger longer than :data:`MAX_TRIGGER_BYTES`
        (one statement must fit one ``docker exec`` argument) logs each table its paths reach
        whole instead, without the joins.

        Returns:
            ``(trigger name, timing, event, body)`` per trigger, as ``information_schema.TRIGGERS``
            lists them (``ACTION_TIMING``, ``EVENT_MANIPULATION``, ``ACTION_STATEMENT``).
        """
        cols = pk.get(table, [])
        live = f"NOT (@sitectl_restoring <=> {m_value(_table_tag(table))})"
        stmts = []
        for ev, when, rowref in (("i", "INSERT", ["NEW"]), ("u", "UPDATE", ["OLD", "NEW"]), ("d", "DELETE", ["OLD"])):
            if cols:
                keys = " UNION ".join(
                    "SELECT " + m_value(table) + ", JSON_ARRAY(" + ", ".join(f"{r}.{q_ident(c)}" for c in cols) + ")"
                    for r in rowref)
            else:
                keys = f"SELECT {m_value(table)}, ''"
            stmts.append((_trigger_name(table, ev), "AFTER", when,
                          f"INSERT IGNORE INTO {TRACK_DB}.changes (tbl, pk) SELECT * FROM ({keys}) k WHERE {live}"))
        acting = f"{live} AND @@foreign_key_checks = 1"
        for ev, when in (("bd", "DELETE"), ("bu", "UPDATE")):
            paths = cascades.paths(fks, table, "delete" if ev == "bd" else "update")
            if not paths:
                continue
            head = f"INSERT IGNORE INTO {TRACK_DB}.changes (tbl, pk) "
            selects = []
            for path in paths:
                sel = cascades.log_select(self.db, path, pk)
                cond = acting if ev == "bd" else f"{acting} AND ({cascades.update_condition(path.edges[0])})"
                selects.append(f"{sel} AND {cond}")
            text = head + " UNION ".join(selects)
            if len(text.encode()) > MAX_TRIGGER_BYTES:
                reached = sorted({p.edges[-1].child for p in paths})
                text = head + f"SELECT * FROM (SELECT {m_value(reached[0])} AS tbl, '' AS pk" + "".join(
                    f" UNION ALL SELECT {m_value(t)}, ''" for t in reached[1:]) + f") k WHERE {acting}"
            stmts.append((_trigger_name(table, ev), "BEFORE", when, text))
        return stmts

    def _trigger_sql(self, table: str, pk: dict[str, list[str]], fks: list[cascades.ForeignKey]) -> list[str]:
        """The ``CREATE TRIGGER`` statements of :meth:`_trigger_defs`, one per trigger."""
        tq = q_ident(self.db) + "." + q_ident(table)
        return [f"CREATE TRIGGER {q_ident(self.db)}.{q_ident(n)} {timing} {event} ON {tq} FOR EACH ROW {body};"
                for n, timing, event, body in self._trigger_defs(table, pk, fks)]

    def _sync_triggers(self, tables: list[str], what: str) -> None:
        """Make sitectl's triggers on ``tables`` exactly :meth:`_trigger_defs` (over the foreign
        keys as they are now), made by this session's account in its ``sql_mode``, touching only
        the ones that differ: a trigger's DDL is slow (tens of ms each), and a database of 361
        tables has over a thousand of them. (A trigger runs as its definer: one left by an
        account that was dropped since fails every write to its table.)"""
        pk, fks = self._pk(self.db), self._foreign_keys()
        (user, mode), = [(r[0], r[1]) for r in self.sql("SELECT CURRENT_USER(), @@SESSION.sql_mode", "read session")]
        have = {n: (tb, timing, event, body, definer, tmode) for n, tb, timing, event, body, definer, tmode in self.sql(
            "SELECT trigger_name, event_object_table, action_timing, event_manipulation, action_statement, definer,"
            f" sql_mode FROM information_schema.triggers WHERE trigger_schema = {m_value(self.db)}"
            " AND trigger_name LIKE 'sitectl\\_%'", "read change tracking")}
        stmts = []
        for t in tables:
            want = {n: (t, timing, event, body, user, mode) for n, timing, event, body in self._trigger_defs(t, pk, fks)}
            tq = q_ident(self.db) + "." + q_ident(t)
            for ev in TRIGGER_EVENTS:
                n = _trigger_name(t, ev)
                if n in have and have[n] == want.get(n):
                    continue
                if n in have:
                    stmts.append(f"DROP TRIGGER IF EXISTS {q_ident(self.db)}.{q_ident(n)};")
                if n in want:
                    _, timing, event, body, _, _ = want[n]
                    stmts.append(f"CREATE TRIGGER {q_ident(self.db)}.{q_ident(n)} {timing} {event} ON {tq} "
                                 f"FOR EACH ROW {body};")
        if stmts:
            self.session.query_chunks(stmts, what)

    def _drop_triggers_sql(self, table: str) -> str:
        return "".join(f"DROP TRIGGER IF EXISTS {q_ident(self.db)}.{q_ident(_trigger_name(table, ev))};"
                       for ev in TRIGGER_EVENTS)

    @staticmethod
    def _tracking_tables_sql() -> str:
        parts = [
            f"CREATE DATABASE IF NOT EXISTS {TRACK_DB};",
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.changes (tbl VARCHAR(64) NOT NULL, pk VARCHAR(700) NOT NULL,"
            " PRIMARY KEY (tbl, pk)) ENGINE=InnoDB;",
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.baseline (db VARCHAR(64) NOT NULL, tbl VARCHAR(64) NOT NULL,"
            " table_id BIGINT, defn CHAR(32), auto_inc BIGINT, PRIMARY KEY (db, tbl)) ENGINE=InnoDB;",
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.meta (db VARCHAR(64) PRIMARY KEY, snapshot VARCHAR(64)) ENGINE=InnoDB;",
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.tracking (db VARCHAR(64) PRIMARY KEY, version INT) ENGINE=InnoDB;",
            # Per table, each table its application triggers name (trigger_body_tables) with that
            # table's primary key: [[column, integer?], ...] (JSON).
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.trigger_targets (db VARCHAR(64) NOT NULL, tbl VARCHAR(64) NOT NULL,"
            " target VARCHAR(64) NOT NULL, pk TEXT NOT NULL, PRIMARY KEY (db, tbl, target)) ENGINE=InnoDB;",
        ]
        return "\n".join(parts)

    def _reset_baseline(self, name: str, expect: dict | None = None) -> list[str]:
        """Record the baseline: snapshot ``name``, each table's state, the objects' hash, this
        tracking version. The change log is left as it is: what it holds was written after the
        rows it names were put back (or copied), and the next reset undoes it.
        ``expect`` (a snapshot: the tables' state when its copy began): name the snapshot only
        if the log is empty and no table's id or definition moved since (a TRUNCATE or DDL,
        which no trigger logs). Returns what was written meanwhile (empty: the baseline names
        the snapshot)."""
        state = self._state()
        moved = [] if expect is None else sorted(
            t for t in set(state) | set(expect) if (state.get(t) or ())[:2] != (expect.get(t) or ())[:2])
        rows = ",".join([f"({m_value(self.db)},{m_value(t)},{s[0]},{m_value(s[1])},{s[2]})" for t, s in state.items()]
                        + [f"({m_value(self.db)},'',0,{m_value(self._objects_hash())},0)"])
        meta = ("" if moved else
                f"INSERT INTO {TRACK_DB}.meta SELECT {m_value(self.db)}, {m_value(name)} FROM DUAL "
                f"WHERE NOT EXISTS (SELECT 1 FROM {TRACK_DB}.changes);" if expect is not None
                else f"REPLACE INTO {TRACK_DB}.meta VALUES ({m_value(self.db)}, {m_value(name)});")
        targets = ",".join(f"({m_value(self.db)},{m_value(t)},{m_value(w)},{m_value(json.dumps(cols))})"
                           for t, w, cols in self._trigger_targets(set(state)))
        out = self.sql(
            f"DELETE FROM {TRACK_DB}.baseline WHERE db={m_value(self.db)};"
            + (f"INSERT INTO {TRACK_DB}.baseline VALUES {rows};" if rows else "")
            + f"DELETE FROM {TRACK_DB}.trigger_targets WHERE db={m_value(self.db)};"
            + (f"INSERT INTO {TRACK_DB}.trigger_targets VALUES {targets};" if targets else "")
            + f"DELETE FROM {TRACK_DB}.meta WHERE db={m_value(self.db)};" + meta
            + f"REPLACE INTO {TRACK_DB}.tracking VALUES ({m_value(self.db)}, {TRACKING_VERSION});"
            + f"SELECT DISTINCT tbl FROM {TRACK_DB}.changes ORDER BY tbl;",
            "record baseline")
        return sorted({r[0] for r in out} | {f"{t} (truncated or altered)" for t in moved})

    def _trigger_targets(self, tables: set[str]) -> list[tuple[str, str, list]]:
        """``(table, target, [[column, integer?], ...])``: each table of ``tables`` that an
        application trigger on ``table`` names (:func:`trigger_body_tables`), with the target's
        primary-key columns and whether each is an integer type ([] without a primary key)."""
        pairs = sorted({(tb, w) for tb, body in self.sql(
            "SELECT event_object_table, action_statement FROM information_schema.triggers WHERE trigger_schema="
            f"{m_value(self.db)} AND trigger_name NOT LIKE 'sitectl\\_%'", "read triggers")
            for w in trigger_body_tables(body or "", self.db) if w in tables and w != tb})
        if not pairs:
            return []
        names = ",".join(m_value(w) for w in sorted({w for _, w in pairs}))
        cols: dict[str, list] = {}
        for t, c, typ in self.sql(
                "SELECT s.table_name, s.column_name, c.data_type FROM information_schema.statistics s"
                " JOIN information_schema.columns c ON c.table_schema = s.table_schema AND c.table_name = s.table_name"
                f" AND c.column_name = s.column_name WHERE s.table_schema={m_value(self.db)} AND s.index_name='PRIMARY'"
                f" AND s.table_name IN ({names}) ORDER BY s.table_name, s.seq_in_index", "read primary keys"):
            cols.setdefault(t, []).append([c, typ.lower() in _INTEGER_TYPES])
        return [(tb, w, cols.get(w, [])) for tb, w in pairs]

    def _live_objects(self) -> list[tuple[str, str]]:
        """``(kind, name)`` of every view, function, procedure and event of the database."""
        db = m_value(self.db)
        return [(k, n) for k, n in self.sql(
            f"SELECT 'VIEW', table_name FROM information_schema.views WHERE table_schema = {db} UNION ALL "
            f"SELECT routine_type, routine_name FROM information_schema.routines WHERE routine_schema = {db} UNION ALL "
            f"SELECT 'EVENT', event_name FROM information_schema.events WHERE event_schema = {db}", "list schema objects")]

    def _object_definitions(self) -> list[tuple[str, str, str, str | None, str | None, str | None]]:
        """``(kind, name, CREATE statement, sql_mode, character_set_client, collation_connection)``
        of every view, function, procedure and event, as ``SHOW CREATE`` prints them."""
        objs = self._live_objects()
        if not objs:
            return []
        rows = self.sql("".join(f"SHOW CREATE {kind} {q_ident(self.db)}.{q_ident(n)};" for kind, n in objs),
                        "read schema objects")
        out = []
        for (kind, n), r in zip(objs, rows, strict=True):
            if kind == "VIEW":  # View, Create View, character_set_client, collation_connection
                out.append((kind, n, r[1], None, r[2], r[3]))
            elif kind == "EVENT":  # Event, sql_mode, time_zone, Create Event, character_set_client, ...
                out.append((kind, n, r[3], r[1], r[4], r[5]))
            else:  # Function|Procedure, sql_mode, Create ..., character_set_client, collation_connection, ...
                out.append((kind, n, r[2], r[1], r[3], r[4]))
        return out

    def _restore_objects(self, name: str) -> None:
        """Drop every view, routine and event, then create golden's again from the snapshot's
        ``__objects`` (each in its sql_mode and character set). Views that name other views are
        retried until each one's dependencies exist."""
        sdb = q_ident(self.snap_db(name))
        drops = [f"DROP {kind} IF EXISTS {q_ident(self.db)}.{q_ident(n)};" for kind, n in self._live_objects()]
        if drops:
            self.session.query_chunks(drops, "drop schema objects")
        saved = self.sql(f"SELECT kind, name, create_sql, sql_mode, cs_client, coll_conn FROM {sdb}.__objects ORDER BY n",
                         "read saved schema objects")

        def text(row) -> str:
            return _in_own_session(*row[2:])

        prelude = f"USE {q_ident(self.db)};\nDELIMITER $$\n"
        todo = list(saved)
        while todo:
            try:
                self.session.query_chunks([text(r) for r in todo], "re-create schema objects", prelude=prelude)
                return
            except StoreError:
                pass
            # One by one: what failed waits for the next pass (a view over a view made later).
            failed, last = [], None
            have = set(self._live_objects())
            for r in todo:
                if (r[0], r[1]) in have:
                    continue
                try:
                    self.sql(prelude + text(r), "re-create schema objects")
                except StoreError as e:
                    failed.append(r)
                    last = e
            if len(failed) == len(todo):
                raise last or StoreError(f"{self.site}: cannot re-create schema objects of {name!r}")
            todo = failed

    def _objects_hash(self) -> str:
        return self.sql(self._objects_sql(), "read schema objects")[0][2]

    def baseline_name(self) -> str | None:
        """The snapshot the change log is relative to, or None when tracking is not installed."""
        try:
            rows = self.sql(f"SELECT snapshot FROM {TRACK_DB}.meta WHERE db={m_value(self.db)}", "read baseline")
        except StoreError:
            return None
        return rows[0][0] if rows else None

    # -- Store API ------------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        rows = self.sql(f"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name={m_value(self.snap_db(name))}")
        return rows[0][0] == "1"

    def snapshot(self, name: str) -> dict:
        """Take snapshot ``name`` (module docstring) with no write lost: tracking is in place
        and the log emptied before the first table is copied, and the baseline names the
        snapshot only if nothing was logged meanwhile; otherwise the copy is taken again, up
        to :data:`sitectl.stores.sql.SNAPSHOT_ATTEMPTS` times.

        Raises:
            StoreError: the application kept writing through every attempt (the message names
                the tables), or a statement failed.
        """
        tables = take_when_quiet(lambda: self._take(name), f"{self.site}: {self.label} was written while snapshot {name!r} was copied",
                                 "Stop what writes to the site (agents, its background jobs)")
        fp = self.fingerprint(name)
        size = self.sql(f"SELECT IFNULL(SUM(data_length+index_length),0) FROM information_schema.tables WHERE table_schema={m_value(self.snap_db(name))}")
        return {"fingerprint": fp, "size": int(size[0][0]), "tables": tables}

    def _take(self, name: str) -> tuple[int, list[str]]:
        """One attempt at snapshot ``name``: (tables copied, tables written meanwhile: empty when
        the copy is one state and the baseline is set)."""
        sdb = q_ident(self.snap_db(name))
        tables = self._tables(self.db)
        # From here every write is logged; until the end no baseline names a snapshot, so a
        # reset meanwhile restores in full.
        self.sql(self._tracking_tables_sql() + f"DELETE FROM {TRACK_DB}.meta WHERE db={m_value(self.db)};",
                 "install change tracking")
        self._sync_triggers(tables, "install change tracking")
        self.sql(f"DELETE FROM {TRACK_DB}.changes", "clear the change log")
        # What no trigger logs (TRUNCATE, DDL) shows in the tables' ids and definitions.
        before = self._state()
        parts = [f"DROP DATABASE IF EXISTS {sdb};", f"CREATE DATABASE {sdb};",
                 f"CREATE TABLE {sdb}.__tables (tbl VARCHAR(64) PRIMARY KEY, create_sql LONGTEXT, auto_inc BIGINT);",
                 f"CREATE TABLE {sdb}.__triggers (name VARCHAR(64) PRIMARY KEY, tbl VARCHAR(64), create_sql LONGTEXT,"
                 " sql_mode TEXT, cs_client VARCHAR(64), coll_conn VARCHAR(64), action_order INT);",
                 f"CREATE TABLE {sdb}.__objects (n INT PRIMARY KEY, kind VARCHAR(16), name VARCHAR(64), create_sql LONGTEXT,"
                 " sql_mode TEXT, cs_client VARCHAR(64), coll_conn VARCHAR(64));"]
        self.sql("\n".join(parts), f"snapshot {name}")
        self.session.query_chunks([f"CREATE TABLE {sdb}.{q_ident(t)} LIKE {q_ident(self.db)}.{q_ident(t)}; "
                         f"INSERT INTO {sdb}.{q_ident(t)} SELECT * FROM {q_ident(self.db)}.{q_ident(t)};" for t in tables],
                        f"snapshot {name}")
        # CREATE TABLE texts and the application's triggers, kept for DDL restores.
        creates = self.sql("".join(f"SHOW CREATE TABLE {q_ident(self.db)}.{q_ident(t)};" for t in tables), "read table definitions")
        ai = {t: s[2] for t, s in self._state().items()}
        trig = self.sql(
            "SELECT trigger_name, event_object_table, action_order FROM information_schema.triggers WHERE trigger_schema="
            f"{m_value(self.db)} AND trigger_name NOT LIKE 'sitectl\\_%'", "list triggers")
        trig_sql = self.sql("".join(f"SHOW CREATE TRIGGER {q_ident(self.db)}.{q_ident(n)};" for n, _, _ in trig),
                            "read triggers") if trig else []
        ins = [f"INSERT INTO {sdb}.__tables VALUES ({m_value(r[0])},{m_value(r[1])},{ai.get(r[0], 0)});" for r in creates]
        # SHOW CREATE TRIGGER: name, sql_mode, statement, character_set_client, collation_connection, ...
        ins += [f"INSERT INTO {sdb}.__triggers VALUES ({m_value(r[0])},{m_value(tb)},{m_value(r[2])},{m_value(r[1])},"
                f"{m_value(r[3])},{m_value(r[4])},{int(order)});"
                for r, (_, tb, order) in zip(trig_sql, trig)]
        ins += [f"INSERT INTO {sdb}.__objects VALUES ({i},{m_value(kind)},{m_value(n)},{m_value(create)},{m_value(mode)},"
                f"{m_value(cs)},{m_value(coll)});"
                for i, (kind, n, create, mode, cs, coll) in enumerate(self._object_definitions())]
        self.session.query_chunks(ins, "save definitions")
        return len(tables), self._reset_baseline(name, expect=before)

    def _changes_sql(self) -> str:
        # One round trip: the baseline's name, the change log, the baseline and the live state.
        return (f"SELECT 'M', snapshot, '' FROM {TRACK_DB}.meta WHERE db={m_value(self.db)} UNION ALL "
                f"SELECT 'V', version, '' FROM {TRACK_DB}.tracking WHERE db={m_value(self.db)} UNION ALL "
                f"SELECT 'K', tbl, pk FROM {TRACK_DB}.changes UNION ALL "
                f"SELECT 'W', tbl, JSON_ARRAY(target, pk) FROM {TRACK_DB}.trigger_targets WHERE db={m_value(self.db)} UNION ALL "
                f"SELECT 'B', tbl, CONCAT_WS(' ', table_id, defn, auto_inc) FROM {TRACK_DB}.baseline "
                f"WHERE db={m_value(self.db)} UNION ALL " + self._objects_sql("S") + " UNION ALL " + self._state_sql("S"))

    def detect_requests(self, name: str) -> list:
        sdb = self.snap_db(name)
        # Also the snapshot's primary keys and AUTO_INCREMENT values, so that a restore
        # needs no further round trip.
        extra = (f" UNION ALL SELECT 'P', table_name, GROUP_CONCAT(column_name ORDER BY seq_in_index SEPARATOR ',')"
                 f" FROM information_schema.statistics WHERE table_schema={m_value(sdb)} AND index_name='PRIMARY'"
                 f" AND table_name IN (SELECT tbl FROM {TRACK_DB}.changes) GROUP BY table_name"
                 f" UNION ALL SELECT 'A', tbl, auto_inc FROM {q_ident(sdb)}.__tables WHERE auto_inc > 0")
        return [self.session.request(self._changes_sql().rstrip().rstrip(";") + extra)]

    def parse_changes(self, name: str, results: list[SqlResult]) -> Changes:
        (res,) = results
        if not res.ok:  # no tracking yet (or the server refused): only a full restore is safe
            return Changes([f"{self.label}: no change tracking ({res.error[-200:]})"], {"full": True})
        rows = res.rows
        meta = [r[1] for r in rows if r[0] == "M"]
        if meta != [name]:
            return Changes([f"{self.label}: baseline is not snapshot {name!r}"], {"full": True})
        version = [r[1] for r in rows if r[0] == "V"]
        if version != [str(TRACKING_VERSION)]:
            return Changes([f"{self.label}: change tracking of another sitectl version ({version or 'none'}); "
                            "a full restore installs this one"], {"full": True})
        keys: dict[str, list] = {}
        for _, tb, pk in (r for r in rows if r[0] == "K"):
            keys.setdefault(tb, []).append(pk)
        base = {r[1]: tuple(r[2].split(" ")) for r in rows if r[0] == "B"}
        # The baseline's row '' is the hash of the views, routines and events (no table has
        # that name); baselines of sitectl 0.1.0 have none, and then they are not compared.
        golden_objects = base.pop("", None)
        objects_now = next((r[2] for r in rows if r[0] == "SO"), None)
        objects = golden_objects is not None and golden_objects[1] != objects_now
        now = self._parse_state([(r[0][1:], r[1], r[2]) for r in rows if r[0].startswith("S") and r[0] != "SO"])
        rebuild = sorted(t for t in base if t not in now or now[t][:2] != base[t][:2])
        extra = sorted(t for t in now if t not in base)
        autoinc = sorted(t for t in base if t in now and t not in rebuild and now[t][2] != base[t][2])
        rows_changed = sorted(t for t in keys if t in base and t not in rebuild)
        items = sorted({*(f"table {t} (rebuilt, dropped or altered)" for t in rebuild),
                        *(f"table {t} (created)" for t in extra),
                        *(f"table {t} ({len(keys[t])} rows)" for t in rows_changed),
                        *(f"table {t} (auto_increment)" for t in autoinc if t not in rows_changed),
                        *(["schema objects (views, functions, procedures, events)"] if objects else [])})
        pks = {r[1]: r[2].split(",") for r in rows if r[0] == "P"}
        golden_ai = {r[1]: r[2] for r in rows if r[0] == "A"}
        targets: dict[str, dict] = {}
        for _, tb, spec in (r for r in rows if r[0] == "W"):
            w, cols = json.loads(spec)
            targets.setdefault(tb, {})[w] = json.loads(cols)
        return Changes(items, {"keys": {t: keys[t] for t in rows_changed}, "rebuild": rebuild, "extra": extra,
                               "autoinc": autoinc, "pk": pks, "golden_ai": golden_ai, "objects": objects,
                               "targets": targets})

    def change_marks(self, changes: Changes) -> set[str]:
        keys = changes.detail.get("keys") or {}
        rows = {f"table {t} ({len(ks)} rows)" for t, ks in keys.items()}
        return ({i for i in changes.items if i not in rows}
                | {f"row {t}\t{k}" for t, ks in keys.items() for k in ks})

    #: Column types whose values a diff shows as ``0x`` + hex (bytes, not text).
    BINARY_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bit", "geometry", "point",
                    "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection"}

    def diff(self, name: str, changes: Changes, limits: DiffLimits) -> dict:
        """The changed rows of each logged table, read from the live table and from snapshot
        ``name``'s copy by the logged primary keys (docs/diff.md); tables rebuilt, dropped,
        created or altered, the schema objects and the AUTO_INCREMENT counters as schema
        changes. Values as ``JSON_OBJECT`` gives them; binary columns as ``0x`` + hex."""
        d = changes.detail
        schema = ([{"table": t, "change": "rebuilt, dropped or altered"} for t in d.get("rebuild", [])]
                  + [{"table": t, "change": "created"} for t in d.get("extra", [])]
                  + ([{"objects": "views, functions, procedures or events changed"}] if d.get("objects") else []))
        out = {"items": list(changes.items), "schema": schema, "auto_increment": list(d.get("autoinc", [])),
               "tables": []}
        keys = d.get("keys") or {}
        if not keys:
            return out
        # The logged keys again, through a utf8mb4 session: the detection's session (the mysql
        # client's default, utf8mb3) reads a 4-byte character of a key as "?".
        again: dict[str, list[str]] = {}
        for t, k in self.sql(f"SET NAMES utf8mb4; SELECT tbl, pk FROM {TRACK_DB}.changes WHERE tbl IN "
                             f"({','.join(m_value(t) for t in keys)})", "read the change log"):
            again.setdefault(t, []).append(k)
        keys = {t: again.get(t, ks) for t, ks in keys.items()}
        out["tables"] = self._row_diff(name, keys, d.get("pk") or self._pk(self.snap_db(name)), limits)
        return out

    def _row_diff(self, name: str, keys: dict[str, list[str]], pk: dict[str, list[str]], limits: DiffLimits,
                  ckpt: tuple[str, dict[str, set[str]], set[str]] | None = None) -> list[dict]:
        """Per table of ``keys`` (its logged keys, as JSON text), its rows then (snapshot
        ``name``'s copy; with ``ckpt`` = ``(checkpoint, its keys by table, its tables kept
        whole)``, the checkpoint's copy at the checkpoint's keys) and now (live), as
        :func:`~sitectl.stores.base.row_changes` lists them."""
        cols: dict[str, list[tuple[str, str]]] = {}
        for t, c, typ in self.sql(
                "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema="
                f"{m_value(self.db)} AND table_name IN ({','.join(m_value(t) for t in keys)}) "
                "ORDER BY table_name, ordinal_position", "read columns"):
            cols.setdefault(t, []).append((c, typ.lower()))
        tables: list[dict] = []
        queries, listed = [], {}
        for t in sorted(keys):
            entry = {"table": t, "key_columns": pk.get(t, []), "rows_logged": len(keys[t])}
            tables.append(entry)
            try:  # decimals as their exact text, in the keys as in the values
                logged = sorted((json.loads(k, parse_float=str) for k in keys[t] if k != ""), key=_key_order)
            except ValueError:
                logged = None
            types = dict(cols.get(t, []))
            why = ("the table has no primary key" if not pk.get(t) or "" in keys[t]
                   else "the table is gone" if t not in cols
                   else "a logged key could not be read" if logged is None
                   # JSON_ARRAY writes a binary key as base64 text, which no lookup by value matches
                   else "its primary key is binary" if any(types.get(c) in self.BINARY_TYPES for c in pk[t])
                   else "the checkpoint keeps the table whole" if ckpt is not None and t in ckpt[2]
                   else "")
            if why:
                entry["rows"] = "not listed: " + why
                continue
            logged = [v for v in logged if isinstance(v, list) and len(v) == len(pk[t])][:limits.rows]
            listed[t] = logged
            obj = "JSON_OBJECT(" + ", ".join(
                f"{m_value(c)}, " + (f"CONCAT('0x', HEX({q_ident(c)}))" if typ in self.BINARY_TYPES else q_ident(c))
                for c, typ in cols[t]) + ")"
            key = "JSON_ARRAY(" + ", ".join(q_ident(c) for c in pk[t]) + ")"
            sides = [("L", f"{q_ident(self.db)}.{q_ident(t)}"), ("G", f"{q_ident(self.snap_db(name))}.{q_ident(t)}")]
            if ckpt is not None and t in ckpt[1]:
                sides.append(("C", f"{q_ident(self.ckpt_db(ckpt[0]))}.{_ckpt_copy(t, 'r')}"))
            # The keys in batches, each statement well under the budget of one SQL text.
            for batch in budget_chunks([_key_where(pk[t], v) for v in logged], SQL_BUDGET // (len(sides) + 1)):
                where = " OR ".join(batch)
                queries.append(" UNION ALL ".join(f"SELECT '{side}', {m_value(t)}, {key}, {obj} FROM {src} WHERE {where}"
                                                  for side, src in sides) + ";")
        got: dict[tuple[str, str, str], dict] = {}
        for chunk in budget_chunks(queries, SQL_BUDGET - 100):
            # utf8mb4: the keys' literals and the rows' text are sent as written (the mysql
            # client's default, utf8mb3, turns a 4-byte character into "?").
            for side, t, k, row in self.sql("SET NAMES utf8mb4;\n" + "\n".join(chunk), f"read changed rows against {name}"):
                got[(side, t, json.dumps(json.loads(k, parse_float=str)))] = json.loads(row, parse_float=str)
        for entry in tables:
            t = entry["table"]
            if t not in listed:
                continue
            mine = (ckpt[1].get(t) or set()) if ckpt is not None else set()
            pairs = [(v, got.get(("C" if json.dumps(v) in mine else "G", t, json.dumps(v))), got.get(("L", t, json.dumps(v))))
                     for v in listed[t]]
            entry.update(row_changes(pk[t], pairs, limits))
            entry["truncated"] = len(keys[t]) > len(listed[t])
        return tables

    def diff_checkpoint(self, ckpt: str, entry: dict, golden: str, changes: Changes, limits: DiffLimits) -> dict:
        """What changed since checkpoint ``ckpt`` (``entry``: this store's entry of its record),
        in :meth:`diff`'s terms: the rows at the keys logged now or in the checkpoint, then as
        the checkpoint holds them (golden's where it holds nothing), and now; the tables whose
        AUTO_INCREMENT differs from the checkpoint's; schema changes since golden (a checkpoint
        holds none)."""
        d = changes.detail
        out = self.diff(golden, Changes(changes.items, {**d, "keys": {}}), limits)
        cdb = q_ident(self.ckpt_db(ckpt))
        now_keys: dict[str, list[str]] = {}
        ck_keys: dict[str, set[str]] = {}
        ai_then: dict[str, str] = {}
        # The counters then: golden's, with those the checkpoint's record holds over them.
        for t, a in self.sql(f"SELECT tbl, auto_inc FROM {q_ident(self.snap_db(golden))}.__tables WHERE auto_inc > 0",
                             "read definitions"):
            ai_then[t] = a
        ai_then.update({t: str(a) for t, a in (entry.get("auto_increment") or {}).items()})
        for side, t, k in self.sql(f"SET NAMES utf8mb4; SELECT 'N', tbl, pk FROM {TRACK_DB}.changes UNION ALL "
                                   f"SELECT 'C', tbl, pk FROM {cdb}.__keys", f"read checkpoint {ckpt}"):
            if side == "C":
                try:
                    ck_keys.setdefault(t, set()).add(json.dumps(json.loads(k, parse_float=str)) if k else "")
                except ValueError:
                    ck_keys.setdefault(t, set()).add(k)
            if k not in now_keys.setdefault(t, []):
                now_keys[t].append(k)
        moved = set(d.get("rebuild") or []) | set(d.get("extra") or [])
        keys = {t: ks for t, ks in now_keys.items() if t not in moved}
        whole = {t for t, info in (entry.get("tables") or {}).items() if info.get("whole")}
        ai_now = {t: st[2] for t, st in self._state().items()}
        out["auto_increment"] = sorted(t for t in set(ai_now) | set(ai_then)
                                       if str(ai_now.get(t, "0")) != str(ai_then.get(t, "0")) and (t in ai_then or ai_now.get(t) not in (None, "0")))
        if keys:
            # Golden's keys of every table (a table the checkpoint holds may be unlogged now).
            out["tables"] = self._row_diff(golden, keys, self._pk(self.snap_db(golden)), limits,
                                           (ckpt, {t: v for t, v in ck_keys.items() if t not in whole}, whole))
        return out

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        # A missing snapshot makes the change detection fail, which asks for the full path;
        # only that path checks that the snapshot exists.
        if changes is None or changes.detail.get("full"):
            if not self.exists(name):
                raise StoreError(f"{self.site}: {self.label} has no snapshot {name!r}")
            return self._restore_full(name)
        d = changes.detail
        if not changes:
            return []
        pk = d.get("pk") or self._pk(self.snap_db(name))
        self.sql(self._delta_sql(name, d, pk), f"restore rows from {name}")
        if d["rebuild"] or d["extra"]:
            self._rebuild_tables(name, d["rebuild"], d["extra"])
        if d.get("objects"):
            self._restore_objects(name)
        if d.get("golden_ai") is None:
            self._restore_autoinc(name, d["autoinc"] + list(d["keys"]) + [w for w, _ in self._catch_up(d)])
        self._refresh_baseline(d["rebuild"] + d["extra"])
        return changes.items

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if not changes:
            return []
        d = changes.detail
        if (d.get("full") or d["rebuild"] or d["extra"] or d.get("objects") or d.get("golden_ai") is None
                or d.get("pk") is None):
            return None
        return [self.session.request(self._delta_sql(name, d, d["pk"]))]

    def _delta_sql(self, name: str, d: dict, pk: dict[str, list[str]]) -> str:
        """Changed rows back by primary key (one transaction, triggers' logging and foreign-key
        checks off), their change-log entries cleared, then AUTO_INCREMENT counters set back
        (when the detection read them). Only the keys this restore put back leave the log, so a
        row changed meanwhile stays logged for the closing check. The text stays under
        :data:`SQL_BUDGET` bytes: the tables with the most keys are restored whole instead."""
        whole = {t for t, keys in d["keys"].items() if not pk.get(t) or len(keys) > MAX_KEYS_PER_TABLE or "" in keys}
        keyed = {}
        for t, keys in d["keys"].items():
            if t in whole:
                continue
            try:
                vals = [json.loads(k) for k in keys]
            except ValueError:
                whole.add(t)
                continue
            keyed[t] = (keys, vals)
        while True:
            sql = self._delta_text(name, d, pk, whole, keyed)
            if len(sql.encode()) <= SQL_BUDGET or not keyed:
                return sql
            biggest = max(keyed, key=lambda t: len(keyed[t][0]))
            whole.add(biggest)
            del keyed[biggest]

    def _delta_text(self, name: str, d: dict, pk: dict, whole: set, keyed: dict) -> str:
        sdb = q_ident(self.snap_db(name))
        # Each table's rows go back while @sitectl_restoring names it: its own triggers log
        # nothing, the application's triggers' writes elsewhere are logged, and the tables those
        # triggers write are caught up at the end of the same transaction (_catch_up_sql; what
        # that misses, the next round undoes, SiteStores.restore_rounds). A key leaves the log
        # right after its table's statements, so a later write to it stays logged. Repeatable
        # read: the catch-up's lock on a table's log range must hold until the commit.
        stmts = ["SET FOREIGN_KEY_CHECKS=0;", "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;",
                 "START TRANSACTION;"]
        for t, (keys, vals) in sorted(keyed.items()):
            live = q_ident(self.db) + "." + q_ident(t)
            where = " OR ".join(_key_where(pk[t], row) for row in vals)
            stmts.append(f"SET @sitectl_restoring={m_value(_table_tag(t))};")
            stmts.append(f"DELETE FROM {live} WHERE {where};")
            stmts.append(f"INSERT INTO {live} SELECT * FROM {sdb}.{q_ident(t)} WHERE {where};")
            stmts.append(f"DELETE FROM {TRACK_DB}.changes WHERE tbl={m_value(t)} AND pk IN ({','.join(map(m_value, keys))});")
        for t in sorted(whole):
            live = q_ident(self.db) + "." + q_ident(t)
            stmts.append(f"SET @sitectl_restoring={m_value(_table_tag(t))};")
            stmts.append(f"DELETE FROM {live}; INSERT INTO {live} SELECT * FROM {sdb}.{q_ident(t)};")
            stmts.append(f"DELETE FROM {TRACK_DB}.changes WHERE tbl={m_value(t)};")
        caught = self._catch_up(d)
        if caught:
            # MariaDB resolves a multi-table DELETE's alias in the default database, even for a
            # qualified table ("No database selected" otherwise).
            stmts.append(f"USE {q_ident(self.db)};")
            stmts.append(f"CREATE TEMPORARY TABLE IF NOT EXISTS {TRACK_DB}.sitectl_keys LIKE {TRACK_DB}.changes;")
        for w, cols in caught:
            stmts += self._catch_up_sql(sdb, w, cols)
        stmts.append("SET @sitectl_restoring=NULL;")
        stmts.append("COMMIT;")
        # AUTO_INCREMENT counters of every touched table (an ALTER commits, so after the rows).
        gai = d.get("golden_ai")
        if gai is not None:
            touched = set(d["autoinc"] + list(d["keys"]))
            stmts += [f"ALTER TABLE {q_ident(self.db)}.{q_ident(t)} AUTO_INCREMENT={int(gai[t])};"
                      for t in sorted(touched) if t in gai and t not in d["rebuild"]]
            # A table only the catch-up wrote gets its ALTER only if its counter moved (an ALTER
            # takes the table's metadata lock: tens of tables are named by Magento's triggers).
            for w in sorted({w for w, _ in caught} - touched):
                if w in gai and w not in d["rebuild"]:
                    alter = f"ALTER TABLE {q_ident(self.db)}.{q_ident(w)} AUTO_INCREMENT={int(gai[w])}"
                    stmts.append(
                        "SET @sitectl_s = IF((SELECT auto_increment FROM information_schema.tables WHERE table_schema="
                        f"{m_value(self.db)} AND table_name={m_value(w)}) <=> {int(gai[w])}, 'DO 0', {m_value(alter)});"
                        " PREPARE sitectl_s FROM @sitectl_s; EXECUTE sitectl_s; DEALLOCATE PREPARE sitectl_s;")
        return "\n".join(stmts)

    @staticmethod
    def _catch_up(d: dict) -> list[tuple[str, list]]:
        """The tables the application's triggers on the restored tables may write (the
        detection's ``targets``, :meth:`_trigger_targets`), and theirs in turn, in that order,
        each once: ``(table, primary-key columns)``. The restore's own writes fire those
        triggers; the rows they leave are put back in the same transaction
        (:meth:`_catch_up_sql`) instead of in another round."""
        targets = d.get("targets") or {}
        seen = set()
        order: list[tuple[str, list]] = []
        queue = sorted(d["keys"])
        while queue:
            t = queue.pop(0)
            for w, cols in sorted((targets.get(t) or {}).items()):
                if w not in seen and w not in d["rebuild"]:
                    seen.add(w)
                    order.append((w, cols))
                    queue.append(w)
        return order

    def _catch_up_sql(self, sdb: str, w: str, cols: list) -> list[str]:
        """Statements that put back the rows of ``w`` whose keys are logged (the writes of the
        application's triggers during this restore, and any before), inside the restore's
        transaction: the log's entries for ``w`` locked and copied into a temporary table (a
        write that comes later waits for the commit and stays logged; a statement that writes
        ``w`` fires sitectl's trigger on it, so it may not read the log itself, MariaDB error
        1442), then the rows matched by key text (``JSON_ARRAY`` of the key columns, as
        sitectl's triggers logged them; with an index lookup when the key is integers) deleted
        and the golden copy's inserted, and the log's entries for ``w`` cleared. A table without
        a primary key is restored whole when anything is logged for it."""
        live = q_ident(self.db) + "." + q_ident(w)
        snap = f"{sdb}.{q_ident(w)}"
        tag = m_value(w)
        keys = f"{TRACK_DB}.sitectl_keys"
        out = [f"SET @sitectl_restoring={m_value(_table_tag(w))};", f"DELETE FROM {keys};",
               f"INSERT INTO {keys} SELECT * FROM {TRACK_DB}.changes WHERE tbl={tag} FOR UPDATE;"]
        if not cols:
            cond = f"EXISTS (SELECT 1 FROM {keys})"
            out += [f"DELETE FROM {live} WHERE {cond};", f"INSERT INTO {live} SELECT * FROM {snap} WHERE {cond};"]
        else:
            def match(alias: str) -> str:
                hint = "".join(f" AND {alias}.{q_ident(c)} = JSON_VALUE(k.pk, '$[{i}]')"
                               for i, (c, integer) in enumerate(cols) if integer)
                return f" ON k.tbl={tag}{hint} AND k.pk = JSON_ARRAY(" + ", ".join(
                    f"{alias}.{q_ident(c)}" for c, _ in cols) + ")"
            out += [f"DELETE w FROM {keys} k JOIN {live} w{match('w')};",
                    f"INSERT INTO {live} SELECT s.* FROM {keys} k JOIN {snap} s{match('s')};"]
        out.append(f"DELETE FROM {TRACK_DB}.changes WHERE tbl={tag};")
        return out

    def _restore_full(self, name: str) -> list[str]:
        """Every table back from the snapshot; tracking re-installed; baseline = ``name``.

        Only what differs is touched: a table whose ``SHOW CREATE TABLE`` (counter aside) is
        golden's keeps its definition and gets its rows back when ``CHECKSUM TABLE`` differs
        from the golden copy's; the others are dropped and re-created. The rows' own writes
        can make the application's triggers write elsewhere: sitectl's triggers (in place before
        the rows move) log that, and the tables it names get their rows back again, up to
        :data:`FULL_PASSES` passes."""
        sdb = self.snap_db(name)
        golden = [t for t in self._tables(sdb) if not t.startswith("__")]
        live = set(self._tables(self.db))
        defs = {r[0]: (r[1], r[2]) for r in self.sql(f"SELECT tbl, create_sql, auto_inc FROM {q_ident(sdb)}.__tables",
                                                     "read definitions")}
        kept = [t for t in golden if t in live]
        now = {r[0]: r[1] for r in self.sql("".join(f"SHOW CREATE TABLE {q_ident(self.db)}.{q_ident(t)};" for t in kept),
                                            "read table definitions")} if kept else {}
        triggers_differ = self._tables_whose_triggers_differ(name)
        same = [t for t in kept if t in defs and _without_counter(now.get(t, "")) == _without_counter(defs[t][0])
                and t not in triggers_differ]
        rebuild = [t for t in golden if t not in same]
        extra = sorted(live - set(golden))
        self._rebuild_tables(name, rebuild, extra, track=False)
        self._restore_objects(name)
        self.sql(self._tracking_tables_sql(), "install change tracking")
        self._sync_triggers(self._tables(self.db), "install change tracking")
        self.sql(f"DELETE FROM {TRACK_DB}.changes", "clear the change log")
        # Every table, the re-created ones too: one written between its rows' return and its
        # new triggers holds a change no log saw.
        todo = self._differing(name, golden)
        for _ in range(FULL_PASSES):
            if not todo:
                break
            self._refill(name, todo)  # each table's log entries leave with its rows' return
            todo = [r[0] for r in self.sql(f"SELECT DISTINCT tbl FROM {TRACK_DB}.changes", "read the change log")]
        self._restore_autoinc(name, same)
        self._reset_baseline(name)  # what is still logged stays for the closing check
        return [f"{self.label}: all {len(golden)} tables"]

    def _tables_whose_triggers_differ(self, name: str) -> set[str]:
        """The tables whose application triggers (by name, table, sql_mode, order, definer and
        body) are not the ones snapshot ``name`` saved."""
        sdb = q_ident(self.snap_db(name))
        saved: dict[str, tuple] = {}
        if not self._saved_trigger_settings(name):  # a snapshot of sitectl 0.1.0: rebuild all
            return {r[0] for r in self.sql(f"SELECT tbl FROM {sdb}.__triggers", "read triggers")} | {
                r[0] for r in self.sql("SELECT event_object_table FROM information_schema.triggers WHERE trigger_schema="
                                       f"{m_value(self.db)} AND trigger_name NOT LIKE 'sitectl\\_%'", "read triggers")}
        for n, tb, create, mode, order in self.sql(
                f"SELECT name, tbl, create_sql, sql_mode, action_order FROM {sdb}.__triggers", "read triggers"):
            saved[n] = (tb, create, mode, order)
        live: dict[str, tuple] = {}
        for n, tb, body, mode, order, definer in self.sql(
                "SELECT trigger_name, event_object_table, action_statement, sql_mode, action_order, definer"
                f" FROM information_schema.triggers WHERE trigger_schema={m_value(self.db)}"
                " AND trigger_name NOT LIKE 'sitectl\\_%'", "read triggers"):
            live[n] = (tb, body, mode, order, definer)
        out = set()
        for n in saved.keys() | live.keys():
            if n not in saved or n not in live:
                out.add((saved.get(n) or live[n])[0])
                continue
            tb, create, mode, order = saved[n]
            ltb, body, lmode, lorder, definer = live[n]
            user, _, host = definer.partition("@")
            if (tb, mode, str(order)) != (ltb, lmode, str(lorder)) or not create.endswith(body) \
                    or f"`{user}`@`{host}`" not in create:
                out.update({tb, ltb})
        return out

    def _differing(self, name: str, tables: list[str]) -> list[str]:
        """The tables among ``tables`` whose rows differ from the golden copy's (``CHECKSUM
        TABLE ... EXTENDED`` of both: a row-by-row checksum)."""
        if not tables:
            return []
        sdb = self.snap_db(name)
        out = []
        for i in range(0, len(tables), 100):
            part = tables[i:i + 100]
            names = ", ".join(f"{q_ident(db)}.{q_ident(t)}" for t in part for db in (self.db, sdb))
            sums = {r[0]: r[1] for r in self.sql(f"CHECKSUM TABLE {names} EXTENDED", "compare tables")}
            out += [t for t in part if sums.get(f"{self.db}.{t}") != sums.get(f"{sdb}.{t}")]
        return out

    def _refill(self, name: str, tables: list[str]) -> None:
        """The rows of ``tables`` back from the golden copy (foreign-key checks off, each table's
        own triggers quiet), in one transaction per chunk."""
        sdb = q_ident(self.snap_db(name))
        # The table's log entries leave in the same transaction, after its rows are locked (the
        # DELETE): a write that came before is undone by the refill, one after waits and is logged.
        stmts = [f"SET @sitectl_restoring={m_value(_table_tag(t))}; DELETE FROM {q_ident(self.db)}.{q_ident(t)}; "
                 f"INSERT INTO {q_ident(self.db)}.{q_ident(t)} SELECT * FROM {sdb}.{q_ident(t)}; "
                 f"DELETE FROM {TRACK_DB}.changes WHERE tbl={m_value(t)};" for t in tables]
        for chunk in budget_chunks(stmts, SQL_BUDGET):
            self.sql("SET FOREIGN_KEY_CHECKS=0;\nSET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;\n"
                     "START TRANSACTION;\n" + "\n".join(chunk)
                     + "\nSET @sitectl_restoring=NULL;\nCOMMIT;", f"restore rows from {name}")

    def _rebuild_tables(self, name: str, tables: list[str], extra: list[str], track: bool = True) -> None:
        sdb = q_ident(self.snap_db(name))
        defs = {r[0]: (r[1], r[2]) for r in self.sql(f"SELECT tbl, create_sql, auto_inc FROM {sdb}.__tables", "read definitions")}
        prelude = f"SET FOREIGN_KEY_CHECKS=0;\nUSE {q_ident(self.db)};\n"
        stmts = []
        for t in extra:
            stmts.append(f"DROP TABLE IF EXISTS {q_ident(self.db)}.{q_ident(t)};")
        for t in tables:
            live = q_ident(self.db) + "." + q_ident(t)
            if t not in defs:
                raise StoreError(f"{self.site}: snapshot {name!r} has no definition of table {t!r}")
            stmts.append(f"DROP TABLE IF EXISTS {live};")
            stmts.append(defs[t][0] + ";")
            stmts.append(f"INSERT INTO {live} SELECT * FROM {sdb}.{q_ident(t)};")
            if defs[t][1] and defs[t][1] != "0":
                stmts.append(f"ALTER TABLE {live} AUTO_INCREMENT={int(defs[t][1])};")
        self.session.query_chunks(stmts, f"re-create tables from {name}", prelude=prelude)
        # The application's own triggers first, as golden had them (each in the sql_mode and
        # character set it was created with, in its order), then sitectl's over the tables as
        # they are now (their foreign keys are golden's).
        if tables:
            self._recreate_app_triggers(name, tables)
        if track:
            self._sync_triggers(tables, f"track re-created tables of {name}")

    def _saved_trigger_settings(self, name: str) -> bool:
        """Whether snapshot ``name`` saved each trigger's sql_mode, character set and order
        (snapshots of sitectl 0.1.0 kept the statement only)."""
        return bool(self.sql(f"SELECT 1 FROM information_schema.columns WHERE table_schema={m_value(self.snap_db(name))}"
                             " AND table_name='__triggers' AND column_name='action_order'", "read triggers"))

    def _recreate_app_triggers(self, name: str, tables: list[str]) -> None:
        sdb = q_ident(self.snap_db(name))
        modern = self._saved_trigger_settings(name)
        pick = "create_sql, sql_mode, cs_client, coll_conn" if modern else "create_sql, NULL, NULL, NULL"
        order = "tbl, action_order" if modern else "tbl, name"
        trig = self.sql(f"SELECT {pick} FROM {sdb}.__triggers WHERE tbl IN ({','.join(map(m_value, tables))}) "
                        f"ORDER BY {order}", "read triggers")
        stmts = [_in_own_session(*row) for row in trig]
        if stmts:
            self.session.query_chunks(stmts, "re-create triggers", prelude=f"USE {q_ident(self.db)};\nDELIMITER $$\n")

    def _restore_autoinc(self, name: str, tables: list[str]) -> None:
        if not tables:
            return
        sdb = q_ident(self.snap_db(name))
        rows = self.sql(f"SELECT tbl, auto_inc FROM {sdb}.__tables WHERE auto_inc > 0 AND tbl IN ({','.join(map(m_value, tables))})")
        # Only the counters that differ (each ALTER takes the table's metadata lock).
        now = {t: s[2] for t, s in self._state().items()}
        rows = [(t, a) for t, a in rows if now.get(t) != a]
        if rows:
            self.sql("".join(f"ALTER TABLE {q_ident(self.db)}.{q_ident(t)} AUTO_INCREMENT={int(a)};" for t, a in rows),
                     "restore AUTO_INCREMENT")

    def _refresh_baseline(self, tables: list[str]) -> None:
        """After re-creating tables, their new InnoDB ids become the baseline."""
        if not tables:
            return
        state = self._state()
        stmts = [f"DELETE FROM {TRACK_DB}.baseline WHERE db={m_value(self.db)} AND tbl IN ({','.join(map(m_value, tables))});"]
        rows = [f"({m_value(self.db)},{m_value(t)},{state[t][0]},{m_value(state[t][1])},{state[t][2]})" for t in tables if t in state]
        if rows:
            stmts.append(f"INSERT INTO {TRACK_DB}.baseline VALUES {','.join(rows)};")
        self.sql("".join(stmts), "refresh baseline")

    # -- checkpoints (docs/checkpoints.md) ------------------------------------------------
    def ckpt_db(self, ckpt: str) -> str:
        """The database that holds checkpoint ``ckpt``'s rows."""
        return f"sitectl_c_{ckpt}"

    def _columns(self, tables: list[str]) -> tuple[dict[str, list[tuple[str, str, str]]], dict[str, list[list[str]]]]:
        """Of each live table among ``tables``: its primary key's ``(column, data_type,
        column_type)`` in key order, and every column's ``[column, data_type]`` in table order."""
        if not tables:
            return {}, {}
        names = ",".join(m_value(t) for t in tables)
        keys: dict[str, list[tuple[str, str, str]]] = {}
        cols: dict[str, list[list[str]]] = {}
        for tag, t, c, dt, ct in self.sql(
                "SELECT 'K', s.table_name, s.column_name, c.data_type, c.column_type FROM information_schema.statistics s"
                " JOIN information_schema.columns c ON c.table_schema = s.table_schema AND c.table_name = s.table_name"
                f" AND c.column_name = s.column_name WHERE s.table_schema={m_value(self.db)} AND s.index_name='PRIMARY'"
                f" AND s.table_name IN ({names}) ORDER BY s.table_name, s.seq_in_index;"
                " SELECT 'C', table_name, column_name, data_type, '' FROM information_schema.columns WHERE table_schema="
                f"{m_value(self.db)} AND table_name IN ({names}) ORDER BY table_name, ordinal_position",
                "read columns"):
            if tag == "K":
                keys.setdefault(t, []).append((c, dt.lower(), ct.lower()))
            else:
                cols.setdefault(t, []).append([c, dt.lower()])
        return keys, cols

    def _ckpt_digest_sql(self, ckpt: str, tables: dict[str, dict]) -> list[str]:
        """Queries giving, per checkpointed table, ``(table, rows, digest)`` of its live rows at
        the checkpoint's keys (all rows when it is kept whole): the count and an XOR of each
        row's SHA-256 over every column, each by its bytes (DECIMAL by its exact text, FLOAT and
        DOUBLE as DECIMAL(65,30), as :meth:`fingerprint`)."""
        cdb, db = q_ident(self.ckpt_db(ckpt)), q_ident(self.db)
        sels = []
        for t, info in sorted(tables.items()):
            exprs = []
            for c, dt in info["cols"]:
                x = f"x.{q_ident(c)}"
                exprs.append(f"IFNULL(HEX(CAST({x} AS CHAR)),'~')" if dt == "decimal"
                             else f"IFNULL(HEX(CAST(CAST({x} AS DECIMAL(65,30)) AS CHAR)),'~')" if dt in ("float", "double")
                             else f"IFNULL(HEX({x}),'~')")
            src = (f"{db}.{q_ident(t)} x" if info["whole"] else f"{cdb}.__keys k JOIN {db}.{q_ident(t)} x ON "
                   f"k.tbl = {m_value(t)} AND {_logged_key_match('x', [tuple(c) for c in info['key']])}")
            row = ", ".join(exprs) or "''"
            sels.append(f"SELECT {m_value(t)}, COUNT(*), IFNULL(BIT_XOR(CAST(CONV(LEFT(SHA2(CONCAT_WS('|', {row}), 256), "
                        f"16), 16, 10) AS UNSIGNED)), 0) FROM {src}")
        return [" UNION ALL ".join(sels[i:i + 40]) + ";" for i in range(0, len(sels), 40)]

    def checkpoint_check_requests(self, ckpt: str, entry: dict) -> list:
        tables = entry.get("tables") or {}
        return [self.session.request(q) for q in
                [*self._ckpt_digest_sql(ckpt, tables), self._ckpt_counters_sql(list(entry.get("touched") or []))]]

    def checkpoint_check(self, entry: dict, results: list, detected: list) -> list[str]:
        want = entry.get("digests") or {}
        rows = [r for res in results for r in (res.rows if res.ok else [])]
        got = {t: f"{n}:{x}" for t, n, x in rows if t != "#ai"}
        ai_now, ai_then = {n: x for t, n, x in rows if t == "#ai"}, entry.get("auto_increment") or {}
        bad = [r.error[-200:] for r in results if not r.ok]
        return (bad + [f"table {t} (rows {got.get(t, 'unread')}, saved {want[t]})" for t in sorted(want) if got.get(t) != want[t]]
                + [f"auto_increment {t} ({ai_now.get(t)}, saved {ai_then.get(t)})" for t in sorted(set(ai_now) | set(ai_then))
                   if str(ai_now.get(t)) != str(ai_then.get(t))])

    def checkpoint_refusal(self, changes: Changes) -> str:
        d = changes.detail
        if not self.diffable(changes) or d.get("full"):
            return "its change log does not follow golden (" + "; ".join(changes.items[:2]) + ")"
        moved = sorted(set(d.get("rebuild") or []) - self._count_only(d.get("rebuild") or [])) + sorted(d.get("extra") or [])
        if moved:
            return "tables were created, rebuilt, truncated or altered since golden (" + ", ".join(moved[:5]) + ")"
        if d.get("objects"):
            return "views, routines or events changed since golden"
        return ""

    def checkpoint_save(self, ckpt: str, golden: str, changes: Changes) -> dict:
        """Checkpoint ``ckpt`` as database ``sitectl_c_CKPT``: ``__keys``, the change log as it
        is (every key logged since golden); per logged table ``r_<md5>``, its live rows at those
        keys (a table without a primary key, keyed by a type no logged value matches exactly, or
        told apart by its row count only, whole). All read in one transaction, matched to the log
        server-side (no key travels through the client, so 4-byte characters in keys are kept),
        with what the restore's check compares and applies from the host's record, never from
        the container: each kept table's digest and the AUTO_INCREMENT counters of every table
        the restore touches.

        Raises:
            CheckpointUnavailable: :meth:`checkpoint_refusal`.
        """
        why = self.checkpoint_refusal(changes)
        if why:
            raise CheckpointUnavailable(f"{self.site}: {self.label}: {why}")
        d = changes.detail
        counted = self._count_only(d.get("rebuild") or [])
        cdb, db = q_ident(self.ckpt_db(ckpt)), q_ident(self.db)
        tables = sorted(set(d["keys"]) | counted)
        keycols, allcols = self._columns(tables)
        ddl = [f"DROP DATABASE IF EXISTS {cdb};", f"CREATE DATABASE {cdb};",
               f"CREATE TABLE {cdb}.__keys LIKE {TRACK_DB}.changes;"]
        fill = ["SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;", "START TRANSACTION;",
                f"INSERT INTO {cdb}.__keys SELECT * FROM {TRACK_DB}.changes;"]
        entry: dict[str, dict] = {}
        for t in tables:
            live, r = f"{db}.{q_ident(t)}", f"{cdb}.{_ckpt_copy(t, 'r')}"
            cols = keycols.get(t, [])
            match = None if t in counted or "" in d["keys"].get(t, []) else _logged_key_match("x", cols)
            ddl.append(f"CREATE TABLE {r} LIKE {live};")
            if match is None:
                fill.append(f"INSERT INTO {r} SELECT * FROM {live};")
                entry[t] = {"whole": True, "key": [], "cols": allcols.get(t, [])}
                continue
            fill.append(f"INSERT INTO {r} SELECT x.* FROM {cdb}.__keys k JOIN {live} x ON k.tbl = {m_value(t)} AND {match};")
            entry[t] = {"whole": False, "key": [list(c) for c in cols], "cols": allcols.get(t, [])}
        touched = sorted(set(self._apply_order(tables, d.get("targets") or {})) | set(d.get("autoinc") or []))
        # What the restore's closing check compares: the live rows and counters, read with the copies.
        fill += self._ckpt_digest_sql(ckpt, entry)
        fill.append(self._ckpt_counters_sql(touched))
        fill.append("COMMIT;")
        fill.append(f"SELECT '', 0, IFNULL(SUM(data_length + index_length), 0) FROM information_schema.tables "
                    f"WHERE table_schema = {m_value(self.ckpt_db(ckpt))};")
        self.session.query_chunks(ddl, f"checkpoint {ckpt}")
        rows = self.sql("\n".join(fill), f"checkpoint {ckpt}")
        return {"tables": entry, "targets": d.get("targets") or {}, "touched": touched,
                "digests": {t: f"{n}:{x}" for t, n, x in rows if t and t != "#ai"},
                "auto_increment": {n: x for t, n, x in rows if t == "#ai"},
                "size": next((int(x) for t, _, x in rows if not t), 0)}

    def _ckpt_counters_sql(self, tables: list[str]) -> str:
        """A query giving ``('#ai', table, AUTO_INCREMENT)`` of ``tables`` that have one."""
        names = ",".join(m_value(t) for t in tables) or "''"
        return (f"SELECT '#ai', table_name, auto_increment FROM information_schema.tables WHERE table_schema = "
                f"{m_value(self.db)} AND table_name IN ({names}) AND auto_increment IS NOT NULL;")

    def _count_only(self, rebuilt: list[str]) -> set[str]:
        """The tables among ``rebuilt`` that are told apart by their row count only (another
        engine than InnoDB, :meth:`_state_sql`) and whose definition is the baseline's: their
        rows changed (inserted or deleted, perhaps truncated); a checkpoint keeps them whole."""
        if not rebuilt:
            return set()
        base = {t: (i, h) for t, i, h in self.sql(
            f"SELECT tbl, table_id, defn FROM {TRACK_DB}.baseline WHERE db={m_value(self.db)} AND tbl IN "
            f"({','.join(m_value(t) for t in rebuilt)})", "read baseline")}
        now = self._state()
        return {t for t in rebuilt if t in base and t in now and int(base[t][0]) < 0 and int(now[t][0]) < 0
                and base[t][1] == now[t][1]}

    @staticmethod
    def _apply_order(tables: list[str], targets: dict[str, dict]) -> list[str]:
        """``tables`` and every table the application's triggers on them may write, and theirs in
        turn, sources before the tables they write (a cycle's rest in name order)."""
        reach, queue = set(tables), sorted(tables)
        while queue:
            for w in sorted(targets.get(queue.pop(0)) or {}):
                if w not in reach:
                    reach.add(w)
                    queue.append(w)
        indeg = {t: 0 for t in reach}
        for t in reach:
            for w in targets.get(t) or {}:
                if w in reach and w != t:
                    indeg[w] += 1
        order: list[str] = []
        ready = sorted(t for t, n in indeg.items() if n == 0)
        while ready:
            t = ready.pop(0)
            order.append(t)
            for w in sorted(targets.get(t) or {}):
                if w in indeg and w != t:
                    indeg[w] -= 1
                    if indeg[w] == 0:
                        ready.append(w)
                        ready.sort()
        return order + sorted(reach - set(order))

    def checkpoint_apply_requests(self, ckpt: str, golden: str, entry: dict) -> list:
        """One SQL text, run on golden's state: in one transaction with foreign-key checks off,
        the tables in :meth:`_apply_order`; a table the application's triggers on earlier ones
        wrote first gets golden's rows back at the keys they logged (the reset's catch-up), then
        each checkpointed table loses its rows at the checkpoint's keys and gets the copy's rows
        at those keys only (its own triggers' logging off while it is written); the checkpoint's
        keys go into the change log, which then follows golden as if the application had
        written them. After the commit, every touched table's AUTO_INCREMENT becomes the one the
        record holds (an ALTER only where it differs)."""
        tables: dict[str, dict] = entry.get("tables") or {}
        targets: dict[str, dict] = entry.get("targets") or {}
        cdb, gdb, db = q_ident(self.ckpt_db(ckpt)), q_ident(self.snap_db(golden)), q_ident(self.db)
        order = self._apply_order(sorted(tables), targets)
        written = {w for t in order for w in (targets.get(t) or {}) if w != t}
        stmts = ["SET FOREIGN_KEY_CHECKS=0;", "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;",
                 "START TRANSACTION;", f"USE {db};",
                 f"CREATE TEMPORARY TABLE IF NOT EXISTS {TRACK_DB}.sitectl_keys LIKE {TRACK_DB}.changes;"]
        cols_of = {w: c for t in order for w, c in (targets.get(t) or {}).items()}
        for t in order:
            if t in written:
                stmts += self._catch_up_sql(gdb, t, cols_of.get(t, []))
            if t not in tables:
                continue
            live, r = f"{db}.{q_ident(t)}", f"{cdb}.{_ckpt_copy(t, 'r')}"
            stmts.append(f"SET @sitectl_restoring={m_value(_table_tag(t))};")
            if tables[t].get("whole"):
                stmts.append(f"DELETE FROM {live}; INSERT INTO {live} SELECT * FROM {r};")
                continue
            keyed = [tuple(c) for c in tables[t]["key"]]
            stmts.append(f"DELETE x FROM {cdb}.__keys k JOIN {live} x ON k.tbl = {m_value(t)} AND "
                         f"{_logged_key_match('x', keyed)};")
            stmts.append(f"INSERT INTO {live} SELECT x.* FROM {cdb}.__keys k JOIN {r} x ON k.tbl = {m_value(t)} AND "
                         f"{_logged_key_match('x', keyed)};")
        stmts += ["SET @sitectl_restoring=NULL;", f"INSERT IGNORE INTO {TRACK_DB}.changes SELECT * FROM {cdb}.__keys;",
                  "COMMIT;"]
        counters = entry.get("auto_increment") or {}
        for t in entry.get("touched") or []:
            if t not in counters:
                continue
            n = int(counters[t])
            alter = f"ALTER TABLE {db}.{q_ident(t)} AUTO_INCREMENT={n}"
            stmts.append(
                "SET @sitectl_s = IF((SELECT auto_increment FROM information_schema.tables WHERE table_schema="
                f"{m_value(self.db)} AND table_name={m_value(t)}) <=> {n}, 'DO 0', {m_value(alter)});"
                " PREPARE sitectl_s FROM @sitectl_s; EXECUTE sitectl_s; DEALLOCATE PREPARE sitectl_s;")
        return [self.session.request("\n".join(stmts))]

    def checkpoint_drop(self, ckpt: str) -> None:
        self.sql(f"DROP DATABASE IF EXISTS {q_ident(self.ckpt_db(ckpt))}", f"drop checkpoint {ckpt}")

    def checkpoint_held(self) -> set[str]:
        rows = self.sql("SELECT HEX(schema_name) FROM information_schema.schemata WHERE schema_name LIKE 'sitectl\\_c\\_%'")
        return hex_names("\n".join(r[0] for r in rows), "sitectl_c_")

    #: Version of :meth:`fingerprint`'s digests (its ``fingerprint format`` item). 2: fractional
    #: numbers are digested by their value, not HEX()'s integer (HEX(12.5) and HEX(12.6) are both
    #: "D": MariaDB and MySQL convert a number to BIGINT first).
    FINGERPRINT_FORMAT = "2"

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        """Per table ``"rows:digest"`` (the count and an XOR of each row's SHA-256 over every
        column: text, binary and integers by their bytes, DECIMAL by its exact text, FLOAT and
        DOUBLE by their value as DECIMAL(65,30)), per table its AUTO_INCREMENT counter, and
        ``fingerprint format`` (:data:`FINGERPRINT_FORMAT`)."""
        schema = self.snap_db(name) if name else self.db
        col = "CONCAT('`', REPLACE(column_name,'`','``'), '`')"
        cols = self.sql(
            "SELECT table_name, GROUP_CONCAT(CASE data_type"
            f" WHEN 'decimal' THEN CONCAT('IFNULL(HEX(CAST(', {col}, ' AS CHAR)),''~'')')"
            f" WHEN 'float' THEN CONCAT('IFNULL(HEX(CAST(CAST(', {col}, ' AS DECIMAL(65,30)) AS CHAR)),''~'')')"
            f" WHEN 'double' THEN CONCAT('IFNULL(HEX(CAST(CAST(', {col}, ' AS DECIMAL(65,30)) AS CHAR)),''~'')')"
            f" ELSE CONCAT('IFNULL(HEX(', {col}, '),''~'')') END"
            " ORDER BY ordinal_position SEPARATOR ',') FROM information_schema.columns WHERE table_schema="
            f"{m_value(schema)} AND table_name NOT LIKE '\\_\\_%' GROUP BY table_name ORDER BY table_name", "read columns")
        out: dict[str, str] = {"fingerprint format": self.FINGERPRINT_FORMAT}
        # Order-independent row digest: count + XOR of the first 64 bits of each row's MD5.
        selects = [f"SELECT {m_value(t)}, COUNT(*), IFNULL(BIT_XOR(CAST(CONV(LEFT(SHA2(CONCAT_WS('|',{c}), 256),16),16,10) AS UNSIGNED)),0)"
                   f" FROM {q_ident(schema)}.{q_ident(t)}" for t, c in cols]
        for i in range(0, len(selects), 40):
            for t, n, x in self.sql(" UNION ALL ".join(selects[i:i + 40]), "fingerprint tables"):
                out[f"table {t}"] = f"{n}:{x}"
        ai = self.sql(f"SELECT tbl, auto_inc FROM {q_ident(self.snap_db(name))}.__tables" if name else
                      f"SELECT table_name, IFNULL(auto_increment,0) FROM information_schema.tables WHERE table_schema={m_value(self.db)} AND table_type='BASE TABLE'")
        for t, a in ai:
            out[f"auto_increment {t}"] = str(a)
        return out

    def drop(self, name: str) -> None:
        self.sql(f"DROP DATABASE IF EXISTS {q_ident(self.snap_db(name))}", f"drop snapshot {name}")

    def held(self) -> set[str]:
        rows = self.sql("SELECT HEX(schema_name) FROM information_schema.schemata WHERE schema_name LIKE 'sitectl\\_s\\_%'")
        return hex_names("\n".join(r[0] for r in rows), "sitectl_s_")

    def export_payload(self, name: str, stage: str) -> str | None:
        out = f"{stage}/mysql-{self.db}.sql"
        self.session.dump(["--skip-triggers", "--single-transaction", self.snap_db(name)], out, f"{self.label} export")
        return out

    def import_payload(self, name: str, path: str, original: str) -> None:
        sdb = q_ident(self.snap_db(name))
        self.sql(f"DROP DATABASE IF EXISTS {sdb}; CREATE DATABASE {sdb};", "create snapshot database")
        self.session.load("mysql", [self.snap_db(name)], path, f"{self.label} import")
