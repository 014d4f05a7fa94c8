"""The delta-restore SQL the MySQL and PostgreSQL stores write (``MysqlStore._delta_sql``,
``PostgresStore._delta_sql`` and their helpers), checked as text: no database is involved.

The stores are built on exec sessions whose transport never runs anything: building SQL text
needs no server. Change details are made the way detection makes them (``parse_changes`` on
the rows its query returns, or that shape by hand). Golden strings below were written by
reading the code; they document the restore protocol:

MySQL, one text: ``SET FOREIGN_KEY_CHECKS=0``, ``START TRANSACTION``; per table with logged
keys, sorted by name: ``SET @sitectl_restoring`` to the table's MD5 (its own tracking triggers
skip the restore's writes, every other table's log what the application's triggers write),
``DELETE`` the rows by primary key, ``INSERT ... SELECT`` them back from the snapshot database,
``DELETE`` exactly those keys from ``sitectl.changes``; then each table restored whole (no
primary key, an empty key, more than ``MAX_KEYS_PER_TABLE`` keys, an unreadable key, or moved
there to keep the text under ``SQL_BUDGET``), sorted: the same ``SET``, ``DELETE`` all,
``INSERT`` all, its change-log ``DELETE``; ``SET @sitectl_restoring=NULL``; ``COMMIT``; then
``ALTER TABLE ... AUTO_INCREMENT`` of every touched table the snapshot has a counter for (an
ALTER commits, so after the rows). Every text a session sends starts with
``MYSQL_SESSION`` (``NO_AUTO_VALUE_ON_ZERO``).

PostgreSQL, one transaction: ``BEGIN``, ``SET LOCAL session_replication_role = replica`` (no
triggers, no FK checks), ``LOCK TABLE`` every restored table; per table, sorted: keys read by
the detection as literals (``DELETE ... WHERE key IN (literals)``, ``INSERT ... SELECT`` from the
snapshot schema, delete those keys from the log), else a server-side ``DO`` block over the log
(a logged TRUNCATE, ``'null'``, means the whole table), else (no primary key, over
``MAX_KEYS_PER_TABLE``) the whole table; then ``setval`` per changed sequence; ``COMMIT``.
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


def mysql_detection(name: str, base: dict, live: dict, keys: dict, pk: dict, golden_ai: dict) -> list:
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
        "golden_ai": {"sales_order": "12", "quote": "5"}, "objects": False}
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
        "SET FOREIGN_KEY_CHECKS=0;\nSTART TRANSACTION;\nSET @sitectl_restoring=NULL;\nCOMMIT;\n"
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


MY_WORDS = {"SET", "@sitectl_restoring", "NULL", "FOREIGN_KEY_CHECKS", "START", "TRANSACTION", "DELETE", "FROM", "WHERE", "AND",
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
    assert [" ".join(t.raw for t in s) for s in stmts[:2]] == ["SET FOREIGN_KEY_CHECKS = 0", "START TRANSACTION"]
    whole = sorted(t for t, ks in d["keys"].items() if t not in d["pk"] or "" in ks)
    keyed = sorted(t for t in d["keys"] if t not in whole)
    i = 2

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


# =============================================================================================
# PostgreSQL
# =============================================================================================
@pytest.mark.parametrize("tbl, name", [
    ("public.users", '"public__users"'),
    ('public."Tags"', '"public__Tags"'),
    ('"my schema"."a b"', '"my schema__a b"'),
    ('public."say ""hi"""', '"public__say hi"'),
])
def test_qname_is_the_snapshot_tables_quoted_name(tbl, name):
    assert _qname(tbl) == name


def quote_ident(s: str) -> str:
    """PostgreSQL's quote_ident, from its documentation: quoted unless a plain lower-case name."""
    return s if re.fullmatch(r"[a-z_][a-z0-9_]*", s) else '"' + s.replace('"', '""') + '"'


PG_NAME = st.lists(st.sampled_from(list('abz_"\'\\;. é$') + ["Tag", "😀"]), min_size=1, max_size=8).map("".join)


@given(PG_NAME, PG_NAME)
@settings(database=None)
def test_qname_of_any_quoted_name_is_one_quoted_identifier_with_nothing_that_ends_it_early(schema, table):
    (tok,) = pg_tokens(_qname(f"{quote_ident(schema)}.{quote_ident(table)}"))
    assert tok.kind == "ident" and '"' not in tok.value


