"""`sitectl checkpoint`: a mid-episode state saved as its delta from golden and brought back
exactly, from any state (docs/checkpoints.md).

The proof never comes from sitectl's code: the test reads each site's state on its own, with the
servers' dump tools (`mysqldump --skip-extended-insert`, `pg_dump --inserts`: one line per row),
the servers' counters (AUTO_INCREMENT from information_schema, sequences from pg_sequences),
`find`/`stat`/`md5sum` inside the containers for files, `redis-cli` for keys, before and after.
`verify --deep` against a full named snapshot taken at the same moment says the same. The
writes are a task's (the replicas' HTTP endpoints) and random sequences of real SQL and file
operations (hypothesis). Real Docker, MariaDB, PostgreSQL, Redis and files on the session's
mini stack (instance 0).
"""
from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitectl import snapshots
from sitectl.errors import CheckpointUnavailable, DamagedRecord
from sitectl.sites.jobs import written_by_jobs
from sitectl.snapshots import checkpoint as ck
from tests.actions import classifieds, magento, postmill
from tests.actions import state as state_of
from tests.conftest import invoke

pytestmark = pytest.mark.docker

SHOP, FORUM, ADS = "http://127.0.0.1:7770", "http://127.0.0.1:9999", "http://127.0.0.1:9980"
MYSQL = ["mysql", "-uroot", "-p1234567890", "magentodb"]
PSQL = ["psql", "-U", "postgres", "-d", "postmill", "-v", "ON_ERROR_STOP=1", "-c"]
#: Tables Magento's cron writes on its own (the site's jobs.writes): not the test's writes.
JOB_TABLES = {"cron_schedule"}
SITES = ("shopping", "reddit", "gitlab", "classifieds")
MEDIA = state_of.MEDIA


run = state_of.run


# -- the state, read without sitectl (tests/actions/state.py) ----------------------------------
READERS = {"shopping": state_of.shop, "reddit": state_of.forum, "gitlab": state_of.gitlab,
           "classifieds": state_of.classifieds}
shop_state, forum_state, differs = state_of.shop, state_of.forum, state_of.differs


def state(engine, sites=SITES) -> dict:
    return {s: READERS[s](engine) for s in sites}


def deep_ok(mini, engine, sites, name: str) -> list[dict]:
    """verify --deep's rows against snapshot ``name`` that differ beyond what the sites' own jobs
    write."""
    rows = snapshots.verify_deep(mini, [mini.stack.sites[s] for s in sites], engine, name)
    return [r for r in rows if not r["ok"]]


@pytest.fixture(autouse=True)
def golden_around(mini, engine):
    """Each test starts golden and leaves golden, with no checkpoint left."""
    sites = [mini.stack.sites[n] for n in SITES]
    snapshots.reset(mini, sites, engine)
    yield
    for c in snapshots.list_checkpoints(mini):
        snapshots.delete_checkpoint(mini, c["name"], engine)
    snapshots.reset(mini, sites, engine)


# -- the writes ------------------------------------------------------------------------------
def task_writes(engine, tag: str) -> None:
    """A task's writes on each site: a review and a price (Magento's storefront and REST), a post
    and a comment (Postmill's forms), a comment on an ad (OSClass's form), a file in Magento's
    media."""
    sess = magento.storefront_session(SHOP)
    magento.write_review(SHOP, sess, "sandgrens-swedish-handmade-wooden-clog-sandal-copenhagen", "Emma", 4,
                         title=f"ckpt {tag}", detail="good clogs")
    magento.set_price_rest(SHOP, "B000FHD7PI", 100 + len(tag) + 0.37)
    run(engine, "shopping", "sh", "-c", f"mkdir -p {MEDIA}/ckpt/{tag} && printf %s {tag} > {MEDIA}/ckpt/{tag}/f.txt")
    s = postmill.login(FORUM, "sitectl_trusted", "sitectl1234")
    url = postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", f"ckpt {tag}", "body", session=s)
    postmill.comment(FORUM, "sitectl_trusted", "sitectl1234", url, f"comment {tag}", session=s)
    a = classifieds.session(ADS)
    classifieds.comment(a, ADS, 84154, f"ckpt {tag}", f"a comment {tag}", 4, author=("Tess", "tess@example.com"))


