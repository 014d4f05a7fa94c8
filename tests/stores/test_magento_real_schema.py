"""The MySQL store on Magento 2.4.8's own schema (361 tables, 380 foreign keys of which 350
``ON DELETE CASCADE``, 66 indexer triggers writing ``*_cl`` changelogs, install rows with id
0), in Debian's MariaDB: golden is taken, and after each mutation, made the way Magento makes it
(its SQL, with the server's foreign-key actions and the indexers' triggers doing the rest), a
reset brings the database back to exactly golden, as a delta, proven by a dump that shares no
code with sitectl (tests/stores/real_schema.py). The server is MariaDB 10.5 (Debian bullseye's),
the release before the real images' 10.6.12; the mini stack and tests/stores/test_mysql_fk_actions.py
run bookworm's 10.11, the one after (docs/snapshots.md names what the store needs of them)."""
from __future__ import annotations

import pytest

from tests.stores import real_schema as rs

pytestmark = pytest.mark.docker

CONTAINER = "sitectl-test-magento-schema"

# Each mutation as Magento issues it (its repositories delete the parent row and let the
# foreign keys cascade; its indexers' triggers write the changelogs).
MUTATIONS = {
    # cascaded deletes (MariaDB fires no trigger for the rows a foreign key deletes or nulls)
    "delete review (detail, store links cascade)": "DELETE FROM review WHERE review_id = 1",
    "delete order (items, addresses, payment, history cascade)": "DELETE FROM sales_order WHERE entity_id = 1",
    "delete product (EAV, stock, links, wishlist and quote items cascade; indexer triggers)":
        "DELETE FROM catalog_product_entity WHERE entity_id = 5",
    "delete customer (addresses, wishlist and its items cascade; orders and reviews SET NULL)":
        "DELETE FROM customer_entity WHERE entity_id = 1",
    "delete wishlist (items cascade)": "DELETE FROM wishlist WHERE wishlist_id = 1",
    "delete store view (SET NULL and CASCADE across the catalogue and sales)": "DELETE FROM store WHERE store_id = 1",
    "delete quote (items cascade)": "DELETE FROM quote WHERE entity_id = 10",
    "delete category (EAV, product links cascade; indexer triggers)": "DELETE FROM catalog_category_entity WHERE entity_id = 3",
    # indexer changelog triggers ("Update by Schedule")
    "edit a product's sku": "UPDATE catalog_product_entity SET sku = 'Blusa-2' WHERE entity_id = 5",
    "edit a price": "UPDATE catalog_product_entity_decimal SET value = value + 1 WHERE value_id = "
                    "(SELECT MIN(value_id) FROM (SELECT value_id FROM catalog_product_entity_decimal) d)",
    "edit stock": "UPDATE cataloginventory_stock_item SET qty = qty - 1 WHERE product_id = 9",
    "new product": "INSERT INTO catalog_product_entity (attribute_set_id, type_id, sku) VALUES (4, 'simple', 'new-sku');"
                   "INSERT INTO catalog_product_entity_int (attribute_id, store_id, entity_id, value) "
                   "SELECT 97, 0, entity_id, 1 FROM catalog_product_entity WHERE sku = 'new-sku'",
    "place an order": "INSERT INTO sales_order (state, status, store_id, customer_id, increment_id, grand_total) "
                      "VALUES ('new', 'pending', 1, 2, '000000004', 10);"
                      "INSERT INTO sales_order_item (order_id, store_id, product_id, sku, qty_ordered, price) "
                      "SELECT MAX(entity_id), 1, 9, 'Bolsa', 1, 10 FROM sales_order;"
                      "UPDATE cataloginventory_stock_item SET qty = qty - 1 WHERE product_id = 9",
    "cancel an order": "UPDATE sales_order SET state = 'canceled', status = 'canceled' WHERE entity_id = 2;"
                       "INSERT INTO sales_order_status_history (parent_id, comment, status, entity_name) "
                       "VALUES (2, 'Canceled', 'canceled', 'order')",
    "register a customer": "INSERT INTO customer_entity (website_id, email, group_id, store_id, firstname, lastname) "
                           "VALUES (1, 'new@example.com', 1, 1, 'New', 'Person')",
    "edit a category name": "UPDATE catalog_category_entity_varchar SET value = 'Renamed' WHERE value_id = "
                            "(SELECT MIN(value_id) FROM (SELECT value_id FROM catalog_category_entity_varchar) v)",
    # install rows with id 0
    "update the admin store (id 0)": "UPDATE store SET name = 'Admin 2' WHERE store_id = 0",
    "delete the NOT LOGGED IN group (id 0; cascades)": "DELETE FROM customer_group WHERE customer_group_id = 0",
    "delete the admin website (id 0; cascades)":
        "SET FOREIGN_KEY_CHECKS = 1; DELETE FROM store_website WHERE website_id = 0",
    # schema changes
    "truncate a changelog": "TRUNCATE TABLE catalog_product_price_cl",
    "new table": "CREATE TABLE task_notes (id INT PRIMARY KEY, note TEXT); INSERT INTO task_notes VALUES (1, 'x')",
    "drop a referenced table": "SET FOREIGN_KEY_CHECKS = 0; DROP TABLE review_entity",
    "rename a referenced table": "RENAME TABLE review_entity TO review_entity_old",
    "add a column": "ALTER TABLE review ADD COLUMN extra INT",
    "drop a foreign key": "ALTER TABLE review_detail DROP FOREIGN KEY REVIEW_DETAIL_REVIEW_ID_REVIEW_REVIEW_ID",
    "counter moved": "ALTER TABLE sales_order AUTO_INCREMENT = 1000",
    "drop an indexer trigger": "DROP TRIGGER trg_catalog_category_entity_after_insert",
    "add a trigger": "CREATE TRIGGER task_trg AFTER INSERT ON review FOR EACH ROW SET @x = 1",
    "indexer to Update on Save (triggers dropped, mview_state)":
        "DROP TRIGGER trg_catalog_category_entity_after_insert; DROP TRIGGER trg_catalog_category_entity_after_update;"
        "DROP TRIGGER trg_catalog_category_entity_after_delete;"
        "UPDATE mview_state SET mode = 'disabled' WHERE view_id = 'catalog_category_product'",
    # views, routines, events
    "new view": "CREATE VIEW task_v AS SELECT entity_id FROM sales_order",
    "dropped view (another view uses it)": "DROP VIEW report_order_totals",
    "replaced view": "CREATE OR REPLACE VIEW report_big_spenders AS SELECT 1 AS customer_id",
    "new function": "CREATE FUNCTION task_f() RETURNS INT DETERMINISTIC RETURN 1",
    "dropped function": "DROP FUNCTION order_total",
    "new procedure": "CREATE PROCEDURE task_p() SELECT 1",
    "dropped procedure": "DROP PROCEDURE touch_order",
    "new event": "CREATE EVENT task_e ON SCHEDULE EVERY 1 HOUR DISABLE DO SET @x = 1",
    "altered event": "ALTER EVENT purge_old_quotes ON SCHEDULE EVERY 2 DAY",
    # a table without a primary key
    "table without a primary key": "INSERT INTO queue_poison_pill (version) VALUES ('x')",
    # a mix in one transaction
    "several at once": "START TRANSACTION; DELETE FROM review WHERE review_id = 2;"
                       "UPDATE catalog_product_entity SET sku = 'Z' WHERE entity_id = 8;"
                       "DELETE FROM sales_order WHERE entity_id = 3; COMMIT",
}


