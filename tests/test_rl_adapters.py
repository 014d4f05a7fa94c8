"""The RL adapters (sitectl/adapters, docs/rl-adapters.md) driven by the real frameworks.

NeMo Gym 0.4.0 and OpenEnv (openenv-core 0.3.0), unmodified, with all their dependencies, in
`.venv-rl` (Python 3.12; `make test` makes it, sitectl installed there too, so NeMo Gym finds the
`sitectl` sandbox provider through its entry point). Each runs a script there against a real
`sitectl serve` (in this process) over the mini stack's instance 0, whose pool resets the forum:
the script makes real posts through the forum's pages, checkpoints and diffs through the
framework's own API, and this test checks the outcome with its own reads (the forum's pages and
the pool's state), not through the adapter."""
from __future__ import annotations

import io
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
import requests

from sitectl.ops.pool import Pool
from sitectl.server import make_server, serve
from tests.actions import postmill

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / ".venv-rl/bin/python"
TOKEN = "rl-adapter-token-0123456789"
FORUM = "http://127.0.0.1:9999"


@pytest.fixture
def server(mini, engine, tmp_path):
    log = io.StringIO()
    pool = Pool([mini], engine, sites={0: ["reddit"]})
    srv = make_server(pool, TOKEN, ("127.0.0.1", 0), reset_wait=30, log=log)
    th = threading.Thread(target=serve, args=(srv, 0.1), daemon=True)
    th.start()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    srv.token_file, srv.logbuf = token_file, log
    yield srv
    srv.shutdown()
    th.join(10)
    pool.wait(0, 120)


def run_script(code: str, *args: str, timeout: float = 600) -> dict:
    """Run ``code`` in `.venv-rl` (the repo on its path, for tests.actions); its last stdout
    line is JSON."""
    assert PY.exists(), "`make test` makes .venv-rl (nemo-gym, openenv-core)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([str(PY), "-c", code, *args], capture_output=True, text=True, timeout=timeout, env=env,
                       cwd=ROOT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


NEMO = r'''
import json, os, stat, sys, tempfile
from nemo_gym.sandbox import Sandbox, SandboxSpec, SandboxStatus, list_providers
from tests.actions import postmill
url, token_file = sys.argv[1:3]
out = {"providers": list_providers()}
config = {"sitectl": {"url": url, "token_file": token_file, "client": "nemo-gym-test"}}
box = Sandbox(config, SandboxSpec(ready_timeout_s=300))
box.start()
urls = json.loads(box.exec("urls").stdout)
forum = urls["reddit"]
out["forum"] = forum
out["first"] = postmill.create_post(forum, "sitectl_trusted", "sitectl1234", "books", "nemo gym first post")
r = box.exec("checkpoint save after_first")
out["save"] = [r.return_code, r.stderr]
out["second"] = postmill.create_post(forum, "sitectl_trusted", "sitectl1234", "books", "nemo gym second post")
out["diff"] = json.loads(box.exec("diff").stdout)
r = box.exec("checkpoint restore after_first")
out["restore"] = [r.return_code, r.stderr]
out["after_restore"] = [postmill.post_exists(forum, out["first"]), postmill.post_exists(forum, out["second"])]
out["listed"] = json.loads(box.exec("checkpoint list").stdout)
out["shell"] = box.exec("rm -rf / ; echo hi").return_code
out["cwd"] = box.exec("urls", cwd="/tmp").return_code
out["bad_name"] = [box.exec("checkpoint save ../x").return_code]
out["missing"] = box.exec("checkpoint restore never_saved").return_code
try:
    box.upload(__file__ if "__file__" in globals() else token_file, "/etc/passwd")
    out["upload"] = "accepted"
except PermissionError as e:
    out["upload"] = "refused"
d = tempfile.mkdtemp()
box.download("diff.json", os.path.join(d, "diff.json"))
out["download_mode"] = oct(stat.S_IMODE(os.stat(os.path.join(d, "diff.json")).st_mode))
try:
    box.download("/etc/shadow", os.path.join(d, "x"))
    out["download_other"] = "given"
except FileNotFoundError:
    out["download_other"] = "refused"
out["status"] = box.status().value
out["unhealthy"] = json.loads(box.exec("unhealthy checkout page hangs").stdout)
box.stop()
out["status_after"] = box.status().value
print(json.dumps(out))
'''