def undo_some(engine) -> None:
    """Writes after the checkpoint that undo and change some of what it holds."""
    run(engine, "shopping", "sh", "-c", f"rm -rf {MEDIA}/ckpt; printf x > {MEDIA}/later.txt")
    run(engine, "shopping", *MYSQL, "-e", "DELETE FROM review_detail WHERE title LIKE 'ckpt %'; "
        "UPDATE store SET name = 'Later' WHERE store_id = 1")
    run(engine, "forum", *PSQL, "UPDATE comments SET body = 'changed later' WHERE body LIKE 'comment %'; "
        "UPDATE users SET biography = 'later' WHERE username = 'sitectl_trusted'")
    run(engine, "classifieds_db", "mysql", "-uroot", "-ppassword", "osclass", "-e",
        "DELETE FROM oc_t_item_comment WHERE s_title LIKE 'ckpt %'; UPDATE oc_t_item SET s_contact_name = 'Later' "
        "WHERE pk_i_id = 84154")


# -- the tests ---------------------------------------------------------------------------------
#: The sites of the round-trip test (GitLab's PostgreSQL 13, Redis and uploads: the test after it).
ROUND_TRIP = ("shopping", "reddit", "classifieds")


def test_a_checkpoint_comes_back_exactly_from_any_state(mini, engine):
    """Saved after a task's writes on three sites, then overwritten: restored twice (from the
    state after a named snapshot, then from a plain one), each time every row, counter and file
    is what it was at the save, and verify --deep finds the site equal to a full snapshot taken
    at the same moment."""
    task_writes(engine, "one")
    res = invoke(["checkpoint", "save", "mid", *ROUND_TRIP, "--json"])
    assert res.exit_code == 0, res.output
    saved = json.loads(res.stdout)
    assert {s["site"] for s in saved["sites"]} == set(ROUND_TRIP), saved
    at_save = state(engine, ROUND_TRIP)
    snapshots.create(mini, "midproof", [mini.stack.sites[s] for s in ROUND_TRIP], engine)
    try:
        undo_some(engine)
        assert differs(at_save, state(engine, ROUND_TRIP))
        res = invoke(["checkpoint", "restore", "mid", "--json"])
        assert res.exit_code == 0, res.output
        rows = json.loads(res.stdout)["sites"]
        assert {r["site"] for r in rows} == set(ROUND_TRIP) and all(r["method"] == "checkpoint" for r in rows)
        assert differs(at_save, state(engine, ROUND_TRIP)) == []
        assert deep_ok(mini, engine, ROUND_TRIP, "midproof") == []
        # Again from a plain state (the change log follows golden now): the delta way to golden.
        task_writes(engine, "two")
        undo_some(engine)
        rows = snapshots.restore_checkpoint(mini, "mid", [mini.stack.sites[s] for s in ROUND_TRIP], engine)
        assert all(r.escalations[0] == "golden: delta" for r in rows), [r.as_dict() for r in rows]
        assert differs(at_save, state(engine, ROUND_TRIP)) == []
        assert deep_ok(mini, engine, ROUND_TRIP, "midproof") == []
    finally:
        snapshots.delete(mini, "midproof", engine)
    # A reset still means golden: the checkpoint's writes are in the change log.
    snapshots.reset(mini, [mini.stack.sites[s] for s in ROUND_TRIP], engine)
    assert deep_ok(mini, engine, ROUND_TRIP, "golden") == []


