"""Which rows a deleted or updated row changes through foreign-key actions
(sitectl/stores/cascades.py), as pure functions over small foreign-key graphs. What the server
really cascades is checked on Magento's own schema (tests/stores/test_magento_real_schema.py)."""
import pytest

from sitectl.stores.cascades import MAX_DEPTH, ForeignKey, log_select, paths, update_condition


def fk(child, parent, on_delete="CASCADE", on_update="RESTRICT", cc=("pid",), pc=("id",)):
    return ForeignKey(f"{child}_{parent}", child, parent, tuple(cc), tuple(pc), on_update, on_delete)


def chains(ps):
    return sorted((tuple(e.child for e in p.edges), p.whole) for p in ps)


def test_a_delete_follows_cascades_table_by_table():
    fks = [fk("order_item", "order"), fk("item_option", "order_item"), fk("note", "order", on_delete="RESTRICT")]
    assert chains(paths(fks, "order", "delete")) == [(("order_item",), False), (("order_item", "item_option"), False)]


def test_set_null_changes_the_child_but_deletes_nothing_further():
    fks = [fk("review", "customer", on_delete="SET NULL", cc=("customer_id",)), fk("review_detail", "review")]
    assert chains(paths(fks, "customer", "delete")) == [(("review",), False)]


def test_set_null_continues_through_the_keys_that_reference_the_nulled_columns():
    # b.a_code is nulled; c references b.a_code with ON UPDATE CASCADE: c changes too.
    fks = [fk("b", "a", on_delete="SET NULL", cc=("a_code",), pc=("code",)),
           fk("c", "b", on_delete="RESTRICT", on_update="CASCADE", cc=("b_code",), pc=("a_code",)),
           fk("d", "b", on_delete="RESTRICT", on_update="CASCADE", cc=("b_id",), pc=("id",))]
    assert chains(paths(fks, "a", "delete")) == [(("b",), False), (("b", "c"), False)]


def test_an_update_follows_only_on_update_actions():
    fks = [fk("child", "parent", on_delete="CASCADE", on_update="CASCADE"), fk("other", "parent", on_update="RESTRICT")]
    assert chains(paths(fks, "parent", "update")) == [(("child",), False)]
    assert update_condition(fks[0]) == "NOT (OLD.`id` <=> NEW.`id`)"


def test_no_action_and_restrict_start_no_path():
    fks = [fk("a", "p", on_delete="NO ACTION"), fk("b", "p", on_delete="RESTRICT")]
    assert paths(fks, "p", "delete") == [] and paths(fks, "p", "update") == []


def test_a_cycle_logs_its_table_whole():
    fks = [fk("node", "node", cc=("parent_id",))]  # a table referencing itself (quote_item in Magento)
    assert chains(paths(fks, "node", "delete")) == [(("node",), False), (("node", "node"), True)]


def test_a_path_past_the_depth_limit_logs_its_last_table_whole():
    names = [f"t{i}" for i in range(MAX_DEPTH + 2)]
    fks = [fk(c, p) for p, c in zip(names, names[1:])]
    got = chains(paths(fks, "t0", "delete"))
    assert got[-1] == (tuple(names[1:MAX_DEPTH + 2]), True)
    assert all(not whole for _, whole in got[:-1]) and len(got) == MAX_DEPTH + 1


def test_log_select_joins_the_path_and_keys_rows_as_the_row_triggers_do():
    fks = [fk("order_item", "order", cc=("order_id",), pc=("entity_id",)),
           fk("item_option", "order_item", cc=("item_id",), pc=("item_id",))]
    p = [x for x in paths(fks, "order", "delete") if len(x.edges) == 2][0]
    assert log_select("magentodb", p, {"item_option": ["option_id"]}) == (
        "SELECT 'item_option' AS tbl, JSON_ARRAY(c2.`option_id`) AS pk FROM `magentodb`.`order_item` c1 "
        "JOIN `magentodb`.`item_option` c2 ON c2.`item_id` = c1.`item_id` WHERE c1.`order_id` = OLD.`entity_id`")
    # No primary key: the table is logged whole when a row references the deleted one.
    assert log_select("magentodb", p, {}) == (
        "SELECT 'item_option' AS tbl, '' AS pk FROM DUAL WHERE EXISTS (SELECT 1 FROM `magentodb`.`order_item` c1 "
        "JOIN `magentodb`.`item_option` c2 ON c2.`item_id` = c1.`item_id` WHERE c1.`order_id` = OLD.`entity_id`)")


def test_an_unknown_event_is_refused():
    with pytest.raises(ValueError, match="delete or update"):
        paths([], "t", "insert")
