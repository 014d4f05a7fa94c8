"""Run inside a sidecar container that shares a site's network namespace (``docker run
--network container:SITE``): drives one SQL store entirely over the network (psycopg or
mysql-connector-python to 127.0.0.1) and prints what happened as JSON on stdout.

    python3 store_roundtrip.py postgres|mysql DATABASE PORT USER

The password is read from ``$SITECTL_NET_PASSWORD``. Steps: snapshot ``netcheck``; nothing
changed; a row update with a backslash, an insert, a delete; then TRUNCATE, ALTER TABLE, CREATE
TABLE and a counter/sequence bump; after each group the store's changes are listed, restored,
checked empty and the full fingerprint compared with the snapshot's. Finally the snapshot is
exported to a local file, dropped, imported back and its fingerprint compared again.
"""
from __future__ import annotations

import json
import sys
import tempfile

from sitectl.stores import Endpoint, MysqlNetwork, MysqlStore, PostgresNetwork, PostgresStore

NAME = "netcheck"

# Mutations per engine: (group, statements). Tables are the replicas' own.
MUTATIONS = {
    "postgres": [
        ("rows", "UPDATE users SET username = username || E'\\\\x' WHERE id = (SELECT min(id) FROM users);"
                 "INSERT INTO forums (id, name, normalized_name, title, description, created) "
                 "SELECT max(id) + 1000, 'netcheck', 'netcheck', 'Net', 'net', now() FROM forums;"
                 "DELETE FROM comments WHERE id = (SELECT max(id) FROM comments);"),
        ("ddl", "TRUNCATE forum_subscriptions; ALTER TABLE forums ADD COLUMN netcheck int;"
                "CREATE TABLE netcheck_extra (a int); SELECT setval('comments_id_seq', 987654);"),
    ],
    "mysql": [
        ("rows", "UPDATE catalog_product_entity SET sku = CONCAT(sku, '\\\\x') ORDER BY entity_id LIMIT 1;"
                 "INSERT INTO review_status (status_id, status_code) VALUES (99, 'netcheck');"
                 "DELETE FROM sales_order_item ORDER BY item_id LIMIT 1;"),
        ("ddl", "SET FOREIGN_KEY_CHECKS = 0; TRUNCATE TABLE review; SET FOREIGN_KEY_CHECKS = 1; ALTER TABLE sales_order ADD COLUMN netcheck INT;"
                "CREATE TABLE netcheck_extra (a INT); ALTER TABLE sequence_order_1 AUTO_INCREMENT = 987654;"),
    ],
}


def main() -> int:
    kind, database, port, user = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    ep = Endpoint("127.0.0.1", port, user, "SITECTL_NET_PASSWORD")
    if kind == "postgres":
        session = PostgresNetwork("netcheck", database, ep)
        store = PostgresStore("netcheck", session)
    else:
        session = MysqlNetwork("netcheck", database, ep)
        store = MysqlStore("netcheck", session)
    out: dict = {"kind": kind, "where": session.where, "groups": []}
    entry = store.snapshot(NAME)
    out["snapshot_fingerprint"] = entry["fingerprint"]
    out["unchanged_items"] = store.changes(NAME).items
    for group, sql in MUTATIONS[kind]:
        if kind == "mysql":
            sql = f"USE {database}; {sql}"
        session.query(sql, f"mutate ({group})")
        found = store.changes(NAME)
        store.restore(NAME, found)
        # What the application's own triggers wrote while the rows went back (Magento's indexer
        # changelogs) is caught up in the same transaction; anything still logged gets another
        # round, as SiteStores.restore_rounds gives it (the caller asserts how many were needed).
        rounds, later = 1, store.changes(NAME)
        while later.items and rounds < 3:
            store.restore(NAME, later)
            rounds, later = rounds + 1, store.changes(NAME)
        left = later.items
        live = store.fingerprint(None)
        out["groups"].append({"group": group, "changed": found.items, "full": bool(found.detail.get("full")),
                              "rounds": rounds, "left": left, "equal": live == entry["fingerprint"],
                              "differs": sorted(k for k in set(live) | set(entry["fingerprint"])
                                                if live.get(k) != entry["fingerprint"].get(k))[:10]})
    with tempfile.TemporaryDirectory() as stage:
        payload = store.export_payload(NAME, stage)
        store.drop(NAME)
        out["exists_after_drop"] = store.exists(NAME)
        store.import_payload(NAME, payload, NAME)
    out["imported_equal"] = store.fingerprint(NAME) == entry["fingerprint"]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