def test_gitlab_rows_keys_and_uploads_come_back(mini, engine):
    """GitLab's PostgreSQL 13 (whose psql prints only a script's last result), Redis and
    uploads: a checkpoint after a task's writes there, restored after others, is what the dumps
    read at the save."""
    gitlab = mini.stack.sites["gitlab"]
    run(engine, "gitlab", "gitlab-psql", "-c", "UPDATE projects SET description = 'ckpt ✓' WHERE id = "
        "(SELECT min(id) FROM projects)")
    run(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl_test:ckpt:g", "kept")
    run(engine, "gitlab", "sh", "-c", "printf kept > /var/opt/gitlab/gitlab-rails/uploads/ckpt-g.txt")
    snapshots.save_checkpoint(mini, "gl", [gitlab], engine)
    want = state_of.gitlab(engine)
    run(engine, "gitlab", "gitlab-psql", "-c", "UPDATE projects SET description = 'later' WHERE id = "
        "(SELECT min(id) FROM projects)")
    run(engine, "gitlab", "gitlab-redis-cli", "DEL", "sitectl_test:ckpt:g")
    run(engine, "gitlab", "sh", "-c", "rm -f /var/opt/gitlab/gitlab-rails/uploads/ckpt-g.txt")
    (row,) = snapshots.restore_checkpoint(mini, "gl", [gitlab], engine)
    assert row.escalations[0] == "golden: delta"
    assert differs({"g": want}, {"g": state_of.gitlab(engine)}) == []





def test_siblings_and_descendants_come_back_in_any_order(mini, engine):
    forum = mini.stack.sites["reddit"]
    golden = forum_state(engine)
    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'a' WHERE username = 'sitectl_trusted'")
    snapshots.save_checkpoint(mini, "a", [forum], engine)
    state_a = forum_state(engine)
    postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "child of a")
    snapshots.save_checkpoint(mini, "b", [forum], engine)  # a descendant of a
    state_b = forum_state(engine)
    snapshots.reset(mini, [forum], engine)
    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'c' WHERE username = 'sitectl_admin'")
    snapshots.save_checkpoint(mini, "c", [forum], engine)  # a sibling, from golden
    state_c = forum_state(engine)
    for name, want in (("a", state_a), ("b", state_b), ("a", state_a), ("c", state_c), ("b", state_b)):
        snapshots.restore_checkpoint(mini, name, [forum], engine)
        assert forum_state(engine) == want, (name, differs({"f": want}, {"f": forum_state(engine)}))
    snapshots.reset(mini, [forum], engine)
    assert forum_state(engine) == golden
    assert sorted(c["name"] for c in snapshots.list_checkpoints(mini)) == ["a", "b", "c"]


#: Real writes: SQL on the replica's real Magento schema (its triggers write the indexer
#: changelogs) and Postmill's, files in Magento's media folder.
SHOP_OPS = {
    "rename_store": "UPDATE store SET name = '{v}' WHERE store_id = 1",
    "new_flag": "INSERT INTO flag (flag_code, state, flag_data) VALUES ('sitectl_{v}', 0, 'x')",
    "drop_flags": "DELETE FROM flag WHERE flag_code LIKE 'sitectl\\_%'",
    "price": "UPDATE catalog_product_entity_decimal SET value = value + 0.01 WHERE value_id = "
             "(SELECT MIN(value_id) FROM (SELECT value_id FROM catalog_product_entity_decimal) x)",
    "delete_link": "DELETE FROM catalog_category_product WHERE entity_id = "
                   "(SELECT MAX(entity_id) FROM (SELECT entity_id FROM catalog_category_product) x)",
}
FORUM_OPS = {
    "bio": "UPDATE users SET biography = '{v}' WHERE username = 'sitectl_trusted'",
    "ban_phrase": "INSERT INTO bad_phrases (id, phrase, phrase_type, timestamp) VALUES (gen_random_uuid(), '{v}', 'text', now())",
    "unban": "DELETE FROM bad_phrases",
    "delete_vote": "DELETE FROM submission_votes WHERE id = (SELECT min(id) FROM submission_votes)",
}
FILE_OPS = {
    "add": "mkdir -p {m}/h/{v} && printf %s {v} > {m}/h/{v}/f",
    "change": "mkdir -p {m}/h && printf %s {v} >> {m}/h/shared.txt",
    "remove": "rm -rf {m}/h",
}