@pytest.mark.xfail(strict=True, reason="BUG: _qname drops quotes and maps '.' to '__', so distinct tables share "
                                       "a snapshot table: public.\"a.b\" and public.a__b, public.\"a\"\"b\" and "
                                       "public.ab; a snapshot of such a database fails (relation already exists)")
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
    (['["é"]'], [['"Name"', "character varying(20)"]], "E'é'::character varying(20)"),
    (['[1, 2]'], [["id", "integer"]], None),                       # not the key's shape
    (['[null]'], [["id", "integer"]], None),
    (['5'], [["id", "integer"]], None),
])
def test_literal_keys_exact(keys, cols, lits):
    assert _literal_keys(keys, cols) == lits


@pytest.mark.xfail(strict=True, reason="BUG: _literal_keys reads keys with json.loads, so a numeric key with more "
                                       "digits than a float holds is rounded (12345678901234567890.5 -> "
                                       "1.2345678901234567e+19): the row is not restored but its log entry is "
                                       "cleared (keys are cleared by their text); json.loads(parse_float=Decimal)")
def test_literal_keys_keep_every_digit_of_a_numeric_key():
    assert _literal_keys(["[12345678901234567890.5]"], [["amount", "numeric"]]) == "E'12345678901234567890.5'::numeric"


def pg_changes(keys: dict, pk: dict, rows: dict | None, sequences=()) -> Changes:
    """A detail as PostgresStore.parse_changes builds it (``rows`` empty when more than
    MAX_INLINE_KEYS keys were logged in all)."""
    return Changes([f"table {t} ({n} rows)" for t, n in keys.items()],
                   {"keys": keys, "ddl": [], "sequences": list(sequences), "full": False, "pk": pk,
                    "rows": rows or {}})


def test_pg_parse_changes_builds_the_detail_the_restore_reads():
    rows = [["M", "golden", ""], ["K", "public.users", "2"], ["R", "public.users", "[1]"],
            ["R", "public.users", "[2]"], ["B", "public.users", "d1"], ["S", "public.users", "d1"],
            ["B", "public.gone", "d2"], ["Q", "public.users_id_seq", "x"], ["P", "public.users", "id integer"]]
    ch = pg_store().parse_changes("golden", [SqlResult(rows)])
    assert ch.items == ["sequence public.users_id_seq", "table public.gone (structure, created or dropped)",
                        "table public.users (2 rows)"]
    assert ch.detail == {"keys": {"public.users": 2}, "ddl": ["public.gone"], "sequences": ["public.users_id_seq"],
                         "full": True, "pk": {"public.users": "id integer"}, "rows": {"public.users": ["[1]", "[2]"]}}


PG_GOLDEN_LITERAL = "\n".join([
    "BEGIN;",
    "SET LOCAL session_replication_role = replica;",
    "LOCK TABLE public.nopk, public.post_tags, public.users IN EXCLUSIVE MODE;",
    "DELETE FROM public.nopk; INSERT INTO public.nopk SELECT * FROM sitectl_s_golden.\"public__nopk\"; "
    "DELETE FROM sitectl.changes WHERE tbl = E'public.nopk';",
    "DELETE FROM public.post_tags x WHERE (x.post_id, x.tag) IN ((E'7'::integer, E'a\\'b'::text)); "
    "INSERT INTO public.post_tags SELECT x.* FROM sitectl_s_golden.\"public__post_tags\" x "
    "WHERE (x.post_id, x.tag) IN ((E'7'::integer, E'a\\'b'::text)); "
    "DELETE FROM sitectl.changes WHERE tbl = E'public.post_tags' AND pk IN (E'[7, \"a\\'b\"]'::jsonb);",
    "DELETE FROM public.users x WHERE x.id IN (E'1'::integer, E'2'::integer); "
    "INSERT INTO public.users SELECT x.* FROM sitectl_s_golden.\"public__users\" x WHERE x.id IN (E'1'::integer, E'2'::integer); "
    "DELETE FROM sitectl.changes WHERE tbl = E'public.users' AND pk IN (E'[1]'::jsonb,E'[2]'::jsonb);",
    "SELECT setval(E'public.users_id_seq', g.last_value, g.is_called) FROM sitectl_s_golden.__sequences g "
    "WHERE g.\"?column?\" = E'public.users_id_seq';",
    "COMMIT;",
])


