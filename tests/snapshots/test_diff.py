"""`sitectl diff` and `Environment.diff()`: what changed since golden, row by row, file by file,
key by key, checked against what the test reads on its own.

The expectation never comes from sitectl's code: the test dumps the site's database with the
server's own dump tool before and after the writes (`mysqldump --skip-extended-insert`,
`pg_dump --inserts`: one line per row), and a table whose lines differ is a changed table; each
updated row removes one line and adds one, an inserted row adds one, a deleted row removes one.
Files are hashed from their bytes read with `cat`, Redis keys listed with `redis-cli`. The writes
are a task's (the replicas' own HTTP endpoints) and random sequences of SQL statements
(hypothesis). Real Docker, MariaDB, PostgreSQL, Redis and files on the session's mini stack.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitectl import snapshots
from sitectl.errors import DiffUnavailable
from sitectl.sites.jobs import written_by_jobs
from sitectl.stores.base import DiffLimits
from tests.actions import magento, postmill
from tests.conftest import invoke
from tests.stores.real_schema import by_table, diff_changes, line_changes

pytestmark = pytest.mark.docker

SHOP, FORUM = "http://127.0.0.1:7770", "http://127.0.0.1:9999"
MYSQL = ["mysql", "-uroot", "-p1234567890", "magentodb"]
#: Tables Magento's cron writes on its own (the site's jobs.writes): not the test's writes.
JOB_TABLES = {"cron_schedule"}


def run(engine, container: str, *argv: str) -> str:
    rc, out = engine.exec(container, list(argv))
    assert rc == 0, out[-2000:]
    return out


def mysql_lines(engine) -> dict[str, Counter]:
    """Every row of magentodb as mysqldump writes it, one INSERT line a row, per table."""
    out = run(engine, "shopping", "mysqldump", "-uroot", "-p1234567890", "--skip-extended-insert", "--no-create-info",
              "--compact", "--skip-triggers", "magentodb")
    return by_table(out, r"INSERT INTO `([^`]+)` VALUES ")


def pg_lines(engine) -> dict[str, Counter]:
    """Every row of the forum's database as pg_dump writes it (--inserts), per table."""
    out = run(engine, "forum", "pg_dump", "-U", "postgres", "--data-only", "--inserts", "-N", "sitectl", "-N",
              "sitectl_*", "postmill")
    return by_table(out, r"INSERT INTO (\S+) VALUES ")


def store_of(result: dict, site: str, kind: str) -> dict:
    (s,) = [s for s in result["sites"] if s["site"] == site]
    (st_,) = [x for x in s["stores"] if x["kind"] == kind]
    return st_


@pytest.fixture(autouse=True)
def golden_before(mini, engine):
    """Each test starts golden and leaves golden."""
    sites = [mini.stack.sites[n] for n in ("shopping", "reddit", "gitlab")]
    snapshots.reset(mini, sites, engine)
    yield
    snapshots.reset(mini, sites, engine)


def test_nothing_changed_is_an_empty_diff(mini, engine):
    r = snapshots.diff(mini, [mini.stack.sites[n] for n in ("shopping", "reddit", "gitlab")], engine)
    assert r["format"] == 1 and r["since"] == "golden"
    for s in r["sites"]:
        site = mini.stack.sites[s["site"]]
        # Only what the site's own jobs write may show (Magento's cron, every minute).
        assert all(written_by_jobs(site, i) for st_ in s["stores"] for i in st_["items"]), s
    assert [s["site"] for s in r["sites"]] == ["shopping", "reddit", "gitlab"]


def test_a_review_and_a_price_are_the_rows_the_dump_says(mini, engine):
    before = mysql_lines(engine)
    title = "diff " + uuid.uuid4().hex[:8]
    sess = magento.storefront_session(SHOP)
    magento.write_review(SHOP, sess, "sandgrens-swedish-handmade-wooden-clog-sandal-copenhagen", "Emma", 4,
                         title=title, detail="good clogs")
    old_price = magento.product_rest(SHOP, "B000FHD7PI")["price"]
    magento.set_price_rest(SHOP, "B000FHD7PI", 123.45)
    after = mysql_lines(engine)
    r = snapshots.diff(mini, [mini.stack.sites["shopping"]], engine)
    store = store_of(r, "shopping", "mysql")
    got = {t: c for t, c in diff_changes(store).items() if t not in JOB_TABLES}
    assert got == line_changes(before, after, JOB_TABLES)
    # The review's title is the test's, as a new row; the price's old and new values.
    (detail,) = [t for t in store["tables"] if t["table"] == "review_detail"]
    assert [row["values"]["title"] for row in detail["inserted"]] == [title]
    prices = [c for t in store["tables"] if t["table"] == "catalog_product_entity_decimal"
              for row in t["updated"] for c in [row["columns"].get("value")] if c]
    assert {(float(c["old"]), float(c["new"])) for c in prices} >= {(float(old_price), 123.45)}


