"""Benchmark of the MySQL store on Magento 2.4.8's own schema (issue 15's targets).

A scratch MariaDB server (the replica runtime image: Debian's MariaDB 10.11) gets
``../shared/data/schemas/magento-2.4.8-install.sql`` (361 tables, 380 foreign keys, 66
indexer triggers) and the tests' seed (``tests/stores/data/magento-seed.sql``); golden is
taken through ``SiteStores``, as a site's snapshot is. Then, each ``--reps`` times:

* a reset with nothing changed;
* per task mutation (SQL as Magento issues it; its foreign keys and indexer triggers do the
  rest): mutate, then time the reset (detect, delta, further rounds, closing check);
* a full restore (every store, as after lost tracking).

After each measurement the database is compared with golden by ``mysqldump`` (the tests'
independent check, ``tests/stores/real_schema.py``); a mismatch is counted and fails the run.
Every timing is the real code path (``sitectl.stores.site.SiteStores``); one ``docker exec``
with a bare ``SELECT 1`` is timed too, as the floor of any round trip on this machine.

Output: JSON with the median and max per measurement, the path taken and the mismatches, in
``bench/results/real-schema-magento.json``.

    python bench/real_schema.py --reps 5
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sitectl.engine import DockerEngine  # noqa: E402
from tests.stores import real_schema as rs  # noqa: E402

CONTAINER = "sitectl-bench-magento-schema"
#: Issue 15's targets for the Magento store, seconds (full scale for deltas; tiny for the full restore).
TARGETS = {"nothing changed": 0.1, "delta": 0.5, "full restore": 3.0}
MUTATIONS = {
    "edit a product's sku (indexer triggers)": "UPDATE catalog_product_entity SET sku = CONCAT(sku, '-x') WHERE entity_id = 5",
    "edit stock": "UPDATE cataloginventory_stock_item SET qty = qty - 1 WHERE product_id = 9",
    "cancel an order": "UPDATE sales_order SET state = 'canceled', status = 'canceled' WHERE entity_id = 2",
    "register a customer": "INSERT INTO customer_entity (website_id, email, group_id, store_id, firstname, lastname) "
                           "VALUES (1, 'bench@example.com', 1, 1, 'B', 'C')",
    "delete an order (cascades)": "DELETE FROM sales_order WHERE entity_id = 1",
    "delete a product (cascades, indexer triggers)": "DELETE FROM catalog_product_entity WHERE entity_id = 5",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/real-schema-magento.json")
    a = ap.parse_args()
    if a.reps < 1:
        ap.error("--reps: give 1 or more")
    engine = DockerEngine()
    c = rs.start_mariadb(engine, CONTAINER)
    try:
        rs.load_magento(engine, c)
        stores = rs.site_stores(engine, c, rs.magento_site())
        t0 = time.perf_counter()
        stores.snapshot("golden")
        snapshot_s = time.perf_counter() - t0
        golden = rs.mysql_state(engine, c)
        results, mismatches = {}, 0

        def measure(label: str, mutate, run) -> None:
            nonlocal mismatches
            times, paths = [], []
            for _ in range(a.reps):
                mutate()
                t = time.perf_counter()
                path = run()
                times.append(time.perf_counter() - t)
                paths.append(path)
                if rs.mysql_state(engine, c) != golden:
                    mismatches += 1
                    print(f"{label}: NOT golden after the reset", file=sys.stderr)
            results[label] = {"n": a.reps, "median_s": round(statistics.median(times), 3),
                              "max_s": round(max(times), 3), "paths": sorted(set(paths))}
            print(f"{label:55} {results[label]['median_s']:.3f} s  {sorted(set(paths))}", file=sys.stderr)

        floor = []
        for _ in range(a.reps):
            t = time.perf_counter()
            engine.exec(c, ["mysql", "-u", "root", "-N", "-e", "SELECT 1"])
            floor.append(time.perf_counter() - t)
        measure("nothing changed", lambda: None, lambda: rs.reset(stores)[0])
        for label, sql in MUTATIONS.items():
            measure(label, lambda sql=sql: rs.mysql(engine, c, sql), lambda: rs.reset(stores)[0])
        measure("full restore", lambda: None, lambda: (stores.restore("golden", None), "full")[1])
    finally:
        rs.docker.container.remove(CONTAINER, force=True)
    deltas = [r["median_s"] for k, r in results.items() if k in MUTATIONS]
    targets = {
        "nothing changed": {"target_s": TARGETS["nothing changed"], "median_s": results["nothing changed"]["median_s"]},
        "delta (worst mutation, tiny scale here)": {"target_s": TARGETS["delta"], "median_s": max(deltas)},
        "full restore (tiny)": {"target_s": TARGETS["full restore"], "median_s": results["full restore"]["median_s"]},
    }
    for t in targets.values():
        t["met"] = t["median_s"] <= t["target_s"]
    report = {"benchmark": "real-schema-magento", "command": " ".join(["python", "bench/real_schema.py", *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M"),
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "loadavg": [round(x, 2) for x in os.getloadavg()]},
              "server": "MariaDB 10.11 (Debian bookworm, sitectl/replica-runtime:0.1)",
              "schema": "Magento 2.4.8 install dump + tests/stores/data/magento-seed.sql",
              "snapshot_s": round(snapshot_s, 2),
              "exec_floor_median_s": round(statistics.median(floor), 3),
              "results": results, "mismatches": mismatches, "targets": targets}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
