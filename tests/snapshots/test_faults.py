"""Faults during resets and snapshots: each one is detected and recovered, or reported with the
next step named; a site is never reported golden when it is not.

Everything is real: the faults are made with the real engine (`docker kill`, runit's `sv` inside
the container, a tmpfs volume that fills up, dockerd itself stopped and started again) and a
real HTTP proxy in front of the real forum (a flapping site). A fault that must land *during* a
reset is made from the reset's own progress hook (`Reporter.step`, called by the reset's worker
right before it restores), so it lands at the same point every run; nothing of sitectl is
replaced.

The engine-restart test stops every container on this engine; it brings instance 0's sites back
before it ends.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from python_on_whales import docker

from sitectl import snapshots
from sitectl.engine import DockerEngine
from sitectl.errors import EngineError
from sitectl.ops import lifecycle
from sitectl.progress import Reporter
from sitectl.snapshots import journal
from sitectl.snapshots.journal import journal_path
from tests.actions import magento, postmill
from tests.conftest import SCRATCH_INSTANCE, cli
from tests.faultproxy import FaultProxy

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
FORUM = "http://127.0.0.1:9999"


class FaultAt(Reporter):
    """A progress reporter that runs ``fault()`` once, the first time a step of ``site``
    contains ``when`` (the reset announces "... restore from golden" right before restoring)."""

    def __init__(self, site: str, when: str, fault):
        super().__init__(quiet=True)
        self.site, self.when, self.fault, self.fired = site, when, fault, False
        self.steps: list[str] = []

    def step(self, site: str, message: str) -> None:
        self.steps.append(f"{site}: {message}")
        if not self.fired and site == self.site and self.when in message:
            self.fired = True
            self.fault()


def cname(target, site: str) -> str:
    return target.container(target.stack.sites[site])


def golden_fingerprints(target, site: str) -> dict:
    """The golden manifest's fingerprints of ``site``, minus what a re-created site cannot
    repeat: session files (the health probes' logins during `up` make them, with random ids)
    and Magento's ``core_config_data``, whose ``updated_at`` is the time of the post-start
    base-URL step (:func:`config_values` compares its values)."""
    m = snapshots.read_manifest(target, snapshots.GOLDEN)
    return {k: {item: d for item, d in v["fingerprint"].items()
                if "/sessions/" not in item and "/session/" not in item and item != "table core_config_data"}
            for k, v in m["sites"][site]["stores"].items()}


def config_values(target, site: str) -> str:
    """Magento's configuration rows without their ``updated_at`` ("" for other sites)."""
    if site not in ("shopping", "shopping_admin"):
        return ""
    return subprocess.run(["docker", "exec", cname(target, site), "mysql", "magentodb", "-e",
                           "SELECT config_id, scope, scope_id, path, value FROM core_config_data ORDER BY config_id"],
                          capture_output=True, text=True, check=True).stdout


def deep_ok(site: str, *extra) -> tuple[bool, dict]:
    code, res = cli("verify", "--deep", site, *extra, "--json")
    return code == 0 and res["ok"], res


def test_container_killed_during_reset_ends_golden(mini, engine):
    before = golden_fingerprints(mini, "reddit")
    assert before["postgres:postmill"] and len(before) == 3
    postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "killed mid-reset")
    hook = FaultAt("reddit", "restore from", lambda: docker.kill(cname(mini, "reddit")))
    (row,) = snapshots.reset(mini, [mini.stack.sites["reddit"]], engine, reporter=hook)
    assert hook.fired
    # The restore hit a dead container: the reset started it again (its state kept), restored
    # it and checked it, and says so.
    assert row.method in ("delta", "full") and any("started it again" in e for e in row.escalations), row
    assert not journal_path(mini).exists()
    ok, res = deep_ok("reddit")
    assert ok, res
    assert golden_fingerprints(mini, "reddit") == before