def pg_golden_changes() -> Changes:
    return pg_changes({"public.users": 2, "public.post_tags": 1, "public.nopk": 1},
                      {"public.users": "id integer", "public.post_tags": "post_id integer,tag text", "public.nopk": ""},
                      {"public.users": ["[1]", "[2]"], "public.post_tags": ['[7, "a\'b"]'], "public.nopk": ["null"]},
                      ["public.users_id_seq"])


def test_pg_delta_sql_golden_with_keys_as_literals():
    ch = pg_golden_changes()
    assert pg_store()._delta_sql("golden", ch, ch.detail["pk"]) == PG_GOLDEN_LITERAL


def test_pg_delta_sql_golden_server_side_when_the_keys_were_not_read():
    ch = pg_changes({"public.users": 3000, "public.logs": PG_MAX_KEYS + 1},
                    {"public.users": "id integer", "public.logs": "id bigint"}, None)
    keyset = "(SELECT pk FROM sitectl.changes WHERE tbl = E'public.users' AND pk <> 'null')"
    snap = 'sitectl_s_golden."public__users"'
    assert pg_store()._delta_sql("golden", ch, ch.detail["pk"]) == "\n".join([
        "BEGIN;",
        "SET LOCAL session_replication_role = replica;",
        "LOCK TABLE public.logs, public.users IN EXCLUSIVE MODE;",
        "DELETE FROM public.logs; INSERT INTO public.logs SELECT * FROM sitectl_s_golden.\"public__logs\"; "
        "DELETE FROM sitectl.changes WHERE tbl = E'public.logs';",
        "DO $r$ BEGIN IF EXISTS (SELECT 1 FROM sitectl.changes WHERE tbl = E'public.users' AND pk = 'null') THEN "
        f"DELETE FROM public.users; INSERT INTO public.users SELECT * FROM {snap}; ELSE "
        f"DELETE FROM public.users x USING {keyset} k WHERE x.id = (k.pk ->> 0)::integer; "
        f"INSERT INTO public.users SELECT x.* FROM {snap} x JOIN {keyset} k ON x.id = (k.pk ->> 0)::integer; "
        "END IF; END $r$; DELETE FROM sitectl.changes WHERE tbl = E'public.users';",
        "COMMIT;",
    ])


def test_pg_delta_sql_of_a_logged_truncate_takes_the_server_side_path_that_restores_the_whole_table():
    ch = pg_changes({"public.users": 1}, {"public.users": "id integer"}, {"public.users": ["null"]})
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    assert "DO $r$ BEGIN IF EXISTS (SELECT 1 FROM sitectl.changes WHERE tbl = E'public.users' AND pk = 'null') THEN " \
           "DELETE FROM public.users; INSERT INTO public.users SELECT * FROM sitectl_s_golden.\"public__users\"; ELSE" in sql


def test_pg_delta_sql_of_only_sequences_locks_nothing():
    ch = pg_changes({}, {}, None, ["public.a_seq"])
    assert pg_store()._delta_sql("golden", ch, {}) == (
        "BEGIN;\nSET LOCAL session_replication_role = replica;\n"
        "SELECT setval(E'public.a_seq', g.last_value, g.is_called) FROM sitectl_s_golden.__sequences g "
        "WHERE g.\"?column?\" = E'public.a_seq';\nCOMMIT;")


def test_pg_delta_sql_moves_the_tables_with_most_literal_keys_server_side_to_stay_under_the_budget():
    long = "v" * 120
    rows = {"public.wide": [json.dumps([f"{long}{i}"]) for i in range(900)],
            "public.small": ["[1]"]}
    ch = pg_changes({t: len(r) for t, r in rows.items()}, {"public.wide": "k text", "public.small": "id integer"}, rows)
    assert len(rows["public.wide"]) + 1 <= MAX_INLINE_KEYS
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    assert len(sql.encode()) <= SQL_BUDGET
    assert "DELETE FROM public.wide x USING (SELECT pk FROM sitectl.changes WHERE tbl = E'public.wide'" in sql
    assert "DELETE FROM public.small x WHERE x.id IN (E'1'::integer);" in sql