OP = st.one_of(
    st.tuples(st.just("shop"), st.sampled_from(sorted(SHOP_OPS)), st.text("abcdefgh", min_size=1, max_size=5)),
    st.tuples(st.just("forum"), st.sampled_from(sorted(FORUM_OPS)), st.text("abcdefgh", min_size=1, max_size=5)),
    st.tuples(st.just("file"), st.sampled_from(sorted(FILE_OPS)), st.text("abcdefgh", min_size=1, max_size=5)),
    st.tuples(st.just("save"), st.sampled_from(["p", "q"]), st.just("")),
    st.tuples(st.just("restore"), st.sampled_from(["p", "q"]), st.just("")),
    st.tuples(st.just("reset"), st.just(""), st.just("")),
)


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=st.lists(OP, min_size=2, max_size=7))
def test_random_sequences_of_writes_saves_restores_and_resets(mini, engine, ops):
    """Any sequence of real writes, saves, restores and resets: after a restore the state read
    on its own is the one read when that checkpoint was saved; after a reset, golden's."""
    sites = [mini.stack.sites["shopping"], mini.stack.sites["reddit"]]
    for c in snapshots.list_checkpoints(mini):
        snapshots.delete_checkpoint(mini, c["name"], engine)
    snapshots.reset(mini, sites, engine)
    golden = state(engine, ("shopping", "reddit"))
    saved: dict[str, dict] = {}
    for kind, op, v in ops:
        if kind == "shop":
            run(engine, "shopping", *MYSQL, "-e", SHOP_OPS[op].format(v=v))
        elif kind == "forum":
            run(engine, "forum", *PSQL, FORUM_OPS[op].format(v=v))
        elif kind == "file":
            run(engine, "shopping", "sh", "-c", FILE_OPS[op].format(m=MEDIA, v=v))
        elif kind == "save":
            snapshots.save_checkpoint(mini, op, sites, engine)
            saved[op] = state(engine, ("shopping", "reddit"))
        elif kind == "restore" and op in saved:
            snapshots.restore_checkpoint(mini, op, sites, engine)
            assert differs(saved[op], state(engine, ("shopping", "reddit"))) == [], ops
        elif kind == "reset":
            snapshots.reset(mini, sites, engine)
            assert differs(golden, state(engine, ("shopping", "reddit"))) == [], ops


def test_what_cannot_be_kept_exactly_is_refused_with_the_next_step(mini, engine):
    forum = mini.stack.sites["reddit"]
    # A schema change since golden: a checkpoint keeps rows, not definitions (exit 9, nothing saved).
    run(engine, "forum", *PSQL, "ALTER TABLE users ADD COLUMN sitectl_extra int")
    res = invoke(["checkpoint", "save", "ddl", "reddit", "--json"])
    assert res.exit_code == 9 and "schema objects changed" in json.loads(res.stdout)["error"], res.output
    assert snapshots.list_checkpoints(mini) == []
    snapshots.reset(mini, [forum], engine)
    # A change log that follows a named snapshot: the next step is a reset.
    snapshots.create(mini, "ckbase", [forum], engine)
    try:
        with pytest.raises(CheckpointUnavailable, match="sitectl reset reddit"):
            snapshots.save_checkpoint(mini, "named", [forum], engine)
    finally:
        snapshots.delete(mini, "ckbase", engine)
        snapshots.reset(mini, [forum], engine, full=True)
    # Bad input: exit 2, one message naming it.
    assert invoke(["checkpoint", "save", "Bad-Name"]).exit_code == 2
    assert invoke(["checkpoint", "restore", "nosuch"]).exit_code == 2
    assert invoke(["checkpoint", "delete", "nosuch"]).exit_code == 2
    assert invoke(["checkpoint", "save", "x", "nosuchsite"]).exit_code == 2
    snapshots.save_checkpoint(mini, "only", [forum], engine)
    res = invoke(["checkpoint", "restore", "only", "shopping", "--json"])
    assert res.exit_code == 2 and "does not hold shopping" in json.loads(res.stdout)["error"]


def test_a_copy_changed_in_the_container_fails_loudly_back_at_golden(mini, engine):
    """The container is hostile: a checkpoint's copy edited there makes the restore's closing
    check fail (exit 9, what differed named), and the site is left golden, not half of each."""
    forum = mini.stack.sites["reddit"]
    golden = forum_state(engine)
    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'saved' WHERE username = 'sitectl_trusted'; "
        "INSERT INTO bad_phrases (id, phrase, phrase_type, timestamp) VALUES (gen_random_uuid(), 'kept', 'text', now())")
    snapshots.save_checkpoint(mini, "tamper", [forum], engine)
    # The copy of bad_phrases (named as a snapshot's copies are: "c" + MD5 of the table's name)
    # loses its row: the restore would leave the phrase out.
    table = "c" + hashlib.md5(b"public.bad_phrases").hexdigest()
    run(engine, "forum", *PSQL, f'DELETE FROM sitectl_c_tamper."{table}" WHERE phrase = \'kept\'')
    res = invoke(["checkpoint", "restore", "tamper", "--json"])
    assert res.exit_code == 9 and "did not come back exactly" in json.loads(res.stdout)["error"], res.output
    assert "back at golden" in json.loads(res.stdout)["error"]
    assert forum_state(engine) == golden


