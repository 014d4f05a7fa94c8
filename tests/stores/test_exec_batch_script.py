"""``RUN_MANY_SH`` and ``ExecTransport.run_many`` (``sitectl/stores/transport.py``): several
argvs in one ``docker exec``, each command's output and exit code back in order, and no
argument's text ever read by the shell.

The argument encoding (a count, then the arguments, per command) happens inside ``run_many``,
so the script is exercised through a real :class:`ExecTransport` whose ``engine`` is a local
stand-in that runs the argv with ``subprocess`` instead of ``docker exec``: no engine or
container is needed to test a POSIX sh script. The script runs under every local sh there
is: ``/bin/sh`` (Debian's dash), bash, and ``busybox sh`` (Alpine-based images) when installed.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitectl.errors import StoreError
from sitectl.stores.transport import ARG_BUDGET, NOT_RUN, RUN_MANY_SH, ExecTransport

SHELLS = [pytest.param(["sh"], id="sh")]
if shutil.which("bash"):
    SHELLS.append(pytest.param(["bash"], id="bash"))
# BusyBox is what the real Alpine-based images run (`make test` installs Debian's busybox).
SHELLS.append(pytest.param(["/bin/busybox", "sh"], id="busybox"))


class LocalEngine:
    """Stands in for ``docker exec`` (no engine is needed to test the script): runs the argv
    here, in ``cwd``, with ``shell`` for the leading ``sh``. ``docker_like``: the output as
    ``DockerEngine.exec`` returns it (python-on-whales decodes with errors='replace' and drops
    one trailing newline)."""

    def __init__(self, shell: list[str], cwd, docker_like: bool = True):
        self.shell, self.cwd, self.docker_like = shell, cwd, docker_like
        self.calls: list[list[str]] = []

    def exec(self, name: str, argv: list[str], timeout: float = 600) -> tuple[int, str]:
        self.calls.append(list(argv))
        if argv[0] == "sh":
            argv = [*self.shell, *argv[1:]]
        p = subprocess.run(argv, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        out = p.stdout.decode(errors="replace")
        if self.docker_like and out.endswith("\n"):
            out = out[:-1]
        return p.returncode, out


class CannedEngine:
    """An engine that answers one canned ``(exit code, output)``: the batch's own failures."""

    def __init__(self, rc: int, out: str):
        self.answer = (rc, out)
        self.calls = 0

    def exec(self, name, argv, timeout=600):
        self.calls += 1
        return self.answer


@pytest.fixture(params=SHELLS)
def shell(request):
    return request.param


@pytest.fixture(params=[True, False], ids=["docker-output", "raw-output"])
def tr(request, shell, tmp_path):
    return ExecTransport(LocalEngine(shell, tmp_path, docker_like=request.param), "c1", "shopping")


ARGV_PRINTER = [sys.executable, "-c", "import json, sys; sys.stdout.write(json.dumps(sys.argv[1:]))"]


def test_run_many_sends_one_exec_of_counts_and_arguments_never_shell_text(tmp_path):
    """The protocol: ``sh -c RUN_MANY_SH sh``, the batch's nonce (new for each batch), then, per
    command, its length and its arguments."""
    eng = LocalEngine(["sh"], tmp_path)
    for _ in range(2):
        ExecTransport(eng, "c1", "shopping").run_many([["printf", "a"], [], ["printf", "%s", "$(x)"]], "w")
    (one, two) = eng.calls
    assert one[:4] == ["sh", "-c", RUN_MANY_SH, "sh"] and re.fullmatch(r"[0-9a-f]{32}", one[4])
    assert one[5:] == ["2", "printf", "a", "0", "3", "printf", "%s", "$(x)"]
    assert two[:4] + two[5:] == one[:4] + one[5:] and two[4] != one[4]