def test_pg_golden_texts_are_valid_postgresql():
    ch = pg_changes({"public.users": 3000, "public.logs": PG_MAX_KEYS + 1},
                    {"public.users": "id integer", "public.logs": "id bigint"}, None, ["public.users_id_seq"])
    server_side = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    assert [type(s.stmt).__name__ for s in pglast.parse_sql(PG_GOLDEN_LITERAL)] == [
        "TransactionStmt", "VariableSetStmt", "LockStmt", "DeleteStmt", "InsertStmt", "DeleteStmt", "DeleteStmt",
        "InsertStmt", "DeleteStmt", "DeleteStmt", "InsertStmt", "DeleteStmt", "SelectStmt", "TransactionStmt"]
    assert [type(s.stmt).__name__ for s in pglast.parse_sql(server_side)] == [
        "TransactionStmt", "VariableSetStmt", "LockStmt", "DeleteStmt", "InsertStmt", "DeleteStmt", "DoStmt",
        "DeleteStmt", "SelectStmt", "TransactionStmt"]


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
    assert s.restore_requests("golden", Changes(["x"], {**ch.detail, "pk": {"public.users": "id integer"}})) is None


@pytest.mark.xfail(strict=True, reason="BUG: PostgresStore splits the primary-key text (\"col type,col type\" from "
                                       "format_type) on ',' and ' ': a key column of type numeric(10,2) makes "
                                       "_delta_sql raise ValueError; a quoted column name with a space or comma "
                                       "yields broken SQL")
@pytest.mark.parametrize("pk, key", [("amount numeric(10,2)", "[1.50]"), ('"order id" integer', "[3]"),
                                     ('"a,b" integer', "[3]")])
def test_pg_delta_sql_handles_any_key_column_name_and_type(pk, key):
    ch = pg_changes({"public.t": 1}, {"public.t": pk}, {"public.t": [key]})
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    col, typ = pk.rsplit(" ", 1)
    assert f"DELETE FROM public.t x WHERE x.{col} IN (E'" in sql and f"'::{typ});" in sql
    if pglast is not None:
        pglast.parse_sql(sql)


@pytest.mark.xfail(strict=True, reason="BUG: the server-side restore is a DO $r$...$r$ block that pastes the table "
                                       "name in: a table (or schema) named with '$r$' ends the block early and the "
                                       "rest of the text runs as SQL")
def test_pg_delta_sql_server_side_block_survives_a_table_name_holding_the_dollar_tag():
    tbl = 'public."t$r$x"'
    ch = pg_changes({tbl: 3000}, {tbl: "id integer"}, None)
    stmts = split_statements(pg_tokens(pg_store()._delta_sql("golden", ch, ch.detail["pk"])))
    assert [s[0].value for s in stmts] == ["BEGIN", "SET", "LOCK", "DO", "DELETE", "COMMIT"]


# -- PostgreSQL properties ---------------------------------------------------------------------
PG_KEY_STR = KEY_STR.map(lambda s: s.replace("\0", ""))  # PostgreSQL text cannot hold NUL
PG_TYPES = {"integer": st.integers(-2**31, 2**31 - 1), "bigint": st.integers(-2**63, 2**63 - 1),
            "text": PG_KEY_STR, "character varying(255)": PG_KEY_STR}
PG_SAFE_NAME = PG_NAME.filter(lambda s: "$r$" not in s)  # see the xfail above


@st.composite
def pg_detail(draw):
    literal = draw(st.booleans())  # keys read by the detection (few logged) or not (many)
    names = draw(st.lists(st.tuples(PG_SAFE_NAME, PG_SAFE_NAME), min_size=1, max_size=4, unique=True))
    keys, pk, rows, cols_of = {}, {}, {}, {}
    for schema, table in names:
        tbl = f"{quote_ident(schema)}.{quote_ident(table)}"
        if tbl in keys:
            continue
        # Column names without space or comma (see the xfail above).
        colnames = draw(st.lists(st.text(alphabet="abcZ_\"é", min_size=1, max_size=6), min_size=1, max_size=3,
                                 unique_by=quote_ident))
        if draw(st.integers(0, 5)) == 0:
            pk[tbl] = ""
            keys[tbl] = 1
            continue
        types = [draw(st.sampled_from(sorted(PG_TYPES))) for _ in colnames]
        cols_of[tbl] = [(quote_ident(c), t) for c, t in zip(colnames, types)]
        pk[tbl] = ",".join(f"{c} {t}" for c, t in cols_of[tbl])
        if literal:
            vals = draw(st.lists(st.tuples(*[PG_TYPES[t] for t in types]), min_size=1, max_size=4, unique=True))
            rows[tbl] = [json.dumps(list(v), ensure_ascii=False) for v in vals]
            keys[tbl] = len(vals)
        else:
            keys[tbl] = draw(st.integers(MAX_INLINE_KEYS + 1, PG_MAX_KEYS + 10))
    seqs = [f"{quote_ident(s)}.{quote_ident(t + '_seq')}" for s, t in draw(st.lists(st.tuples(PG_SAFE_NAME, PG_SAFE_NAME),
                                                                                     max_size=2, unique=True))]
    return pg_changes(keys, pk, rows if literal else None, seqs), cols_of


