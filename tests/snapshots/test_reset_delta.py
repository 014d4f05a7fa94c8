"""Delta reset: for every realistic task mutation (made through the replicas' own HTTP
endpoints) and adversarial ones (made with the site's own database and shell), mutate, reset,
then `verify --deep` finds every store equal to the golden snapshot.

Real Docker, real MariaDB/PostgreSQL/Redis, real files and git, real HTTP. Uses the session's
mini stack (tests/conftest.py), which `up` snapshotted as golden.
"""
import hashlib
import random
import time
import uuid

import pytest

from sitectl import snapshots
from sitectl.sites.jobs import written_by_jobs
from tests.actions import gitlab as gl
from tests.actions import magento, postmill
from tests.conftest import invoke

pytestmark = pytest.mark.docker

SHOP, ADMIN, FORUM, GITLAB = ("http://127.0.0.1:7770", "http://127.0.0.1:7780/admin",
                              "http://127.0.0.1:9999", "http://127.0.0.1:8023")
PAT = "glpat-byteblaze-replica-01"
USER, PW = "MarvelsGrantMan136", "test1234"


def reset_and_check(mini, engine, site: str, expect_change: bool = True, full: bool = False):
    """Reset ``site`` (delta unless ``full``), then compare every store with golden."""
    s = mini.stack.sites[site]
    (res,) = snapshots.reset(mini, [s], engine, full=full)
    assert res.method != "recreate", res.escalations
    if expect_change:
        assert res.method in ("delta", "full") and (res.changed or full), res
    else:
        # Nothing the test did; the site's background jobs (Magento's cron, every minute) may
        # have run since the last reset, and what they write is all a reset may find.
        assert res.method == "none" or all(written_by_jobs(s, c) for c in res.changed), res
    deep = snapshots.verify_deep(mini, [s], engine)
    bad = [d for d in deep if not d["ok"]]
    assert not bad, bad
    return res


def sh(engine, container, *argv):
    rc, out = engine.exec(container, list(argv))
    assert rc == 0, out
    return out


@pytest.fixture(autouse=True)
def golden_before(mini, engine):
    """Each test starts golden (a failed test must not leak state into the next one)."""
    snapshots.reset(mini, [mini.stack.sites[n] for n in ("shopping", "shopping_admin", "reddit", "gitlab")], engine)


def test_nothing_changed_is_a_no_op(mini, engine):
    for site in ("shopping", "shopping_admin", "reddit", "gitlab"):
        reset_and_check(mini, engine, site, expect_change=False)


# -- realistic task mutations ------------------------------------------------------------
def test_place_order(mini, engine):
    golden = magento.latest_order(SHOP)["increment_id"]
    assert magento.place_order(SHOP) != golden
    res = reset_and_check(mini, engine, "shopping")
    assert any("sales_order" in c for c in res.changed)
    assert magento.latest_order(SHOP)["increment_id"] == golden
    # The next order gets the same number as it would have on the golden state.
    again = magento.place_order(SHOP)
    reset_and_check(mini, engine, "shopping")
    assert magento.place_order(SHOP) == again
    reset_and_check(mini, engine, "shopping")


def test_add_to_cart_and_review(mini, engine):
    s = magento.storefront_session(SHOP)
    key = "sandgrens-swedish-handmade-wooden-clog-sandal-copenhagen"
    magento.add_to_cart(SHOP, s, key)
    magento.write_review(SHOP, s, key, "sitectl", 4, "Fine clogs")
    reset_and_check(mini, engine, "shopping")
    assert key not in " ".join(magento.cart_product_names(SHOP, magento.storefront_session(SHOP))).lower()
    reset_and_check(mini, engine, "shopping")


def test_admin_price_and_stock(mini, engine):
    s = magento.admin_session(ADMIN)
    before = magento.product_edit_values(ADMIN, s, 1481)
    magento.admin_set_price_and_stock(ADMIN, s, 1481, 1.23, qty=7, in_stock=True)
    assert magento.product_edit_values(ADMIN, s, 1481) != before
    reset_and_check(mini, engine, "shopping_admin")
    assert magento.product_edit_values(ADMIN, magento.admin_session(ADMIN), 1481) == before
    reset_and_check(mini, engine, "shopping_admin")


def test_forum_post_comment_vote_and_new_forum(mini, engine):
    s = postmill.login(FORUM, "sitectl_trusted", "sitectl1234")
    url = postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "delta reset post", "body", session=s)
    postmill.comment(FORUM, "sitectl_trusted", "sitectl1234", url, "a comment", session=s)
    postmill.vote(FORUM, "sitectl_trusted", "sitectl1234", url, -1, session=s)
    postmill.create_forum(FORUM, "sitectl_trusted", "sitectl1234", "sitectltest", "Test forum", "made by a test", session=s)
    res = reset_and_check(mini, engine, "reddit")
    assert any("submissions" in c for c in res.changed)
    assert not postmill.post_exists(FORUM, url)


