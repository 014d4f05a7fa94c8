"""The delta-restore SQL the MySQL and PostgreSQL stores write (``MysqlStore._delta_sql``,
``PostgresStore._delta_sql`` and their helpers), checked as text: no database is involved.

The stores are built on exec sessions whose transport never runs anything: building SQL text
needs no server. Change details are made the way detection makes them (``parse_changes`` on
the rows its query returns, or that shape by hand). Golden strings below were written by
reading the code; they document the restore protocol:

MySQL, one text: ``SET FOREIGN_KEY_CHECKS=0``, repeatable read, ``START TRANSACTION``; per table with logged
keys, sorted by name: ``SET @sitectl_restoring`` to the table's MD5 (its own tracking triggers
skip the restore's writes, every other table's log what the application's triggers write),
``DELETE`` the rows by primary key, ``INSERT ... SELECT`` them back from the snapshot database,
``DELETE`` exactly those keys from ``sitectl.changes``; then each table restored whole (no
primary key, an empty key, more than ``MAX_KEYS_PER_TABLE`` keys, an unreadable key, or moved
there to keep the text under ``SQL_BUDGET``), sorted: the same ``SET``, ``DELETE`` all,
``INSERT`` all, its change-log ``DELETE``; then the catch-up of each table the application's
triggers on the restored tables name (``sitectl.trigger_targets``, breadth first): its logged
keys locked and copied into a temporary table, its rows matched by ``JSON_ARRAY`` of the key
(with an index lookup on integer columns) deleted and inserted from the snapshot, its log
cleared; ``SET @sitectl_restoring=NULL``; ``COMMIT``; then ``ALTER TABLE ... AUTO_INCREMENT`` of
every touched table the snapshot has a counter for (an ALTER commits, so after the rows), a
caught-up table's only if its counter moved (a prepared statement). Every text a session sends starts with
``MYSQL_SESSION`` (``NO_AUTO_VALUE_ON_ZERO``).

PostgreSQL, one text: ``SET jit = off``, ``BEGIN``, ``SET LOCAL session_replication_role =
replica`` (no trigger, neither the application's nor sitectl's, no foreign-key action),
``SET LOCAL sitectl.restoring`` (the DDL log leaves the restore's own DDL out); objects created
since the snapshot dropped by OID (``sitectl.drop_object``) and their log entries cleared;
``LOCK TABLE ONLY`` every restored table; per table, sorted: keys read by the detection as
literals (``DELETE FROM ONLY ... WHERE key IN (literals)``, ``INSERT ... OVERRIDING SYSTEM VALUE
SELECT`` from the copy named ``c`` + MD5 of the table's name, delete those keys from the log),
else over the log server-side (its non-null keys; a TRUNCATE logged meanwhile stays for the
closing check), else (a TRUNCATE logged, no primary key, over ``MAX_KEYS_PER_TABLE``) the whole
table; ``setval`` per changed sequence not created since; the DDL log's triggers when they were
missing; the DDL log's entries up to the detection's; ``COMMIT``.
"""
from __future__ import annotations

import hashlib
import json
import re

import pglast  # PostgreSQL's own parser (libpg_query), a test dependency
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitectl.stores import mysql as mysqlmod
from sitectl.stores import postgres as pgmod
from sitectl.stores.base import Changes
from sitectl.stores.mysql import MAX_KEYS_PER_TABLE as MY_MAX_KEYS
from sitectl.stores.mysql import TRACKING_VERSION, MysqlStore, _trigger_name
from sitectl.stores.postgres import MAX_INLINE_KEYS, PostgresStore, _literal_keys, _qname
from sitectl.stores.postgres import MAX_KEYS_PER_TABLE as PG_MAX_KEYS
from sitectl.stores.sql import MYSQL_SESSION, SQL_BUDGET, MysqlExec, PostgresExec, Query, SqlResult
from tests.stores.literal_parsers import Tok, mysql_tokens, pg_tokens, split_statements


class NoEngineTransport:
    """The sessions read ``.container`` for their description; building SQL text never calls
    ``.run``, so it fails the test if anything tries to reach a server."""

    container = "no-container"

    def run(self, *a, **kw):
        raise AssertionError("building SQL text ran a command")


def mysql_store() -> MysqlStore:
    return MysqlStore("shopping", MysqlExec("shopping", "magentodb", NoEngineTransport()))


def pg_store() -> PostgresStore:
    return PostgresStore("reddit", PostgresExec("reddit", "postmill", NoEngineTransport()))


def hx(s: str) -> str:
    return f"CONVERT(X'{s.encode().hex()}' USING utf8mb4)"


# =============================================================================================
# MySQL
# =============================================================================================
def test_trigger_names_are_short_fixed_and_carry_the_sitectl_prefix_the_snapshot_filters_on():
    # md5("sales_order") = 0fa20b2263da20c823e534dc18e309c1 (md5sum)
    assert [_trigger_name("sales_order", ev) for ev in "iud"] == [
        "sitectl_0fa20b2263da20c8_i", "sitectl_0fa20b2263da20c8_u", "sitectl_0fa20b2263da20c8_d"]
    for table in ["", "a`b", "é" * 64, "x" * 64]:
        for ev in "iud":
            name = _trigger_name(table, ev)
            assert re.fullmatch(r"sitectl_[0-9a-f]{16}_[iud]", name) and len(name) <= 64


def test_trigger_sql_of_a_composite_key_table_logs_old_and_new_keys_as_json_arrays():
    s = mysql_store()
    t = "0fa20b2263da20c8"
    # md5("sales_order"): what @sitectl_restoring holds while the restore writes the table.
    quiet = "WHERE NOT (@sitectl_restoring <=> '0fa20b2263da20c823e534dc18e309c1');"
    assert s._trigger_sql("sales_order", {"sales_order": ["entity_id", "store`id"]}, []) == [
        f"CREATE TRIGGER `magentodb`.`sitectl_{t}_i` AFTER INSERT ON `magentodb`.`sales_order` FOR EACH ROW "
        "INSERT IGNORE INTO sitectl.changes (tbl, pk) SELECT * FROM (SELECT 'sales_order', "
        f"JSON_ARRAY(NEW.`entity_id`, NEW.`store``id`)) k {quiet}",
        f"CREATE TRIGGER `magentodb`.`sitectl_{t}_u` AFTER UPDATE ON `magentodb`.`sales_order` FOR EACH ROW "
        "INSERT IGNORE INTO sitectl.changes (tbl, pk) SELECT * FROM (SELECT 'sales_order', "
        "JSON_ARRAY(OLD.`entity_id`, OLD.`store``id`) UNION SELECT 'sales_order', "
        f"JSON_ARRAY(NEW.`entity_id`, NEW.`store``id`)) k {quiet}",
        f"CREATE TRIGGER `magentodb`.`sitectl_{t}_d` AFTER DELETE ON `magentodb`.`sales_order` FOR EACH ROW "
        "INSERT IGNORE INTO sitectl.changes (tbl, pk) SELECT * FROM (SELECT 'sales_order', "
        f"JSON_ARRAY(OLD.`entity_id`, OLD.`store``id`)) k {quiet}"]


def test_trigger_sql_of_a_table_without_primary_key_logs_an_empty_key():
    s = mysql_store()
    sql = "".join(s._trigger_sql("log", {}, []))
    tag = hashlib.md5(b"log").hexdigest()
    assert sql.count(f"SELECT * FROM (SELECT 'log', '') k WHERE NOT (@sitectl_restoring <=> '{tag}')") == 3


