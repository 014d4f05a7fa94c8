"""The real applications' schemas in scratch database servers, for the stores' tests.

A scratch server is a container of the replica runtime image (Debian's MariaDB and
PostgreSQL servers) with one of ``../shared/data/schemas/`` loaded as it is, a small seed of
this project's on top (``tests/stores/data/``), and the stores driven through
:class:`sitectl.stores.site.SiteStores` exactly as a site's reset drives them.

The proof of each reset is :func:`mysql_state`: the database as ``mysqldump`` prints it (rows
in primary-key order, table definitions with their AUTO_INCREMENT counters, views, routines and
events) plus the application's triggers as ``information_schema`` lists them. It shares no
code with sitectl's change tracking or fingerprints.
"""
from __future__ import annotations

import difflib
import time
from pathlib import Path

from python_on_whales import docker

from sitectl.engine import Engine
from sitectl.stack.model import Site
from sitectl.stores.site import SiteStores

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT.parent / "shared" / "data" / "schemas"
DATA = Path(__file__).resolve().parent / "data"
RUNTIME = "sitectl/replica-runtime:0.1"  # Debian bookworm: MariaDB 10.11, PostgreSQL 15


def start_mariadb(engine: Engine, name: str) -> str:
    """A fresh MariaDB server in container ``name`` (an older one of that name is removed);
    returns the name once the server answers."""
    if docker.container.exists(name):
        docker.container.remove(name, force=True)
    docker.run(RUNTIME, ["sh", "-c", "mkdir -p /run/mysqld && chown mysql /run/mysqld && exec mariadbd --user=mysql"],
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
