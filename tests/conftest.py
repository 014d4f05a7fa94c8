"""Shared fixtures. Tests talk to the real Docker engine (started by `make test` through
scripts/bootstrap-engine.sh), real databases and real HTTP; nothing is mocked."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap

import pytest
from hypothesis import settings

from sitectl.engine import DockerEngine, Engine
from sitectl.ops import lifecycle
from sitectl.progress import Reporter
from sitectl.stack.target import Target, resolve_target

# Property tests judge behaviour, not speed (speed lives in bench/): no per-example deadline,
# which a loaded 2-core CI machine or a first import inside a test would trip.
settings.register_profile("sitectl", deadline=None)
settings.load_profile("sitectl")

# The suite's own state folder (manifests, journals, leases, login records), fresh per run:
# what a killed earlier run or the machine's own instances left in ~/.local/share/sitectl
# (an interrupted reset's journal, a lease) never reaches a test. Set before any test, so the
# CLI run in-process and every subprocess (which inherit the environment) use it.
# (Once per pytest process: this module is imported both as a conftest and as tests.conftest.)
if os.environ.get("SITECTL_TEST_SUITE_PID") != str(os.getpid()):
    os.environ["SITECTL_SNAPSHOTS_DIR"] = tempfile.mkdtemp(prefix="sitectl-test-state-")
    os.environ["SITECTL_TEST_SUITE_PID"] = str(os.getpid())
_STATE = os.environ["SITECTL_SNAPSHOTS_DIR"]


@pytest.fixture(scope="session", autouse=True)
def _suite_state_folder():
    yield _STATE
    shutil.rmtree(_STATE, ignore_errors=True)


MINI_HOST = "127.0.0.1"

def invoke(args):
    """The one CLI runner of the suite: the real ``sitectl`` command run in-process by click's
    test runner, ``args`` as the command line; returns click's ``Result`` (``exit_code``,
    ``output``, ``stdout``, ``exception``)."""
    from click.testing import CliRunner

    from sitectl.cli import main

    return CliRunner().invoke(main, list(args))


def cli(*args):
    """Run the real CLI in-process: ``(exit code, parsed JSON)`` with ``--json``, else
    ``(exit code, output)``. A traceback (an exception that is not a clean exit) fails the test."""
    r = invoke(args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, json.loads(r.stdout) if "--json" in args and r.stdout.strip() else r.output
SCRATCH_INSTANCE = 7  # bad-input tests run their own small stacks as instance 7


@pytest.fixture(scope="session")
def engine() -> Engine:
    """The real engine; a test that needs it fails (not skips) when none answers."""
    e = DockerEngine()
    e.ping()
    return e


@pytest.fixture(scope="session")
def mini(engine) -> Target:
    """The mini stack, brought up once per session (building missing images) on 127.0.0.1."""
    target = resolve_target("mini", host=MINI_HOST, instance=0)
    lifecycle.down(target, engine)  # start from the images, not from a previous run's state
    lifecycle.up(target, list(target.stack.sites.values()), engine, Reporter())
    yield target
    lifecycle.down(target, engine)


@pytest.fixture
def scratch_stack(tmp_path, engine):
    """Write a small stack file (instance 7) and remove its containers afterwards.

    Usage: ``path = scratch_stack(yaml_text)``.
    """
    made = []

    def clear():
        for c in engine.containers({"sitectl.instance": str(SCRATCH_INSTANCE)}):
            engine.remove(c.name)
        engine.remove_network(f"sitectl-i{SCRATCH_INSTANCE}")

    clear()  # what a killed earlier run left (its copies are listed by no manifest of this run)

    def write(text: str, name: str = "stack.yaml"):
        p = tmp_path / name
        p.write_text(textwrap.dedent(text))
        made.append(p)
        return p

    yield write
    clear()


@pytest.fixture
def keep_login_registry(mini):
    """`sitectl login` records its folders so that `sitectl reset` refreshes their states; a
    test's temporary folders must not stay recorded (later resets would log into them)."""
    from sitectl.ops import login as loginmod

    p = loginmod._registry(mini)
    before = p.read_text() if p.is_file() else None
    yield
    if before is None:
        p.unlink(missing_ok=True)
    else:
        p.write_text(before)