def test_forum_post_and_comment_are_the_rows_pg_dump_says(mini, engine):
    before = pg_lines(engine)
    title = "diff " + uuid.uuid4().hex[:8]
    s = postmill.login(FORUM, "sitectl_trusted", "sitectl1234")
    url = postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", title, "body text", session=s)
    postmill.comment(FORUM, "sitectl_trusted", "sitectl1234", url, "a comment " + uuid.uuid4().hex, session=s)
    after = pg_lines(engine)
    r = snapshots.diff(mini, [mini.stack.sites["reddit"]], engine)
    store = store_of(r, "reddit", "postgres")
    assert diff_changes(store) == line_changes(before, after)
    (subs,) = [t for t in store["tables"] if t["table"] == "public.submissions"]
    assert [row["values"]["title"] for row in subs["inserted"]] == [title]
    assert subs["key_columns"] == ["id"]


def test_files_and_redis_keys_with_their_hashes(mini, engine):
    folder = "/var/opt/gitlab/gitlab-rails/uploads"
    name = f"diff-{uuid.uuid4().hex[:8]}.txt"
    run(engine, "gitlab", "sh", "-c", f"mkdir -p {folder} && printf 'hello diff' > {folder}/{name}")
    key = "sitectl_test:diff:" + uuid.uuid4().hex[:8]
    run(engine, "gitlab", "gitlab-redis-cli", "SET", key, "v")
    r = snapshots.diff(mini, [mini.stack.sites["gitlab"]], engine)
    files = store_of(r, "gitlab", "files")["files"]
    (added,) = [f for f in files if f["path"] == f"{folder}/{name}"]
    assert added["change"] == "added" and added["was"] is None
    assert added["now"] == {"type": "file", "size": 10, "sha256": hashlib.sha256(b"hello diff").hexdigest()}
    # The hash of what cat reads in the container.
    rc, text = engine.exec("gitlab", ["cat", f"{folder}/{name}"])
    assert hashlib.sha256(text.encode()).hexdigest() == added["now"]["sha256"]
    keys = store_of(r, "gitlab", "redis")["keys"]
    assert {"key": key, "change": "added"} in keys
    live = set(run(engine, "gitlab", "gitlab-redis-cli", "--scan").split())
    assert {k["key"] for k in keys if k["change"] == "added"} <= live


def test_a_long_value_is_cut_with_its_length_and_hash(mini, engine):
    text = "x" * 300 + "é"
    sql = f"UPDATE review_detail SET detail = '{text}' WHERE review_id = (SELECT MIN(review_id) FROM review)"
    run(engine, "shopping", *MYSQL, "-e", sql)
    r = snapshots.diff(mini, [mini.stack.sites["shopping"]], engine, limits=DiffLimits(value_chars=50))
    (t,) = [t for t in store_of(r, "shopping", "mysql")["tables"] if t["table"] == "review_detail"]
    (row,) = t["updated"]
    assert row["columns"]["detail"]["new"] == {"cut": "x" * 50, "length": 301,
                                                "sha256": hashlib.sha256(text.encode()).hexdigest()}