def test_drop_triggers_sql_drops_the_five_triggers_if_they_exist():
    assert mysql_store()._drop_triggers_sql("sales_order") == (
        "DROP TRIGGER IF EXISTS `magentodb`.`sitectl_0fa20b2263da20c8_i`;"
        "DROP TRIGGER IF EXISTS `magentodb`.`sitectl_0fa20b2263da20c8_u`;"
        "DROP TRIGGER IF EXISTS `magentodb`.`sitectl_0fa20b2263da20c8_d`;"
        "DROP TRIGGER IF EXISTS `magentodb`.`sitectl_0fa20b2263da20c8_bd`;"
        "DROP TRIGGER IF EXISTS `magentodb`.`sitectl_0fa20b2263da20c8_bu`;")


def mysql_detection(name: str, base: dict, live: dict, keys: dict, pk: dict, golden_ai: dict,
                    targets: list | None = None) -> list:
    """The rows MysqlStore's detection query returns (as the mysql client prints them):
    ``base``/``live`` are ``{table: (innodb id, column hash, index hash, auto_increment)}``; the
    baseline row holds what ``_reset_baseline`` recorded from the same state."""

    def state(tables, prefix):
        return [r for t, (i, c, x, a) in tables.items()
                for r in ([prefix + "T", t, str(a)], [prefix + "I", t, str(i)], [prefix + "C", t, c], [prefix + "X", t, x])]

    recorded = MysqlStore._parse_state(state(base, ""))
    rows = [["M", name, ""], ["V", str(TRACKING_VERSION), ""]]
    rows += [["K", t, k] for t, ks in keys.items() for k in ks]
    rows += [["B", t, " ".join(recorded[t])] for t in base]
    rows += state(live, "S")
    rows += [["P", t, ",".join(cols)] for t, cols in pk.items() if t in keys]
    rows += [["A", t, str(a)] for t, a in golden_ai.items()]
    # JSON_ARRAY(target, pk) of sitectl.trigger_targets, as MariaDB prints it.
    rows += [["W", t, json.dumps([w, json.dumps(cols)])] for t, w, cols in targets or []]
    return rows


def test_mysql_parse_changes_sorts_tables_into_keyed_rebuilt_created_and_auto_increment():
    base = {"sales_order": (10, "c1", "x1", 12), "catalog_product_link": (11, "c2", "x2", 0),
            "quote": (12, "c3", "x3", 5), "log": (13, "c4", "x4", 0), "gone": (14, "c5", "x5", 0),
            "altered": (15, "c6", "x6", 0)}
    live = {**base, "sales_order": (10, "c1", "x1", 14), "quote": (12, "c3", "x3", 9),
            "log": (99, "c4", "x4", 0),                 # TRUNCATE: a new InnoDB table id
            "altered": (15, "c6", "x6-new-index", 0),   # ALTER: index definitions changed
            "tmp_new": (77, "c7", "x7", 0)}             # CREATE TABLE
    del live["gone"]                                     # DROP TABLE
    keys = {"sales_order": ["[1]", "[2]"], "catalog_product_link": ['["a\'b", 7]'], "log": ["[3]"]}
    pk = {"sales_order": ["entity_id"], "catalog_product_link": ["sku", "link_id"], "log": ["id"]}
    rows = mysql_detection("golden", base, live, keys, pk, {"sales_order": 12, "quote": 5})
    ch = mysql_store().parse_changes("golden", [SqlResult(rows)])
    assert ch.items == ["table altered (rebuilt, dropped or altered)", "table catalog_product_link (1 rows)",
                        "table gone (rebuilt, dropped or altered)", "table log (rebuilt, dropped or altered)",
                        "table quote (auto_increment)", "table sales_order (2 rows)",
                        "table tmp_new (created)"]
    assert ch.detail == {
        "keys": {"catalog_product_link": ['["a\'b", 7]'], "sales_order": ["[1]", "[2]"]},
        "rebuild": ["altered", "gone", "log"], "extra": ["tmp_new"], "autoinc": ["quote", "sales_order"],
        "pk": {"sales_order": ["entity_id"], "catalog_product_link": ["sku", "link_id"], "log": ["id"]},
        "golden_ai": {"sales_order": "12", "quote": "5"}, "objects": False, "targets": {}}
    assert mysql_store().restore_requests("golden", ch) is None  # DDL: needs the dependent steps


@pytest.mark.parametrize("rows, item", [
    ([["M", "other", ""]], "mysql:magentodb: baseline is not snapshot 'golden'"),
    ([], "mysql:magentodb: baseline is not snapshot 'golden'"),
])
def test_mysql_parse_changes_asks_for_a_full_restore_when_the_baseline_is_another_snapshot(rows, item):
    ch = mysql_store().parse_changes("golden", [SqlResult(rows)])
    assert (ch.items, ch.detail) == ([item], {"full": True})


def test_mysql_parse_changes_asks_for_a_full_restore_when_detection_failed():
    ch = mysql_store().parse_changes("golden", [SqlResult(None, "ERROR 1146: Table 'sitectl.meta' doesn't exist")])
    assert ch.items == ["mysql:magentodb: no change tracking (ERROR 1146: Table 'sitectl.meta' doesn't exist)"]
    assert ch.detail == {"full": True}


def mysql_golden_detail() -> dict:
    return {"keys": {"sales_order": ["[1]", "[2]"], "catalog_product_link": ['["a\'b", 7]'], "nopk_log": [""],
                     "big": [f"[{i}]" for i in range(MY_MAX_KEYS + 1)]},
            "rebuild": [], "extra": [], "autoinc": ["quote"],
            "pk": {"sales_order": ["entity_id"], "catalog_product_link": ["sku", "link_id"], "big": ["id"]},
            "golden_ai": {"sales_order": "10", "quote": "5", "big": "3"}}


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


MYSQL_GOLDEN = "\n".join([
    "SET FOREIGN_KEY_CHECKS=0;",
    "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;",
    "START TRANSACTION;",
    f"SET @sitectl_restoring='{md5('catalog_product_link')}';",
    "DELETE FROM `magentodb`.`catalog_product_link` WHERE (`sku`=CONVERT(X'612762' USING utf8mb4) AND `link_id`=7);",
    "INSERT INTO `magentodb`.`catalog_product_link` SELECT * FROM `sitectl_s_golden`.`catalog_product_link` "
    "WHERE (`sku`=CONVERT(X'612762' USING utf8mb4) AND `link_id`=7);",
    "DELETE FROM sitectl.changes WHERE tbl='catalog_product_link' AND pk IN (CONVERT(X'5b22612762222c20375d' USING utf8mb4));",
    f"SET @sitectl_restoring='{md5('sales_order')}';",
    "DELETE FROM `magentodb`.`sales_order` WHERE (`entity_id`=1) OR (`entity_id`=2);",
    "INSERT INTO `magentodb`.`sales_order` SELECT * FROM `sitectl_s_golden`.`sales_order` "
    "WHERE (`entity_id`=1) OR (`entity_id`=2);",
    "DELETE FROM sitectl.changes WHERE tbl='sales_order' AND pk IN ('[1]','[2]');",
    f"SET @sitectl_restoring='{md5('big')}';",
    "DELETE FROM `magentodb`.`big`; INSERT INTO `magentodb`.`big` SELECT * FROM `sitectl_s_golden`.`big`;",
    "DELETE FROM sitectl.changes WHERE tbl='big';",
    f"SET @sitectl_restoring='{md5('nopk_log')}';",
    "DELETE FROM `magentodb`.`nopk_log`; INSERT INTO `magentodb`.`nopk_log` SELECT * FROM `sitectl_s_golden`.`nopk_log`;",
    "DELETE FROM sitectl.changes WHERE tbl='nopk_log';",
    "SET @sitectl_restoring=NULL;",
    "COMMIT;",
    "ALTER TABLE `magentodb`.`big` AUTO_INCREMENT=3;",
    "ALTER TABLE `magentodb`.`quote` AUTO_INCREMENT=5;",
    "ALTER TABLE `magentodb`.`sales_order` AUTO_INCREMENT=10;",
])


