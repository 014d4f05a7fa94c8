"""The family's own BrowserGym clients set their tasks up on the mini stack (issue 19, item 5).

`browsergym-webarenalite` and `browsergym-webarena-verified` (0.14.3, unmodified, with
`webarena-verified` 1.2.3, in `.venv-family`, Python 3.12, which `make test` makes) build their
tasks from their own copies of the task files and run their own `setup(page)`: BrowserGym's
`ui_login` for every site of the task (form login by label and button name, in a real browser:
Debian's Chromium through the `PLAYWRIGHT_BROWSERS_PATH` wrapper), then each start URL in its
own tab; and their instance's own check (`WebArenaInstance.check_status`). Judged here by other
code: every tab is on its start URL (or below it, where the site redirects), and sitectl's
drivers find each site of the task logged in in the browser's storage state, except where two
sites share a cookie on one host name: the forum and a shop both use `PHPSESSID` on `/`, and a
browser scopes cookies to the host, not the port (RFC 6265 §8.5), so the later login replaces
the earlier one. WebArena never pairs them; WebArena-Verified does (task 671: shopping, then
reddit), and on one host name its client cannot end with both logged in (`sitectl up
--site-hosts` gives each site its own host name; docs/cli.md)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sitectl.ops import login as loginmod
from sitectl.ops.envvars import env_vars
from sitectl.sites import driver_for

pytestmark = [pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / ".venv-family/bin/python"

SETUP = """
import faulthandler, json, sys, time
faulthandler.dump_traceback_later(int(sys.argv[2]), exit=True)  # a hang ends with every thread's stack
from playwright.sync_api import sync_playwright
from browsergym.webarena.instance import WebArenaInstance
from browsergym.webarenalite.task import WebArenaLiteTask
from browsergym.webarena_verified.task import WebArenaVerifiedTask

WebArenaInstance().check_status()
out = {}
with sync_playwright() as pw:
    browser = pw.chromium.launch(headless=True)
    for kind, tid in json.loads(sys.argv[1]):
        print("setting up", kind, tid, time.monotonic(), file=sys.stderr, flush=True)
        ctx = browser.new_context()
        task = (WebArenaLiteTask if kind == "lite" else WebArenaVerifiedTask)(seed=0, task_id=tid)
        task.setup(ctx.new_page())
        out[f"{kind}:{tid}"] = {"sites": task.config["sites"], "tabs": [p.url for p in ctx.pages],
                                "start": task.config.get("start_urls") or task.config["start_url"].split(" |AND| "),
                                "state": ctx.storage_state()}
        ctx.close()
print(json.dumps(out))
"""

# One task per site combination the files hold (ids: Lite's old_task_id, Verified's task_id).
# GitLab throttles sign-ins (10 a minute, its protected paths): three tasks here sign in to it.
TASKS = [("lite", 4), ("lite", 23), ("lite", 27), ("lite", 44), ("lite", 7), ("lite", 566),
         ("verified", 0), ("verified", 97), ("verified", 431), ("verified", 552), ("verified", 671),
         ("verified", 759)]


def test_lite_and_verified_clients_log_in_and_open_their_start_urls(mini):
    assert PY.exists(), "`make test` makes .venv-family (browsergym-webarenalite, browsergym-webarena-verified)"
    env = {**os.environ, **env_vars(mini, "browsergym"), "PLAYWRIGHT_BROWSERS_PATH": str(ROOT / ".cache/pw-browsers"),
           "NLTK_DATA": str(ROOT / ".cache/nltk_data")}
    p = subprocess.run([str(PY), "-c", SETUP, json.dumps(TASKS), "300"], env=env, capture_output=True, text=True, timeout=400)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert sorted(got) == sorted(f"{k}:{t}" for k, t in TASKS)
    for key, r in got.items():
        # Each tab on its start URL, or below it where the site redirects (Magento's admin: a
        # logged-in /admin lands on /admin/admin/dashboard/).
        assert len(r["tabs"]) == len(r["start"]) and all(
            t.rstrip("/").startswith(u.rstrip("/")) for t, u in zip(r["tabs"], r["start"])), (key, r["tabs"], r["start"])
        session = loginmod.session_from_state(r["state"])
        states = {}
        for s in r["sites"]:
            site = mini.stack.sites[s]
            if "default" not in site.accounts or not driver_for(site.kind.value, mini.url(site)).has_login:
                continue
            states[s] = driver_for(site.kind.value, mini.url(site)).check_session(session, site.account()).state
        # The forum and a shop on one host name share one PHPSESSID: the browser cannot hold both
        # sessions, and each site replaces the other's cookie as its tab loads.
        shared = {"shopping", "shopping_admin"} & set(states) if "reddit" in states else set()
        if shared:
            assert "logged_out" in {states[s] for s in shared | {"reddit"}}, (key, states)
        assert all(v == "logged_in" for s, v in states.items() if s not in shared | ({"reddit"} if shared else set())), \
            (key, states)
