"""The storage-state files of `sitectl login` open logged-in pages in a real browser: Debian's
Chromium driven by Playwright (`executable_path=/usr/bin/chromium`; no browser download works
here), with WebArena's own expiry rule (`browser_env/auto_login.py` `is_expired`: the page keeps
the probe URL, or holds the keyword). A fresh context without a state is the control: it must
be logged out on every probe."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sitectl.sites import driver_for
from tests.conftest import invoke

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("keep_login_registry")]

CHROMIUM = "/usr/bin/chromium"
#: WebArena's probe per site: (keyword or None for "final URL equals the probe URL").
KEYWORD = {"shopping": None, "gitlab": None, "shopping_admin": "Dashboard", "reddit": "Delete",
           "classifieds": "My listings"}  # VisualWebArena's (family-formats.md §1.5)


def logged_in(page, target, name: str) -> bool:
    site = target.stack.sites[name]
    drv = driver_for(site.kind.value, target.url(site))
    url = drv.url(drv.probe_path(site.account()))
    page.goto(url, wait_until="load")
    kw = KEYWORD[name]
    return (kw in page.content()) if kw else page.url == url


def test_every_state_file_opens_logged_in_pages_in_chromium(mini, tmp_path):
    assert shutil.which(CHROMIUM), "Debian's chromium is installed by `make test` (apt-get install chromium)"
    from playwright.sync_api import sync_playwright

    r = invoke(["login", "--out", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    files = [Path(f["file"]) for f in json.loads(r.stdout)["files"]]
    assert len(files) == 8
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            control = browser.new_context()
            page = control.new_page()
            assert not any(logged_in(page, mini, n) for n in KEYWORD), "a fresh browser must be logged out"
            control.close()
            for f in files:
                ctx = browser.new_context(storage_state=str(f))
                page = ctx.new_page()
                combo = f.name.rsplit("_", 1)[0].split(".")
                assert all(logged_in(page, mini, n) for n in combo), f.name
                ctx.close()
        finally:
            browser.close()
