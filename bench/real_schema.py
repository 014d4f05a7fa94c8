"""Benchmark of the SQL stores on the real applications' own schemas (issue 15's targets).

``--app magento``: a scratch MariaDB server (``--servers bookworm``, the default: the replica
runtime image, Debian's MariaDB 10.11; ``--servers bullseye``: 10.5, PostgreSQL 13) gets ``../shared/data/schemas/magento-2.4.8-install.sql`` (361 tables, 380 foreign
keys, 66 indexer triggers) and the tests' seed (``tests/stores/data/magento-seed.sql``).
``--app gitlab``: a scratch PostgreSQL 15 server (GitLab omnibus' lock settings) gets GitLab's
``db/structure.sql`` (815 tables, 193 partitions) and ``tests/stores/data/gitlab-seed.sql``.
``--app postmill``: PostgreSQL 15 with Postmill's 112 migrations and
``tests/stores/data/postmill-seed.sql``. Golden is taken through ``SiteStores``, as a site's
snapshot is. Then, each ``--reps`` times:

* a reset with nothing changed;
* per task mutation (SQL as Magento issues it; its foreign keys and indexer triggers do the
  rest): mutate, then time the reset (detect, delta, further rounds, closing check);
* a full restore (every store, as after lost tracking).

After each measurement the database is compared with golden by ``mysqldump`` or ``pg_dump``
and ``COPY`` (the tests' independent checks, ``tests/stores/real_schema.py``); a mismatch is
counted and fails the run. Every timing is the real code path
(``sitectl.stores.site.SiteStores``); one ``docker exec`` with a bare ``SELECT 1`` is timed
too, as the floor of any round trip on this machine.

Output: JSON with the median and max per measurement, the path taken and the mismatches, in
``bench/results/real-schema-APP.json``.

    python bench/real_schema.py --app magento --reps 5
    python bench/real_schema.py --app gitlab --reps 5
    python bench/real_schema.py --app postmill --reps 5
    python bench/real_schema.py --app gitlab --servers bullseye --out bench/results/real-schema-gitlab-pg13.json
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

#: Issue 15's targets, seconds (full scale for deltas; tiny for Magento's full restore).
TARGETS = {"nothing changed": 0.1, "delta": 0.5, "full restore": 3.0}
MAGENTO = {
    "edit a product's sku (indexer triggers)": "UPDATE catalog_product_entity SET sku = CONCAT(sku, '-x') WHERE entity_id = 5",
    "edit stock": "UPDATE cataloginventory_stock_item SET qty = qty - 1 WHERE product_id = 9",
    "cancel an order": "UPDATE sales_order SET state = 'canceled', status = 'canceled' WHERE entity_id = 2",
    "register a customer": "INSERT INTO customer_entity (website_id, email, group_id, store_id, firstname, lastname) "
                           "VALUES (1, 'bench@example.com', 1, 1, 'B', 'C')",
    "delete an order (cascades)": "DELETE FROM sales_order WHERE entity_id = 1",
    "delete a product (cascades, indexer triggers)": "DELETE FROM catalog_product_entity WHERE entity_id = 5",
}
GITLAB = {
    "open an issue": "INSERT INTO issues (title, project_id, author_id, iid, namespace_id, state_id, work_item_type_id, "
                     "created_at, updated_at) VALUES ('Bench', 1, 2, 9, 4, 1, 1, now(), now())",
    "comment on an issue": "INSERT INTO notes (note, noteable_type, noteable_id, project_id, author_id) "
                           "VALUES ('+1', 'Issue', 2, 1, 1)",
    "close an issue": "UPDATE issues SET state_id = 2, closed_at = now() WHERE id = 2",
    "delete a project (cascades, loose-FK trigger)": "DELETE FROM projects WHERE id = 2",
    "a row moves between partitions": "UPDATE verification_codes SET created_at = '2026-12-05' WHERE visitor_id_code = 'v1'",
    "partition manager adds a partition": "CREATE TABLE gitlab_partitions_dynamic.verification_codes_202701 PARTITION OF "
                                          "verification_codes FOR VALUES FROM ('2027-01-01') TO ('2027-02-01')",
}
POSTMILL = {
    "submit a post": "INSERT INTO submissions (id, forum_id, user_id, title, body, timestamp, media_type, ranking, "
                     "last_active, comment_count, net_score, sticky, user_flag, visibility) VALUES "
                     "(nextval('submissions_id_seq'), 1, 2, 'Bench', 'Body', now(), 'url', 1, now(), 0, 0, false, 0, 'visible')",
    "upvote a post": "INSERT INTO submission_votes (id, user_id, submission_id, upvote, timestamp) VALUES "
                     "(nextval('submission_votes_id_seq'), 2, 3, true, now()); "
                     "UPDATE submissions SET net_score = net_score + 1 WHERE id = 3",
    "edit a post's title": "UPDATE submissions SET title = 'Edited' WHERE id = 1",
    "delete a forum (cascades)": "DELETE FROM forum_subscriptions WHERE forum_id = 2; DELETE FROM submissions WHERE "
                                 "forum_id = 2; DELETE FROM forums WHERE id = 2",
}
OMNIBUS = {"max_connections": "400", "max_locks_per_transaction": "128"}


def setup(app: str, engine, servers: str = "bookworm"):
    """(container, stores, independent state of the database, mutations, server, schema, exec floor argv).
    ``servers``: Debian's ``bookworm`` (MariaDB 10.11, PostgreSQL 15; the replica runtime image) or
    ``bullseye`` (MariaDB 10.5, PostgreSQL 13; stacks/replicas/servers-bullseye, after `make bullseye`)."""
    container = f"sitectl-bench-{app}-schema"
    image = rs.bullseye_servers() if servers == "bullseye" else rs.RUNTIME
    if app == "magento":
        c = rs.start_mariadb(engine, container, image=image)
        rs.load_magento(engine, c)
        return (c, rs.site_stores(engine, c, rs.magento_site()), lambda: rs.mysql_state(engine, c), MAGENTO,
                rs.mysql(engine, c, "SELECT version()").strip() + f" (Debian {servers}, {image})",
                "Magento 2.4.8 install dump + tests/stores/data/magento-seed.sql",
                ["mysql", "-u", "root", "-N", "-e", "SELECT 1"], lambda sql: rs.mysql(engine, c, sql))
    db = "gitlabhq_production" if app == "gitlab" else "postmill"
    c = rs.start_postgres(engine, container, OMNIBUS if app == "gitlab" else None, image=image)
    (rs.load_gitlab if app == "gitlab" else rs.load_postmill)(engine, c, db)
    schema = ("GitLab db/structure.sql (about 15.10) + tests/stores/data/gitlab-seed.sql" if app == "gitlab"
              else "Postmill's 112 migrations + tests/stores/data/postmill-seed.sql")
    return (c, rs.site_stores(engine, c, rs.pg_site("gitlab" if app == "gitlab" else "reddit", db)),
            lambda: rs.pg_state(engine, c, db), GITLAB if app == "gitlab" else POSTMILL,
            rs.psql(engine, c, "SHOW server_version", db).strip() + f" (Debian {servers}, {image})", schema,
            ["psql", "-U", "postgres", "-d", db, "-Atc", "SELECT 1"], lambda sql: rs.psql(engine, c, sql, db))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", choices=["magento", "gitlab", "postmill"], default="magento")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--servers", choices=["bookworm", "bullseye"], default="bookworm",
                    help="Debian's database servers: bookworm (MariaDB 10.11, PostgreSQL 15) or bullseye (10.5, 13)")
    ap.add_argument("--out", type=Path, help="default: bench/results/real-schema-APP.json")
    a = ap.parse_args()
    a.out = a.out or ROOT / f"bench/results/real-schema-{a.app}.json"
    if a.reps < 1:
        ap.error("--reps: give 1 or more")
    engine = DockerEngine()
    c, stores, state, mutations, server, schema, floor_argv, run_sql = setup(a.app, engine, a.servers)
    try:
        t0 = time.perf_counter()
        stores.snapshot("golden")
        snapshot_s = time.perf_counter() - t0
        golden = state()
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
                if state() != golden:
                    mismatches += 1
                    print(f"{label}: NOT golden after the reset", file=sys.stderr)
            results[label] = {"n": a.reps, "median_s": round(statistics.median(times), 3),
                              "max_s": round(max(times), 3), "paths": sorted(set(paths))}
            print(f"{label:55} {results[label]['median_s']:.3f} s  {sorted(set(paths))}", file=sys.stderr)

        floor = []
        for _ in range(a.reps):
            t = time.perf_counter()
            engine.exec(c, floor_argv)
            floor.append(time.perf_counter() - t)
        measure("nothing changed", lambda: None, lambda: rs.reset(stores)[0])
        for label, sql in mutations.items():
            measure(label, lambda sql=sql: run_sql(sql), lambda: rs.reset(stores)[0])
        measure("full restore", lambda: None, lambda: (stores.restore("golden", None), "full")[1])
    finally:
        rs.docker.container.remove(c, force=True)
    deltas = [r["median_s"] for k, r in results.items() if k in mutations]
    targets = {
        "nothing changed": {"target_s": TARGETS["nothing changed"], "median_s": results["nothing changed"]["median_s"]},
        "delta (worst mutation, tiny scale here)": {"target_s": TARGETS["delta"], "median_s": max(deltas)},
        ("full restore (tiny)" if a.app == "magento" else "full restore (no target for this app; Magento's shown)"):
            {"target_s": TARGETS["full restore"], "median_s": results["full restore"]["median_s"]},
    }
    for t in targets.values():
        t["met"] = t["median_s"] <= t["target_s"]
    report = {"benchmark": f"real-schema-{a.app}", "command": " ".join(["python", "bench/real_schema.py", *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M"),
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "loadavg": [round(x, 2) for x in os.getloadavg()]},
              "server": server, "schema": schema,
              "snapshot_s": round(snapshot_s, 2),
              "exec_floor_median_s": round(statistics.median(floor), 3),
              "results": results, "mismatches": mismatches, "targets": targets}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