def test_gitlab_issue_mr_member_push(mini, engine):
    iid = gl.create_issue_api(GITLAB, PAT, "byteblaze/dotfiles", "delta reset issue")
    mr = gl.open_merge_request(GITLAB, "byteblaze", "hello1234", "byteblaze/dotfiles", "sitectl-mr")
    gl.add_project_member(GITLAB, "byteblaze", "hello1234", "byteblaze/dotfiles", "yjlou", "developer")
    gl.push_commit(GITLAB, "byteblaze", "hello1234", "byteblaze/dotfiles", "main", "SITECTL.md", "pushed\n")
    res = reset_and_check(mini, engine, "gitlab")
    assert any("issues" in c for c in res.changed) and any("repositories" in c for c in res.changed)
    with pytest.raises(gl.ActionError, match="404"):
        gl.get_issue(GITLAB, PAT, "byteblaze/dotfiles", iid)
    with pytest.raises(gl.ActionError, match="404"):
        gl.get_merge_request(GITLAB, PAT, "byteblaze/dotfiles", mr)


# -- adversarial mutations -------------------------------------------------------------------
MYSQL = ["mysql", "-uroot", "-p1234567890", "magentodb", "-e"]
PSQL_FORUM = ["psql", "-U", "postgres", "-d", "postmill", "-c"]
PSQL_GITLAB = ["gitlab-psql", "-d", "gitlabhq_production", "-c"]


@pytest.mark.parametrize("sql", [
    # Magento's structure refuses both while foreign keys reference the table; an adversary (and
    # Magento's own setup) turns the checks off first.
    "SET FOREIGN_KEY_CHECKS = 0; TRUNCATE TABLE review",
    "SET FOREIGN_KEY_CHECKS = 0; DROP TABLE url_rewrite",
    "DELETE FROM catalog_product_entity WHERE entity_id = 2",  # cascades: EAV, stock, links, reviews' votes
    "CREATE TABLE sitectl_extra (a INT)",
    "ALTER TABLE store ADD COLUMN extra INT",
    "ALTER TABLE catalog_product_entity DROP COLUMN updated_at",
    "DELETE FROM customer_entity WHERE entity_id = 1",
    "UPDATE core_config_data SET value = 'http://elsewhere:1/' WHERE path = 'web/unsecure/base_url'",
    "INSERT INTO sales_sequence_meta (entity_type, store_id, sequence_table) VALUES ('x', 9, 'y')",
    # sitectl's own tracking damaged, then a change it cannot log (the trigger's name is
    # sitectl_ + the first 16 hex digits of the MD5 of the table's name + the event).
    f"DROP TRIGGER sitectl_{hashlib.md5(b'store').hexdigest()[:16]}_u; UPDATE store SET name = 'untracked' "
    "WHERE store_id = 1",
])
def test_mysql_adversarial(mini, engine, sql):
    sh(engine, "shopping", *MYSQL, sql)
    reset_and_check(mini, engine, "shopping")


@pytest.mark.parametrize("sql", [
    "TRUNCATE submission_votes",
    "DROP TABLE forum_subscriptions CASCADE",
    "CREATE TABLE sitectl_extra (a int)",
    "ALTER TABLE forums ADD COLUMN extra int",
    "SELECT setval('submissions_id_seq', 999999)",
    # the three newest comments nothing replies to (a reply's parent_id keeps its parent)
    "DELETE FROM comments WHERE id IN (SELECT id FROM comments c WHERE NOT EXISTS "
    "(SELECT 1 FROM comments r WHERE r.parent_id = c.id) ORDER BY id DESC LIMIT 3)",
    "UPDATE users SET biography = 'changed' WHERE username = 'MarvelsGrantMan136'",
    "DROP TRIGGER sitectl_row ON users; UPDATE users SET biography = 'untracked' WHERE username = 'MarvelsGrantMan136'",
])
def test_postgres_adversarial(mini, engine, sql):
    sh(engine, "forum", *PSQL_FORUM, sql)
    reset_and_check(mini, engine, "reddit")


def test_gitlab_sequence_and_redis(mini, engine):
    sh(engine, "gitlab", *PSQL_GITLAB, "SELECT nextval('issues_id_seq')")
    sh(engine, "gitlab", "gitlab-redis-cli", "SET", "sitectl:stray", "1")
    sh(engine, "gitlab", "gitlab-redis-cli", "DEL", sh(engine, "gitlab", "gitlab-redis-cli", "RANDOMKEY").strip() or "none")
    reset_and_check(mini, engine, "gitlab")


