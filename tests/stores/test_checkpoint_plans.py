"""The plans a checkpoint's apply follows, as text: the order of MySQL tables around the
application's triggers, the files helper's operations, the record names PostgreSQL accepts.
No Docker: the SQL and operations are checked as written (the end-to-end proofs are in
tests/snapshots/test_checkpoint.py)."""
from __future__ import annotations

import pytest

from sitectl.errors import StoreError
from sitectl.stores.files import FilesStore
from sitectl.stores.mysql import MysqlStore, _logged_key_match
from sitectl.stores.postgres import _ckpt_tables


def test_tables_come_before_the_tables_their_triggers_write():
    # Magento's shape: an entity table's triggers write changelog tables, which have none.
    targets = {"catalog_product_entity_decimal": {"catalog_product_price_cl": [], "catalogsearch_fulltext_cl": []},
               "catalog_product_entity": {"catalog_product_price_cl": []}}
    order = MysqlStore._apply_order(["catalog_product_price_cl", "catalog_product_entity_decimal"], targets)
    assert order.index("catalog_product_entity_decimal") < order.index("catalog_product_price_cl")
    assert set(order) == {"catalog_product_entity_decimal", "catalog_product_price_cl", "catalogsearch_fulltext_cl"}


def test_a_cycle_of_triggers_still_lists_every_table_once():
    order = MysqlStore._apply_order(["a"], {"a": {"b": []}, "b": {"a": []}})
    assert sorted(order) == ["a", "b"] and len(order) == 2


def test_integer_keys_are_cast_back_and_binary_keys_are_not_matched():
    m = _logged_key_match("x", [("id", "int", "int(10) unsigned"), ("code", "varchar", "varchar(32)")])
    assert "CAST(JSON_UNQUOTE(JSON_EXTRACT(k.pk, '$[0]')) AS UNSIGNED)" in m and "x.`code` = JSON_UNQUOTE" in m
    assert _logged_key_match("x", [("h", "varbinary", "varbinary(16)")]) is None
    assert _logged_key_match("x", [("f", "double", "double")]) is None


def test_the_files_plan_removes_makes_copies_then_dates():
    ops = FilesStore._ckpt_ops(present=["a/new", "a/new/inner", "b.txt"], absent=["gone", "gone/x"],
                               folders=["", "a"])
    kinds = [o.split(":", 1)[0] for o in ops]
    # removals first, then folders, then copies (not again below a copied folder), then times
    assert kinds == sorted(kinds, key=["rm", "dir", "cp", "time"].index)
    assert [o for o in ops if o.startswith("cp:")] == ["cp:b.txt", "cp:a/new"]
    assert [o for o in ops if o.startswith("time:")] == ["time:a"]  # the folder itself: the helper's last step


def test_a_record_table_name_of_another_shape_never_reaches_sql():
    assert _ckpt_tables({"tables": {"public.users": {}, '"odd schema"."t""x"': {}}})
    for bad in ("public.users; DROP TABLE x; --", "users", "public.users --"):
        with pytest.raises(StoreError, match="no table name"):
            _ckpt_tables({"tables": {bad: {}}})