def test_container_gone_during_reset_is_recreated_with_the_same_golden(mini, engine):
    before = golden_fingerprints(mini, "reddit")
    postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "removed mid-reset")
    hook = FaultAt("reddit", "restore from", lambda: docker.container.remove(cname(mini, "reddit"), force=True))
    (row,) = snapshots.reset(mini, [mini.stack.sites["reddit"]], engine, reporter=hook)
    assert hook.fired
    # Nothing left to start: the reset re-created the site (WebArena's own reset) and says so.
    assert row.method == "recreate" and row.escalations, row
    assert not journal_path(mini).exists()
    ok, res = deep_ok("reddit")
    assert ok, res
    # Golden again means the same golden: the re-created site's fingerprints are the old ones.
    assert golden_fingerprints(mini, "reddit") == before


def test_stopped_container_is_started_keeping_its_state_then_reset(mini, engine):
    magento.place_order("http://127.0.0.1:7770")
    docker.kill(cname(mini, "shopping"))
    code, res = cli("verify", "shopping", "--json")
    assert code == 7 and "exited" in res["error"] and "`sitectl up shopping`" in res["error"], res
    code, res = cli("reset", "shopping", "--json")
    assert code == 0, res
    (row,) = res["sites"]
    # Started again (not re-created: its state was kept and the order found and reset by delta).
    assert row["method"] == "delta" and any("started it again" in e for e in row["escalations"]), row
    assert any("sales_order" in c for c in row["changed"]), row
    ok, res = deep_ok("shopping")
    assert ok, res


def _stop_then_start_later(container: str, service: str, after: float):
    def fault():
        subprocess.run(["docker", "exec", container, "sv", "-w", "30", "stop", service], check=True,
                       capture_output=True)
        threading.Timer(after, subprocess.run, args=(["docker", "exec", container, "sv", "start", service],),
                        kwargs={"capture_output": True}).start()
    return fault


@pytest.mark.parametrize("site,service,mutate", [
    ("reddit", "postgres", lambda: postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "db restarted")),
    ("shopping", "mariadb", lambda: magento.place_order("http://127.0.0.1:7770")),
])
def test_database_restarted_during_reset_ends_golden(mini, engine, site, service, mutate):
    before, config = golden_fingerprints(mini, site), config_values(mini, site)
    mutate()
    hook = FaultAt(site, "restore from", _stop_then_start_later(cname(mini, site), service, after=1.0))
    (row,) = snapshots.reset(mini, [mini.stack.sites[site]], engine, reporter=hook)
    assert hook.fired
    # The restore met a database that was down: that is detected (never taken as restored) and
    # the site is re-created, golden.
    assert row.method == "recreate" and any("Error" in e for e in row.escalations), row
    ok, res = deep_ok(site)
    assert ok, res
    assert golden_fingerprints(mini, site) == before and config_values(mini, site) == config


def test_flapping_probe_is_reported_not_healthy(mini, tmp_path):
    def stack(url: str, timeout: int = 120) -> str:
        p = tmp_path / f"flap-{timeout}.yaml"
        p.write_text(f"extends: {ROOT / 'stacks/mini.yaml'}\nsites:\n  reddit:\n    url: \"{url}\"\n"
                     f"    start_timeout: {timeout}\n")
        return str(p)

    with FaultProxy(mini.url(mini.stack.sites["reddit"]), flap=True) as proxy:
        code, res = cli("verify", "reddit", "--stack", stack(proxy.url), "--json")
        assert code == 7 and not res["ok"], res
        # A probe of one request is seen flapping; a login probe (several requests per try)
        # may fail every try: either way it fails, and says which.
        bad = [r for r in res["results"] if not r["ok"]]
        flaps = [r for r in bad if "flaps: passed" in r["detail"]]
        assert flaps and all(r in flaps or "failed 3 of 3 tries" in r["detail"] for r in bad), bad
        assert "sitectl reset --recreate reddit" in flaps[0]["detail"]
        # `up` does not call a flapping site ready: it needs passes in a row, and says it flaps.
        code, out = cli("up", "reddit", "--stack", stack(proxy.url, timeout=4))
        assert code == 5 and "flaps: passed" in out and "never 3 in a row" in out, out
    with FaultProxy(mini.url(mini.stack.sites["reddit"]), fail_first=10**6) as proxy:
        code, res = cli("verify", "reddit", "--stack", stack(proxy.url), "--json")
        down = [r for r in res["results"] if not r["ok"]]
        assert code == 7 and down and all("failed 3 of 3 tries" in r["detail"] for r in down), res


