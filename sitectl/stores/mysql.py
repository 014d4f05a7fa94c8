"""MySQL/MariaDB store (the Magento pair): golden copy in the same server, exact change
tracking, restore of only the changed rows.

How it works (sources: research/fast-reset.md §1.5-1.6, §4.2; MariaDB docs):

* **Snapshot** ``NAME`` = database ``sitectl_s_NAME`` holding a copy of every base table
  (``CREATE TABLE LIKE`` + ``INSERT ... SELECT``) plus ``__tables`` (``SHOW CREATE TABLE``
  text, AUTO_INCREMENT) and ``__triggers`` (the application's own trigger definitions).
* **Change tracking** (installed with the baseline): three row triggers per table append the
  primary key of every inserted, updated or deleted row to ``sitectl.changes``; triggers skip
  while the session variable ``@sitectl_off`` is set (the restore's own writes). What row
  triggers cannot see is caught by comparing each table against ``sitectl.baseline``: the
  InnoDB table id (TRUNCATE and table rebuilds change it), a hash of the column and index
  definitions (every ALTER), the AUTO_INCREMENT counter, and the table list itself (CREATE,
  DROP, RENAME).
* **Restore**: changed rows are deleted and re-inserted from the snapshot by primary key, in
  one transaction with foreign-key checks off; a table whose structure, id or existence changed
  is dropped and re-created from its saved ``CREATE TABLE`` text with its triggers; tables
  that did not exist are dropped; AUTO_INCREMENT counters are set back. The server and the
  application keep running.
"""
from __future__ import annotations

import hashlib
import json

from sitectl.errors import StoreError
from sitectl.stores.base import Changes, Store
from sitectl.stores.literals import m_value, q_ident
from sitectl.stores.sql import SQL_BUDGET, SqlResult, SqlSession

TRACK_DB = "sitectl"
MAX_KEYS_PER_TABLE = 2000  # above this a table is restored whole (one statement stays small)


