"""Crash- and concurrency-safe resets: one lock per instance, and a journal that lets the next
command roll an interrupted reset forward.

Real processes (`sitectl` CLI subprocesses), real SIGKILLs at random points, real databases:
after every kill, the next `verify --deep` (when the killed reset left a journal) or `reset`
(when it was killed before writing one) must end with every store equal to golden."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitectl.errors import InstanceBusy
from sitectl.snapshots.journal import instance_lock, journal_path
from tests.actions import magento, postmill

pytestmark = pytest.mark.docker
SITECTL = str(Path(sys.executable).with_name("sitectl"))
KILLS = int(os.environ.get("SITECTL_CRASH_KILLS", "16"))  # longer runs: bench/README.md
SITES = ["reddit", "shopping"]


def run(*args, timeout=600):
    p = subprocess.run([SITECTL, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def mutate(site: str, i: int) -> None:
    if site == "reddit":
        postmill.create_post("http://127.0.0.1:9999", "sitectl_trusted", "sitectl1234", "books", f"crash {i}")
    else:
        magento.place_order("http://127.0.0.1:7770")


def deep_ok(site: str) -> tuple[bool, dict]:
    code, out, err = run("verify", "--deep", site, "--json")
    data = json.loads(out) if out.strip() else {"error": err}
    return code == 0 and data.get("ok", False), data


def test_sigkill_at_random_points_then_recovery_is_golden(mini):
    rng = random.Random(20261130)
    kinds = {"journal": 0, "no_journal": 0, "finished": 0}
    for i in range(KILLS):
        site = SITES[i % 2]  # the forum (PostgreSQL, files, cache) and the shop (MariaDB, files, cache) in turn
        mutate(site, i)
        p = subprocess.Popen([SITECTL, "reset", site, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 1.0))  # a delta reset here takes about 1 s from the CLI's start
        p.send_signal(signal.SIGKILL)
        finished = p.wait() == 0
        if finished:
            kinds["finished"] += 1
            ok, data = deep_ok(site)
        elif journal_path(mini).exists():
            # The killed reset left its journal: verify alone rolls it forward.
            kinds["journal"] += 1
            ok, data = deep_ok(site)
            assert data.get("recovered"), (i, data)
            assert "recovered an interrupted reset" in data["recovered"][0]["escalations"][0]
        else:
            # Killed before its journal: nothing was touched yet; the next reset does all of it.
            kinds["no_journal"] += 1
            code, out, err = run("reset", site, "--json")
            assert code == 0, (i, err)
            ok, data = deep_ok(site)
        assert ok, (i, kinds, data)
        assert not journal_path(mini).exists()
    assert kinds["journal"] >= KILLS // 10, kinds  # kills landed inside resets, not only around them


def test_two_resets_serialize_and_no_wait_fails_fast(mini):
    # This test process holds instance 0's lock, as a running reset would.
    with instance_lock(mini, "test holding the lock"):
        t0 = time.monotonic()
        code, out, err = run("reset", "reddit", "--no-wait")
        assert code == 10 and time.monotonic() - t0 < 15
        assert f"pid {os.getpid()}" in err and "test holding the lock" in err, err
        waiting = subprocess.Popen([SITECTL, "reset", "reddit", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        time.sleep(3)
        assert waiting.poll() is None, "a second reset must wait for the lock"
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    # And the API says the same.
    from sitectl import Environment

    # (The lock is re-entrant within one process, so the holder here is a second process.)
    p = subprocess.Popen([sys.executable, "-c", "import time\nfrom sitectl.snapshots.journal import instance_lock\n"
                          "from sitectl.stack.target import resolve_target\n"
                          "with instance_lock(resolve_target('mini', host='127.0.0.1'), 'other process'):\n"
                          "    print('held', flush=True); time.sleep(20)"], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    try:
        with pytest.raises(InstanceBusy, match="other process"):
            Environment(instance=0).reset(["reddit"], wait=False)
    finally:
        p.kill()
        p.wait()