def test_a_map_that_answers_wrongly_does_not_pass_verify(mini, tmp_path):
    """Issue 18, item 8: the map's backends answer 200 but wrongly: the tile server an HTML
    error page, the geocoder no results, the router no route. The real map replica is behind
    a proxy that answers those paths itself (tests/faultproxy.py); verify fails each, naming it,
    and passes the same map through the same proxy without them."""
    def stack(url: str) -> str:
        p = tmp_path / "map.yaml"
        p.write_text(f"extends: {ROOT / 'stacks/mini.yaml'}\nsites:\n  map:\n    url: \"{url}\"\n")
        return str(p)

    upstream = mini.url(mini.stack.sites["map"])
    with FaultProxy(upstream) as proxy:
        code, res = cli("verify", "map", "--stack", stack(proxy.url), "--json")
        assert code == 0 and res["ok"], res
    wrong = {"/tile/": (200, "text/html; charset=utf-8", b"<html><body>tile renderer down</body></html>"),
             "/search?q=": (200, "application/json", b"[]"),
             "/route/v1/car/": (200, "application/json", b'{"code":"Ok","routes":[]}'),
             "/route/v1/foot/": (200, "application/json", b'{"code":"Ok", truncated')}
    with FaultProxy(upstream, answer=wrong) as proxy:
        code, res = cli("verify", "map", "--stack", stack(proxy.url), "--json")
    bad = {r["probe"]: r["detail"] for r in res["results"] if not r["ok"]}
    assert code == 7 and not res["ok"], res
    assert set(bad) == {"tile", "geocode", "route-car", "route-foot"}, bad
    assert "Content-Type 'text/html" in bad["tile"] and "expected image/png" in bad["tile"], bad
    assert "[] at '.'" in bad["geocode"] and "[] at 'routes'" in bad["route-car"], bad
    assert "is not JSON" in bad["route-foot"], bad


@pytest.fixture
def tiny_disk(engine):
    """A 2 MiB tmpfs volume, mounted by the scratch forum where its file snapshots live."""
    name = "sitectl-test-snapdisk"
    subprocess.run(["docker", "volume", "rm", "-f", name], capture_output=True)
    docker.volume.create(name, driver="local", options={"type": "tmpfs", "device": "tmpfs", "o": "size=2m"})
    yield name
    for c in engine.containers({"sitectl.instance": str(SCRATCH_INSTANCE)}):
        engine.remove(c.name)
    subprocess.run(["docker", "volume", "rm", "-f", name], capture_output=True)


