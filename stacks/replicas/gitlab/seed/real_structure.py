"""GitLab's own structure around the replica's tables (issue 15, item 7).

The replica's app reads and writes the 26 tables of ``schema.sql`` (GitLab's names, the columns it
uses). Everything else in the database is GitLab's ``db/structure.sql`` (about 15.10; 815 tables,
13 partitioned parents with their static partitions, 32 triggers, 540 sequences, functions,
views), put into the build context from ``../shared/data/schemas/gitlab-structure.sql`` by
sitectl (stacks/mini.yaml, images[].files). Steps, in one transaction of the seed:

1. load the structure as it is;
2. note every foreign key from or to one of the replica's tables (between two of them too) and
   every trigger on a replica table, as PostgreSQL prints them (``pg_get_constraintdef``,
   ``pg_get_triggerdef``); a trigger of another table whose function updates a replica table
   must find the columns it sets there, or the build stops;
3. drop GitLab's definitions of the replica's tables and create the replica's;
4. put back each noted foreign key and trigger whose columns the replica's table has (a foreign
   key each in a savepoint; a trigger when neither it nor its function names a column the
   table lacks); the ones that do not fit are printed by the build and listed in
   docs/contracts/gitlab.md;
5. create the partitions GitLab's partition manager (Gitlab::Database::Partitioning) makes at
   boot, dated from the seed's base date: loose foreign keys' list partition 1, security
   findings' partition 1, and for each range-partitioned table by month a ``_000000`` partition
   from MINVALUE, the base month and the next one.
"""
import datetime as dt
import hashlib
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
STRUCTURE = os.path.join(HERE, "..", "real", "gitlab-structure.sql")
STRUCTURE_SHA256 = "7bdbbf38332d596678ec566644372683716bcef530590c099c0e09d42ee31ca9"


#: GitLab's base work item types as its installer creates them (base_type, name, icon).
WORK_ITEM_TYPES = [(0, "Issue", "issue-type-issue"), (1, "Incident", "issue-type-incident"),
                   (2, "Test Case", "issue-type-test-case"), (3, "Requirement", "issue-type-requirements"),
                   (4, "Task", "issue-type-task"), (5, "Objective", "issue-type-objective"),
                   (6, "Key Result", "issue-type-keyresult")]


def replica_tables(schema_sql):
    """The tables ``schema.sql`` creates, in order."""
    return re.findall(r"^CREATE TABLE (\w+)", schema_sql, re.M)


def _months(base, n):
    y, m = base.year, base.month
    for _ in range(n):
        yield dt.date(y, m, 1)
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)


