"""The real applications' schemas in scratch database servers, for the stores' tests.

A scratch server is a container of the replica runtime image (Debian's MariaDB and
PostgreSQL servers) with one of ``../shared/data/schemas/`` loaded as it is, a small seed of
this project's on top (``tests/stores/data/``), and the stores driven through
:class:`sitectl.stores.site.SiteStores` exactly as a site's reset drives them.

The proof of each reset is :func:`mysql_state`: the database as ``mysqldump`` prints it (rows
in primary-key order, table definitions with their AUTO_INCREMENT counters, views, routines and
events) plus the application's triggers as ``information_schema`` lists them; for PostgreSQL
:func:`pg_state`: ``pg_dump --schema-only`` (every object, owners and grants) plus every
table's rows as ``COPY`` prints them in a fixed order, plus every sequence's values read one by
one. Neither shares code with sitectl's change tracking or fingerprints.
"""
from __future__ import annotations

import difflib
import re
import time
from collections import Counter
from pathlib import Path

from python_on_whales import docker

from sitectl.engine import Engine
from sitectl.errors import StoreError  # noqa: F401 - the tests match it
from sitectl.stack.model import Site
from sitectl.stores.site import SiteStores

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT.parent / "shared" / "data" / "schemas"
DATA = Path(__file__).resolve().parent / "data"
RUNTIME = "sitectl/replica-runtime:0.1"  # Debian bookworm: MariaDB 10.11, PostgreSQL 15
#: Debian bullseye's servers (PostgreSQL 13 as GitLab 15.7's omnibus bundles, MariaDB 10.5), built
#: by :func:`bullseye_servers` from stacks/replicas/servers-bullseye on `make bullseye`'s base image.
BULLSEYE = "sitectl/servers-bullseye:0.1"
BULLSEYE_DIR = ROOT / "stacks" / "replicas" / "servers-bullseye"


def bullseye_servers() -> str:
    """The bullseye servers' image tag, built first when absent or when its Dockerfile changed
    (label ``sitectl.source``: the file's SHA-256). Fails naming ``make bullseye`` when the
    Debian bullseye base image is missing."""
    import hashlib

    digest = hashlib.sha256((BULLSEYE_DIR / "Dockerfile").read_bytes()).hexdigest()
    if docker.image.exists(BULLSEYE) and docker.image.inspect(BULLSEYE).config.labels.get("sitectl.source") == digest:
        return BULLSEYE
    assert docker.image.exists("sitectl/base:bullseye"), "no Debian bullseye base image: run `make bullseye`"
    docker.legacy_build(str(BULLSEYE_DIR), tags=[BULLSEYE], labels={"sitectl.source": digest})
    return BULLSEYE


def start_mariadb(engine: Engine, name: str, image: str = RUNTIME) -> str:
    """A fresh MariaDB server of ``image`` in container ``name`` (an older one of that name is
    removed); returns the name once the server answers."""
    if docker.container.exists(name):
        docker.container.remove(name, force=True)
    docker.run(image, ["sh", "-c", "mkdir -p /run/mysqld && chown mysql /run/mysqld && exec mariadbd --user=mysql"],
               name=name, detach=True, labels={"sitectl.test": "real-schema"})
    deadline = time.monotonic() + 60
    while True:
        rc, out = engine.exec(name, ["mysqladmin", "-u", "root", "ping"])
        if rc == 0:
            return name
        if time.monotonic() > deadline:
            raise AssertionError(f"MariaDB in {name} did not answer: {out}")
        time.sleep(0.3)


def mysql(engine: Engine, container: str, sql: str, db: str = "magentodb") -> str:
    """Run ``sql`` as root in ``db``; the client's output. Fails the test on an error."""
    rc, out = engine.exec(container, ["mysql", "-u", "root", "-N", "-B", db, "-e", sql])
    assert rc == 0, f"{sql[:300]}\n{out}"
    return out


def load_file(engine: Engine, container: str, path: Path, db: str = "magentodb") -> None:
    """Feed the SQL file ``path`` to the ``mysql`` client in ``db`` (copied in first)."""
    docker.copy(str(path), (container, f"/tmp/{path.name}"))
    rc, out = engine.exec(container, ["sh", "-c", 'mysql -u root "$1" < "/tmp/$2"', "sh", db, path.name])
    assert rc == 0, out