def test_disk_full_during_snapshot(scratch_stack, tiny_disk, engine):
    stack = str(scratch_stack(f"""
        extends: {ROOT / 'stacks/mini.yaml'}
        sites:
          reddit:
            volumes: ["{tiny_disk}:/var/lib/sitectl/snapshots/files"]
        """))
    args = ["--stack", stack, "--instance", str(SCRATCH_INSTANCE)]
    code, out = cli("up", "reddit", *args)
    assert code == 0, out
    container = f"i{SCRATCH_INSTANCE}-forum"

    def fill():  # leave no free block on the snapshot disk
        subprocess.run(["docker", "exec", container, "sh", "-c",
                        "dd if=/dev/zero of=/var/lib/sitectl/snapshots/files/filler bs=64k 2>/dev/null; true"], check=True)

    # 1. A new snapshot on a full disk: refused with the cause and the next step; nothing listed.
    fill()
    code, res = cli("snapshot", "create", "before_task", "reddit", *args, "--json")
    assert code == 9, res
    assert "No space left on device" in res["error"] and "df -h" in res["error"], res
    assert "`sitectl snapshot create before_task reddit`" in res["error"], res
    code, res = cli("snapshot", "list", *args, "--json")
    assert [s["name"] for s in res["snapshots"]] == ["golden"], res
    # The failed copy was dropped; golden still resets and verifies.
    rc = subprocess.run(["docker", "exec", container, "test", "-e", "/var/lib/sitectl/snapshots/files/before_task"]).returncode
    assert rc != 0
    postmill.create_post(f"http://127.0.0.1:{9999 + 100 * SCRATCH_INSTANCE}", "sitectl_trusted", "sitectl1234",
                         "books", "disk full")
    code, res = cli("reset", "reddit", *args, "--json")
    assert code == 0 and res["sites"][0]["method"] in ("delta", "full"), res["sites"][0]["escalations"]
    assert deep_ok("reddit", *args)[0]

    # 2. Golden itself re-taken on a full disk: golden no longer claims the forum (its old copy
    # was being replaced) and says how to get it back; a reset then re-creates it from its image.
    code, res = cli("snapshot", "create", "golden", "reddit", *args, "--json")
    assert code == 9 and "no longer covers reddit" in res["error"], res
    assert "`sitectl reset --recreate reddit`" in res["error"], res
    code, res = cli("verify", "--deep", "reddit", *args, "--json")
    assert code == 7 and not res["ok"] and "has no" in json.dumps(res["state"]), res
    code, res = cli("reset", "reddit", *args, "--json")
    assert code == 0 and res["sites"][0]["method"] == "recreate", res
    assert "no complete copy" in " ".join(res["sites"][0]["escalations"])
    assert deep_ok("reddit", *args)[0]


def _dockerd_pids() -> list[int]:
    out = subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def stop_engine():
    for pid in _dockerd_pids():
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 90
    while _dockerd_pids() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _dockerd_pids(), "dockerd did not stop"


def start_engine():
    subprocess.run(["bash", str(ROOT / "scripts/bootstrap-engine.sh")], check=True, capture_output=True)


def test_engine_restarted_during_reset(mini, engine):
    postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "engine restarted")
    hook = FaultAt("reddit", "restore from", stop_engine)
    try:
        with pytest.raises(EngineError) as e:
            snapshots.reset(mini, [mini.stack.sites["reddit"]], engine, reporter=hook)
        assert hook.fired
        msg = str(e.value)
        # Named as the engine's fault, with the next step; the journal is kept for that step.
        assert "Docker engine stopped answering" in msg and "run `sitectl reset` again" in msg, msg
        assert journal_path(mini).exists()
    finally:
        if not _dockerd_pids():
            start_engine()
    # The engine is back; its containers are stopped (no restart policy, as WebArena runs them).
    assert not DockerEngine().container(cname(mini, "reddit")).running
    code, res = cli("reset", "reddit", "--json")
    assert code == 0, res
    rows = {r["site"]: r for r in res["sites"]}
    assert any("recovered an interrupted reset" in e for e in rows["reddit"]["escalations"]), rows
    assert any("started it again" in e for e in rows["reddit"]["escalations"]), rows
    assert not journal_path(mini).exists()
    try:
        ok, res = deep_ok("reddit")
        assert ok, res
    finally:
        # Bring the rest of instance 0 back for the tests after this one (starts, keeps state).
        lifecycle.up(mini, list(mini.stack.sites.values()), DockerEngine(), Reporter(quiet=True))


