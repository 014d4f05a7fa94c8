"""The PostgreSQL store on GitLab's own ``db/structure.sql`` (about 15.10: 815 tables of which 13
partitioned parents with 193 static hash and list partitions, 32 application triggers among them
loose-foreign-key statement triggers with transition tables, 1,091 foreign keys, 540 sequences,
7 views, 19 functions), in Debian's PostgreSQL, with GitLab's dynamic partitions created as its
partition manager creates them and a few tables of odd shape (tests/stores/data/gitlab-seed.sql).
Golden is taken; after each mutation, made the way GitLab makes it where it can (its SQL, with
the server's foreign-key actions and GitLab's own triggers doing the rest), a reset brings the
database back to exactly golden, proven by a dump that shares no code with sitectl
(:func:`tests.stores.real_schema.pg_state`). The server is PostgreSQL 13 (Debian bullseye's), the
major version GitLab 15.7's omnibus bundles; the forum's tests run bookworm's 15."""
from __future__ import annotations

import pytest

from tests.stores import real_schema as rs

pytestmark = pytest.mark.docker

CONTAINER = "sitectl-test-gitlab-schema"
#: GitLab omnibus' defaults for its bundled server (gitlab.rb: postgresql['max_connections'] 400,
#: ['max_locks_per_transaction'] 128): a full restore of 815 tables and 3,118 indexes in one
#: transaction needs that lock table; Debian's defaults (100 x 64) are too small for it.
OMNIBUS = {"max_connections": "400", "max_locks_per_transaction": "128"}
DB = "gitlabhq_production"
ODD = 'public."Task ""notes"".v1 $r$ ünï"'
LONG = "public.partitioned_with_a_name_of_sixty_three_bytes_which_is_the_limit"