def test_mysql_delta_sql_golden_keyed_whole_and_auto_increment():
    d = mysql_golden_detail()
    assert mysql_store()._delta_sql("golden", d, d["pk"]) == MYSQL_GOLDEN


def test_mysql_restore_requests_is_one_query_of_the_delta_sql():
    d = mysql_golden_detail()
    (q,) = mysql_store().restore_requests("golden", Changes(["x"], d))
    assert isinstance(q, Query) and q.sql == MYSQL_GOLDEN
    assert q.argv == ["mysql", "-u", "root", "-N", "-B", "-e", MYSQL_SESSION + MYSQL_GOLDEN]


@pytest.mark.parametrize("change", [
    {"full": True}, {"rebuild": ["t"]}, {"extra": ["t"]}, {"objects": True}, {"golden_ai": None}, {"pk": None}])
def test_mysql_restore_requests_leaves_ddl_full_and_incomplete_detections_to_restore(change):
    d = {**mysql_golden_detail(), **change}
    assert mysql_store().restore_requests("golden", Changes(["x"], d)) is None


def test_mysql_restore_requests_of_no_changes_is_nothing():
    assert mysql_store().restore_requests("golden", Changes([], {"full": True})) == []


def test_mysql_delta_sql_of_only_auto_increment_changes_is_an_empty_transaction_then_the_alters():
    d = {"keys": {}, "rebuild": [], "extra": [], "autoinc": ["quote", "gone"], "pk": {},
         "golden_ai": {"quote": "5"}}
    assert mysql_store()._delta_sql("golden", d, {}) == (
        "SET FOREIGN_KEY_CHECKS=0;\nSET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;\n"
        "START TRANSACTION;\nSET @sitectl_restoring=NULL;\nCOMMIT;\n"
        "ALTER TABLE `magentodb`.`quote` AUTO_INCREMENT=5;")


def test_mysql_delta_sql_skips_the_counter_of_a_rebuilt_table_and_sets_none_without_golden_ai():
    d = {"keys": {"t": ["[1]"]}, "rebuild": ["t"], "extra": [], "autoinc": [], "pk": {"t": ["id"]},
         "golden_ai": {"t": "9"}}
    assert "ALTER" not in mysql_store()._delta_sql("golden", d, d["pk"])
    d = {**d, "rebuild": [], "golden_ai": None}
    assert "ALTER" not in mysql_store()._delta_sql("golden", d, d["pk"])


@pytest.mark.parametrize("keys", [["not json"], ["[1]", "{broken"]])
def test_mysql_delta_sql_restores_a_table_whole_when_a_logged_key_is_not_json(keys):
    d = {"keys": {"t": keys}, "rebuild": [], "extra": [], "autoinc": [], "pk": {"t": ["id"]}, "golden_ai": {}}
    sql = mysql_store()._delta_sql("golden", d, d["pk"])
    assert "DELETE FROM `magentodb`.`t`; INSERT INTO `magentodb`.`t` SELECT * FROM `sitectl_s_golden`.`t`;" in sql
    assert "DELETE FROM sitectl.changes WHERE tbl='t';" in sql
    assert "WHERE (" not in sql


def test_mysql_delta_sql_moves_the_tables_with_most_keys_to_whole_restores_to_stay_under_the_budget():
    long = "v" * 200
    d = {"keys": {"wide": [json.dumps([f"{long}{i}"]) for i in range(400)],
                  "mid": [json.dumps([f"{long}{i}"]) for i in range(50)],
                  "small": ["[1]", "[2]"]},
         "rebuild": [], "extra": [], "autoinc": [], "pk": {"wide": ["k"], "mid": ["k"], "small": ["id"]},
         "golden_ai": {}}
    sql = mysql_store()._delta_sql("golden", d, d["pk"])
    assert len(sql.encode()) <= SQL_BUDGET
    assert "DELETE FROM `magentodb`.`wide`; INSERT INTO `magentodb`.`wide` SELECT * FROM `sitectl_s_golden`.`wide`;" in sql
    assert "DELETE FROM `magentodb`.`mid` WHERE (" in sql  # fits once `wide` left: stays keyed
    assert "DELETE FROM `magentodb`.`small` WHERE (`id`=1) OR (`id`=2);" in sql
    assert "DELETE FROM sitectl.changes WHERE tbl='wide';" in sql


# -- MySQL properties ---------------------------------------------------------------------------
MY_NAME = st.lists(st.sampled_from(list("abz_`'\"\\;é $") + ["DELIMITER", "😀"]), min_size=1, max_size=8).map("".join)
KEY_STR = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=10).map(lambda s: "KV" + s)
KEY_VAL = st.one_of(st.integers(-10**12, 10**12), KEY_STR)


@st.composite
def mysql_details(draw):
    tables = draw(st.lists(MY_NAME, min_size=1, max_size=4, unique=True))
    keys, pk = {}, {}
    for t in tables:
        if draw(st.booleans()) and draw(st.booleans()):  # a table without primary key
            keys[t] = [""]
            continue
        cols = draw(st.lists(MY_NAME, min_size=1, max_size=3, unique=True))
        pk[t] = cols
        rows = draw(st.lists(st.tuples(*[KEY_VAL] * len(cols)), min_size=1, max_size=5, unique=True))
        keys[t] = [json.dumps(list(r), ensure_ascii=False) for r in rows]
    golden_ai = {t: str(draw(st.integers(1, 10**6))) for t in tables if draw(st.booleans())}
    return {"keys": keys, "rebuild": [], "extra": [], "autoinc": [], "pk": pk, "golden_ai": golden_ai}


MY_WORDS = {"SET", "@sitectl_restoring", "NULL", "FOREIGN_KEY_CHECKS", "START", "TRANSACTION", "SESSION",
            "ISOLATION", "LEVEL", "REPEATABLE", "READ", "DELETE", "FROM", "WHERE", "AND",
            "OR", "INSERT", "INTO", "SELECT", "sitectl", "changes", "tbl", "pk", "IN", "COMMIT", "ALTER", "TABLE",
            "AUTO_INCREMENT"}


def _my_literal(toks: list[Tok], i: int):
    if toks[i].kind == "str":
        return toks[i].value, i + 1
    if toks[i].raw == "-" and toks[i + 1].kind == "num":
        return -int(toks[i + 1].value), i + 2
    assert toks[i].kind == "num", toks[i]
    return int(toks[i].value), i + 1