def test_redis_keys_that_expire_come_back_with_the_snapshots_time_to_live(mini, engine):
    """A key with a time to live (GitLab's sessions: 7 days) counts down in the live keyspace,
    never in the snapshot's copy: each restore gives it the time it had at the snapshot again, so
    the snapshot stays reachable however long ago it was taken. A key that expires within the
    hour (caches, rate-limit counters) is not kept; losing or gaining a TTL is a change."""
    cli = ["gitlab-redis-cli"]
    sh(engine, "gitlab", *cli, "SET", "sitectl_test:session", "v", "PX", "7200000")  # two hours
    sh(engine, "gitlab", *cli, "SET", "sitectl_test:rate", "1", "PX", "60000")  # one minute
    try:
        r = invoke(["snapshot", "create", "ttl_check", "gitlab", "--json"])
        assert r.exit_code == 0, r.output
        assert sh(engine, "gitlab", *cli, "-n", "15", "PTTL", "sitectl:ttl_check:sitectl_test:session").strip() == "-1"
        assert sh(engine, "gitlab", *cli, "-n", "15", "EXISTS", "sitectl:ttl_check:sitectl_test:rate").strip() == "0"
        for _ in range(2):
            sh(engine, "gitlab", *cli, "DEL", "sitectl_test:session")  # as if it had expired
            sh(engine, "gitlab", *cli, "PEXPIRE", "sitectl_test:rate", "1")
            time.sleep(0.1)
            r = invoke(["snapshot", "restore", "ttl_check", "gitlab", "--json"])
            assert r.exit_code == 0, r.output
            left = int(sh(engine, "gitlab", *cli, "PTTL", "sitectl_test:session").strip())
            assert 7_000_000 < left <= 7_200_000, left  # the snapshot's time to live, from the restore
            assert sh(engine, "gitlab", *cli, "EXISTS", "sitectl_test:rate").strip() == "0"
            r = invoke(["verify", "--deep", "gitlab", "--snapshot", "ttl_check", "--json"])
            assert r.exit_code == 0, r.output
        sh(engine, "gitlab", *cli, "PERSIST", "sitectl_test:session")  # the same value, no TTL: a change
        r = invoke(["verify", "--deep", "gitlab", "--snapshot", "ttl_check", "--json"])
        assert r.exit_code == 7 and "redis keyspace" in r.output, r.output
    finally:
        sh(engine, "gitlab", *cli, "DEL", "sitectl_test:session", "sitectl_test:rate")
        invoke(["snapshot", "delete", "ttl_check", "--json"])


def test_new_and_deleted_files(mini, engine):
    sh(engine, "forum", "sh", "-c", "echo x > /var/www/html/public/submission_images/new.png")
    sh(engine, "forum", "sh", "-c", "rm -f /var/www/html/public/submission_images/$(ls /var/www/html/public/submission_images | head -1)")
    sh(engine, "shopping", "sh", "-c", "mkdir -p /var/www/magento2/pub/media/extra/deep && echo y > /var/www/magento2/pub/media/extra/deep/f")
    sh(engine, "shopping", "sh", "-c", "rm -rf /var/www/magento2/pub/media/catalog")
    # A folder's own mode and a file's content changed in place (its folder's time unchanged).
    sh(engine, "forum", "chmod", "700", "/var/www/html/public/submission_images")
    # (python3: BusyBox's touch takes no nanosecond date, as on the real Alpine image)
    sh(engine, "forum", "python3", "-c", "import os; d = '/var/www/html/public/submission_images'; st = os.stat(d); "
                                         "f = sorted(x for x in os.listdir(d) if x != 'new.png')[0]; "
                                         "open(os.path.join(d, f), 'a').write('z\\n'); os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns))")
    reset_and_check(mini, engine, "reddit")
    reset_and_check(mini, engine, "shopping")


def test_force_pushed_branch_and_deleted_repository(mini, engine):
    repos = "/var/opt/gitlab/git-data/repositories/@hashed"
    repo = sh(engine, "gitlab", "sh", "-c", f"ls -d {repos}/*/*/*.git | head -1").strip()
    # A force-push: the default branch moved to a new root commit.
    sh(engine, "gitlab", "sh", "-c",
       f"cd {repo} && export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' && t=$(git mktree </dev/null) && c=$(echo forced | git -c user.name=x -c user.email=x@x commit-tree $t) && "
       "git update-ref $(git symbolic-ref HEAD) $c")
    other = sh(engine, "gitlab", "sh", "-c", f"ls -d {repos}/*/*/*.git | sed -n 2p").strip()
    sh(engine, "gitlab", "rm", "-rf", other)
    res = reset_and_check(mini, engine, "gitlab")
    assert any(other.rsplit("/", 1)[1] in c for c in res.changed)