# mutation: (SQL as GitLab issues it, the reset's path: "delta" or "full"). A full restore of this
# schema takes about 16 s here, so the other kinds of schema change (grants, indexes, dropped
# views, foreign keys, sequences, replaced functions, disabled triggers) are proven on
# Postmill's schema (tests/stores/test_postmill_real_schema.py), through the same code, as are a
# few more row changes, a new view and a new function (the suite's time is bounded).
MUTATIONS = {
    # cascades and SET NULL (PostgreSQL runs them as row changes, which sitectl's triggers log)
    "delete an issue (assignees and search data cascade)": ("DELETE FROM issues WHERE id = 1", "delta"),
    "delete a project (issues, labels, members cascade; loose-FK trigger writes a list partition)":
        ("DELETE FROM projects WHERE id = 2", "delta"),
    "delete a user (SET NULL and CASCADE across issues, notes, members)": ("DELETE FROM users WHERE id = 3", "delta"),
    "delete a group with its project (as Groups::DestroyService: projects first; cascades, loose-FK triggers)":
        ("DELETE FROM projects WHERE namespace_id = 3; DELETE FROM namespaces WHERE id IN (5, 3)", "delta"),
    "delete a label (label links cascade)": ("DELETE FROM labels WHERE id = 1", "delta"),
    "open an issue": ("INSERT INTO issues (title, project_id, author_id, iid, namespace_id, state_id, work_item_type_id, "
                      "created_at, updated_at) VALUES ('New', 1, 2, 3, 4, 1, 1, now(), now())", "delta"),
    "edit a project's description (details trigger)": ("UPDATE projects SET description = 'Dots' WHERE id = 1", "delta"),
    "move a group (traversal ids; sync-event trigger)": ("UPDATE namespaces SET traversal_ids = '{3,9}' WHERE id = 3",
                                                         "delta"),
    "a sequence set back but not called": ("SELECT setval('labels_id_seq', 1, false)", "delta"),
    # partitions
    "insert into a hash-partitioned table": ("INSERT INTO issue_search_data (project_id, issue_id, search_vector) "
                                             "VALUES (1, 2, 'keyboard')", "delta"),
    "a row moves between range partitions": ("UPDATE verification_codes SET created_at = '2026-12-05' "
                                             "WHERE visitor_id_code = 'v1'", "delta"),
    "a row moves between hash partitions": ("UPDATE issue_search_data SET project_id = 2 WHERE issue_id = 1", "delta"),
    "a row of a 63-byte-named parent moves partition": (f"UPDATE {LONG} SET created_at = '2027-02-01' WHERE id = 1",
                                                        "delta"),
    "TRUNCATE of a partitioned parent": ("TRUNCATE verification_codes", "delta"),
    "TRUNCATE ... CASCADE of a referenced table": ("TRUNCATE labels CASCADE", "delta"),
    "the partition manager creates next month's partition (and a row lands there)":
        ("CREATE TABLE gitlab_partitions_dynamic.verification_codes_202701 PARTITION OF verification_codes "
         "FOR VALUES FROM ('2027-01-01') TO ('2027-02-01'); INSERT INTO verification_codes VALUES "
         "('2027-01-03', 'v9', '1', '+1')", "delta"),
    "the partition manager detaches and drops an old partition":
        ("ALTER TABLE verification_codes DETACH PARTITION gitlab_partitions_dynamic.verification_codes_000000; "
         "DROP TABLE gitlab_partitions_dynamic.verification_codes_000000", "full"),
    "a list partition attached by hand": ("CREATE TABLE gitlab_partitions_dynamic.loose_foreign_keys_deleted_records_2 "
                                          "(LIKE loose_foreign_keys_deleted_records INCLUDING ALL); ALTER TABLE "
                                          "loose_foreign_keys_deleted_records ATTACH PARTITION "
                                          "gitlab_partitions_dynamic.loose_foreign_keys_deleted_records_2 "
                                          "FOR VALUES IN ('2')", "delta"),
    # schema objects
    "new table (its serial sequence too)": ("CREATE TABLE task_notes (id serial PRIMARY KEY, note text); "
                                            "INSERT INTO task_notes (note) VALUES ('x')", "delta"),
    "renamed referenced table": ("ALTER TABLE labels RENAME TO labels_old", "full"),
    "added column": ("ALTER TABLE issues ADD COLUMN task_extra integer", "full"),
    "dropped application trigger": ("DROP TRIGGER projects_loose_fk_trigger ON projects", "full"),
    "new trigger": ("CREATE TRIGGER task_trg AFTER INSERT ON issues FOR EACH ROW "
                    "EXECUTE FUNCTION insert_projects_sync_event()", "delta"),
    "new enum type and domain": ("CREATE TYPE task_mood AS ENUM ('ok', 'sad'); CREATE DOMAIN task_pos AS int "
                                 "CHECK (VALUE > 0)", "delta"),
    "new sequence": ("CREATE SEQUENCE task_seq; SELECT nextval('task_seq')", "delta"),
    "new extension": ("CREATE EXTENSION hstore", "delta"),
    "new schema with a table": ("CREATE SCHEMA task_s; CREATE TABLE task_s.t (id int PRIMARY KEY); "
                                "INSERT INTO task_s.t VALUES (1)", "delta"),
    # odd shapes
    "rows of a table named with quotes, dots, a dollar tag and unicode":
        (f"UPDATE {ODD} SET \"note, text\" = 'changed' WHERE id = 1; DELETE FROM {ODD} WHERE id = 2; "
         f"INSERT INTO {ODD} VALUES (3, E'\\t', E'\\n')", "delta"),
    "table without a primary key (a duplicate row deleted)":
        ("DELETE FROM audit_log_without_a_primary_key WHERE ctid = (SELECT min(ctid) FROM audit_log_without_a_primary_key)",
         "delta"),
    "identity and generated columns": ("INSERT INTO counters_with_identity_and_generated_columns (n) VALUES (9); "
                                       "DELETE FROM counters_with_identity_and_generated_columns WHERE id = 1; "
                                       "UPDATE counters_with_identity_and_generated_columns SET n = 7 WHERE id = 2",
                                       "delta"),
    "a numeric key of 25 digits": ("UPDATE ledger_keyed_by_a_numeric SET label = 'x' "
                                   "WHERE amount = 12345678901234567890.12345", "delta"),
    "several at once in one transaction": ("BEGIN; DELETE FROM issues WHERE id = 3; UPDATE projects SET name = 'x' "
                                           "WHERE id = 1; TRUNCATE verification_codes; "
                                           "CREATE TABLE task_t (id int); COMMIT", "delta"),
}


@pytest.fixture(scope="module")
def gitlab(engine):
    container = rs.start_postgres(engine, CONTAINER, OMNIBUS, image=rs.bullseye_servers())
    try:
        rs.load_gitlab(engine, container, DB)
        stores = rs.site_stores(engine, container, rs.pg_site("gitlab", DB))
        stores.snapshot("golden")
        golden = rs.pg_state(engine, container, DB)
        yield engine, container, stores, golden
    finally:
        rs.docker.container.remove(container, force=True)