def _my_where(toks: list[Tok]) -> list[dict]:
    """``(col=v AND col=v) OR (...)`` -> ``[{col: v}]``; asserts the exact shape."""
    rows, i = [], 0
    while True:
        assert toks[i].raw == "("
        row, i = {}, i + 1
        while True:
            assert toks[i].kind == "ident" and toks[i + 1].raw == "=", toks[i:i + 2]
            col = toks[i].value
            row[col], i = _my_literal(toks, i + 2)
            if toks[i].raw == ")":
                i += 1
                break
            assert toks[i].value == "AND"
            i += 1
        rows.append(row)
        if i == len(toks):
            return rows
        assert toks[i].value == "OR"
        i += 1


@given(mysql_details())
@settings(database=None, max_examples=100, deadline=None)
def test_mysql_delta_sql_keys_appear_only_as_literals_names_only_as_identifiers_in_protocol_order(d):
    sql = mysql_store()._delta_sql("golden", d, d["pk"])
    # Every line holds whole statements: no literal spans lines (clients that split scripts
    # line by line, looking for DELIMITER, see no value text).
    for line in sql.split("\n"):
        assert line.endswith(";") and mysql_tokens(line)
    assert "delimiter" not in "".join(t.raw for t in mysql_tokens(sql) if t.kind != "ident").lower()
    toks = mysql_tokens(sql)
    for t in toks:
        if t.kind in ("word", "punct", "num"):
            assert "KV" not in t.raw, t
        if t.kind == "word":
            assert t.value in MY_WORDS, t
    stmts = split_statements(toks)
    assert [" ".join(t.raw for t in s) for s in stmts[:3]] == [
        "SET FOREIGN_KEY_CHECKS = 0", "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION"]
    whole = sorted(t for t, ks in d["keys"].items() if t not in d["pk"] or "" in ks)
    keyed = sorted(t for t in d["keys"] if t not in whole)
    i = 3

    def quiet(stmt, t):
        assert [x.value for x in stmt] == ["SET", "@sitectl_restoring", "=", md5(t)]
        assert stmt[3].kind == "str"

    for t in keyed:
        tag, dele, ins, clear = stmts[i:i + 4]
        quiet(tag, t)
        i += 4
        want = [dict(zip(d["pk"][t], json.loads(k))) for k in d["keys"][t]]
        assert [x.value for x in dele[:6]] == ["DELETE", "FROM", "magentodb", ".", t, "WHERE"]
        assert dele[2].kind == dele[4].kind == "ident"
        assert _my_where(dele[6:]) == want
        assert [x.value for x in ins[:11]] == ["INSERT", "INTO", "magentodb", ".", t, "SELECT", "*", "FROM",
                                               "sitectl_s_golden", ".", t]
        assert ins[4].kind == ins[10].kind == "ident"
        assert ins[11].value == "WHERE" and _my_where(ins[12:]) == want
        assert [x.value for x in clear[:9]] == ["DELETE", "FROM", "sitectl", ".", "changes", "WHERE", "tbl", "=", t]
        assert clear[8].kind == "str"
        logged = [x.value for x in clear[13:-1] if x.kind == "str"]
        assert logged == d["keys"][t]
    for t in whole:
        quiet(stmts[i], t)
        assert [x.value for x in stmts[i + 1]] == ["DELETE", "FROM", "magentodb", ".", t]
        assert [x.value for x in stmts[i + 2]] == ["INSERT", "INTO", "magentodb", ".", t, "SELECT", "*", "FROM",
                                                  "sitectl_s_golden", ".", t]
        assert [x.value for x in stmts[i + 3]] == ["DELETE", "FROM", "sitectl", ".", "changes", "WHERE", "tbl", "=", t]
        i += 4
    assert [x.raw for x in stmts[i]] == ["SET", "@sitectl_restoring", "=", "NULL"]
    assert [x.value for x in stmts[i + 1]] == ["COMMIT"]
    alters = stmts[i + 2:]
    assert [(s[4].value, int(s[7].value)) for s in alters] == [(t, int(d["golden_ai"][t]))
                                                               for t in sorted(d["keys"]) if t in d["golden_ai"]]


def test_mysql_detection_reads_the_trigger_targets_into_the_detail():
    base = {"cataloginventory_stock_item": (10, "c1", "x1", 30), "cataloginventory_stock_cl": (11, "c2", "x2", 335)}
    keys = {"cataloginventory_stock_item": ["[24]"]}
    rows = mysql_detection("golden", base, base, keys, {"cataloginventory_stock_item": ["item_id"]},
                           {"cataloginventory_stock_cl": 335},
                           [("cataloginventory_stock_item", "cataloginventory_stock_cl", [["version_id", True]])])
    ch = mysql_store().parse_changes("golden", [SqlResult(rows)])
    assert ch.detail["targets"] == {"cataloginventory_stock_item": {"cataloginventory_stock_cl": [["version_id", True]]}}


def catch_up_detail() -> dict:
    # Restoring the stock row fires Magento's trigger into the stock changelog; restoring a
    # product fires two (price and a changelog without primary key, made up), and the
    # changelog's own (made-up) trigger writes a third table: breadth first, each once.
    return {"keys": {"cataloginventory_stock_item": ["[24]"], "catalog_product_entity": ["[7]"]},
            "rebuild": [], "extra": [], "autoinc": [],
            "pk": {"cataloginventory_stock_item": ["item_id"], "catalog_product_entity": ["entity_id"]},
            "golden_ai": {"cataloginventory_stock_cl": "335", "catalog_product_entity": "8"},
            "targets": {"cataloginventory_stock_item": {"cataloginventory_stock_cl": [["version_id", True]]},
                        "catalog_product_entity": {"catalog_product_price_cl": [["version_id", True]],
                                                   "nopk_cl": []},
                        "catalog_product_price_cl": {"url_rewrite": [["request_path", False], ["store_id", True]],
                                                     "catalog_product_entity": [["entity_id", True]]}}}


def test_mysql_catch_up_is_breadth_first_each_table_once():
    assert [w for w, _ in MysqlStore._catch_up(catch_up_detail())] == [
        # a restored table named by a target's trigger is caught up too (what that trigger logged)
        "catalog_product_price_cl", "nopk_cl", "cataloginventory_stock_cl", "catalog_product_entity", "url_rewrite"]


MYSQL_CATCH_UP_STOCK = [
    f"SET @sitectl_restoring='{md5('cataloginventory_stock_cl')}';",
    "DELETE FROM sitectl.sitectl_keys;",
    "INSERT INTO sitectl.sitectl_keys SELECT * FROM sitectl.changes WHERE tbl='cataloginventory_stock_cl' FOR UPDATE;",
    "DELETE w FROM sitectl.sitectl_keys k JOIN `magentodb`.`cataloginventory_stock_cl` w ON k.tbl='cataloginventory_stock_cl'"
    " AND w.`version_id` = JSON_VALUE(k.pk, '$[0]') AND k.pk = JSON_ARRAY(w.`version_id`);",
    "INSERT INTO `magentodb`.`cataloginventory_stock_cl` SELECT s.* FROM sitectl.sitectl_keys k JOIN"
    " `sitectl_s_golden`.`cataloginventory_stock_cl` s ON k.tbl='cataloginventory_stock_cl'"
    " AND s.`version_id` = JSON_VALUE(k.pk, '$[0]') AND k.pk = JSON_ARRAY(s.`version_id`);",
    "DELETE FROM sitectl.changes WHERE tbl='cataloginventory_stock_cl';",
]