def _strs(stmt: list[Tok]) -> list:
    return [t.value for t in stmt if t.kind == "str"]


@given(pg_detail())
@settings(database=None, max_examples=100, deadline=None)
def test_pg_delta_sql_keys_appear_only_as_literals_in_protocol_order(case):
    ch, cols_of = case
    keys, rows = ch.detail["keys"], ch.detail["rows"]
    sql = pg_store()._delta_sql("golden", ch, ch.detail["pk"])
    if pglast is not None:
        pglast.parse_sql(sql)  # PostgreSQL's own grammar accepts the whole text
    toks = pg_tokens(sql)
    for t in toks:
        if t.kind != "str":
            assert "KV" not in t.raw, t
    stmts = split_statements(toks)
    assert [t.value for t in stmts[0]] == ["BEGIN"]
    assert " ".join(t.raw for t in stmts[1]) == "SET LOCAL session_replication_role = replica"
    assert [t.value for t in stmts[2][:2]] == ["LOCK", "TABLE"]
    assert "".join(t.raw for t in stmts[2][2:-3]) == ",".join(sorted(keys))
    i = 3
    for tbl in sorted(keys):
        snap = "sitectl_s_golden." + _qname(tbl)
        if tbl in rows:  # literal keys: DELETE, INSERT, clear those keys
            dele, ins, clear = stmts[i:i + 3]
            i += 3
            flat = [v if isinstance(v, str) else str(v) for k in rows[tbl] for v in json.loads(k)]
            assert _strs(dele) == flat and _strs(ins) == flat
            assert "".join(t.raw for t in ins[:5]) == "INSERTINTO" + tbl
            assert snap in "".join(t.raw for t in ins)
            assert _strs(clear) == [tbl, *rows[tbl]]
            # Each key value is cast to its column's type.
            casts = [dele[j + 2:j + 3][0].raw for j, t in enumerate(dele) if t.kind == "str"]
            assert casts == [re.match(r"\w+", typ).group() for k in rows[tbl] for (_, typ) in cols_of[tbl]]
        elif ch.detail["pk"][tbl] and keys[tbl] <= PG_MAX_KEYS:  # server side, over the log
            do, clear = stmts[i:i + 2]
            i += 2
            assert do[0].value == "DO" and do[1].kind == "dollar" and len(do) == 2
            body = split_statements(pg_tokens(do[1].value))
            assert [s[0].value for s in body] == ["BEGIN", "INSERT", "ELSE", "INSERT", "END", "END"]
            assert [v for b in body for v in _strs(b)] == [tbl, "null"] * 3
            assert snap in do[1].value
            assert _strs(clear) == [tbl]
        else:  # whole table
            dele, ins, clear = stmts[i:i + 3]
            i += 3
            assert "".join(t.raw for t in dele) == "DELETEFROM" + tbl
            assert snap in "".join(t.raw for t in ins)
            assert _strs(clear) == [tbl]
    for q in ch.detail["sequences"]:
        assert _strs(stmts[i]) == [q, q]
        i += 1
    assert [t.value for t in stmts[i]] == ["COMMIT"] and i == len(stmts) - 1


def test_pg_budget_loop_keeps_every_literal_table_when_the_text_fits():
    rows = {f"public.t{i}": ["[1]", "[2]"] for i in range(5)}
    ch = pg_changes({t: 2 for t in rows}, {t: "id integer" for t in rows}, rows)
    assert "DO $r$" not in pg_store()._delta_sql("golden", ch, ch.detail["pk"])


def test_the_modules_limits_are_the_documented_ones():
    assert (mysqlmod.MAX_KEYS_PER_TABLE, pgmod.MAX_KEYS_PER_TABLE, pgmod.MAX_INLINE_KEYS) == (2000, 5000, 2000)