@pytest.fixture(scope="module")
def magento(engine):
    container = rs.start_mariadb(engine, CONTAINER, image=rs.bullseye_servers())
    try:
        rs.load_magento(engine, container)
        stores = rs.site_stores(engine, container, rs.magento_site())
        stores.snapshot("golden")
        golden = rs.mysql_state(engine, container)
        yield engine, container, stores, golden
    finally:
        rs.docker.container.remove(container, force=True)


def test_golden_is_taken_with_the_id_0_rows_as_they_are(magento):
    engine, container, stores, golden = magento
    rows = rs.mysql(engine, container, "SELECT store_id FROM sitectl_s_golden.store ORDER BY store_id;"
                                       "SELECT customer_group_id FROM sitectl_s_golden.customer_group ORDER BY 1")
    assert rows.split() == ["0", "1", "0", "1", "2", "3"]
    assert rs.reset(stores) == ("nothing", [], [])


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_reset_after_a_mutation_is_exactly_golden(magento, mutation):
    engine, container, stores, golden = magento
    rs.mysql(engine, container, MUTATIONS[mutation])
    assert rs.mysql_state(engine, container) != golden, "the mutation changed nothing"
    path, found, left = rs.reset(stores)
    now = rs.mysql_state(engine, container)
    assert now == golden, f"{mutation}: not golden after the reset ({path}; found {found}):\n{rs.diff(golden, now)}"
    assert left == [], f"{mutation}: the closing check still sees {left}"
    assert path == "delta", f"{mutation}: took the {path} path ({found})"
    assert rs.reset(stores) == ("nothing", [], []), "a second reset finds something"