def test_mysql_delta_sql_catches_up_the_tables_the_application_triggers_write_in_the_same_transaction():
    d = {**catch_up_detail(), "keys": {"cataloginventory_stock_item": ["[24]"]}}
    sql = mysql_store()._delta_sql("golden", d, d["pk"]).split("\n")
    at = sql.index("USE `magentodb`;")
    assert sql[at + 1] == "CREATE TEMPORARY TABLE IF NOT EXISTS sitectl.sitectl_keys LIKE sitectl.changes;"
    assert sql[at + 2:at + 8] == MYSQL_CATCH_UP_STOCK
    assert sql[at + 8:at + 10] == ["SET @sitectl_restoring=NULL;", "COMMIT;"]
    # The changelog's counter is set back only if it moved (the catch-up may have written nothing).
    assert sql[at + 10:] == [
        "SET @sitectl_s = IF((SELECT auto_increment FROM information_schema.tables WHERE table_schema='magentodb'"
        " AND table_name='cataloginventory_stock_cl') <=> 335, 'DO 0',"
        " 'ALTER TABLE `magentodb`.`cataloginventory_stock_cl` AUTO_INCREMENT=335');"
        " PREPARE sitectl_s FROM @sitectl_s; EXECUTE sitectl_s; DEALLOCATE PREPARE sitectl_s;"]


def test_mysql_catch_up_of_a_text_key_matches_by_key_text_and_of_no_key_restores_whole_when_logged():
    store = mysql_store()
    text = store._catch_up_sql("`sitectl_s_golden`", "url_rewrite", [["request_path", False], ["store_id", True]])
    assert text[3] == ("DELETE w FROM sitectl.sitectl_keys k JOIN `magentodb`.`url_rewrite` w ON k.tbl='url_rewrite'"
                       " AND w.`store_id` = JSON_VALUE(k.pk, '$[1]')"
                       " AND k.pk = JSON_ARRAY(w.`request_path`, w.`store_id`);")
    whole = store._catch_up_sql("`sitectl_s_golden`", "nopk_cl", [])
    assert whole[3:5] == ["DELETE FROM `magentodb`.`nopk_cl` WHERE EXISTS (SELECT 1 FROM sitectl.sitectl_keys);",
                          "INSERT INTO `magentodb`.`nopk_cl` SELECT * FROM `sitectl_s_golden`.`nopk_cl`"
                          " WHERE EXISTS (SELECT 1 FROM sitectl.sitectl_keys);"]


def test_mysql_delta_sql_without_targets_has_no_catch_up():
    d = mysql_golden_detail()
    assert "sitectl_keys" not in mysql_store()._delta_sql("golden", {**d, "targets": {}}, d["pk"])


@pytest.mark.parametrize("body, tables", [
    # Magento 2.4.8's own (the install dump's triggers)
    ("BEGIN\nINSERT IGNORE INTO `cataloginventory_stock_cl` (`entity_id`) VALUES (NEW.`product_id`);\nEND",
     {"cataloginventory_stock_cl"}),
    ("BEGIN\nIF (NOT(NEW.`qty` <=> OLD.`qty`)) THEN INSERT IGNORE INTO `catalog_product_price_cl` (`entity_id`)"
     " VALUES (NEW.`entity_id`); END IF;\nEND", {"catalog_product_price_cl"}),
    # qualified, bare, several statements, another database left out
    ("BEGIN UPDATE magentodb.stats SET n = n + 1; DELETE FROM `a``b` WHERE id = OLD.id;"
     " REPLACE INTO other.log VALUES (1); INSERT INTO x SELECT * FROM y JOIN `z` ON 1; END",
     {"stats", "a`b", "x", "y", "z"}),
    ("BEGIN SET @n = 1; END", set()),
])
def test_trigger_body_tables_names_what_a_trigger_may_write(body, tables):
    assert mysqlmod.trigger_body_tables(body, "magentodb") == tables


def test_trigger_body_tables_finds_each_changelog_of_the_magento_install_dump():
    # Every trigger of Magento 2.4.8's install dump writes its indexer's changelog (name _cl).
    from tests.stores.real_schema import SCHEMAS
    text = (SCHEMAS / "magento-2.4.8-install.sql").read_text(errors="replace")
    bodies = re.findall(r"CREATE\*/ /\*!50017 DEFINER=[^*]*\*/ /\*!50003 TRIGGER .*? FOR EACH ROW\s+(.*?)\*/;;", text, re.S)
    assert len(bodies) == 66
    for body in bodies:
        found = mysqlmod.trigger_body_tables(body, "magentodb")
        assert found and all(t.endswith("_cl") for t in found), body[:200]


# =============================================================================================
# PostgreSQL
# =============================================================================================
def md5name(tbl: str) -> str:
    return '"c' + hashlib.md5(tbl.encode()).hexdigest() + '"'


@pytest.mark.parametrize("tbl", ["public.users", 'public."Tags"', '"my schema"."a b"', 'public."say ""hi"""',
                                 "gitlab_partitions_static.analytics_cycle_analytics_merge_request_stage_events_00"])
def test_qname_is_c_and_the_md5_of_the_qualified_name(tbl):
    assert _qname(tbl) == md5name(tbl) and len(_qname(tbl)) == 35  # 33 bytes and the quotes


def quote_ident(s: str) -> str:
    """PostgreSQL's quote_ident, from its documentation: quoted unless a plain lower-case name."""
    return s if re.fullmatch(r"[a-z_][a-z0-9_]*", s) else '"' + s.replace('"', '""') + '"'


PG_NAME = st.lists(st.sampled_from(list('abz_"\'\\;. é$') + ["Tag", "😀", "$r$"]), min_size=1, max_size=8).map("".join)


@given(PG_NAME, PG_NAME)
@settings(database=None)
def test_qname_of_any_quoted_name_is_one_quoted_identifier_with_nothing_that_ends_it_early(schema, table):
    (tok,) = pg_tokens(_qname(f"{quote_ident(schema)}.{quote_ident(table)}"))
    assert tok.kind == "ident" and '"' not in tok.value


@pytest.mark.parametrize("a, b", [('public."a.b"', "public.a__b"), ('public."a""b"', "public.ab"),
                                  ('"a.b".c', "a.\"b.c\"")])
def test_qname_gives_distinct_tables_distinct_snapshot_tables(a, b):
    assert _qname(a) != _qname(b)


@pytest.mark.parametrize("keys, cols, lits", [
    (None, [["id", "integer"]], None),
    ([], [["id", "integer"]], None),
    (["null"], [["id", "integer"]], None),                         # a logged TRUNCATE
    (["[1]", "null"], [["id", "integer"]], None),
    (["[5]"], [["id", "bigint"]], "E'5'::bigint"),
    (["[5]", "[-6]"], [["id", "integer"]], "E'5'::integer, E'-6'::integer"),
    (['["a\'b\\\\c", 2]'], [["name", "text"], ["n", "integer"]], "(E'a\\'b\\\\c'::text, E'2'::integer)"),
    (['[true]'], [["flag", "boolean"]], "E'true'::boolean"),
    (['[1.5]'], [["x", "numeric"]], "E'1.5'::numeric"),
    (['["é"]'], [['Name', "character varying(20)"]], "E'é'::character varying(20)"),
    (['[1, 2]'], [["id", "integer"]], None),                       # not the key's shape
    (['[null]'], [["id", "integer"]], None),
    (['5'], [["id", "integer"]], None),
])
def test_literal_keys_exact(keys, cols, lits):
    assert _literal_keys(keys, cols) == lits