def test_nemo_gym_sandbox_leases_checkpoints_and_releases_unhealthy(server):
    pool = server.pool
    out = run_script(NEMO, server.public_base, str(server.token_file))
    assert "sitectl" in out["providers"]  # found through the entry point, no registration
    assert out["forum"] == FORUM
    assert out["save"] == [0, ""] and out["restore"] == [0, ""]
    assert "submissions" in json.dumps(out["diff"])
    assert out["after_restore"] == [True, False]
    assert [c["name"] for c in out["listed"]["checkpoints"]] == ["after_first"]
    assert out["shell"] == 2 and out["cwd"] == 2 and out["bad_name"] == [2] and out["missing"] == 1
    assert out["upload"] == "refused" and out["download_other"] == "refused"
    assert out["download_mode"] == "0o600"
    assert out["status"] == "running" and out["status_after"] == "stopped"
    # Released unhealthy: failed with the holder's reason, not reset (its post is still there).
    slot = pool.slot(0)
    assert slot.state == "failed" and slot.lease is None
    assert "nemo-gym-test" in slot.error and "checkout page hangs" in slot.error
    assert postmill.post_exists(FORUM, out["first"])
    assert pool.acquire("someone else") is None  # a failed instance is leased to nobody
    # The operator's reset brings it back: golden again, leasable.
    r = requests.post(f"{server.public_base}/api/reset", json={"instance": 0},
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=300)
    assert r.status_code == 200 and r.json()["ok"], r.text
    assert not postmill.post_exists(FORUM, out["first"])
    assert slot.state == "idle" and slot.checkpoints == set()
    assert TOKEN not in server.logbuf.getvalue()


OPENENV = r'''
import json, sys, threading, time, socket
import uvicorn
from openenv.core import GenericEnvClient
from openenv.core.env_server import create_fastapi_app
from sitectl.adapters.openenv import SiteAction, SiteObservation, SitectlEnvironment
from tests.actions import postmill
url, token_file = sys.argv[1:3]
app = create_fastapi_app(SitectlEnvironment.factory(url, token_file=token_file, client="openenv-test"),
                         SiteAction, SiteObservation, max_concurrent_envs=2)
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); port = sock.getsockname()[1]; sock.close()
srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
threading.Thread(target=srv.run, daemon=True).start()
while not srv.started:
    time.sleep(0.05)
out = {}
with GenericEnvClient(base_url=f"http://127.0.0.1:{port}").sync() as env:
    obs = env.reset().observation
    forum = obs["urls"]["reddit"]
    out["instance"], out["forum"] = obs["instance"], forum
    out["state"] = env.state()
    post = postmill.create_post(forum, "sitectl_trusted", "sitectl1234", "books", "openenv first post")
    r = env.step({"op": "checkpoint_save", "name": "one"})
    out["save_error"] = r.observation["error"]
    post2 = postmill.create_post(forum, "sitectl_trusted", "sitectl1234", "books", "openenv second post")
    out["diff_has_posts"] = "submissions" in json.dumps(env.step({"op": "diff"}).observation["result"])
    r = env.step({"op": "checkpoint_restore", "name": "one"})
    out["restore_error"] = r.observation["error"]
    out["after_restore"] = [postmill.post_exists(forum, post), postmill.post_exists(forum, post2)]
    out["missing"] = env.step({"op": "checkpoint_restore", "name": "nope"}).observation["error"]
    try:
        env.step({"op": "rm -rf /"})
        out["bad_op"] = "accepted"
    except Exception as e:
        out["bad_op"] = type(e).__name__
    r = env.step({"op": "release"})
    out["release"] = [r.done, r.observation["result"]]
    out["post"] = post
print(json.dumps(out, default=str))
srv.should_exit = True
'''


def test_openenv_environment_episode_through_openenvs_own_server_and_client(server):
    pool = server.pool
    assert pool.wait(0, 300) and pool.slot(0).state in ("idle", "failed")
    if pool.slot(0).state == "failed":  # an earlier test's unhealthy release
        assert pool.reset_now(0)["ok"]
    out = run_script(OPENENV, server.public_base, str(server.token_file))
    assert out["instance"] == 0 and out["forum"] == FORUM
    assert out["state"]["step_count"] == 0 and out["state"]["lease_tag"].startswith("i0-")
    assert out["save_error"] is None and out["restore_error"] is None and out["diff_has_posts"]
    assert out["after_restore"] == [True, False]
    assert "no checkpoint" in out["missing"]
    assert out["bad_op"] != "accepted"  # OpenEnv's server validates the action against SiteAction
    done, res = out["release"]
    assert done and res == {"released": True, "instance": 0, "state": "resetting"}
    # Released healthy: the server resets the instance behind the episode.
    assert pool.wait(0, 300) and pool.slot(0).state == "idle" and pool.slot(0).lease is None
    assert not postmill.post_exists(FORUM, out["post"])