#: Mutations whose restore writes tables with Magento's indexer triggers (they fire on the
#: restore's own writes and write the changelogs again).
TRIGGERING = ["edit a product's sku", "edit a price", "edit stock", "new product", "place an order",
              "edit a category name", "delete product (EAV, stock, links, wishlist and quote items cascade; indexer triggers)",
              "delete category (EAV, product links cascade; indexer triggers)", "several at once"]


@pytest.mark.parametrize("mutation", TRIGGERING)
def test_the_changelogs_the_restore_itself_writes_are_put_back_in_the_same_round(magento, mutation):
    """The indexers' triggers fire on the delta's own writes; the rows they leave in the
    changelogs are put back in the same transaction (the tables sitectl.trigger_targets names),
    so the closing check after the first round is clean: one detection, no second round."""
    engine, container, stores, golden = magento
    rs.mysql(engine, container, MUTATIONS[mutation])
    detections = []
    real = stores.changes
    stores.changes = lambda name: detections.append(name) or real(name)
    try:
        path, found, left = rs.reset(stores)
    finally:
        del stores.changes
    assert path == "delta" and left == [], (path, found, left)
    assert detections == ["golden"], f"{mutation}: {len(detections)} detections (a further round)"
    now = rs.mysql_state(engine, container)
    assert now == golden, f"{mutation}: not golden:\n{rs.diff(golden, now)}"


@pytest.mark.parametrize("lose", ["DROP DATABASE sitectl", "UPDATE sitectl.tracking SET version = 1"])
def test_with_the_tracking_lost_a_full_restore_is_exactly_golden(magento, lose):
    """No change log to trust (dropped, or made by another sitectl version): the reset restores
    in full, which also puts the tracking back."""
    engine, container, stores, golden = magento
    for sql in ("DELETE FROM sales_order WHERE entity_id = 1", "UPDATE catalog_product_entity SET sku = 'Q' WHERE entity_id = 9",
                "CREATE TABLE task_t (id INT PRIMARY KEY)", "DROP TRIGGER trg_catalog_category_entity_after_insert",
                "CREATE VIEW task_v AS SELECT 1 AS x", "ALTER TABLE review ADD COLUMN extra INT", lose):
        rs.mysql(engine, container, sql)
    path, found, left = rs.reset(stores)
    now = rs.mysql_state(engine, container)
    assert path == "full", found
    assert now == golden, rs.diff(golden, now)
    assert left == []
    assert rs.reset(stores) == ("nothing", [], [])
    # The tracking works again: a later change is a delta.
    rs.mysql(engine, container, "DELETE FROM review WHERE review_id = 1")
    assert rs.reset(stores)[0] == "delta" and rs.mysql_state(engine, container) == golden


#: Row changes whose diff (`sitectl diff`, docs/diff.md) is checked against the dump: cascades
#: through foreign-key actions, Magento's indexer triggers, keys of id 0, several in one go.
DIFF_MUTATIONS = ["delete product (EAV, stock, links, wishlist and quote items cascade; indexer triggers)",
                  "delete store view (SET NULL and CASCADE across the catalogue and sales)", "place an order",
                  "update the admin store (id 0)", "several at once"]


@pytest.mark.parametrize("mutation", DIFF_MUTATIONS)
def test_diff_lists_exactly_the_rows_the_dump_says(magento, mutation):
    """Each store's diff, against the independent dump: the tables whose rows differ, and per
    table the rows removed (deleted and updated) and added (inserted and updated). A table
    without a primary key is named with its count only, and must be among them."""
    from sitectl.stores.base import DiffLimits

    engine, container, stores, golden = magento
    rs.mysql(engine, container, MUTATIONS[mutation])
    found = stores.changes("golden")
    (store,) = [st.diff("golden", c, DiffLimits(rows=100_000)) for st, c in found.per_store if st.kind == "mysql"]
    expected = rs.line_changes(rs.mysql_rows(golden), rs.mysql_rows(rs.mysql_state(engine, container)))
    unlisted = {t["table"] for t in store["tables"] if "rows" in t}
    assert expected, f"{mutation}: the dump shows no change"
    assert rs.diff_changes(store) == {t: c for t, c in expected.items() if t not in unlisted}, mutation
    assert unlisted <= set(expected)
    assert rs.reset(stores)[0] == "delta" and rs.mysql_state(engine, container) == golden
