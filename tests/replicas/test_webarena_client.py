"""WebArena's own client agrees with the replicas and with `sitectl login`.

WebArena's `browser_env/auto_login.py` (PyPI `libwebarena` 0.0.4, unmodified, in its own venv
`.venv-webarena` that `make test` makes) logs into the mini stack with a real browser, filling
the forms by label, placeholder, test id and button name, and its own expiry checks (asserted
inside its `main()`) pass. Then its `is_expired` judges the files `sitectl login` wrote: every
site of every file is logged in. The browser is Debian's Chromium, reached through a
`PLAYWRIGHT_BROWSERS_PATH` folder whose expected executable is `scripts/playwright-chromium.sh`
(no browser download works here; `make test` installs it there)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sitectl.ops.envvars import env_vars
from tests.conftest import invoke

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("keep_login_registry")]

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / ".venv-webarena/bin/python"
BROWSERS = ROOT / ".cache/pw-browsers"

JUDGE = """
import json, sys
from pathlib import Path
from webarena.browser_env import auto_login as a
out = {}
for f in sys.argv[1:]:
    for site in a.get_site_comb_from_filepath(f):
        i = a.SITES.index(site)
        out[f"{Path(f).name}:{site}"] = a.is_expired(Path(f), a.URLS[i], a.KEYWORDS[i], a.EXACT_MATCH[i])
print(json.dumps(out))
"""


def run_webarena(mini, code: str, *args: str) -> str:
    assert PY.exists(), "`make test` makes .venv-webarena (libwebarena 0.0.4, playwright 1.44)"
    env = {**os.environ, **env_vars(mini, "webarena"), "PLAYWRIGHT_BROWSERS_PATH": str(BROWSERS)}
    p = subprocess.run([str(PY), "-c", code, *args], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_webarena_auto_login_logs_into_the_replicas(mini, tmp_path):
    out = run_webarena(mini, "import sys\nfrom webarena.browser_env import auto_login\n"
                             "auto_login.main(sys.argv[1])\nprint('expiry checks passed')", str(tmp_path))
    assert "expiry checks passed" in out
    assert sorted(p.name for p in tmp_path.glob("*_state.json")) == sorted(
        ["gitlab_state.json", "shopping_state.json", "shopping_admin_state.json", "reddit_state.json",
         "gitlab.reddit_state.json", "gitlab.shopping_state.json", "gitlab.shopping_admin_state.json",
         "shopping.shopping_admin_state.json"])


def test_webarena_is_expired_accepts_sitectl_files(mini, tmp_path):
    r = invoke(["login", "--out", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    files = sorted(str(p) for p in tmp_path.glob("*_state.json"))
    assert len(files) == 8
    verdict = json.loads(run_webarena(mini, JUDGE, *files).strip().splitlines()[-1])
    assert len(verdict) == 12 and not any(verdict.values()), verdict
