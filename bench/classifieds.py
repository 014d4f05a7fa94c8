"""Benchmark of resetting VisualWebArena's classifieds site: sitectl's reset against the site's
own reset endpoint (``POST /index.php?page=reset`` with its token, what VWA's harness calls
before a task that needs it), in one run, on the mini stack's replica at any scale.

Each repetition makes a typical task's change through the site's pages, as Blake Sullivan
(``tests/actions/classifieds.py``: he edits a listing's price and description, and comments on
another listing), then resets; then the same with one row added to the MyISAM descriptions
table, which the store restores whole. Both sides are timed around the call only. After every
reset, ``CHECKSUM TABLE`` of the site's main tables (queried in the database container with its
own client, no sitectl code) must equal golden's, or the run stops.

* **sitectl**: ``sitectl.snapshots.reset`` (what ``sitectl reset classifieds`` runs).
* **vwa** (the baseline): the replica's ``page=reset`` endpoint, which runs
  ``classifieds_restore.sql`` as VWA's does (Blake's listings put back;
  docs/contracts/classifieds.md). Whether the tables then equal golden is recorded
  (``equals_golden``): the endpoint restores only what its SQL file names, so a task's comment
  stays. sitectl then resets (untimed) before the next repetition.

Output: JSON with every time, the medians, the ratio and the sizes.

    python bench/classifieds.py --scale full --instance 11 --reps 5 > bench/results/classifieds-full.json
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sitectl import snapshots  # noqa: E402
from sitectl.engine import DockerEngine  # noqa: E402
from sitectl.ops import lifecycle  # noqa: E402
from sitectl.progress import Reporter  # noqa: E402
from sitectl.stack.target import resolve_target  # noqa: E402
from tests.actions import classifieds as cf  # noqa: E402

BLAKE = ("blake.sullivan@gmail.com", "Password.123")
TABLES = "oc_t_item, oc_t_item_description, oc_t_item_resource, oc_t_item_comment, oc_t_user, oc_t_item_stats"


def checksums(engine, db: str) -> str:
    rc, out = engine.exec(db, ["mysql", "-N", "-uroot", "-ppassword", "osclass", "-e", f"CHECKSUM TABLE {TABLES}"])
    if rc != 0:
        raise SystemExit(f"CHECKSUM TABLE failed: {out[-300:]}")
    return "\n".join(line for line in out.splitlines() if line.startswith("osclass."))


def task_change(base: str, n: int) -> None:
    """A typical task's writes: Blake edits his listing's price and description, comments."""
    s = cf.session(base, *BLAKE)
    cf.edit_ad(s, base, 84144, price=str(25000 + n), description=f"Asking ${25000 + n}")
    cf.comment(s, base, 12085, "Question", f"Still available? ({n})", rating=4)


def myisam_change(engine, db: str, n: int) -> None:
    rc, out = engine.exec(db, ["mysql", "-uroot", "-ppassword", "osclass", "-e",
                               "INSERT INTO oc_t_item_description (fk_i_item_id, fk_c_locale_code, s_title, "
                               f"s_description) VALUES (84143, 'x{n % 10}_XX', 't', 'd')"])
    if rc != 0:
        raise SystemExit(f"INSERT failed: {out[-300:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=["tiny", "full"], default="tiny")
    ap.add_argument("--instance", type=int, default=11)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--baseline-reps", type=int, default=2)
    a = ap.parse_args()
    engine = DockerEngine()
    target = resolve_target("mini", host="127.0.0.1", instance=a.instance, scale=a.scale)
    site = target.stack.sites["classifieds"]
    db, base = target.service_container(site, "db"), target.url(site)
    t0 = time.perf_counter()
    lifecycle.up(target, [site], engine, Reporter())
    up_s = time.perf_counter() - t0
    snapshots.reset(target, [site], engine)  # golden as a reset leaves it (up's probes logged in)
    golden = checksums(engine, db)
    token = site.environment["RESET_TOKEN"]

    def timed_reset(kind: str) -> dict:
        t = time.perf_counter()
        (r,) = snapshots.reset(target, [site], engine)
        s = time.perf_counter() - t
        if checksums(engine, db) != golden:
            raise SystemExit(f"sitectl reset after {kind}: the tables differ from golden")
        return {"seconds": round(s, 3), "method": r.method, "changed": r.changed}

    out = {"sitectl_task": [], "sitectl_myisam": [], "vwa_endpoint": []}
    for n in range(a.reps):
        task_change(base, n)
        out["sitectl_task"].append(timed_reset("a task's change"))
        myisam_change(engine, db, n)
        out["sitectl_myisam"].append(timed_reset("a MyISAM row"))
    for n in range(a.baseline_reps):
        task_change(base, 100 + n)
        t = time.perf_counter()
        r = requests.post(f"{base}/index.php?page=reset", data={"token": token}, timeout=3600)
        s = time.perf_counter() - t
        if r.status_code != 200 or "SQL file executed successfully." not in r.text:
            raise SystemExit(f"page=reset failed: {r.status_code} {r.text[:300]}")
        out["vwa_endpoint"].append({"seconds": round(s, 3), "equals_golden": checksums(engine, db) == golden})
        snapshots.reset(target, [site], engine)  # untimed: the next repetition starts from golden
        if checksums(engine, db) != golden:
            raise SystemExit("after page=reset and a reset: the tables differ from golden")
    med = {k: statistics.median(x["seconds"] for x in v) for k, v in out.items()}
    rc, rows = engine.exec(db, ["mysql", "-N", "-uroot", "-ppassword", "osclass", "-e", "SELECT COUNT(*) FROM oc_t_item"])
    print(json.dumps({
        "bench": "classifieds", "scale": a.scale, "instance": a.instance, "listings": int(rows.split()[-1]),
        "host": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "up_seconds": round(up_s, 1), "runs": out,
        "median_seconds": {k: round(v, 3) for k, v in med.items()},
        "ratio_vwa_endpoint_to_sitectl_task": round(med["vwa_endpoint"] / med["sitectl_task"], 1),
        "command": f"python bench/classifieds.py --scale {a.scale} --instance {a.instance} --reps {a.reps}",
    }, indent=1))


if __name__ == "__main__":
    main()