def test_the_cli_prints_json_and_a_table(mini, engine):
    run(engine, "shopping", *MYSQL, "-e", "UPDATE store SET name = 'Diff Store' WHERE store_id = 1")
    res = invoke(["diff", "shopping", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    (t,) = [t for t in store_of(data, "shopping", "mysql")["tables"] if t["table"] == "store"]
    assert t["updated"] == [{"key": {"store_id": 1}, "columns": {"name": {"old": "Default Store View", "new": "Diff Store"}}}]
    res = invoke(["diff", "shopping"])
    assert res.exit_code == 0 and "table store: 1 logged" in res.output and '"Diff Store"' in res.output, res.output


def test_no_diff_against_a_snapshot_the_log_does_not_follow(mini, engine):
    """After a named snapshot the change log follows it: a diff against golden is refused with
    the next step (exit 9), one against the named snapshot works; bad input exits 2."""
    shop = mini.stack.sites["shopping"]
    run(engine, "shopping", *MYSQL, "-e", "UPDATE store SET name = 'Before' WHERE store_id = 1")
    snapshots.create(mini, "diffbase", [shop], engine)
    try:
        with pytest.raises(DiffUnavailable, match="snapshot restore golden shopping"):
            snapshots.diff(mini, [shop], engine)
        res = invoke(["diff", "shopping", "--json"])
        assert res.exit_code == 9 and "no exact diff" in json.loads(res.stdout)["error"]
        run(engine, "shopping", *MYSQL, "-e", "UPDATE store SET name = 'After' WHERE store_id = 1")
        r = snapshots.diff(mini, [shop], engine, since="diffbase")
        (t,) = [t for t in store_of(r, "shopping", "mysql")["tables"] if t["table"] == "store"]
        assert t["updated"][0]["columns"]["name"] == {"old": "Before", "new": "After"}
    finally:
        snapshots.delete(mini, "diffbase", engine)
        snapshots.reset(mini, [shop], engine, full=True)
    assert invoke(["diff", "--since", "nosuch"]).exit_code == 2
    assert invoke(["diff", "nosuchsite"]).exit_code == 2


# -- random sequences of real writes ---------------------------------------------------------
#: SQL writes on the replica's real Magento schema; each may be written back or undone by a
#: later one (then the row is logged but listed nowhere).
OPS = {
    "rename_store": "UPDATE store SET name = '{v}' WHERE store_id = 1",
    "rename_back": "UPDATE store SET name = 'Default Store View' WHERE store_id = 1",
    "new_flag": "INSERT INTO flag (flag_code, state, flag_data) VALUES ('sitectl_{v}', 0, 'x')",
    "drop_flags": "DELETE FROM flag WHERE flag_code LIKE 'sitectl\\_%'",
    "product_name": "UPDATE catalog_product_entity_varchar SET value = '{v}' WHERE value_id = "
                    "(SELECT MIN(value_id) FROM (SELECT value_id FROM catalog_product_entity_varchar) x)",
    "delete_link": "DELETE FROM catalog_category_product WHERE entity_id = "
                   "(SELECT MAX(entity_id) FROM (SELECT entity_id FROM catalog_category_product) x)",
    "config": "INSERT INTO core_config_data (scope, scope_id, path, value) VALUES ('default', 0, 'sitectl/{v}', 'x')",
}


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=st.lists(st.tuples(st.sampled_from(sorted(OPS)), st.text("abcdefghij", min_size=1, max_size=6)),
                    min_size=1, max_size=6))
def test_random_writes_are_exactly_what_the_dump_says(mini, engine, ops):
    shop = mini.stack.sites["shopping"]
    snapshots.reset(mini, [shop], engine)
    before = mysql_lines(engine)
    for op, v in ops:
        run(engine, "shopping", *MYSQL, "-e", OPS[op].format(v=v))
    after = mysql_lines(engine)
    store = store_of(snapshots.diff(mini, [shop], engine), "shopping", "mysql")
    got = {t: c for t, c in diff_changes(store).items() if t not in JOB_TABLES}
    assert got == line_changes(before, after, JOB_TABLES), ops


def test_text_and_numbers_come_back_exactly(mini, engine):
    """4-byte UTF-8 (emoji) in values and in keys, and decimals to their last digit: the rows are
    listed with what was written, none left out (a reviewer's findings)."""
    sql = ("INSERT INTO sales_order_status VALUES ('ü😀\"q''t', 'Emoji 😀'); "
           "UPDATE sales_order_status SET label = 'smile 😀' WHERE status = 'complete'; "
           "UPDATE catalog_product_entity_decimal SET value = 12345678901234.123457 WHERE value_id = "
           "(SELECT MIN(value_id) FROM (SELECT value_id FROM catalog_product_entity_decimal) x)")
    run(engine, "shopping", "mysql", "--default-character-set=utf8mb4", *MYSQL[1:], "-e", sql)
    store = store_of(snapshots.diff(mini, [mini.stack.sites["shopping"]], engine), "shopping", "mysql")
    (status,) = [t for t in store["tables"] if t["table"] == "sales_order_status"]
    assert [r["values"] for r in status["inserted"]] == [{"status": 'ü😀"q\'t', "label": "Emoji 😀"}]
    assert [r["columns"]["label"]["new"] for r in status["updated"]] == ["smile 😀"]
    (dec,) = [t for t in store["tables"] if t["table"] == "catalog_product_entity_decimal"]
    assert [r["columns"]["value"]["new"] for r in dec["updated"]] == ["12345678901234.123457"]


def test_many_rows_are_read_in_batches(mini, engine):
    """More keys than one SQL text holds (10,000 string keys of 60 characters) are all listed."""
    run(engine, "shopping", *MYSQL, "-e", "INSERT INTO flag (flag_code, state, flag_data) SELECT "
        "CONCAT('sitectl_', LPAD(seq, 52, 'x')), 0, 'x' FROM seq_1_to_10000")
    store = store_of(snapshots.diff(mini, [mini.stack.sites["shopping"]], engine, limits=DiffLimits(rows=10_000)),
                     "shopping", "mysql")
    (flag,) = [t for t in store["tables"] if t["table"] == "flag"]
    assert len(flag["inserted"]) == 10_000 and flag["truncated"] is False


def test_without_site_names_the_sites_golden_does_not_cover_are_left_out(mini, engine, tmp_path):
    """`sitectl diff` on an instance that runs only some sites reads those; naming another site
    is refused (exit 9, the site named)."""
    from sitectl.ops import lifecycle
    from sitectl.progress import Reporter
    from sitectl.stack.target import resolve_target

    t = resolve_target("mini", host="127.0.0.1", instance=5)
    lifecycle.down(t, engine)
    try:
        lifecycle.up(t, t.stack.select(["reddit"]), engine, Reporter())
        res = invoke(["diff", "--instance", "5", "--json"])
        assert res.exit_code == 0, res.output
        assert [s["site"] for s in json.loads(res.stdout)["sites"]] == ["reddit"]
        res = invoke(["diff", "shopping", "--instance", "5", "--json"])
        assert res.exit_code == 9 and "shopping" in json.loads(res.stdout)["error"]
    finally:
        lifecycle.down(t, engine)


def test_postgres_objects_dropped_or_created_are_listed_with_the_rows(mini, engine):
    """A dropped table and a new one: the diff lists both as schema changes (a reset then restores
    in full) and the rows it can read; a new table's rows are not listed as rows."""
    run(engine, "forum", "psql", "-U", "postgres", "-d", "postmill", "-c",
        "DROP TABLE forum_subscriptions CASCADE; CREATE TABLE sitectl_extra (id int PRIMARY KEY); "
        "INSERT INTO sitectl_extra VALUES (1); UPDATE users SET biography = 'dropped' WHERE username = 'sitectl_trusted'")
    res = invoke(["diff", "reddit", "--json"])
    assert res.exit_code == 0, res.output
    store = store_of(json.loads(res.stdout), "reddit", "postgres")
    changes = {e["object"]: e["change"] for e in store["schema"]}
    assert any("forum_subscriptions" in o and c == "dropped" for o, c in changes.items()), changes
    assert any("sitectl_extra" in o and c == "created" for o, c in changes.items()), changes
    (users,) = [t for t in store["tables"] if t["table"] == "public.users"]
    assert [r["columns"]["biography"]["new"] for r in users["updated"]] == ["dropped"]
    # A table created since: a schema change; its rows are never listed as rows of the snapshot.
    assert all("rows" in t for t in store["tables"] if t["table"] == "public.sitectl_extra")
    snapshots.reset(mini, [mini.stack.sites["reddit"]], engine)
    assert all(d["ok"] for d in snapshots.verify_deep(mini, [mini.stack.sites["reddit"]], engine))


def test_redis_and_file_names_are_shown_one_to_one(mini, engine):
    """A backslash in a key's name is doubled (as in file paths), so the name `a\\x41` cannot be
    read as a key holding byte 0x41."""
    run(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl_test:a\\x41", "1")
    keys = store_of(snapshots.diff(mini, [mini.stack.sites["gitlab"]], engine), "gitlab", "redis")["keys"]
    assert {"key": "sitectl_test:a\\\\x41", "change": "added"} in keys