def _trigger_name(table: str, ev: str) -> str:
    return f"sitectl_{hashlib.md5(table.encode()).hexdigest()[:16]}_{ev}"


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
        preceded by ``prefix``)."""
        db = m_value(self.db)
        p = prefix
        return f"""
            SELECT '{p}T', table_name, IFNULL(auto_increment, 0) FROM information_schema.tables
              WHERE table_schema = {db} AND table_type = 'BASE TABLE'
            UNION ALL
            SELECT '{p}I', SUBSTRING(name, LENGTH({db}) + 2), table_id FROM information_schema.innodb_sys_tables
              WHERE name LIKE CONCAT({db}, '/%')
            UNION ALL
            SELECT '{p}C', table_name, MD5(GROUP_CONCAT(CONCAT_WS(',', column_name, column_type, is_nullable,
                IFNULL(column_default, '~'), extra) ORDER BY ordinal_position SEPARATOR ';'))
              FROM information_schema.columns WHERE table_schema = {db} GROUP BY table_name
            UNION ALL
            SELECT '{p}X', table_name, MD5(GROUP_CONCAT(CONCAT_WS(',', index_name, seq_in_index, column_name, non_unique)
                ORDER BY index_name, seq_in_index SEPARATOR ';'))
              FROM information_schema.statistics WHERE table_schema = {db} GROUP BY table_name;"""

    @staticmethod
    def _parse_state(rows) -> dict[str, tuple]:
        """Rows of :meth:`_state_sql` → ``{table: (table_id, definition hash, auto_increment)}``."""
        by: dict[str, dict] = {}
        for tag, table, value in rows:
            by.setdefault(table, {})[tag] = value
        return {t: (v.get("I", "0"), hashlib.md5(f"{v.get('C')}|{v.get('X')}".encode()).hexdigest(), v.get("T", "0"))
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

    # -- tracking -------------------------------------------------------------------------
    def _trigger_sql(self, table: str, pk: list[str]) -> str:
        tq = q_ident(self.db) + "." + q_ident(table)
        stmts = []
        for ev, when, rowref in (("i", "INSERT", ["NEW"]), ("u", "UPDATE", ["OLD", "NEW"]), ("d", "DELETE", ["OLD"])):
            name = q_ident(self.db) + "." + q_ident(_trigger_name(table, ev))
            if pk:
                keys = " UNION ".join(
                    "SELECT " + m_value(table) + ", JSON_ARRAY(" + ", ".join(f"{r}.{q_ident(c)}" for c in pk) + ")"
                    for r in rowref)
            else:
                keys = f"SELECT {m_value(table)}, ''"
            stmts.append(
                f"CREATE TRIGGER {name} AFTER {when} ON {tq} FOR EACH ROW "
                f"INSERT IGNORE INTO {TRACK_DB}.changes (tbl, pk) SELECT * FROM ({keys}) k WHERE @sitectl_off IS NULL")
        return ";\n".join(stmts) + ";"

    def _drop_triggers_sql(self, table: str) -> str:
        return "".join(f"DROP TRIGGER IF EXISTS {q_ident(self.db)}.{q_ident(_trigger_name(table, ev))};" for ev in "iud")

    def _install_tracking(self, name: str) -> None:
        """(Re)create the change log, the triggers of every table, and the baseline."""
        pk = self._pk(self.db)
        tables = self._tables(self.db)
        parts = [
            f"CREATE DATABASE IF NOT EXISTS {TRACK_DB};",
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.changes (tbl VARCHAR(64) NOT NULL, pk VARCHAR(700) NOT NULL,"
            " PRIMARY KEY (tbl, pk)) ENGINE=InnoDB;",
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.baseline (db VARCHAR(64) NOT NULL, tbl VARCHAR(64) NOT NULL,"
            " table_id BIGINT, defn CHAR(32), auto_inc BIGINT, PRIMARY KEY (db, tbl)) ENGINE=InnoDB;",
            f"CREATE TABLE IF NOT EXISTS {TRACK_DB}.meta (db VARCHAR(64) PRIMARY KEY, snapshot VARCHAR(64)) ENGINE=InnoDB;",
        ]
        self.sql("\n".join(parts), "install change tracking")
        self.session.query_chunks([self._drop_triggers_sql(t) + "\n" + self._trigger_sql(t, pk.get(t, [])) for t in tables],
                        "install change tracking")
        self._reset_baseline(name)

    def _reset_baseline(self, name: str) -> None:
        state = self._state()
        rows = ",".join(f"({m_value(self.db)},{m_value(t)},{s[0]},{m_value(s[1])},{s[2]})" for t, s in state.items())
        self.sql(
            f"DELETE FROM {TRACK_DB}.baseline WHERE db={m_value(self.db)};"
            + (f"INSERT INTO {TRACK_DB}.baseline VALUES {rows};" if rows else "")
            + f"DELETE FROM {TRACK_DB}.changes;"
            + f"REPLACE INTO {TRACK_DB}.meta VALUES ({m_value(self.db)}, {m_value(name)});",
            "record baseline")

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
        sdb = q_ident(self.snap_db(name))
        tables = self._tables(self.db)
        parts = [f"DROP DATABASE IF EXISTS {sdb};", f"CREATE DATABASE {sdb};", "SET @sitectl_off=1;",
                 f"CREATE TABLE {sdb}.__tables (tbl VARCHAR(64) PRIMARY KEY, create_sql LONGTEXT, auto_inc BIGINT);",
                 f"CREATE TABLE {sdb}.__triggers (name VARCHAR(64) PRIMARY KEY, tbl VARCHAR(64), create_sql LONGTEXT);"]
        self.sql("\n".join(parts), f"snapshot {name}")
        self.session.query_chunks([f"CREATE TABLE {sdb}.{q_ident(t)} LIKE {q_ident(self.db)}.{q_ident(t)}; "
                         f"INSERT INTO {sdb}.{q_ident(t)} SELECT * FROM {q_ident(self.db)}.{q_ident(t)};" for t in tables],
                        f"snapshot {name}", prelude="SET @sitectl_off=1;\n")
        # CREATE TABLE texts and the application's triggers, kept for DDL restores.
        creates = self.sql("".join(f"SHOW CREATE TABLE {q_ident(self.db)}.{q_ident(t)};" for t in tables), "read table definitions")
        ai = {t: s[2] for t, s in self._state().items()}
        trig = self.sql(
            "SELECT trigger_name, event_object_table FROM information_schema.triggers WHERE trigger_schema="
            f"{m_value(self.db)} AND trigger_name NOT LIKE 'sitectl\\_%'", "list triggers")
        trig_sql = self.sql("".join(f"SHOW CREATE TRIGGER {q_ident(self.db)}.{q_ident(n)};" for n, _ in trig), "read triggers") if trig else []
        ins = [f"INSERT INTO {sdb}.__tables VALUES ({m_value(r[0])},{m_value(r[1])},{ai.get(r[0], 0)});" for r in creates]
        ins += [f"INSERT INTO {sdb}.__triggers VALUES ({m_value(r[0])},{m_value(tb)},{m_value(r[2])});"
                for r, (_, tb) in zip(trig_sql, trig)]
        self.session.query_chunks(ins, "save definitions")
        self._install_tracking(name)
        fp = self.fingerprint(name)
        size = self.sql(f"SELECT IFNULL(SUM(data_length+index_length),0) FROM information_schema.tables WHERE table_schema={m_value(self.snap_db(name))}")
        return {"fingerprint": fp, "size": int(size[0][0]), "tables": len(tables)}

    def _changes_sql(self) -> str:
        # One round trip: the baseline's name, the change log, the baseline and the live state.
        return (f"SELECT 'M', snapshot, '' FROM {TRACK_DB}.meta WHERE db={m_value(self.db)} UNION ALL "
                f"SELECT 'K', tbl, pk FROM {TRACK_DB}.changes UNION ALL "
                f"SELECT 'B', tbl, CONCAT_WS(' ', table_id, defn, auto_inc) FROM {TRACK_DB}.baseline "
                f"WHERE db={m_value(self.db)} UNION ALL " + self._state_sql("S"))

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
        keys: dict[str, list] = {}
        for _, tb, pk in (r for r in rows if r[0] == "K"):
            keys.setdefault(tb, []).append(pk)
        base = {r[1]: tuple(r[2].split(" ")) for r in rows if r[0] == "B"}
        now = self._parse_state([(r[0][1:], r[1], r[2]) for r in rows if r[0].startswith("S")])
        rebuild = sorted(t for t in base if t not in now or now[t][:2] != base[t][:2])
        extra = sorted(t for t in now if t not in base)
        autoinc = sorted(t for t in base if t in now and t not in rebuild and now[t][2] != base[t][2])
        rows_changed = sorted(t for t in keys if t in base and t not in rebuild)
        items = sorted({*(f"table {t} (rebuilt, dropped or altered)" for t in rebuild),
                        *(f"table {t} (created)" for t in extra),
                        *(f"table {t} ({len(keys[t])} rows)" for t in rows_changed),
                        *(f"table {t} (auto_increment)" for t in autoinc if t not in rows_changed)})
        pks = {r[1]: r[2].split(",") for r in rows if r[0] == "P"}
        golden_ai = {r[1]: r[2] for r in rows if r[0] == "A"}
        return Changes(items, {"keys": {t: keys[t] for t in rows_changed}, "rebuild": rebuild, "extra": extra,
                               "autoinc": autoinc, "pk": pks, "golden_ai": golden_ai})

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
        if d.get("golden_ai") is None:
            self._restore_autoinc(name, d["autoinc"] + list(d["keys"]))
        self._refresh_baseline(d["rebuild"] + d["extra"])
        return changes.items

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if not changes:
            return []
        d = changes.detail
        if d.get("full") or d["rebuild"] or d["extra"] or d.get("golden_ai") is None or d.get("pk") is None:
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
        stmts = ["SET @sitectl_off=1;", "SET FOREIGN_KEY_CHECKS=0;", "START TRANSACTION;"]
        for t, (keys, vals) in sorted(keyed.items()):
            live = q_ident(self.db) + "." + q_ident(t)
            where = " OR ".join("(" + " AND ".join(f"{q_ident(c)}={m_value(v)}" for c, v in zip(pk[t], row)) + ")"
                                for row in vals)
            stmts.append(f"DELETE FROM {live} WHERE {where};")
            stmts.append(f"INSERT INTO {live} SELECT * FROM {sdb}.{q_ident(t)} WHERE {where};")
            stmts.append(f"DELETE FROM {TRACK_DB}.changes WHERE tbl={m_value(t)} AND pk IN ({','.join(map(m_value, keys))});")
        for t in sorted(whole):
            live = q_ident(self.db) + "." + q_ident(t)
            stmts.append(f"DELETE FROM {live}; INSERT INTO {live} SELECT * FROM {sdb}.{q_ident(t)};")
        if whole:
            stmts.append(f"DELETE FROM {TRACK_DB}.changes WHERE tbl IN ({','.join(map(m_value, sorted(whole)))});")
        stmts.append("COMMIT;")
        # AUTO_INCREMENT counters of every touched table (an ALTER commits, so after the rows).
        gai = d.get("golden_ai")
        if gai is not None:
            stmts += [f"ALTER TABLE {q_ident(self.db)}.{q_ident(t)} AUTO_INCREMENT={int(gai[t])};"
                      for t in sorted(set(d["autoinc"] + list(d["keys"]))) if t in gai and t not in d["rebuild"]]
        return "\n".join(stmts)

    def _restore_full(self, name: str) -> list[str]:
        """Every table back from the snapshot; tracking re-installed; baseline = ``name``."""
        snap_tables = self._tables(self.snap_db(name))
        golden = [t for t in snap_tables if not t.startswith("__")]
        live = self._tables(self.db)
        self._rebuild_tables(name, golden, [t for t in live if t not in golden])
        self._install_tracking(name)
        return [f"{self.label}: all {len(golden)} tables"]

    def _rebuild_tables(self, name: str, tables: list[str], extra: list[str]) -> None:
        sdb = q_ident(self.snap_db(name))
        defs = {r[0]: (r[1], r[2]) for r in self.sql(f"SELECT tbl, create_sql, auto_inc FROM {sdb}.__tables", "read definitions")}
        pk = self._pk(self.snap_db(name))
        prelude = f"SET @sitectl_off=1;\nSET FOREIGN_KEY_CHECKS=0;\nUSE {q_ident(self.db)};\n"
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
            stmts.append(self._trigger_sql(t, pk.get(t, [])))
        self.session.query_chunks(stmts, f"re-create tables from {name}", prelude=prelude)
        # The application's own triggers on the re-created tables.
        trig = self.sql(f"SELECT create_sql FROM {sdb}.__triggers WHERE tbl IN ({','.join(map(m_value, tables)) or 'NULL'})")
        if trig:
            self.session.query_chunks([r[0] + "$$" for r in trig], "re-create triggers", prelude=f"USE {q_ident(self.db)};\nDELIMITER $$\n")

    def _restore_autoinc(self, name: str, tables: list[str]) -> None:
        if not tables:
            return
        sdb = q_ident(self.snap_db(name))
        rows = self.sql(f"SELECT tbl, auto_inc FROM {sdb}.__tables WHERE auto_inc > 0 AND tbl IN ({','.join(map(m_value, tables))})")
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

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        schema = self.snap_db(name) if name else self.db
        cols = self.sql(
            "SELECT table_name, GROUP_CONCAT(CONCAT('IFNULL(HEX(', '`', REPLACE(column_name,'`','``'), '`', '),''~'')')"
            " ORDER BY ordinal_position SEPARATOR ',') FROM information_schema.columns WHERE table_schema="
            f"{m_value(schema)} AND table_name NOT LIKE '\\_\\_%' GROUP BY table_name ORDER BY table_name", "read columns")
        out: dict[str, str] = {}
        # Order-independent row digest: count + XOR of the first 64 bits of each row's MD5.
        selects = [f"SELECT {m_value(t)}, COUNT(*), IFNULL(BIT_XOR(CAST(CONV(LEFT(MD5(CONCAT_WS('|',{c})),16),16,10) AS UNSIGNED)),0)"
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

    def export_payload(self, name: str, stage: str) -> str | None:
        out = f"{stage}/mysql-{self.db}.sql"
        self.session.dump(["--skip-triggers", "--single-transaction", self.snap_db(name)], out, f"{self.label} export")
        return out

    def import_payload(self, name: str, path: str, original: str) -> None:
        sdb = q_ident(self.snap_db(name))
        self.sql(f"DROP DATABASE IF EXISTS {sdb}; CREATE DATABASE {sdb};", "create snapshot database")
        self.session.load("mysql", [self.snap_db(name)], path, f"{self.label} import")