def test_golden_copies_every_leaf_once_under_a_short_distinct_name(gitlab):
    engine, container, stores, golden = gitlab
    rows = rs.psql(engine, container, "SELECT count(*), count(DISTINCT relname), max(length(relname)) FROM pg_class c "
                                      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'sitectl_s_golden' "
                                      "AND c.relkind = 'r' AND c.relname NOT LIKE '\\_\\_%'", DB)
    leaves = rs.psql(engine, container, "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                                        "WHERE c.relkind = 'r' AND n.nspname IN ('public', 'gitlab_partitions_static', "
                                        "'gitlab_partitions_dynamic')", DB)
    n, distinct, longest = rows.split("|")
    assert n == distinct == leaves.strip() and int(longest) == 33
    # The row trigger is on the parents and cloned onto the partitions; nothing else is doubled.
    clones = rs.psql(engine, container, "SELECT count(*) FROM pg_trigger WHERE tgname = 'sitectl_row' AND tgparentid <> 0",
                     DB)
    assert int(clones) >= 193
    assert rs.reset(stores) == ("nothing", [], [])


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_reset_after_a_mutation_is_exactly_golden(gitlab, mutation):
    engine, container, stores, golden = gitlab
    rs.pg_mutate_and_reset(engine, container, stores, golden, DB, mutation, *MUTATIONS[mutation])


def test_verify_names_each_object_that_differs(gitlab):
    """The fingerprint (what ``verify --deep`` compares) names schema objects, not only rows."""
    engine, container, stores, golden = gitlab
    store = stores.stores[0]
    want = store.fingerprint("golden")
    rs.psql(engine, container, "CREATE VIEW task_v AS SELECT 1 AS x; CREATE TRIGGER task_trg AFTER DELETE ON users "
                               "FOR EACH ROW EXECUTE FUNCTION insert_projects_sync_event(); DELETE FROM labels WHERE id = 2",
            DB)
    now = store.fingerprint()
    differ = sorted(k for k in set(want) | set(now) if want.get(k) != now.get(k))
    # (label links go with their label: ON DELETE CASCADE)
    assert differ == ["object trigger task_trg on public.users", "object view public.task_v",
                      "table public.label_links", "table public.labels"]
    assert rs.reset(stores)[0] == "delta"
    assert store.fingerprint() == want and rs.pg_state(engine, container, DB) == golden


@pytest.mark.parametrize("lose, path", [("DROP SCHEMA sitectl CASCADE", "full"), ("DROP EVENT TRIGGER sitectl_ddl", "delta"),
                                        ("ALTER EVENT TRIGGER sitectl_drop DISABLE", "delta"),
                                        ("UPDATE sitectl_s_golden.__format SET version = 2", "full")])
def test_with_the_tracking_lost_the_reset_is_still_exactly_golden(gitlab, lose, path):
    """Change log or DDL log gone, or a snapshot of another format: never trusted silently.
    With the DDL log's event triggers gone, every object is compared (the new table is found
    all the same) and the delta puts them back."""
    engine, container, stores, golden = gitlab
    rs.psql(engine, container, lose, DB)
    for sql in ("DELETE FROM issues WHERE id = 1", "CREATE TABLE task_t (id int)"):
        rs.psql(engine, container, sql, DB)
    if "format" in lose:
        with pytest.raises(rs.StoreError, match="take it again"):
            rs.reset(stores)
        rs.psql(engine, container, "UPDATE sitectl_s_golden.__format SET version = 3", DB)
        rs.psql(engine, container, "DROP TABLE sitectl.meta", DB)  # no baseline to trust: a full restore
    got, found, left = rs.reset(stores)
    now = rs.pg_state(engine, container, DB)
    assert now == golden, rs.diff(golden, now)
    assert (got, left) == (path, []), found
    assert rs.reset(stores) == ("nothing", [], [])
    rs.psql(engine, container, "DELETE FROM labels WHERE id = 2; CREATE VIEW task_v AS SELECT 1 AS x", DB)
    assert rs.reset(stores)[0] == "delta" and rs.pg_state(engine, container, DB) == golden


#: Row changes whose diff (`sitectl diff`, docs/diff.md) is checked against the dump: cascades,
#: loose-foreign-key triggers writing list partitions, rows moving between partitions, odd names,
#: identity and generated columns, a 25-digit numeric key.
DIFF_MUTATIONS = ["delete a project (issues, labels, members cascade; loose-FK trigger writes a list partition)",
                  "a row moves between hash partitions", "a row moves between range partitions",
                  "rows of a table named with quotes, dots, a dollar tag and unicode",
                  "identity and generated columns", "a numeric key of 25 digits"]


@pytest.mark.parametrize("mutation", DIFF_MUTATIONS)
def test_diff_lists_exactly_the_rows_the_dump_says(gitlab, mutation):
    """Each table's diff (partitions by leaf), against the independent dump (COPY lines per leaf):
    rows removed (deleted and updated) and added (inserted and updated)."""
    from sitectl.stores.base import DiffLimits

    engine, container, stores, golden = gitlab
    sql, _ = MUTATIONS[mutation]
    rs.psql(engine, container, sql, DB)
    found = stores.changes("golden")
    (store,) = [st.diff("golden", c, DiffLimits(rows=100_000)) for st, c in found.per_store if st.kind == "postgres"]
    expected = rs.line_changes(rs.pg_rows(golden), rs.pg_rows(rs.pg_state(engine, container, DB)))
    unlisted = {t["table"] for t in store["tables"] if "rows" in t}
    assert expected, f"{mutation}: the dump shows no change"
    assert rs.diff_changes(store) == {t: c for t, c in expected.items() if t not in unlisted}, mutation
    assert unlisted <= set(expected)
    assert rs.reset(stores)[0] == "delta" and rs.pg_state(engine, container, DB) == golden