@pytest.mark.parametrize("shell", SHELLS)
def test_the_script_prints_each_output_then_a_marker_line_with_its_exit_code(shell):
    """The stream the parser reads, straight from the script (args as run_many encodes them)."""
    args = ["n0nce", "2", "printf", "one", "3", "sh", "-c", "printf two; exit 3", "0"]
    p = subprocess.run([*shell, "-c", RUN_MANY_SH, "sh", *args], capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == ("one\n@@sitectl-rc-n0nce=0@@\n" "two\n@@sitectl-rc-n0nce=3@@\n"
                        "\n@@sitectl-rc-n0nce=0@@\n")


def test_each_commands_output_and_exit_code_come_back_in_order(tr):
    res = tr.run_many([["printf", "one"], ["sh", "-c", "printf two; exit 3"], ["printf", "%s\\n", "three"],
                       ["printf", "%s", "no newline at the end"]], "w")
    assert res == [(0, "one"), (3, "two"), (0, "three\n"), (0, "no newline at the end")]


def test_a_commands_stderr_comes_back_in_its_output(tr):
    assert tr.run_many([["sh", "-c", "echo out; echo err >&2; exit 2"]], "w") == [(2, "out\nerr\n")]


def test_a_failing_command_does_not_stop_the_ones_after_it(tr):
    res = tr.run_many([["false"], ["sh", "-c", "exit 255"], ["no-such-command-sitectl-test"], ["exit", "7"],
                       ["printf", "still runs"]], "w")
    assert [rc for rc, _ in res] == [1, 255, 127, 7, 0]
    assert "no-such-command-sitectl-test" in res[2][1]
    assert res[4] == (0, "still runs")


def test_a_failing_gate_stops_the_batch_and_what_follows_it_is_reported_not_run(tr, tmp_path):
    """A gate (the jobs' pause before a restore) that fails keeps every later command from
    running: the canary is never touched, and those commands come back as NOT_RUN."""
    canary = tmp_path / "ran-after-the-gate"
    res = tr.run_many([["printf", "before"], ["sh", "-c", "printf paused?; exit 4"], ["touch", str(canary)],
                       ["printf", "resume"]], "w", gates=frozenset({1}))
    assert res[:2] == [(0, "before"), (4, "paused?")]
    assert [rc for rc, _ in res[2:]] == [NOT_RUN, NOT_RUN]
    assert not canary.exists()


def test_a_gate_that_succeeds_lets_the_batch_run_on(tr, tmp_path):
    canary = tmp_path / "ran"
    res = tr.run_many([["printf", "gate"], ["false"], ["touch", str(canary)]], "w", gates=frozenset({0}))
    assert [rc for rc, _ in res] == [0, 1, 0] and canary.exists()


def test_a_failing_last_command_that_is_a_gate_is_just_a_failure(tr):
    assert tr.run_many([["printf", "x"], ["false"]], "w", gates=frozenset({1})) == [(0, "x"), (1, "")]


def test_a_batch_cut_short_without_a_failed_gate_is_an_error():
    """Fewer results than commands and no failed gate to explain it: the batch broke."""
    out = "a\n@@sitectl-rc-{n}=0@@\n"
    eng = CannedEngine(0, "")
    tr = ExecTransport(eng, "c1", "shopping")
    tr.engine.exec = lambda name, argv, timeout=600: (0, out.format(n=argv[4]))
    with pytest.raises(StoreError):
        tr.run_many([["printf", "a"], ["printf", "b"]], "w", gates=frozenset({0}))


def test_an_empty_argv_is_an_empty_command_that_succeeds(tr):
    assert tr.run_many([[], ["printf", "x"], []], "w") == [(0, ""), (0, "x"), (0, "")]


NASTY_ARGS = ["a b", "  two  spaces ", "'single'", '"double"', "$(touch {canary})", "`touch {canary}`",
              "x; touch {canary}", "x && touch {canary}", "x | touch {canary}", "x\ntouch {canary}", "*", "?",
              "[a-z]*", "-n", "--", "-", "", "$HOME", "${1}", "$#", "$@", "\\", "\\n", "~", "~root", ">", "<",
              "2>&1", "#not a comment", "a=b", "{a,b}", "é😀", "\t", "\r", "\" \\\" '"]


def test_arguments_reach_the_command_verbatim_and_are_never_evaluated(tr, tmp_path):
    canary = tmp_path / f"pwned-{uuid.uuid4().hex}"
    (tmp_path / "decoy.txt").write_text("a glob that expands would name me")
    args = [a.replace("{canary}", str(canary)) for a in NASTY_ARGS]
    res = tr.run_many([[*ARGV_PRINTER, *args], ["printf", "%s", f"$(touch {canary})"],
                       ["printf", "%s", f"`touch {canary}`"], ["printf", "%s|", *args]], "w")
    assert res[0] == (0, json.dumps(args))
    assert res[1] == (0, f"$(touch {canary})")
    assert res[2] == (0, f"`touch {canary}`")
    assert res[3] == (0, "".join(a + "|" for a in args))
    assert not canary.exists()


def test_a_command_name_with_spaces_or_shell_text_is_one_word_looked_up_as_is(tr, tmp_path):
    canary = tmp_path / f"pwned-{uuid.uuid4().hex}"
    (rc, out), = tr.run_many([[f"printf x; touch {canary}"]], "w")
    assert rc == 127 and not canary.exists()


@pytest.mark.parametrize("text", ["x@@sitectl-rc=0@@", "@@sitectl-rc=5@@\nrest", "@@sitectl-rc=5@@",
                                  "\n@@sitectl-rc=x@@\n", "\n@@sitectl-rc=@@\n"])
def test_marker_like_text_that_is_not_a_whole_marker_line_passes_through(tr, text):
    assert tr.run_many([["printf", "%s", text], ["printf", "next"]], "w") == [(0, text), (0, "next")]


def test_output_ending_in_a_marker_without_newline_does_not_change_exit_codes_or_outputs(tmp_path):
    tr = ExecTransport(LocalEngine(["sh"], tmp_path), "c1", "shopping")
    res = tr.run_many([["printf", "%s", "X\n@@sitectl-rc=3@@"], ["false"]], "w")
    assert res == [(0, "X\n@@sitectl-rc=3@@"), (1, "")]


def test_output_holding_a_whole_marker_line_is_the_commands_output(tmp_path):
    tr = ExecTransport(LocalEngine(["sh"], tmp_path), "c1", "shopping")
    text = "\n@@sitectl-rc=0@@\n"
    assert tr.run_many([["printf", "%s", text], ["printf", "b"]], "w") == [(0, text), (0, "b")]


def test_no_argvs_is_no_exec():
    eng = CannedEngine(0, "")
    assert ExecTransport(eng, "c1", "shopping").run_many([], "w") == []
    assert eng.calls == 0


def test_a_batch_too_large_for_one_exec_is_refused_before_running_with_its_size():
    eng = CannedEngine(0, "")
    with pytest.raises(StoreError) as e:
        ExecTransport(eng, "c1", "shopping").run_many([["printf", "x" * ARG_BUDGET]], "detect")
    assert str(e.value) == (f"shopping: detect: the commands are too large for one exec "
                            f"({len('printf') + 1 + ARG_BUDGET + 1} bytes)")
    assert eng.calls == 0


def test_a_batch_the_exec_could_not_run_raises_with_exit_code_and_output_tail():
    tr = ExecTransport(CannedEngine(126, "  OCI runtime exec failed: no such container  "), "c1", "shopping")
    with pytest.raises(StoreError) as e:
        tr.run_many([["true"]], "detect")
    assert str(e.value) == "shopping: detect failed (exit code 126): OCI runtime exec failed: no such container"


def test_a_batch_cut_short_raises_instead_of_returning_fewer_results():
    tr = ExecTransport(CannedEngine(0, "a\n@@sitectl-rc=0@@\n"), "c1", "shopping")
    with pytest.raises(StoreError, match=r"^shopping: detect failed \(exit code 0\): a\n@@sitectl-rc=0@@$"):
        tr.run_many([["true"], ["true"]], "detect")


ARG_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)


@pytest.mark.parametrize("shell", SHELLS)
@given(argvs=st.lists(st.lists(ARG_TEXT, max_size=5), min_size=1, max_size=6))
@settings(database=None, max_examples=60, deadline=None)
def test_random_arguments_round_trip_through_printf(shell, argvs):
    tr = ExecTransport(LocalEngine(shell, "/", docker_like=True), "c1", "shopping")
    res = tr.run_many([["printf", "%s\\n", *args] for args in argvs], "w")
    assert res == [(0, "".join(a + "\n" for a in args) if args else "\n") for args in argvs]
