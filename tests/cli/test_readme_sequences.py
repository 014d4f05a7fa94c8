"""The README's commands in random orders: `verify --deep` passes right after every reset.

Hypothesis draws sequences of the commands the README shows (``up`` on the running stack,
``login``, ``login --check``, ``task prepare``, a task's own write, ``snapshot create`` and
``snapshot restore`` of a named snapshot, ``checkpoint save`` and ``checkpoint restore``,
``verify``, ``verify --deep``, ``diff``, ``reset``) and runs
them, in process, through the real CLI against the running mini stack. After every ``reset``
the next command is ``verify --deep``, which must exit 0: no command leaves behind anything a
reset does not undo, and a reset writes nothing after its restore (docs/snapshots.md, "Logins
and golden").
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.actions import postmill
from tests.conftest import cli

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "docs" / "examples" / "tasks.json")
FORUM = "http://127.0.0.1:9999"
STEPS = ["up", "login", "login --check", "task prepare", "task write", "snapshot create", "snapshot restore",
         "checkpoint save", "checkpoint restore", "verify", "verify --deep", "diff", "reset"]


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.sampled_from(STEPS), min_size=3, max_size=7))
def test_verify_deep_passes_after_every_reset_in_any_order_of_the_readmes_commands(mini, tmp_path, steps):
    auth, cfg = str(tmp_path / "auth"), str(tmp_path / "config_files")
    have_snapshot = False
    # Whether checkpoint "mid" was saved, and whether the task's post was in it.
    checkpoint, posted_then = False, False
    # Whether the change log still follows golden (a named snapshot taken or restored moves it;
    # a reset brings it back), and whether a task's post was written since.
    follows_golden, posted = True, False
    try:
        for step in [*steps, "reset"]:
            if step == "up":
                code, res = cli("up", "--json")
            elif step == "login":
                code, res = cli("login", "--out", auth, "--json")
            elif step == "login --check":
                code, res = cli("login", "--check", "--out", auth, "--json")
                code = 0 if code in (0, 2) else code  # 2: no state file there yet
            elif step == "task prepare":
                code, res = cli("task", "prepare", TASKS, "--task-id", "1", "--out", cfg, "--json")
            elif step == "task write":
                postmill.create_post(FORUM, "sitectl_trusted", "sitectl1234", "books", "a task's post")
                code, res, posted = 0, None, True
            elif step == "snapshot create":
                code, res = cli("snapshot", "create", "readme_seq", "--json")
                have_snapshot = have_snapshot or code == 0
                follows_golden = False
            elif step == "snapshot restore":
                if not have_snapshot:
                    continue
                code, res = cli("snapshot", "restore", "readme_seq", "--json")
                follows_golden = False
            elif step == "checkpoint save":
                code, res = cli("checkpoint", "save", "mid", "--json")
                if not follows_golden:  # a checkpoint is a delta from golden: refused, with the next step
                    assert code == 9 and "sitectl reset" in res["error"], f"{steps}: {json.dumps(res)}"
                    continue
                checkpoint, posted_then = checkpoint or code == 0, posted
            elif step == "checkpoint restore":
                if not checkpoint:
                    continue
                code, res = cli("checkpoint", "restore", "mid", "--json")
                follows_golden, posted = True, posted_then
            elif step == "verify":
                code, res = cli("verify", "--json")
            elif step == "verify --deep":
                code, res = cli("verify", "--deep", "--json")
                code = 0 if code in (0, 7) else code  # anything may differ here; only after a reset it may not
            elif step == "diff":
                code, res = cli("diff", "--json")
                if not follows_golden:  # no exact diff against golden: refused, with the next step
                    assert code == 9 and "no exact diff" in res["error"], f"{steps}: {json.dumps(res)}"
                    continue
                if code == 0 and posted:  # the task's post is listed, as a new row of the forum
                    forum = next(s for s in res["sites"] if s["site"] == "reddit")
                    titles = [r["values"]["title"] for st_ in forum["stores"] for t in st_.get("tables", [])
                              if t["table"] == "public.submissions" for r in t["inserted"]]
                    assert "a task's post" in titles, f"{steps}: {titles}"
            else:
                code, res = cli("reset", "--json")
                follows_golden, posted = True, False
                assert code == 0, f"{steps}: {json.dumps(res)}"
                code, res = cli("verify", "--deep", "--json")
                bad = [s for s in res.get("state", []) if not s["ok"]]
                assert code == 0 and not bad, f"{steps}: {json.dumps(bad or res)}"
            # A text message: pytest shortens the repr of anything else (the error's middle is lost).
            assert code == 0, f"{step} in {steps}: {json.dumps(res)}"
    finally:
        if have_snapshot:
            cli("snapshot", "delete", "readme_seq", "--json")
        if checkpoint:
            cli("checkpoint", "delete", "mid", "--json")