def load(cur, schema_sql, base):
    """Steps 1-5 above on cursor ``cur`` (as the database's owner). Returns (attached, skipped):
    the names of the noted foreign keys and triggers put back, and of those that did not fit, each
    with PostgreSQL's reason."""
    text = open(STRUCTURE, "rb").read()
    if hashlib.sha256(text).hexdigest() != STRUCTURE_SHA256:
        raise SystemExit(f"{STRUCTURE}: not the structure.sql of ../shared/data/schemas/README.md (SHA-256 differs)")
    cur.execute(text.decode())
    cur.execute("SET search_path TO public")
    mine = replica_tables(schema_sql)
    cur.execute("""SELECT format('ALTER TABLE %%s ADD CONSTRAINT %%I %%s', conrelid::regclass, conname,
                                 pg_get_constraintdef(oid)), conname
                   FROM pg_constraint
                   WHERE contype = 'f' AND conparentid = 0
                     AND (confrelid::regclass::text = ANY(%s) OR conrelid::regclass::text = ANY(%s))
                   ORDER BY conrelid::regclass::text, conname""", (mine, mine))
    noted = cur.fetchall()
    cur.execute("""SELECT pg_get_triggerdef(t.oid), t.tgname, t.tgrelid::regclass::text, pg_get_functiondef(t.tgfoid)
                   FROM pg_trigger t
                   WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND t.tgrelid::regclass::text = ANY(%s)
                   ORDER BY t.tgrelid::regclass::text, t.tgname""", (mine,))
    triggers = cur.fetchall()
    # Triggers of other tables whose functions write a replica table (GitLab's integrations set
    # projects.has_external_*): the columns they set, checked after the replica's tables exist.
    cur.execute("""SELECT t.tgname, pg_get_functiondef(t.tgfoid) FROM pg_trigger t
                   WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND NOT (t.tgrelid::regclass::text = ANY(%s))""", (mine,))
    writers = [(n, f) for n, f in cur.fetchall() if re.search(r"\b(?:UPDATE|INSERT INTO|DELETE FROM)\s+(?:public\.)?(%s)\b"
                                                          % "|".join(mine), f, re.I)]
    cur.execute("DROP TABLE " + ", ".join(mine) + " CASCADE")
    cur.execute(schema_sql)
    attached, skipped = [], []
    # A trigger's function is checked only when it runs: put back only those whose trigger and
    # function name no column (NEW.x, OLD.x, old_table.x) the replica's table lacks.
    for ddl, name, table, func in triggers:
        cur.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s",
                    (table,))
        have = {r[0] for r in cur.fetchall()}
        named = {m.lower() for m in re.findall(r"\b(?:new|old|old_table|new_table)\.(\w+)", ddl + func, re.I)}
        lacking = sorted(named - have)
        if lacking:
            skipped.append((name, f"{table} has no {', '.join(lacking)}"))
        else:
            noted.append((ddl, name))
    for name, func in writers:
        for table, cols in re.findall(r"UPDATE\s+(?:public\.)?(\w+)\s+SET\s+(.*?)\bWHERE\b", func, re.I | re.S):
            if table in mine:
                cur.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s",
                            (table,))
                have = {r[0] for r in cur.fetchall()}
                lacking = sorted({c.lower() for c in re.findall(r"(\w+)\s*=", cols)} - have)
                if lacking:
                    raise SystemExit(f"trigger {name} sets {table}.{', '.join(lacking)}, which the replica's table lacks")
    for ddl, name in noted:
        cur.execute("SAVEPOINT put_back")
        try:
            cur.execute(ddl)
        except Exception as e:  # psycopg2.Error: the replica's table lacks a column it names
            cur.execute("ROLLBACK TO SAVEPOINT put_back")
            skipped.append((name, str(e).splitlines()[0]))
        else:
            cur.execute("RELEASE SAVEPOINT put_back")
            attached.append(name)
    # GitLab's installer (Gitlab::DatabaseImporters::WorkItems::BaseTypeImporter) writes the base
    # work item types; every issue names one (issues.work_item_type_id, checked NOT NULL in 15.x).
    for n, (base_type, name, icon) in enumerate(WORK_ITEM_TYPES, 1):
        cur.execute("INSERT INTO work_item_types (id, base_type, name, icon_name, created_at, updated_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s)", (n, base_type, name, icon, base, base))
    cur.execute("SELECT setval('work_item_types_id_seq', %s)", (len(WORK_ITEM_TYPES),))
    cur.execute("""SELECT c.relname, pg_get_partkeydef(c.oid) FROM pg_class c
                   WHERE c.relkind = 'p' AND c.relnamespace = 'public'::regnamespace
                     AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhparent = c.oid)
                   ORDER BY 1""")
    for table, key in cur.fetchall():
        part = "gitlab_partitions_dynamic." + table
        if key.startswith("LIST"):
            cur.execute(f"CREATE TABLE {part}_1 PARTITION OF {table} FOR VALUES IN (1)")
        elif key.startswith("RANGE"):
            first, *rest = _months(base, 3)
            cur.execute(f"CREATE TABLE {part}_000000 PARTITION OF {table} FOR VALUES FROM (MINVALUE) TO ('{first}')")
            for lo, hi in zip([first, *rest], rest):
                cur.execute(f"CREATE TABLE {part}_{lo:%Y%m} PARTITION OF {table} FOR VALUES FROM ('{lo}') TO ('{hi}')")
        else:
            raise SystemExit(f"{table}: partitioned by {key} with no partition; GitLab's manager makes none of those")
    return attached, skipped