@pytest.mark.parametrize("tamper", ["row", "planted row", "counter", "file", "same size and time"])
def test_a_shop_copy_changed_in_the_container_fails_loudly_back_at_golden(mini, engine, tamper):
    """The same for Magento's rows (a row of the checkpoint's MySQL copy changed; one planted at
    a key the checkpoint does not hold is never written), its counters (the copy's database is
    not where the restore reads them) and its media (a copied file's bytes changed, also keeping
    its size and time)."""
    shop = mini.stack.sites["shopping"]
    golden = shop_state(engine)
    run(engine, "shopping", *MYSQL, "-e", "INSERT INTO flag (flag_code, state, flag_data) VALUES ('sitectl_t', 0, 'saved')")
    run(engine, "shopping", "sh", "-c", f"mkdir -p {MEDIA}/t && printf saved > {MEDIA}/t/f.txt")
    snapshots.save_checkpoint(mini, "tamper", [shop], engine)
    copy = "sitectl_c_tamper.r_" + hashlib.md5(b"flag").hexdigest()
    saved = "/var/lib/sitectl/checkpoints/files/tamper/0/t/f.txt"
    if tamper == "row":
        run(engine, "shopping", *MYSQL, "-e", f"UPDATE {copy} SET flag_data = 'forged'")
    elif tamper == "planted row":
        # Never written: the apply takes the copy's rows at the checkpoint's keys only.
        want = shop_state(engine)
        run(engine, "shopping", *MYSQL, "-e", f"INSERT INTO {copy} (flag_code, state, flag_data) VALUES ('planted', 0, 'x')")
        snapshots.reset(mini, [shop], engine)
        snapshots.restore_checkpoint(mini, "tamper", [shop], engine)
        assert differs({"s": want}, {"s": shop_state(engine)}) == []
        return
    elif tamper == "counter":
        run(engine, "shopping", *MYSQL, "-e", "CREATE TABLE sitectl_c_tamper.__ai (tbl VARCHAR(64), auto_inc BIGINT); "
            "INSERT INTO sitectl_c_tamper.__ai VALUES ('flag', 90000)")
        # Nothing reads a counter from the container: this restore succeeds, with the saved counters.
        snapshots.restore_checkpoint(mini, "tamper", [shop], engine)
        ai = run(engine, "shopping", *MYSQL, "-N", "-e", "SELECT auto_increment FROM information_schema.tables "
                 "WHERE table_schema = 'magentodb' AND table_name = 'flag'").strip()
        assert int(ai) < 90000
        return
    elif tamper == "file":
        run(engine, "shopping", "sh", "-c", f"printf forged > {saved}")
    else:
        run(engine, "shopping", "sh", "-c", f"cp -p {saved} /tmp/ref && printf SAVED > {saved} && touch -r /tmp/ref {saved}")
    with pytest.raises(CheckpointUnavailable, match="did not come back exactly"):
        snapshots.restore_checkpoint(mini, "tamper", [shop], engine)
    assert differs({"s": golden}, {"s": shop_state(engine)}) == []


def test_a_row_planted_in_a_postgres_copy_is_never_applied(mini, engine):
    """A row added to the checkpoint's copy at a key the checkpoint does not hold is not written
    (the apply takes the copy's rows at the checkpoint's keys only)."""
    forum = mini.stack.sites["reddit"]
    run(engine, "forum", *PSQL, "UPDATE submissions SET title = 'saved' WHERE id = (SELECT min(id) FROM submissions)")
    snapshots.save_checkpoint(mini, "plant", [forum], engine)
    want = forum_state(engine)
    table = "c" + hashlib.md5(b"public.submissions").hexdigest()
    copy = f'sitectl_c_plant."{table}"'
    # The saved row twice, then one of the two moved to a key the checkpoint does not hold.
    run(engine, "forum", *PSQL, f"INSERT INTO {copy} SELECT * FROM {copy}; UPDATE {copy} SET id = id + 1000000, "
        f"title = 'PLANTED' WHERE ctid IN (SELECT ctid FROM {copy} LIMIT 1)")
    snapshots.reset(mini, [forum], engine)
    snapshots.restore_checkpoint(mini, "plant", [forum], engine)
    assert forum_state(engine) == want