def load_magento(engine: Engine, container: str) -> None:
    """Magento 2.4.8's install dump and the tests' seed into ``magentodb`` (with the account its
    triggers name as definer, ``magento@%``, which must exist for them to run)."""
    mysql(engine, container, "CREATE DATABASE magentodb; CREATE USER 'magento'@'%';"
                             "GRANT ALL ON magentodb.* TO 'magento'@'%'", db="mysql")
    load_file(engine, container, SCHEMAS / "magento-2.4.8-install.sql")
    load_file(engine, container, DATA / "magento-seed.sql")


def magento_site() -> Site:
    """A Magento site whose one store is the ``magentodb`` database (as in stacks/webarena.yaml)."""
    return Site.model_validate({"name": "shopping", "kind": "magento-storefront", "image": "x", "container": "x",
                                "ports": ["7770:80"], "env_var": "SHOPPING",
                                "stores": [{"kind": "mysql", "database": "magentodb"}]})


def site_stores(engine: Engine, container: str, site: Site) -> SiteStores:
    return SiteStores(site, container, engine)


def start_postgres(engine: Engine, name: str, settings: dict[str, str] | None = None, image: str = RUNTIME) -> str:
    """A fresh PostgreSQL server (Debian's, of ``image``; socket trust for ``postgres``) in
    container ``name`` (an older one of that name is removed), with server ``settings`` (``-c``
    flags); returns the name once it answers."""
    if docker.container.exists(name):
        docker.container.remove(name, force=True)
    boot = ("mkdir -p /run/postgresql && chown postgres /run/postgresql && "
            "su postgres -c 'B=$(ls -d /usr/lib/postgresql/*/bin | tail -1); $B/initdb -A trust -D /tmp/pg >/dev/null "
            "&& exec $B/postgres -D /tmp/pg -k /run/postgresql -c fsync=off -c full_page_writes=off"
            + "".join(f" -c {k}={v}" for k, v in (settings or {}).items()) + "'")
    docker.run(image, ["sh", "-c", boot], name=name, detach=True, labels={"sitectl.test": "real-schema"})
    deadline = time.monotonic() + 60
    while True:
        rc, out = engine.exec(name, ["psql", "-U", "postgres", "-Atc", "SELECT 1"])
        if rc == 0:
            return name
        if time.monotonic() > deadline:
            raise AssertionError(f"PostgreSQL in {name} did not answer: {out}")
        time.sleep(0.3)


def psql(engine: Engine, container: str, sql: str, db: str) -> str:
    """Run ``sql`` as ``postgres`` in ``db`` (one implicit transaction); the client's output.
    Fails the test on an error."""
    rc, out = engine.exec(container, ["psql", "-U", "postgres", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db,
                                      "-c", sql])
    assert rc == 0, f"{sql[:300]}\n{out}"
    return out


def load_pg_files(engine: Engine, container: str, paths: list[Path], db: str) -> None:
    """Feed the SQL files ``paths``, one after the other in one session (so a session-local
    helper of the first serves the next), to ``psql`` in ``db``; stops at the first error."""
    text = "\n".join(p.read_text() for p in paths)
    rc, out = _run_script(engine, container, db, text, discard_rows=True)
    assert rc == 0 and "ERROR" not in out, out[-3000:]


def load_gitlab(engine: Engine, container: str, db: str) -> None:
    """GitLab's db/structure.sql and the tests' seed (with GitLab's dynamic partitions) into ``db``."""
    psql(engine, container, f"CREATE DATABASE {db}", "postgres")
    load_pg_files(engine, container, [SCHEMAS / "gitlab-structure.sql"], db)
    load_pg_files(engine, container, [DATA / "pg-seed-helper.sql", DATA / "gitlab-seed.sql"], db)