def test_full_reset_restores_everything(mini, engine):
    reset_and_check(mini, engine, "shopping", full=True)
    reset_and_check(mini, engine, "gitlab", full=True)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_mutation_sequences_end_golden(mini, engine, seed):
    """Property: any sequence of mutations across the sites, then one reset, is golden."""
    rng = random.Random(seed)
    moves = [
        ("shopping", lambda: magento.place_order(SHOP)),
        ("shopping", lambda: sh(engine, "shopping", *MYSQL, "DELETE FROM review ORDER BY review_id DESC LIMIT 1")),
        ("shopping_admin", lambda: magento.set_price_rest("http://127.0.0.1:7780", "MB29", rng.randint(1, 99))),
        ("reddit", lambda: postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", uuid.uuid4().hex[:12])),
        ("reddit", lambda: sh(engine, "forum", *PSQL_FORUM, "UPDATE submissions SET net_score = net_score + 1")),
        ("gitlab", lambda: gl.create_issue_api(GITLAB, PAT, "byteblaze/dotfiles", uuid.uuid4().hex[:12])),
        ("gitlab", lambda: sh(engine, "gitlab", "gitlab-redis-cli", "SET", uuid.uuid4().hex, "1")),
    ]
    touched = set()
    for site, move in rng.sample(moves, 4):
        move()
        touched.add(site)
    for site in sorted(touched):
        reset_and_check(mini, engine, site)


# -- named snapshots and archives --------------------------------------------------------------
def test_named_snapshot_export_import_restore(mini, engine, tmp_path):
    import json
    import tarfile


    def cli(*args):
        r = invoke([*args, "--json"])
        return r.exit_code, r.stdout

    arch = tmp_path / "golden.tar.gz"
    code, out = cli("snapshot", "export", "golden", str(arch))
    assert code == 0, out
    code, out = cli("snapshot", "import", str(arch), "--name", "copy")
    assert code == 0, out
    magento.place_order(SHOP)
    code, out = cli("snapshot", "restore", "copy", "shopping")
    assert code == 0, out
    code, out = cli("verify", "--deep", "--snapshot", "copy", "shopping")
    assert code == 0, out
    code, out = cli("snapshot", "delete", "copy")
    names = lambda: [s["name"] for s in json.loads(cli("snapshot", "list")[1])["snapshots"]]  # noqa: E731
    assert code == 0 and "copy" not in names()
    reset_and_check(mini, engine, "shopping", expect_change=True)

    # A tampered payload, a path escaping the archive, and another stack are all rejected,
    # and nothing is imported.
    def rewrite(dst, edit):
        with tarfile.open(arch) as src, tarfile.open(dst, "w:gz") as out_tar:
            for m in src.getmembers():
                data = src.extractfile(m).read()
                m, data = edit(m, data)
                m.size = len(data)
                out_tar.addfile(m, __import__("io").BytesIO(data))

    bad1 = tmp_path / "tampered.tar.gz"
    rewrite(bad1, lambda m, d: (m, d + b"-- x\n" if m.name.endswith(".sql") else d))
    bad2 = tmp_path / "escape.tar.gz"
    rewrite(bad2, lambda m, d: (setattr(m, "name", "../evil") or m, d) if m.name.endswith("1-files.tar") else (m, d))
    bad3 = tmp_path / "stack.tar.gz"
    rewrite(bad3, lambda m, d: (m, json.dumps({**json.loads(d), "stack": "webarena"}).encode())
            if m.name == "manifest.json" else (m, d))
    # An archive made to look whole (its manifest's digests match) whose files payload holds a
    # symlink to /etc/passwd for the web root (issue 18): refused, naming the member.
    bad4 = tmp_path / "link.tar.gz"
    with tarfile.open(arch) as src:
        files_rel = next(m.name for m in src.getmembers() if m.name.endswith("-files.tar") and "/shopping/" in m.name)
        inner_bytes = src.extractfile(files_rel).read()
    io = __import__("io")
    buf = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(inner_bytes)) as inner, tarfile.open(fileobj=buf, mode="w") as evil:
        for m in inner.getmembers():
            evil.addfile(m, inner.extractfile(m) if m.isfile() else None)
        link = tarfile.TarInfo("./0/evil.jpg")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        evil.addfile(link)
    forged = buf.getvalue()

    def forge(m, d):
        if m.name == files_rel:
            return m, forged
        if m.name == "manifest.json":
            man = json.loads(d)
            man["payload"][files_rel].update(size=len(forged), sha256=__import__("hashlib").sha256(forged).hexdigest())
            return m, json.dumps(man).encode()
        return m, d
    rewrite(bad4, forge)
    for bad, words in ((bad1, "tampered"), (bad2, "not allowed"), (bad3, "stack 'webarena'"),
                       (bad4, "member './0/evil.jpg' is a symlink to '/etc/passwd', outside its folder")):
        code, out = cli("snapshot", "import", str(bad), "--name", "evil")
        assert code == 2 and words in out, out
    assert "evil" not in names()