def test_golden_taken_again_or_a_damaged_record_is_refused(mini, engine):
    forum = mini.stack.sites["reddit"]
    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'x' WHERE username = 'sitectl_trusted'")
    snapshots.save_checkpoint(mini, "old", [forum], engine)
    snapshots.reset(mini, [forum], engine)
    snapshots.create(mini, "golden", [forum], engine)  # golden again (same content, a new copy)
    res = invoke(["checkpoint", "restore", "old", "--json"])
    assert res.exit_code == 9 and "golden of reddit was taken again" in json.loads(res.stdout)["error"], res.output
    # A damaged record: exit 11 with the repair; list says so; delete still removes it.
    ck.record_path(mini, "old").write_text("{not json")
    with pytest.raises(DamagedRecord, match="checkpoint delete old"):
        snapshots.restore_checkpoint(mini, "old", None, engine)
    assert invoke(["checkpoint", "restore", "old"]).exit_code == 11
    (row,) = snapshots.list_checkpoints(mini)
    assert row["damaged"]
    assert "reddit" in snapshots.delete_checkpoint(mini, "old", engine)  # damaged: every site with stores
    assert snapshots.list_checkpoints(mini) == []
    assert "sitectl_c_old" not in run(engine, "forum", "psql", "-U", "postgres", "-d", "postmill", "-At", "-c",
                                      "SELECT nspname FROM pg_namespace")