def load_postmill(engine: Engine, container: str, db: str) -> None:
    """Postmill's 112 migrations, in order, and the tests' seed into ``db``."""
    psql(engine, container, f"CREATE DATABASE {db}", "postgres")
    load_pg_files(engine, container, [SCHEMAS / "postmill-migrations.sql"], db)
    load_pg_files(engine, container, [DATA / "pg-seed-helper.sql", DATA / "postmill-seed.sql"], db)


def pg_site(name: str, db: str) -> Site:
    """A site whose one store is the PostgreSQL database ``db`` (as in stacks/webarena.yaml)."""
    kind = "gitlab" if name == "gitlab" else "postmill"
    return Site.model_validate({"name": name, "kind": kind, "image": "x", "container": "x", "ports": ["8023:80"],
                                "env_var": name.upper(),
                                "stores": [{"kind": "postgres", "database": db, "client": ["psql", "-U", "postgres"]}]})


def pg_state(engine: Engine, container: str, db: str) -> str:
    """The database as text, independent of sitectl: ``pg_dump --schema-only`` of everything
    but sitectl's own schemas (its \\restrict lines carry a random key each time, so they are
    left out), then every table's rows (``COPY`` text, sorted by the row's text; tables and
    partitions from ``pg_tables``, not sitectl's queries), then every sequence's
    ``last_value``/``is_called`` read by its own query."""
    import threading  # noqa: PLC0415

    dumped: list = []  # the schema dump runs while the rows are read (two sessions, same state)
    dumper = threading.Thread(target=lambda: dumped.append(engine.exec(
        container, ["pg_dump", "-U", "postgres", "--schema-only", "-N", "sitectl", "-N", "sitectl_*", db])))
    dumper.start()
    tables = psql(engine, container, "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables "
                                     "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') "
                                     "AND schemaname NOT LIKE 'sitectl%' ORDER BY 1", db).splitlines()
    seqs = psql(engine, container, "SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences "
                                   "WHERE schemaname NOT LIKE 'sitectl%' ORDER BY 1", db).splitlines()
    def lit(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    script = "".join(f"SELECT '== ' || {lit(t)};\nCOPY (SELECT x FROM ONLY {t} x ORDER BY x::text COLLATE \"C\") TO STDOUT;\n"
                     for t in tables)
    script += "".join(f"SELECT {lit(q)}, last_value, is_called FROM {q};\n" for q in seqs)
    rc, out = _run_script(engine, container, db, script)
    dumper.join()
    assert rc == 0, out[-2000:]
    rc, schema = dumped[0]
    assert rc == 0, schema[-2000:]
    schema = "\n".join(line for line in schema.splitlines() if not line.startswith(("\\restrict", "\\unrestrict")))
    return schema + "\n-- rows and sequences\n" + out


def _run_script(engine: Engine, container: str, db: str, script: str, discard_rows: bool = False) -> tuple[int, str]:
    import tempfile  # noqa: PLC0415

    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    try:
        docker.copy(f.name, (container, "/tmp/state.sql"))
    finally:
        Path(f.name).unlink()
    return engine.exec(container, ["psql", "-U", "postgres", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db,
                                   "-f", "/tmp/state.sql"] + (["-o", "/dev/null"] if discard_rows else []))


def reset(stores: SiteStores, name: str = "golden") -> tuple[str, list[str], list[str]]:
    """One reset of the site's stores as ``sitectl reset`` makes it: detect, then a delta (or a
    full restore when a store asks for one) and its closing check. Returns ``(path, items
    found, items still changed)``: path ``nothing``, ``delta`` or ``full``."""
    found = stores.changes(name)
    if not found:
        return "nothing", [], []
    path = "full" if found.needs_full else "delta"
    left = stores.restore(name, None if found.needs_full else found)
    return path, found.items, left


def mysql_state(engine: Engine, container: str, db: str = "magentodb") -> str:
    """The database as text, independent of sitectl: ``mysqldump`` without triggers (sitectl's
    own would differ in order after a rebuild), rows in primary-key order, one ``INSERT`` per
    row, with routines and events; then the application's triggers from
    ``information_schema.TRIGGERS`` in name order."""
    # --force: a view left invalid by a mutation (its table dropped) is an error in the text,
    # which then differs from golden's, not a failed test.
    rc, dump = engine.exec(container, [
        "mysqldump", "-u", "root", "--force", "--skip-dump-date", "--skip-comments", "--order-by-primary",
        "--skip-extended-insert", "--skip-triggers", "--routines", "--events", "--single-transaction", db])
    assert rc in (0, 2), dump[-2000:]
    triggers = mysql(engine, container,
                     "SELECT trigger_name, event_object_table, action_timing, event_manipulation, action_order, "
                     "sql_mode, definer, action_statement FROM information_schema.triggers "
                     f"WHERE trigger_schema = '{db}' AND trigger_name NOT LIKE 'sitectl\\\\_%' ORDER BY trigger_name",
                     db="information_schema")
    return dump + "\n-- triggers\n" + triggers


def diff(golden: str, now: str, limit: int = 60) -> str:
    """The first lines of a unified diff of two :func:`mysql_state` texts."""
    lines = list(difflib.unified_diff(golden.splitlines(), now.splitlines(), "golden", "after reset", lineterm="", n=1))
    return "\n".join(lines[:limit]) + ("\n..." if len(lines) > limit else "")


def pg_mutate_and_reset(engine: Engine, container: str, stores: SiteStores, golden: str, db: str, mutation: str,
                        sql: str, expected: str) -> None:
    """Make the mutation, reset, and assert: something was found, exactly golden by :func:`pg_state`, nothing left
    for the closing check, the ``expected`` path (``delta`` or ``full``), a second reset finds
    nothing."""
    psql(engine, container, sql, db)
    path, found, left = reset(stores)
    assert path != "nothing", f"{mutation}: the reset found nothing (the mutation changed nothing, or it was missed)"
    now = pg_state(engine, container, db)
    assert now == golden, f"{mutation}: not golden after the reset ({path}; found {found}):\n{diff(golden, now)}"
    assert left == [], f"{mutation}: the closing check still sees {left}"
    assert path == expected, f"{mutation}: took the {path} path ({found})"
    assert reset(stores) == ("nothing", [], []), "a second reset finds something"


# -- what a diff must list, from dumps (docs/diff.md; tests/snapshots/test_diff.py) --------------
def by_table(dump: str, insert: str) -> dict[str, Counter]:
    """The INSERT lines of a dump (pattern ``insert`` captures the table), counted per table."""
    tables: dict[str, Counter] = {}
    for line in dump.splitlines():
        m = re.match(insert, line)
        if m:
            tables.setdefault(m.group(1), Counter())[line] += 1
    return tables


def line_changes(before: dict[str, Counter], after: dict[str, Counter], skip=frozenset()) -> dict[str, tuple[int, int]]:
    """``{table: (lines removed, lines added)}`` of the tables whose rows differ."""
    out = {}
    for t in set(before) | set(after):
        if t in skip:
            continue
        b, a = before.get(t, Counter()), after.get(t, Counter())
        gone, new = sum((b - a).values()), sum((a - b).values())
        if gone or new:
            out[t] = (gone, new)
    return out


def diff_changes(store: dict) -> dict[str, tuple[int, int]]:
    """The same shape from a diff's store entry: updated rows count on both sides."""
    out = {}
    for t in store["tables"]:
        ins, upd, dele = (len(t.get(k, [])) for k in ("inserted", "updated", "deleted"))
        if ins or upd or dele:
            out[t["table"]] = (dele + upd, ins + upd)
    return out


def pg_rows(state: str) -> dict[str, Counter]:
    """The rows of a :func:`pg_state` text (``COPY`` lines under ``== table``), counted per table."""
    tables: dict[str, Counter] = {}
    current = None
    for line in state.split("\n-- rows and sequences\n", 1)[-1].splitlines():
        if line.startswith("== "):
            current = line[3:]
            tables.setdefault(current, Counter())
        elif current is not None and not re.match(r"^\S+\|-?\d+\|[tf]$", line):  # not a sequence's line
            tables[current][line] += 1
    return tables


def mysql_rows(state: str) -> dict[str, Counter]:
    """The rows of a :func:`mysql_state` text (one ``INSERT`` line a row), counted per table."""
    return by_table(state, r"INSERT INTO `([^`]+)` VALUES ")