def test_killed_while_retaking_golden_never_leaves_a_half_copy_in_use(mini, engine):
    """SIGKILL `sitectl snapshot create golden reddit` while it copies: golden must not claim the
    half-made copy; verify --deep says so, and a reset re-creates the forum, golden."""
    before = golden_fingerprints(mini, "reddit")
    path = snapshots.manifest_path(mini, snapshots.GOLDEN)
    p = subprocess.Popen([str(Path(sys.executable).with_name("sitectl")), "snapshot", "create", "golden", "reddit"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the forum left the manifest ...
        try:
            if "reddit" in json.loads(path.read_text()).get("incomplete", {}):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    while time.monotonic() < deadline and not engine.running_execs(cname(mini, "reddit")):
        time.sleep(0.005)  # ... and a copy command runs in its container: kill it mid-copy
    assert p.poll() is None, "the snapshot finished before it could be killed"
    p.send_signal(signal.SIGKILL)
    p.wait()
    m = json.loads(path.read_text())
    assert "reddit" not in m["sites"] and "interrupted" in m["incomplete"]["reddit"], m
    code, res = cli("verify", "--deep", "reddit", "--json")
    assert code == 7 and any("interrupted" in d for s in res["state"] for d in s["differs"]), res
    code, res = cli("reset", "reddit", "--json")
    assert code == 0 and res["sites"][0]["method"] == "recreate", res
    assert any("no complete copy" in e for e in res["sites"][0]["escalations"]), res
    ok, res = deep_ok("reddit")
    assert ok, res
    assert golden_fingerprints(mini, "reddit") == before


def test_a_named_snapshot_lacking_a_site_is_refused_before_anything_changes(mini, engine):
    try:
        assert cli("snapshot", "create", "only_forum", "reddit", "--json")[0] == 0
        magento.place_order("http://127.0.0.1:7770")
        code, res = cli("snapshot", "restore", "only_forum", "shopping", "--json")
        assert code == 2 and "no complete copy of shopping" in res["error"], res
        assert "`sitectl snapshot create only_forum shopping`" in res["error"] and "nothing was restored" in res["error"]
        assert not journal_path(mini).exists()
        # The shop was not touched: the order is still there, and golden's reset finds it.
        code, res = cli("reset", "shopping", "--json")
        assert code == 0 and any("sales_order" in c for c in res["sites"][0]["changed"]), res
        # An incomplete site is refused too when no site is named (never silently skipped).
        m = snapshots.read_manifest(mini, "only_forum")
        snapshots.write_manifest(mini, "only_forum", {**m, "incomplete": {"shopping": "a test marks it"}})
        code, res = cli("snapshot", "restore", "only_forum", "--json")
        assert code == 2 and "a test marks it" in res["error"], res
    finally:
        cli("snapshot", "delete", "only_forum", "--json")


def test_recovery_waits_for_a_killed_resets_leftover_command(mini, engine, monkeypatch):
    """A killed sitectl's `docker exec` keeps running in the container (here: a real exec the
    test starts and leaves running, as a dead process would); recovery waits for it, and after
    its limit changes nothing under it."""
    from sitectl.snapshots.journal import write_journal

    forum = cname(mini, "reddit")
    postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "leftover exec")
    write_journal(mini, {"op": "reset", "sites": ["reddit"], "snapshot": "golden"})  # as a killed reset leaves it
    orphan = subprocess.Popen(["docker", "exec", forum, "sleep", "3"])
    try:
        time.sleep(0.5)
        code, res = cli("reset", "reddit", "--json")
        assert code == 0, res
        esc = " ".join(res["sites"][0]["escalations"])
        assert "recovered an interrupted reset" in esc and "leftover command(s) in reddit" in esc, esc
        assert orphan.poll() is not None  # the reset ran only after the leftover command ended
    finally:
        orphan.wait(30)
    # Still running after the limit: refused (exit 9), the journal kept, nothing restored.
    monkeypatch.setattr(journal, "LEFTOVER_EXEC_WAIT", 1.0)
    write_journal(mini, {"op": "reset", "sites": ["reddit"], "snapshot": "golden"})
    orphan = subprocess.Popen(["docker", "exec", forum, "sleep", "6"])
    try:
        time.sleep(0.5)
        code, res = cli("reset", "reddit", "--json")
        assert code == 9 and "still run in" in res["error"] and forum in res["error"], res
        assert "sitectl reset --recreate reddit" in res["error"], res
        assert journal_path(mini).exists()
    finally:
        orphan.wait(30)
    code, res = cli("reset", "reddit", "--json")
    assert code == 0 and not journal_path(mini).exists(), res
    assert deep_ok("reddit")[0]
