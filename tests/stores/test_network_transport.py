"""SQL stores over the network: the same store logic driven through psycopg and
mysql-connector-python from a process beside the site, not through ``docker exec``.

The process beside the site is a real sidecar container sharing the site's network namespace
(``docker run --network container:SITE``), running this checkout's code with this test's own
Python packages mounted read-only; it connects to 127.0.0.1 with a password account made for
the test (and dropped afterwards). The sidecar script is ``tests/beside/store_roundtrip.py``.
What the sidecar made is then read back through ``docker exec``: both ways of reaching a
database must see the same snapshot and the same state. Nothing is mocked.
"""
from __future__ import annotations

import json
import secrets
import sys
import sysconfig
from pathlib import Path

import pytest
from python_on_whales import docker

from sitectl import snapshots
from sitectl.sites.jobs import jobs_paused
from sitectl.stores import stores_for

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = "sitectl/replica-runtime:0.1"  # Debian's python3 3.11, mariadb and postgresql clients
ACCOUNT = "sitectl_net"

CASES = {
    "postgres": ("reddit", "postmill", 5432),
    "mysql": ("shopping", "magentodb", 3306),
}


def _grant(engine, container: str, kind: str, password: str) -> None:
    _revoke(engine, container, kind)
    if kind == "postgres":
        argv = ["psql", "-U", "postgres", "-v", "ON_ERROR_STOP=1",
                "-c", f"CREATE ROLE {ACCOUNT} LOGIN SUPERUSER PASSWORD '{password}'"]
    else:
        argv = ["mysql", "-uroot", "-p1234567890", "-e",
                f"DROP USER IF EXISTS '{ACCOUNT}'@'127.0.0.1'; CREATE USER '{ACCOUNT}'@'127.0.0.1' IDENTIFIED BY "
                f"'{password}'; GRANT ALL PRIVILEGES ON *.* TO '{ACCOUNT}'@'127.0.0.1' WITH GRANT OPTION;"]
    rc, out = engine.exec(container, argv)
    assert rc == 0, out


def _revoke(engine, container: str, kind: str) -> None:
    if kind == "postgres":  # objects the account made (a snapshot schema) go to postgres first
        argv = ["psql", "-U", "postgres", "-d", CASES[kind][1], "-c",
                f"DO $d$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ACCOUNT}') THEN "
                f"REASSIGN OWNED BY {ACCOUNT} TO postgres; DROP OWNED BY {ACCOUNT}; DROP ROLE {ACCOUNT}; END IF; END $d$"]
    else:
        argv = ["mysql", "-uroot", "-p1234567890", "-e", f"DROP USER IF EXISTS '{ACCOUNT}'@'127.0.0.1'"]
    rc, out = engine.exec(container, argv)
    assert rc == 0, out


@pytest.mark.parametrize("kind", sorted(CASES))
def test_sql_store_over_the_network_from_a_sidecar(mini, engine, kind):
    site_name, database, port = CASES[kind]
    site = mini.stack.sites[site_name]
    container = mini.container(site)
    assert sys.version_info[:2] == (3, 11), "the sidecar runs Debian's python3 3.11 with this venv's packages"
    password = secrets.token_hex(16)
    _grant(engine, container, kind, password)
    # The site's own jobs (Magento's cron writes cron_schedule each minute) are paused while the
    # sidecar works and the state is read back: the comparisons below are of whole states.
    with jobs_paused(engine, container, site):
        _roundtrip(mini, engine, kind, site, container, database, port, password)
    deep = snapshots.verify_deep(mini, [site], engine)
    assert all(d["ok"] for d in deep), deep


def _roundtrip(mini, engine, kind, site, container, database, port, password) -> None:
    try:
        out = docker.run(
            RUNTIME, ["python3", "/src/tests/beside/store_roundtrip.py", kind, database, str(port), ACCOUNT],
            networks=[f"container:{container}"], remove=True,
            volumes=[(str(ROOT), "/src", "ro"), (sysconfig.get_paths()["purelib"], "/venv", "ro")],
            envs={"PYTHONPATH": "/src:/venv", "SITECTL_NET_PASSWORD": password})
        res = json.loads(out.strip().splitlines()[-1])
        assert res["where"].startswith(("postgresql://", "mysql://")) and "127.0.0.1" in res["where"]
        assert password not in out  # the password never shows in what the sidecar prints
        assert res["unchanged_items"] == []
        rows, ddl = res["groups"]
        # Row changes: detected exactly and restored as a delta. On Magento's structure the
        # product update also goes through its indexer triggers into their changelogs.
        mutated = [c for c in rows["changed"] if "_cl (" not in c]
        assert len(mutated) == 3 and not rows["full"], rows
        if kind == "mysql":
            assert {c.split(" ")[1] for c in rows["changed"] if "_cl (" in c} == {
                "catalog_product_price_cl", "catalogrule_product_cl", "catalogsearch_fulltext_cl"}, rows
        # TRUNCATE, ALTER, CREATE TABLE and a counter: all detected.
        assert len(ddl["changed"]) == 4, ddl
        # One round: what Magento's triggers write while the rows go back is caught up in the
        # same transaction (MysqlStore._catch_up_sql), over the network session too.
        assert rows["rounds"] == 1 and ddl["rounds"] == 1, res["groups"]
        for g in (rows, ddl):
            assert g["left"] == [] and g["equal"], g
        assert res["exists_after_drop"] is False and res["imported_equal"] is True

        # The same snapshot and state, read through docker exec.
        (store,) = [st for st in stores_for(site, container, engine) if st.kind == kind]
        assert store.fingerprint("netcheck") == res["snapshot_fingerprint"]
        assert store.fingerprint(None) == res["snapshot_fingerprint"]
        assert store.changes("netcheck").items == []
    finally:
        for st in stores_for(site, container, engine):
            if st.kind == kind:
                st.drop("netcheck")
        _revoke(engine, container, kind)
        # The change log now counts from "netcheck": the reset notices and restores fully.
        snapshots.reset(mini, [site], engine)
