"""`--site-hosts`: each site on its own host name (``shopping.localhost``), so the forum and a
shop no longer share cookies and every pair of WebArena's sites gets a working combined state.

Instance 1 of the mini stack runs the four login sites with site host names on ``localhost``.
This machine's resolver does not know ``*.localhost`` (no libnss-myhostname): sitectl's own
HTTP and Chromium reach those names on loopback by themselves (RFC 6761 §6.3), which is what
is tested; WebArena's own login code runs unmodified in Debian's Chromium."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sitectl.ops import lifecycle
from sitectl.ops.envvars import env_vars
from sitectl.progress import Reporter
from sitectl.stack.target import resolve_target
from tests.conftest import invoke
from tests.ops.test_browser_states import CHROMIUM, logged_in
from tests.ops.test_login import probe_file
from tests.replicas.test_webarena_client import BROWSERS, JUDGE, PY

pytestmark = pytest.mark.docker

INSTANCE = 1
LOGIN_SITES = ["shopping", "shopping_admin", "reddit", "gitlab"]
TEN = sorted(["gitlab_state.json", "shopping_state.json", "shopping_admin_state.json", "reddit_state.json",
              "gitlab.reddit_state.json", "gitlab.shopping_state.json", "gitlab.shopping_admin_state.json",
              "shopping.shopping_admin_state.json", "reddit.shopping_state.json", "reddit.shopping_admin_state.json"])


def cli(*args):
    r = invoke([*args, "--instance", str(INSTANCE)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, (json.loads(r.stdout) if "--json" in args and r.stdout.strip() else r.output)


@pytest.fixture(scope="module")
def hosted(engine):
    target = resolve_target("mini", host="localhost", instance=INSTANCE, site_hosts=True)
    lifecycle.down(target, engine)
    lifecycle.up(target, target.stack.select(LOGIN_SITES + ["homepage"]), engine, Reporter())
    yield target
    from sitectl.ops import login as loginmod

    loginmod._registry(target).unlink(missing_ok=True)
    lifecycle.down(target, engine)


def test_each_site_has_its_own_host_name_and_base_url(hosted, engine):
    urls = env_vars(hosted)
    assert urls["SHOPPING"] == "http://shopping.localhost:7870"
    assert urls["SHOPPING_ADMIN"] == "http://shopping-admin.localhost:7880/admin"
    assert urls["REDDIT"] == "http://reddit.localhost:10099"
    assert urls["GITLAB"] == "http://gitlab.localhost:8123"
    # The post-start steps configured each application for its own name: Magento's base URL...
    out = engine.exec_checked(hosted.container(hosted.stack.sites["shopping"]),
                      ["mysql", "-uroot", "-p1234567890", "-N", "magentodb", "-e", "SELECT value FROM core_config_data WHERE path='web/unsecure/base_url'"], "read base URL")
    assert out.strip() == "http://shopping.localhost:7870/"
    # ...and GitLab's external_url, on whose port it listens inside the container too.
    rb = engine.exec_checked(hosted.container(hosted.stack.sites["gitlab"]), ["grep", "^external_url", "/etc/gitlab/gitlab.rb"],
                             "read external_url")
    assert rb.strip() == "external_url 'http://gitlab.localhost:8123'"
    # The homepage links to each site of this instance under the site's own name.
    from sitectl.http import new_session

    page = new_session().get("http://homepage.localhost:4499/", timeout=30).text
    for origin in ("http://shopping.localhost:7870", "http://shopping-admin.localhost:7880/admin",
                   "http://reddit.localhost:10099/forums/all", "http://gitlab.localhost:8123/explore"):
        assert f'href="{origin}' in page, origin
    assert "<your-server-hostname>" not in page and ":7770" not in page
    # Later commands find the setting on the running containers without being told again.
    code, res = cli("env", "--json")
    assert code == 0 and res["REDDIT"] == "http://reddit.localhost:10099"


def test_every_pair_including_forum_with_shops_is_written_and_logged_in(hosted, tmp_path):
    code, res = cli("login", *LOGIN_SITES, "--out", str(tmp_path), "--json")
    assert code == 0 and res["ok"], res
    assert sorted(Path(f["file"]).name for f in res["files"]) == TEN and res["skipped_pairs"] == []
    for name in TEN:
        assert set(probe_file(hosted, tmp_path / name).values()) == {"logged_in"}, name
    # The two session cookies named PHPSESSID live side by side, each scoped to its own host.
    cookies = json.loads((tmp_path / "reddit.shopping_state.json").read_text())["cookies"]
    assert {c["domain"] for c in cookies if c["name"] == "PHPSESSID"} == {"reddit.localhost", "shopping.localhost"}
    # `login --check` agrees, file by file and site by site.
    code, res = cli("login", "--check", "--out", str(tmp_path), "--json")
    assert code == 0 and {r["state"] for r in res["files"]} == {"logged_in"} and len(res["files"]) == 16


def test_forum_and_shop_pairs_open_logged_in_in_chromium(hosted, tmp_path):
    from playwright.sync_api import sync_playwright

    assert cli("login", *LOGIN_SITES, "--out", str(tmp_path), "--json")[0] == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            control = browser.new_context()
            assert not any(logged_in(control.new_page(), hosted, n) for n in LOGIN_SITES)
            control.close()
            for name in ("reddit.shopping_state.json", "reddit.shopping_admin_state.json"):
                ctx = browser.new_context(storage_state=str(tmp_path / name))
                page = ctx.new_page()
                assert all(logged_in(page, hosted, n) for n in name.rsplit("_", 1)[0].split(".")), name
                ctx.close()
        finally:
            browser.close()


def test_webarena_own_login_makes_the_forum_shop_pair(hosted, tmp_path):
    # WebArena never makes this pair ("auth don't work"); its own renew_comb does, unmodified,
    # once the two sites have their own host names, and its own is_expired accepts the file.
    assert PY.exists(), "`make test` makes .venv-webarena"
    env = {**os.environ, **env_vars(hosted, "webarena"), "PLAYWRIGHT_BROWSERS_PATH": str(BROWSERS)}
    code = ("import sys\nfrom webarena.browser_env import auto_login as a\n"
            "a.renew_comb(['reddit', 'shopping'], auth_folder=sys.argv[1])\n" + JUDGE.replace("sys.argv[1:]", "sys.argv[2:]"))
    f = tmp_path / "reddit.shopping_state.json"
    p = subprocess.run([str(PY), "-c", code, str(tmp_path), str(f)], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    verdict = json.loads(p.stdout.strip().splitlines()[-1])
    assert verdict == {"reddit.shopping_state.json:reddit": False, "reddit.shopping_state.json:shopping": False}
    assert set(probe_file(hosted, f).values()) == {"logged_in"}


def test_site_hosts_refused_on_an_address_and_against_running_containers(hosted):
    r = invoke(["env", "--site-hosts", "--host", "127.0.0.1", "--instance", "5"])
    assert r.exit_code == 2 and "is an address" in r.output and "--host localhost" in r.output
    r = invoke(["up", "reddit", "--no-site-hosts", "--host", "localhost", "--instance", "1"])
    assert r.exit_code == 2 and "site host names on, not off" in r.output
