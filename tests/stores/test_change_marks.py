"""``Store.change_marks`` and ``SiteChanges.new_since`` (``sitectl/stores/``): how a reset tells
writes that came while it ran (something its last delta round did not restore: a new order's
rows, a new vote, a new session file) from a restore that did not take (the same rows, files or
keys still changed), whatever the counts say.

The detections are built as each store's ``parse_changes`` builds them (items and the detail
its restore reads); no server is needed for the comparison itself. The traffic tests
(tests/snapshots/test_traffic.py) drive it with real writes over HTTP.
"""
from __future__ import annotations

from sitectl.stores.base import Changes
from sitectl.stores.files import FilesStore
from sitectl.stores.postgres import PostgresStore
from sitectl.stores.redis import RedisStore
from sitectl.stores.site import SiteChanges
from sitectl.stores.sql import PostgresExec
from tests.stores.test_delta_sql_text import NoEngineTransport, mysql_store


def my_changes(keys: dict[str, list[str]], extra: list[str] = ()) -> Changes:
    items = sorted([*(f"table {t} ({len(k)} rows)" for t, k in keys.items()), *extra])
    return Changes(items, {"keys": keys, "rebuild": [], "extra": [], "autoinc": [], "pk": {}, "golden_ai": {}})


def test_mysql_marks_are_rows_not_counts():
    st = mysql_store()
    assert st.change_marks(my_changes({"sales_order": ['[12]', '[13]']})) == {"row sales_order\t[12]",
                                                                                "row sales_order\t[13]"}
    marks = st.change_marks(my_changes({"t": ['[1]']}, ["table u (auto_increment)"]))
    assert marks == {"row t\t[1]", "table u (auto_increment)"}


def test_a_new_row_is_new_the_same_rows_are_not():
    st = mysql_store()
    before = SiteChanges([(st, my_changes({"sales_order": ['[12]', '[13]'], "quote": ['[4]']}))])
    fewer = SiteChanges([(st, my_changes({"sales_order": ['[13]']}))])
    assert fewer.new_since(before) == []
    more = SiteChanges([(st, my_changes({"sales_order": ['[13]', '[14]']}))])
    assert more.new_since(before) == ["row sales_order\t[14]"]
    assert SiteChanges([(st, Changes())]).new_since(before) == []


def pg_store() -> PostgresStore:
    return PostgresStore("reddit", PostgresExec("reddit", "postmill", NoEngineTransport()))


def pg_changes(rows: dict[str, list[str]], counts: dict[str, int], seqs: list[str] = ()) -> Changes:
    items = sorted([*(f"table {t} ({n} rows)" for t, n in counts.items()), *(f"sequence {q}" for q in seqs)])
    return Changes(items, {"keys": counts, "rows": rows, "sequences": list(seqs)})


def test_postgres_marks_rows_when_listed_and_counts_beyond():
    st = pg_store()
    listed = pg_changes({"public.votes": ['{"id": 7}']}, {"public.votes": 1}, ["public.votes_id_seq"])
    assert st.change_marks(listed) == {'row public.votes\t{"id": 7}', "sequence public.votes_id_seq"}
    # Over MAX_INLINE_KEYS the log's keys are not listed: the count is the mark, and a count
    # that moved is something new.
    many = pg_changes({}, {"public.votes": 5000})
    assert st.change_marks(many) == {"table public.votes (5000 rows)"}
    moved = SiteChanges([(st, pg_changes({}, {"public.votes": 5001}))])
    assert moved.new_since(SiteChanges([(st, many)])) == ["table public.votes (5001 rows)"]


def test_files_marks_are_paths_whatever_the_kind_of_change():
    st = FilesStore("reddit", NoEngineTransport(), ["/a", "/b"])
    d = {0: {"changed": ["x"], "added": [], "dirs": [], "recorded": {}},
         1: {"changed": [], "added": ["sess_1"], "dirs": ["."], "recorded": {}}}
    assert st.change_marks(Changes(["..."], d)) == {"0\tx", "1\tsess_1", "1\t."}
    again = {1: {"changed": ["sess_1"], "added": [], "dirs": [], "recorded": {}}}
    assert SiteChanges([(st, Changes(["..."], again))]).new_since(SiteChanges([(st, Changes(["..."], d))])) == []
    new = {1: {"changed": [], "added": ["sess_2"], "dirs": [], "recorded": {}}}
    assert SiteChanges([(st, Changes(["..."], new))]).new_since(SiteChanges([(st, Changes(["..."], d))])) == ["1\tsess_2"]


def test_marks_of_one_store_never_cancel_another_stores():
    a, b = mysql_store(), mysql_store()
    before = SiteChanges([(a, my_changes({"t": ['[1]']})), (b, Changes())])
    after = SiteChanges([(a, Changes()), (b, my_changes({"t": ['[1]']}))])
    assert after.new_since(before) == ["row t\t[1]"]


def test_a_store_without_keys_marks_its_items():
    st = RedisStore("gitlab", NoEngineTransport())
    c = Changes(["db 0 (5 keys now, 4 in golden)"])
    assert st.change_marks(c) == {"db 0 (5 keys now, 4 in golden)"}
