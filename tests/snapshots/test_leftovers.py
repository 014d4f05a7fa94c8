"""Leftover snapshot copies (issue 18, item 7): copies the containers hold that no manifest
lists (a `snapshot create` killed before its manifest was written) are listed by `snapshot list
--all` and removed by `snapshot prune`; listed snapshots and names that are not snapshot names
are never touched. Real containers of the mini stack (instance 7): MariaDB, PostgreSQL,
Elasticsearch's stand-in, Redis and files stores."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sitectl import snapshots
from sitectl.stack.target import resolve_target
from sitectl.stores.site import SiteStores
from tests.conftest import SCRATCH_INSTANCE, cli

ROOT = Path(__file__).resolve().parents[2]
HOLD = f"""
import sys, time
from sitectl.snapshots.journal import instance_lock
from sitectl.stack.target import resolve_target
with instance_lock(resolve_target(sys.argv[1], host="127.0.0.1", instance={SCRATCH_INSTANCE}), "snapshot create killed_one"):
    print("held", flush=True)
    time.sleep(120)
"""

SITES = ["reddit", "shopping", "gitlab"]


def sh(container: str, script: str) -> str:
    return subprocess.run(["docker", "exec", container, "sh", "-c", script], capture_output=True, text=True,
                          check=True).stdout


def test_killed_snapshot_copies_are_listed_and_pruned_and_nothing_else(scratch_stack, engine, tmp_path, monkeypatch):
    stack = str(scratch_stack(f"extends: {ROOT / 'stacks/mini.yaml'}\n"))
    args = ["--stack", stack, "--instance", str(SCRATCH_INSTANCE)]
    code, out = cli("up", *SITES, *args)
    assert code == 0, out
    target = resolve_target(stack, host="127.0.0.1", instance=SCRATCH_INSTANCE)
    # A `snapshot create killed_one` that died after its copies and before its manifest: the
    # copies of every store exist, no manifest names them (snapshot_site is what create runs
    # per site before it writes the manifest).
    for s in SITES:
        snapshots.snapshot_site(target, target.stack.sites[s], "killed_one", engine)
    # Things in the copies' places that are not snapshot names: never offered, never removed.
    forum, shop = target.container(target.stack.sites["reddit"]), target.container(target.stack.sites["shopping"])
    sh(forum, "mkdir -p '/var/lib/sitectl/snapshots/files/Not A Name' '/var/lib/sitectl/snapshots/files/..x'")
    sh(forum, "psql -U postgres postmill -qc 'CREATE SCHEMA \"sitectl_s_Bad;Name\"'")
    sh(shop, "mysql -uroot -p1234567890 -e 'CREATE DATABASE `sitectl_s_UPPER`'")
    # A name holding a newline must read as one name (none), not as two that do not exist.
    sh(forum, "psql -U postgres postmill -qc 'CREATE SCHEMA \"sitectl_s_nl\nsitectl_s_keepy\"'")
    sh(forum, "mkdir '/var/lib/sitectl/snapshots/files/bad\ngolden2'")
    gl = target.container(target.stack.sites["gitlab"])
    sh(gl, "gitlab-redis-cli -n 15 SET 'sitectl:ghost\nx' 1")
    # Elasticsearch copies made before the snapshot's record was written: no record names them.
    sh(shop, "curl -sf -XPUT -H 'Content-Type: application/json' 127.0.0.1:9200/sitectl-orphan_es-magento2_x -d '{}'")

    code, res = cli("snapshot", "list", "--all", *args, "--json")
    assert code == 0, res
    assert [s["name"] for s in res["snapshots"]] == ["golden"], res
    found = {(r["site"], r["store"].split(":")[0], r["name"]) for r in res["leftovers"]}
    assert found == {("reddit", "postgres", "killed_one"), ("reddit", "files", "killed_one"),
                     ("shopping", "mysql", "killed_one"), ("shopping", "files", "killed_one"),
                     ("shopping", "elasticsearch", "killed_one"),
                     ("gitlab", "postgres", "killed_one"), ("gitlab", "redis", "killed_one"),
                     ("gitlab", "files", "killed_one"), ("shopping", "elasticsearch", "orphan_es")}, res["leftovers"]
    assert all("no manifest" in r["why"] for r in res["leftovers"]), res["leftovers"]

    # While a `snapshot create killed_one` holds the instance's lock, its copies are said to be
    # in the making, not left over (another process holds the lock, as that command would).
    hold = subprocess.Popen([sys.executable, "-c", HOLD, stack], stdout=subprocess.PIPE, text=True)
    try:
        assert hold.stdout.readline().strip() == "held"
        code, res = cli("snapshot", "list", "--all", *args, "--json")
        assert code == 0 and all(("`snapshot create killed_one` is running now" in r["why"]) == (r["name"] == "killed_one")
                                 for r in res["leftovers"]), res
    finally:
        hold.kill()
        hold.wait()

    # With the manifests elsewhere (an empty state folder), every copy would look unlisted:
    # prune refuses and removes nothing.
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path / "elsewhere"))
    code, res = cli("snapshot", "prune", *args, "--json")
    assert code != 0 and "no golden snapshot manifest" in res["error"] and "SITECTL_SNAPSHOTS_DIR" in res["error"], res
    monkeypatch.undo()
    gitlab = target.stack.sites["gitlab"]
    stores = {st.kind: st for st in SiteStores(gitlab, target.container(gitlab), engine)}
    assert stores["redis"].exists("killed_one") and stores["postgres"].exists("killed_one")

    code, res = cli("snapshot", "prune", *args, "--json")
    assert code == 0, res
    assert {(r["site"], r["store"].split(":")[0], r["name"]) for r in res["removed"]} == found
    code, res = cli("snapshot", "list", "--all", *args, "--json")
    assert code == 0 and res["leftovers"] == [] and [s["name"] for s in res["snapshots"]] == ["golden"], res
    # Checked by other means than the stores' own listing: the copies are gone, the rest stays.
    assert "sitectl_s_killed_one" not in sh(forum, "psql -U postgres postmill -Atc 'SELECT nspname FROM pg_namespace'")
    assert "sitectl_s_Bad;Name" in sh(forum, "psql -U postgres postmill -Atc 'SELECT nspname FROM pg_namespace'")
    dbs = sh(shop, "mysql -uroot -p1234567890 -N -e 'SHOW DATABASES'").split()
    assert "sitectl_s_killed_one" not in dbs and "sitectl_s_UPPER" in dbs and "sitectl_s_golden" in dbs
    F = "/var/lib/sitectl/snapshots/files"
    assert sh(forum, f"cd {F} && test -d 'Not A Name' && test -d ..x && test -d 'bad\ngolden2' && test -d golden "
                     "&& ! test -e killed_one && echo kept").strip() == "kept"
    assert "sitectl_s_nl" in sh(forum, "psql -U postgres postmill -Atc 'SELECT nspname FROM pg_namespace'")
    assert sh(gl, "gitlab-redis-cli -n 15 KEYS 'sitectl:killed_one*'").strip() == ""
    assert "sitectl-orphan_es" not in sh(shop, "curl -sf '127.0.0.1:9200/_cat/indices?h=index'")
    # Golden is whole: a reset and a deep check pass.
    code, res = cli("reset", *SITES, *args, "--json")
    assert code == 0, res
    code, res = cli("verify", "--deep", *SITES, *args, "--json")
    assert code == 0 and res["ok"], res