def test_literal_keys_keep_every_digit_of_a_numeric_key():
    assert _literal_keys(["[12345678901234567890.5]"], [["amount", "numeric"]]) == "E'12345678901234567890.5'::numeric"


def pk(*cols: tuple[str, str], insert: tuple[str, ...] = ()) -> dict:
    """A table's entry in the detail's ``pk``: key columns (raw names, types) and the columns an
    INSERT writes ([name, cast]: the cast when the copy keeps the column as text)."""
    return {"pk": [list(c) for c in cols], "cols": [list(c) if isinstance(c, tuple) else [c, ""] for c in insert]}


def pg_changes(keys: dict, pks: dict, rows: dict | None, sequences=(), **extra) -> Changes:
    """A detail as PostgresStore.parse_changes builds it (``rows`` empty when more than
    MAX_INLINE_KEYS keys were logged in all)."""
    detail = {"keys": keys, "ddl_seen": [], "retrack": False, "whole": [], "added": [], "ddl": [],
              "sequences": list(sequences), "full": False, "pk": pks, "rows": rows or {}}
    detail.update(extra)
    return Changes([f"table {t} ({n} rows)" for t, n in keys.items()], detail)


def j(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def test_pg_parse_changes_builds_the_detail_the_restore_reads():
    users, odd = "public.users", 'public."a\tb"'
    rows = [["M", j("golden"), ""], ["F", "3", ""], ["X", "7,9", "true"], ["K", j(users), "2"], ["K", j(odd), "1"],
            ["T", j(odd), ""], ["R", j(users), "[1]"], ["R", j(users), "[2]"], ["R", j(odd), "null"],
            ["D", j("table public.task_t"), "16400 table"], ["D", j("view public.v"), "16500 view"],
            ["Q", j("public.users_id_seq"), ""], ["P", j(users), '[[["id", "integer"]], []]'],
            ["P", j(odd), "[[], []]"]]
    ch = pg_store().parse_changes("golden", [SqlResult(rows)])
    assert ch.items == ['sequence public.users_id_seq', 'table public."a\tb" (1 rows)', "table public.task_t (created)",
                        "table public.users (2 rows)", "view public.v (created)"]
    assert ch.detail == {"keys": {users: 2, odd: 1}, "ddl_seen": [7, 9], "retrack": False, "whole": [odd],
                         "added": [["table public.task_t", "16400", "table"], ["view public.v", "16500", "view"]],
                         "ddl": ["table public.task_t", "view public.v"], "sequences": ["public.users_id_seq"],
                         "full": False, "pk": {users: pk(("id", "integer")), odd: pk()},
                         "rows": {users: ["[1]", "[2]"], odd: ["null"]}}


@pytest.mark.parametrize("rows, why", [
    ([["M", j("golden"), ""], ["F", "2", ""]], "a snapshot of another format"),
    ([["M", j("other"), ""], ["F", "3", ""]], "another baseline"),
    ([["F", "3", ""]], "no baseline"),
])
def test_pg_parse_changes_asks_for_a_full_restore_when_nothing_can_be_trusted(rows, why):
    assert pg_store().parse_changes("golden", [SqlResult(rows)]).detail == {"full": True}, why


def test_pg_parse_changes_changed_or_dropped_objects_take_the_full_path_and_missing_ddl_log_is_reinstalled():
    base = [["M", j("golden"), ""], ["F", "3", ""]]
    ch = pg_store().parse_changes("golden", [SqlResult(base + [["X", "", "true"], ["D", j("trigger t on public.x"), "gone"]])])
    assert ch.detail["full"] and ch.items == ["trigger t on public.x (dropped)"]
    ch = pg_store().parse_changes("golden", [SqlResult(base + [["X", "", "false"]])])
    assert not ch.detail["full"] and ch.detail["retrack"]
    assert ch.items == ["sitectl's DDL log (its event triggers were missing or off) (reinstalled)"]
    assert pgmod.EVENT_TRIGGERS_SQL in pg_store()._delta_sql("golden", ch, {})


SNAP = "sitectl_s_golden"
PRELUDE = ["SET jit = off;", "BEGIN;", "SET LOCAL session_replication_role = replica;",
           "SET LOCAL sitectl.restoring = 'on';"]
PG_GOLDEN_LITERAL = "\n".join(PRELUDE + [
    "LOCK TABLE ONLY public.nopk, ONLY public.post_tags, ONLY public.users IN EXCLUSIVE MODE;",
    f"DELETE FROM ONLY public.nopk; INSERT INTO public.nopk OVERRIDING SYSTEM VALUE SELECT x.* FROM "
    f"{SNAP}.{md5name('public.nopk')} x; DELETE FROM sitectl.changes WHERE tbl = E'public.nopk';",
    "DELETE FROM ONLY public.post_tags x WHERE (x.\"post_id\", x.\"tag\") IN ((E'7'::integer, E'a\\'b'::text)); "
    "INSERT INTO public.post_tags OVERRIDING SYSTEM VALUE SELECT x.* FROM "
    f"{SNAP}.{md5name('public.post_tags')} x WHERE (x.\"post_id\", x.\"tag\") IN ((E'7'::integer, E'a\\'b'::text)); "
    "DELETE FROM sitectl.changes WHERE tbl = E'public.post_tags' AND pk IN (E'[7, \"a\\'b\"]'::jsonb);",
    "DELETE FROM ONLY public.users x WHERE x.\"id\" IN (E'1'::integer, E'2'::integer); "
    "INSERT INTO public.users (\"id\", \"n\") OVERRIDING SYSTEM VALUE SELECT x.\"id\", x.\"n\" FROM "
    f"{SNAP}.{md5name('public.users')} x WHERE x.\"id\" IN (E'1'::integer, E'2'::integer); "
    "DELETE FROM sitectl.changes WHERE tbl = E'public.users' AND pk IN (E'[1]'::jsonb,E'[2]'::jsonb);",
    f"SELECT setval(E'public.users_id_seq', g.l, g.c) FROM {SNAP}.__sequences g WHERE g.s = E'public.users_id_seq';",
    "COMMIT;",
])


def pg_golden_changes() -> Changes:
    return pg_changes({"public.users": 2, "public.post_tags": 1, "public.nopk": 1},
                      {"public.users": pk(("id", "integer"), insert=("id", "n")),
                       "public.post_tags": pk(("post_id", "integer"), ("tag", "text")), "public.nopk": pk()},
                      {"public.users": ["[1]", "[2]"], "public.post_tags": ['[7, "a\'b"]'], "public.nopk": ["null"]},
                      ["public.users_id_seq"], whole=["public.nopk"])


def test_pg_delta_sql_golden_with_keys_as_literals():
    ch = pg_golden_changes()
    assert pg_store()._delta_sql("golden", ch, ch.detail["pk"]) == PG_GOLDEN_LITERAL


PG_GOLDEN_SERVER_SIDE = "\n".join(PRELUDE + [
    "LOCK TABLE ONLY public.logs, ONLY public.users IN EXCLUSIVE MODE;",
    f"DELETE FROM ONLY public.logs; INSERT INTO public.logs OVERRIDING SYSTEM VALUE SELECT x.* FROM "
    f"{SNAP}.{md5name('public.logs')} x; DELETE FROM sitectl.changes WHERE tbl = E'public.logs';",
    "DELETE FROM ONLY public.users x USING (SELECT pk FROM sitectl.changes WHERE tbl = E'public.users' AND pk <> 'null') k "
    "WHERE x.\"id\" = (k.pk ->> 0)::integer; INSERT INTO public.users OVERRIDING SYSTEM VALUE SELECT x.* FROM "
    f"{SNAP}.{md5name('public.users')} x JOIN (SELECT pk FROM sitectl.changes WHERE tbl = E'public.users' AND "
    "pk <> 'null') k ON x.\"id\" = (k.pk ->> 0)::integer; "
    "DELETE FROM sitectl.changes WHERE tbl = E'public.users' AND pk <> 'null';",
    "COMMIT;",
])


def test_pg_delta_sql_golden_server_side_when_the_keys_were_not_read():
    """A TRUNCATE logged after the detection stays in the log (``pk <> 'null'``) for the closing
    check, which then restores the whole table."""
    ch = pg_changes({"public.users": 3000, "public.logs": PG_MAX_KEYS + 1},
                    {"public.users": pk(("id", "integer")), "public.logs": pk(("id", "bigint"))}, None)
    assert pg_store()._delta_sql("golden", ch, ch.detail["pk"]) == PG_GOLDEN_SERVER_SIDE


def test_pg_delta_sql_of_a_logged_truncate_restores_the_whole_table():
    ch = pg_changes({"public.users": 3000}, {"public.users": pk(("id", "integer"))}, None, whole=["public.users"])
    assert (f"DELETE FROM ONLY public.users; INSERT INTO public.users OVERRIDING SYSTEM VALUE SELECT x.* FROM "
            f"{SNAP}.{md5name('public.users')} x; DELETE FROM sitectl.changes WHERE tbl = E'public.users';"
            in pg_store()._delta_sql("golden", ch, ch.detail["pk"]))


def test_pg_delta_sql_of_only_sequences_locks_nothing():
    ch = pg_changes({}, {}, None, ["public.a_seq"])
    assert pg_store()._delta_sql("golden", ch, {}) == "\n".join(PRELUDE + [
        f"SELECT setval(E'public.a_seq', g.l, g.c) FROM {SNAP}.__sequences g WHERE g.s = E'public.a_seq';", "COMMIT;"])


def test_pg_delta_sql_drops_what_was_created_by_oid_and_restores_nothing_of_it():
    ch = pg_changes({"public.task_t": 1, "public.users": 1},
                    {"public.users": pk(("id", "integer"))}, {"public.task_t": ["[1]"], "public.users": ["[4]"]},
                    ["public.task_t_id_seq", "public.users_id_seq"], ddl_seen=[12, 14],
                    added=[["table public.task_t", "16400", "table"], ["sequence public.task_t_id_seq", "16401", "sequence"],
                           ["trigger t on public.users", "16402", "trigger"]])
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    assert sql.startswith("\n".join(PRELUDE + [
        "SELECT sitectl.drop_object(E'table', 16400);", "SELECT sitectl.drop_object(E'sequence', 16401);",
        "SELECT sitectl.drop_object(E'trigger', 16402);", "DELETE FROM sitectl.changes WHERE to_regclass(tbl) IS NULL;",
        "LOCK TABLE ONLY public.users IN EXCLUSIVE MODE;"]))
    assert "task_t" not in sql.split("to_regclass")[1]
    assert sql.endswith("\nDELETE FROM sitectl.ddl WHERE n IN (12, 14);\nCOMMIT;")
    assert "setval(E'public.users_id_seq'" in sql


def test_pg_parse_changes_ddl_with_no_tracked_difference_is_an_item_so_a_restore_clears_the_log():
    rows = [["M", j("golden"), ""], ["F", "3", ""], ["X", "4", "true"]]
    ch = pg_store().parse_changes("golden", [SqlResult(rows)])
    assert ch.items == ["DDL with no tracked difference (log cleared)"] and not ch.detail["full"]
    assert pg_store()._delta_sql("golden", ch, {}).endswith("\nDELETE FROM sitectl.ddl WHERE n IN (4);\nCOMMIT;")


def test_pg_delta_sql_casts_back_the_columns_a_copy_keeps_as_text():
    """A column of an application-defined type (an enum, a domain, an extension's type) is text in
    the copy, so a full restore that drops and re-creates the type never touches the snapshot."""
    cols = (("id", ""), ("mood", "mood"), ("tags", "public.tag[]"))
    ch = pg_changes({"public.t": 1, "public.k": 1000 + MAX_INLINE_KEYS},
                    {"public.t": pk(("id", "integer"), insert=cols), "public.k": pk(("mood", "mood"), insert=cols)},
                    {"public.t": ["[1]"]})
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    assert (f'INSERT INTO public.t ("id", "mood", "tags") OVERRIDING SYSTEM VALUE SELECT x."id", x."mood"::mood, '
            f'x."tags"::public.tag[] FROM {SNAP}.{md5name("public.t")} x WHERE x."id" IN (E\'1\'::integer);') in sql
    assert 'ON x."mood"::mood = (k.pk ->> 0)::mood;' in sql
    assert 'DELETE FROM ONLY public.k x USING' in sql and 'WHERE x."mood" = (k.pk ->> 0)::mood;' in sql
    pglast.parse_sql(sql)


def test_pg_delta_sql_moves_the_tables_with_most_literal_keys_server_side_to_stay_under_the_budget():
    long = "v" * 120
    rows = {"public.wide": [json.dumps([f"{long}{i}"]) for i in range(900)], "public.small": ["[1]"]}
    ch = pg_changes({t: len(r) for t, r in rows.items()}, {"public.wide": pk(("k", "text")),
                                                            "public.small": pk(("id", "integer"))}, rows)
    assert len(rows["public.wide"]) + 1 <= MAX_INLINE_KEYS
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    assert len(sql.encode()) <= SQL_BUDGET
    assert "DELETE FROM ONLY public.wide x USING (SELECT pk FROM sitectl.changes WHERE tbl = E'public.wide'" in sql
    assert "DELETE FROM ONLY public.small x WHERE x.\"id\" IN (E'1'::integer);" in sql


def test_pg_budget_loop_keeps_every_literal_table_when_the_text_fits():
    rows = {f"public.t{i}": ["[1]", "[2]"] for i in range(5)}
    ch = pg_changes({t: 2 for t in rows}, {t: pk(("id", "integer")) for t in rows}, rows)
    assert " USING " not in pg_store()._delta_sql("golden", ch, ch.detail["pk"])


def test_pg_golden_texts_are_valid_postgresql():
    kinds = [type(s.stmt).__name__ for s in pglast.parse_sql(PG_GOLDEN_LITERAL)]
    assert kinds == ["VariableSetStmt", "TransactionStmt", "VariableSetStmt", "VariableSetStmt", "LockStmt",
                     "DeleteStmt", "InsertStmt", "DeleteStmt", "DeleteStmt", "InsertStmt", "DeleteStmt", "DeleteStmt",
                     "InsertStmt", "DeleteStmt", "SelectStmt", "TransactionStmt"]
    kinds = [type(s.stmt).__name__ for s in pglast.parse_sql(PG_GOLDEN_SERVER_SIDE)]
    assert kinds == ["VariableSetStmt", "TransactionStmt", "VariableSetStmt", "VariableSetStmt", "LockStmt",
                     "DeleteStmt", "InsertStmt", "DeleteStmt", "DeleteStmt", "InsertStmt", "DeleteStmt",
                     "TransactionStmt"]


def test_pg_restore_requests_decisions():
    s = pg_store()
    ch = pg_golden_changes()
    (q,) = s.restore_requests("golden", ch)
    assert q.sql == PG_GOLDEN_LITERAL
    assert q.argv == ["psql", "-U", "postgres", "-d", "postmill", "-X", "-q", "-A", "-t", "-F", "\t", "-v",
                      "ON_ERROR_STOP=1", "-c", PG_GOLDEN_LITERAL]
    assert s.restore_requests("golden", Changes([], {})) == []
    assert s.restore_requests("golden", Changes(["x"], {**ch.detail, "full": True})) is None
    assert s.restore_requests("golden", Changes(["x"], {**ch.detail, "pk": None})) is None
    assert s.restore_requests("golden", Changes(["x"], {**ch.detail, "pk": {"public.users": pk(("id", "integer"))}})) is None


@pytest.mark.parametrize("col, typ, key", [("amount", "numeric(10,2)", "[1.50]"), ("order id", "integer", "[3]"),
                                           ("a,b", "integer", "[3]"), ('say "hi"', "bigint", "[3]")])
def test_pg_delta_sql_handles_any_key_column_name_and_type(col, typ, key):
    ch = pg_changes({"public.t": 1}, {"public.t": pk((col, typ))}, {"public.t": [key]})
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    ident = '"' + col.replace('"', '""') + '"'
    assert f"DELETE FROM ONLY public.t x WHERE x.{ident} IN (E'" in sql and f"'::{typ});" in sql
    pglast.parse_sql(sql)


def test_pg_delta_sql_survives_a_table_name_holding_a_dollar_tag():
    tbl = 'public."t$r$x"'
    ch = pg_changes({tbl: 3000}, {tbl: pk(("id", "integer"))}, None)
    stmts = split_statements(pg_tokens(pg_store()._delta_sql("golden", ch, ch.detail["pk"])))
    assert [s[0].value for s in stmts] == ["SET", "BEGIN", "SET", "SET", "LOCK", "DELETE", "INSERT", "DELETE", "COMMIT"]


# -- PostgreSQL properties ---------------------------------------------------------------------
PG_KEY_STR = KEY_STR.map(lambda s: s.replace("\0", ""))  # PostgreSQL text cannot hold NUL
PG_TYPES = {"integer": st.integers(-2**31, 2**31 - 1), "bigint": st.integers(-2**63, 2**63 - 1),
            "text": PG_KEY_STR, "character varying(255)": PG_KEY_STR}


@st.composite
def pg_detail(draw):
    literal = draw(st.booleans())  # keys read by the detection (few logged) or not (many)
    names = draw(st.lists(st.tuples(PG_NAME, PG_NAME), min_size=1, max_size=4, unique=True))
    keys, pks, rows, cols_of = {}, {}, {}, {}
    for schema, table in names:
        tbl = f"{quote_ident(schema)}.{quote_ident(table)}"
        if tbl in keys:
            continue
        colnames = draw(st.lists(st.text(alphabet='abcZ_"é ,$', min_size=1, max_size=6), min_size=1, max_size=3,
                                 unique=True))
        if draw(st.integers(0, 5)) == 0:
            pks[tbl] = pk()
            keys[tbl] = 1
            continue
        types = [draw(st.sampled_from(sorted(PG_TYPES))) for _ in colnames]
        cols_of[tbl] = list(zip(colnames, types))
        pks[tbl] = pk(*cols_of[tbl])
        if literal:
            vals = draw(st.lists(st.tuples(*[PG_TYPES[t] for t in types]), min_size=1, max_size=4, unique=True))
            rows[tbl] = [json.dumps(list(v), ensure_ascii=False) for v in vals]
            keys[tbl] = len(vals)
        else:
            keys[tbl] = draw(st.integers(MAX_INLINE_KEYS + 1, PG_MAX_KEYS + 10))
    seqs = [f"{quote_ident(s)}.{quote_ident(t + '_seq')}" for s, t in draw(st.lists(st.tuples(PG_NAME, PG_NAME),
                                                                                     max_size=2, unique=True))]
    return pg_changes(keys, pks, rows if literal else None, seqs), cols_of


def _strs(stmt: list[Tok]) -> list:
    return [t.value for t in stmt if t.kind == "str"]


@given(pg_detail())
@settings(database=None, max_examples=100, deadline=None)
def test_pg_delta_sql_keys_appear_only_as_literals_in_protocol_order(case):
    ch, cols_of = case
    keys, rows = ch.detail["keys"], ch.detail["rows"]
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    pglast.parse_sql(sql)  # PostgreSQL's own grammar accepts the whole text
    stmts = split_statements(pg_tokens(sql))
    assert [" ".join(t.raw for t in s) for s in stmts[:4]] == [
        "SET jit = off", "BEGIN", "SET LOCAL session_replication_role = replica", "SET LOCAL sitectl . restoring = 'on'"]
    assert [t.value for t in stmts[4][:2]] == ["LOCK", "TABLE"]
    assert "".join(t.raw for t in stmts[4][2:-3]) == ",".join("ONLY" + t for t in sorted(keys))
    i = 5
    for tbl in sorted(keys):
        snap = f"{SNAP}.{md5name(tbl)}"
        dele, ins, clear = stmts[i:i + 3]
        i += 3
        n = len(pg_tokens(tbl))
        assert "".join(t.raw for t in dele[:3 + n]) == "DELETEFROMONLY" + tbl
        assert "".join(t.raw for t in ins[:2 + n]) == "INSERTINTO" + tbl
        assert snap in "".join(t.raw for t in ins)
        if tbl in rows:  # literal keys: each key value once in DELETE and INSERT, cast to its type
            flat = [v if isinstance(v, str) else str(v) for k in rows[tbl] for v in json.loads(k)]
            assert _strs(dele) == flat and _strs(ins) == flat
            assert _strs(clear) == [tbl, *rows[tbl]]
            casts = [dele[j + 2].raw for j, t in enumerate(dele) if t.kind == "str"]
            assert casts == [re.match(r"\w+", typ).group() for k in rows[tbl] for (_, typ) in cols_of[tbl]]
        elif ch.detail["pk"][tbl]["pk"] and keys[tbl] <= PG_MAX_KEYS:  # server side, over the log
            assert _strs(dele) == [tbl, "null"] and _strs(ins) == [tbl, "null"] and _strs(clear) == [tbl, "null"]
        else:  # whole table
            assert len(dele) == 3 + n and _strs(ins) == []
            assert _strs(clear) == [tbl]
    for q in ch.detail["sequences"]:
        assert _strs(stmts[i]) == [q, q]
        i += 1
    assert [t.value for t in stmts[i]] == ["COMMIT"] and i == len(stmts) - 1


def test_the_modules_limits_are_the_documented_ones():
    assert (mysqlmod.MAX_KEYS_PER_TABLE, pgmod.MAX_KEYS_PER_TABLE, pgmod.MAX_INLINE_KEYS) == (2000, 5000, 2000)
