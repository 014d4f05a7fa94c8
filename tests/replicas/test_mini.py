"""The mini stack end to end: up, status, verify, host mismatch, task file, reset.

Real Docker, real databases, real HTTP. The session fixture `mini` brings all seven sites up
once; the reset test runs last in this module because it re-creates the mutable sites.
"""
import json
from pathlib import Path

import pytest

from tests.actions import postmill, readonly
from tests.conftest import invoke

pytestmark = pytest.mark.docker

TASK_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "webarena" / "test.raw.json"
SITES = ["shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map", "homepage"]


def cli(*args):
    r = invoke(list(args))
    return r.exit_code, r.output


def cli_json(*args):
    r = invoke([*args, "--json"])
    return r.exit_code, json.loads(r.stdout)


def test_all_seven_sites_running_and_healthy(mini):
    code, data = cli_json("status")
    assert code == 0, data
    rows = {r["site"]: r for r in data["sites"]}
    assert sorted(rows) == sorted(SITES)
    for name, r in rows.items():
        assert r["state"] == "running" and r["healthy"], (name, r)
    assert rows["shopping_admin"]["url"] == "http://127.0.0.1:7780/admin"


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
    assert sorted(methods) == ["gitlab", "reddit", "shopping", "shopping_admin"]
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