def test_the_cli_lists_and_deletes(mini, engine):
    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'cli' WHERE username = 'sitectl_trusted'")
    res = invoke(["checkpoint", "save", "one", "reddit"])
    assert res.exit_code == 0 and "checkpoint one saved" in res.output, res.output
    res = invoke(["checkpoint", "list", "--json"])
    (row,) = json.loads(res.stdout)["checkpoints"]
    assert row["name"] == "one" and row["sites"] == ["reddit"] and row["changed"] >= 1
    res = invoke(["checkpoint", "restore", "one"])
    assert res.exit_code == 0 and "reddit" in res.output, res.output
    res = invoke(["checkpoint", "delete", "one", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["dropped"] == ["reddit"]
    assert json.loads(invoke(["checkpoint", "list", "--json"]).stdout)["checkpoints"] == []


def test_nothing_changed_is_a_checkpoint_of_golden(mini, engine):
    """Saved with nothing changed (only what the sites' jobs write), restored after writes: golden."""
    shop = mini.stack.sites["shopping"]
    snapshots.save_checkpoint(mini, "empty", [shop], engine)
    run(engine, "shopping", *MYSQL, "-e", "UPDATE store SET name = 'x' WHERE store_id = 1")
    snapshots.restore_checkpoint(mini, "empty", [shop], engine)
    rows = snapshots.verify_deep(mini, [shop], engine)
    assert all(r["ok"] for r in rows), rows
    assert all(written_by_jobs(shop, i) for r in rows for i in r["jobs"])


def test_diff_since_a_checkpoint_is_what_the_dumps_say(mini, engine):
    """`sitectl diff --since checkpoint:NAME`: the rows, files and keys that differ from the
    checkpoint (not from golden), as the dumps and listings read without sitectl say."""
    from tests.stores.real_schema import by_table, diff_changes, line_changes

    def pg_lines():
        out = run(engine, "forum", "pg_dump", "-U", "postgres", "--data-only", "--inserts", "-N", "sitectl", "-N",
                  "sitectl_*", "postmill")
        return by_table(out, r"INSERT INTO (\S+) VALUES ")

    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'at the checkpoint' WHERE username = 'sitectl_trusted'; "
        "INSERT INTO bad_phrases (id, phrase, phrase_type, timestamp) VALUES (gen_random_uuid(), 'kept', 'text', now())")
    run(engine, "shopping", "sh", "-c", f"mkdir -p {MEDIA}/d && printf one > {MEDIA}/d/a.txt && printf same > {MEDIA}/d/same.txt")
    run(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl_test:ck:k1", "v1")
    run(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl_test:ck:same", "s")
    sites = [mini.stack.sites[n] for n in ("shopping", "reddit", "gitlab")]
    snapshots.save_checkpoint(mini, "dc", sites, engine)
    then = pg_lines()
    # Nothing since: nothing listed, though much differs from golden.
    res = invoke(["diff", "--since", "checkpoint:dc", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["since_kind"] == "checkpoint" and not any(s["changed"] for s in got["sites"]), got
    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'later' WHERE username = 'sitectl_trusted'; "
        "DELETE FROM bad_phrases WHERE phrase = 'kept'; UPDATE users SET biography = 'admin' WHERE username = 'sitectl_admin'")
    run(engine, "shopping", "sh", "-c", f"printf two > {MEDIA}/d/a.txt && printf new > {MEDIA}/d/b.txt")
    run(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl_test:ck:k1", "v2")
    run(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl_test:ck:k2", "n")
    res = invoke(["diff", "--since", "dc", "--json"])  # a bare name that is only a checkpoint
    assert res.exit_code == 0, res.output
    got = {s["site"]: {st["kind"]: st for st in s["stores"]} for s in json.loads(res.stdout)["sites"]}
    forum = got["reddit"]["postgres"]
    assert diff_changes(forum) == line_changes(then, pg_lines())
    (users,) = [t for t in forum["tables"] if t["table"] == "public.users"]
    bios = {(r["columns"]["biography"]["old"], r["columns"]["biography"]["new"]) for r in users["updated"]}
    assert ("at the checkpoint", "later") in bios and len(bios) == 2, bios
    (phrases,) = [t for t in forum["tables"] if t["table"] == "public.bad_phrases"]
    assert [r["values"]["phrase"] for r in phrases["deleted"]] == ["kept"] and not phrases["inserted"]
    files = {f["path"]: f for f in got["shopping"]["files"]["files"]}
    assert files[f"{MEDIA}/d/a.txt"]["change"] == "changed" and files[f"{MEDIA}/d/a.txt"]["was"]["size"] == 3
    assert files[f"{MEDIA}/d/b.txt"]["change"] == "added" and f"{MEDIA}/d/same.txt" not in files
    assert files[f"{MEDIA}/d/a.txt"]["now"]["sha256"] == hashlib.sha256(b"two").hexdigest()
    keys = {k["key"]: k["change"] for k in got["gitlab"]["redis"]["keys"]}
    assert keys.get("sitectl_test:ck:k1") == "changed" and keys.get("sitectl_test:ck:k2") == "added"
    assert "sitectl_test:ck:same" not in keys
    # Bad input: exit 2; a name that is a snapshot and a checkpoint must be said which.
    assert invoke(["diff", "--since", "checkpoint:nosuch"]).exit_code == 2
    assert invoke(["diff", "--since", "nosuch"]).exit_code == 2
    snapshots.create(mini, "dc", [mini.stack.sites["reddit"]], engine)
    try:
        res = invoke(["diff", "--since", "dc", "--json"])
        assert res.exit_code == 2 and "checkpoint:dc" in json.loads(res.stdout)["error"]
    finally:
        snapshots.delete(mini, "dc", engine)
        snapshots.reset(mini, [mini.stack.sites["reddit"]], engine, full=True)


def test_redis_copies_changed_in_the_container_fail_and_persisted_keys_come_back(mini, engine):
    """Redis: a checkpoint's copies deleted in the container make the restore fail back at golden
    (redis-cli prints a script's error and exits 0: the error must still count); a golden key
    made persistent (its value unchanged) is kept as such."""
    gitlab = mini.stack.sites["gitlab"]
    golden = state_of.gitlab(engine)
    run(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl_test:r1", "v1")
    snapshots.save_checkpoint(mini, "red", [gitlab], engine)
    run(engine, "gitlab", "sh", "-c", "gitlab-redis-cli -n 15 --scan --pattern 'sitectl#c:red*' | "
        "while IFS= read -r k; do gitlab-redis-cli -n 15 DEL \"$k\" >/dev/null; done")
    with pytest.raises(CheckpointUnavailable, match="did not come back exactly"):
        snapshots.restore_checkpoint(mini, "red", [gitlab], engine)
    assert differs({"g": golden}, {"g": state_of.gitlab(engine)}) == []
    # A session key of golden's, made persistent with the same value.
    expiring = [k for k in run(engine, "gitlab", "gitlab-redis-cli", "--scan").split()
                if int(run(engine, "gitlab", "gitlab-redis-cli", "PTTL", k).strip()) > 3_600_000]
    assert expiring, "golden holds no key with a time to live"
    run(engine, "gitlab", "gitlab-redis-cli", "PERSIST", expiring[0])
    snapshots.save_checkpoint(mini, "persist", [gitlab], engine)
    snapshots.reset(mini, [gitlab], engine)
    assert int(run(engine, "gitlab", "gitlab-redis-cli", "PTTL", expiring[0]).strip()) > 0
    snapshots.restore_checkpoint(mini, "persist", [gitlab], engine)
    assert run(engine, "gitlab", "gitlab-redis-cli", "PTTL", expiring[0]).strip() == "-1"


def test_a_deleted_folder_is_kept_and_a_refusal_keeps_the_older_checkpoint(mini, engine):
    """A folder with content deleted since golden is saved (its removal comes back); a save of the
    same name that is refused (a schema change) leaves the earlier checkpoint whole."""
    forum = mini.stack.sites["reddit"]
    folder = "/var/www/html/public/submission_images"
    run(engine, "forum", "sh", "-c", f"mkdir -p {folder}/gone/deep && printf x > {folder}/gone/deep/f.jpg")
    snapshots.create(mini, "golden", [forum], engine)  # golden now holds the folder
    try:
        run(engine, "forum", "sh", "-c", f"rm -rf {folder}/gone")
        snapshots.save_checkpoint(mini, "nofolder", [forum], engine)
        want = forum_state(engine)
        snapshots.reset(mini, [forum], engine)
        assert "gone/deep/f.jpg" in forum_state(engine)["files"]
        snapshots.restore_checkpoint(mini, "nofolder", [forum], engine)
        assert forum_state(engine) == want
        run(engine, "forum", *PSQL, "ALTER TABLE users ADD COLUMN sitectl_extra int")
        with pytest.raises(CheckpointUnavailable, match="schema objects changed"):
            snapshots.save_checkpoint(mini, "nofolder", [forum], engine)
        assert [c["name"] for c in snapshots.list_checkpoints(mini)] == ["nofolder"]
        snapshots.restore_checkpoint(mini, "nofolder", [forum], engine)  # escalates to full, then applies
        assert forum_state(engine) == want
    finally:
        for c in snapshots.list_checkpoints(mini):
            snapshots.delete_checkpoint(mini, c["name"], engine)
        snapshots.reset(mini, [forum], engine, full=True)
        run(engine, "forum", "sh", "-c", f"rm -rf {folder}/gone")
        snapshots.create(mini, "golden", [forum], engine)  # golden as the image made it again


def test_a_record_of_the_wrong_shape_exits_11(mini, engine):
    forum = mini.stack.sites["reddit"]
    run(engine, "forum", *PSQL, "UPDATE users SET biography = 'shape' WHERE username = 'sitectl_trusted'")
    snapshots.save_checkpoint(mini, "shape", [forum], engine)
    p = ck.record_path(mini, "shape")
    good = json.loads(p.read_text())
    for bad in ({"marks": {"redis": 5}}, {"golden": "x"}, {"sites": {"nosuchsite": good["sites"]["reddit"]}}):
        rec = json.loads(json.dumps(good))
        if "marks" in bad:
            rec["sites"]["reddit"]["marks"] = bad["marks"]
        else:
            rec.update(bad)
            if "sites" in bad:
                rec["golden"] = {"nosuchsite": good["golden"]["reddit"]}
        p.write_text(json.dumps(rec))
        res = invoke(["checkpoint", "restore", "shape", "--json"])
        assert res.exit_code == 11, (bad, res.output)
    p.write_text(json.dumps(good))
    snapshots.restore_checkpoint(mini, "shape", [forum], engine)
