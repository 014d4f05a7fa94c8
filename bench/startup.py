"""Benchmark of the CLI's start-up: ``sitectl --help`` and ``sitectl env`` as whole processes.

Harnesses run the CLI in loops (``eval "$(sitectl env)"`` before each task), so what counts is
the wall time of the whole process: interpreter start, imports, and for ``env`` the stack file
and the one question to Docker about the running containers' labels (no engine answering is
fine: ``env`` then falls back to the config and the defaults). Each command runs once untimed
(disk caches), then ``--runs`` times; the target is 0.15 s for each, judged on the median
(the minimum is reported too: on a loaded machine it is the closest to the CLI's own cost).

``env`` remembers its answer (sitectl/ops/envvars.py), so a loop's runs after the first answer
from the memo: that is ``env``. ``env (memo miss)`` is a first run, each with an empty cache
folder (``SITECTL_CACHE_DIR``), which loads and validates the stack. The floors say how fast the
machine is: ``python -c pass`` and ``python -c "import click"`` (the CLI's framework), timed
the same way. Children run without ``PYTHONDONTWRITEBYTECODE`` (recorded when it was set):
with it, every start compiles every module again, which no installed CLI does.

The baseline runs in the same batch: ``--baseline REF`` (default ``HEAD~1`` is not assumed:
give a commit, e.g. the one before the CLI became lazy) is checked out into a temporary folder
and both trees' CLIs are started the same way, ``python -c`` with the tree first on
``sys.path`` (no console script, no editable-install finder), one run of each in turn.

Output: JSON with min, median, max per command and tree, the machine and its load before and
after, and each target met or missed, in ``bench/results/startup.json``.

    python bench/startup.py --runs 20 --baseline 642323f
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.15
COMMANDS = [["--help"], ["env"]]
#: Starts the CLI of the tree in argv[1] with the rest of argv as its command line.
LAUNCH = "import sys; sys.path.insert(0, sys.argv[1]); sys.argv = ['sitectl', *sys.argv[2:]]; " \
         "from sitectl.cli import run; run()"


#: What the children run with: this environment without PYTHONDONTWRITEBYTECODE.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _timed_run(cmd: list[str], env: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """One run of ``cmd`` (output to /dev/null, errors kept): (wall seconds, the process)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env or CHILD_ENV)
    return time.perf_counter() - t0, p


_CACHES = tempfile.TemporaryDirectory(prefix="sitectl-bench-cache-")


def _fresh_cache_env() -> dict:
    """The children's environment with a new, empty cache folder (a memo miss)."""
    return {**CHILD_ENV, "SITECTL_CACHE_DIR": tempfile.mkdtemp(dir=_CACHES.name)}


def time_command(argv: list[str], runs: int, name: str | None = None, env_of=None, target: bool = True) -> dict:
    """Run ``argv`` once untimed, then ``runs`` times; wall seconds of each run. ``env_of``
    makes each run's environment (default: :data:`CHILD_ENV`)."""
    _timed_run(argv, env_of() if env_of else None)
    times, failures = [], 0
    for _ in range(runs):
        seconds, p = _timed_run(argv, env_of() if env_of else None)
        times.append(seconds)
        if p.returncode != 0:
            failures += 1
            print(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode(errors='replace')[-500:]}", file=sys.stderr)
    median = statistics.median(times)
    out = {"name": name or " ".join(["sitectl", *argv[1:]]), "argv": ["sitectl", *argv[1:]], "n": runs,
           "failures": failures,
           "min_s": round(min(times), 4), "median_s": round(median, 4), "max_s": round(max(times), 4)}
    if target:
        out["target"] = {"seconds": TARGET_S, "statistic": "median", "met": median <= TARGET_S,
                         "met_by_min": min(times) <= TARGET_S}
    return out


def _stats(times: list[float]) -> dict:
    return {"n": len(times), "min_s": round(min(times), 4), "median_s": round(statistics.median(times), 4),
            "max_s": round(max(times), 4)}


def time_pair(trees: dict[str, Path], argv: list[str], runs: int) -> dict:
    """Each tree's CLI with ``argv``, one run of each in turn (after one untimed run each), so a
    change of load hits both alike; wall seconds per tree."""
    cmds = {name: [sys.executable, "-c", LAUNCH, str(tree), *argv] for name, tree in trees.items()}
    for cmd in cmds.values():
        _timed_run(cmd)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            seconds, p = _timed_run(cmd)
            times[name].append(seconds)
            if p.returncode != 0:
                raise SystemExit(f"{name} sitectl {' '.join(argv)}: exit {p.returncode}: "
                                 f"{p.stderr.decode(errors='replace')[-500:]}")
    out = {name: _stats(t) for name, t in times.items()}
    out["ratio_median"] = round(out["baseline"]["median_s"] / out["this"]["median_s"], 2)
    return {"argv": ["sitectl", *argv], **out}


def containers_of_instance_0() -> int | None:
    """How many containers of instance 0 Docker lists (what ``env`` asks about); None when no
    engine answers. (The benchmark's own question, asked once, through the client.)"""
    try:
        p = subprocess.run(["docker", "container", "ls", "-a", "-q", "--filter", "label=sitectl.instance=0"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return len(p.stdout.split()) if p.returncode == 0 else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="Timed runs per command (after one untimed run).")
    ap.add_argument("--sitectl", type=Path, default=Path(sys.executable).with_name("sitectl"),
                    help="The console script to time (default: the one beside this Python).")
    ap.add_argument("--baseline", metavar="REF", help="A commit to time in the same batch (python -c, both trees).")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/startup.json")
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs: give 1 or more")
    if not a.sitectl.is_file():
        print(f"bench/startup.py: no console script {a.sitectl}; `pip install -e .` or give --sitectl", file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    floors = [time_command([sys.executable, "-c", code], a.runs, name=f"python -c {code!r}", target=False)
              for code in ("pass", "import click")]
    for f in floors:
        f.pop("argv")
    results = [time_command([str(a.sitectl), *argv], a.runs) for argv in COMMANDS]
    miss = time_command([str(a.sitectl), "env"], a.runs, name="sitectl env (memo miss)", env_of=_fresh_cache_env,
                        target=False)
    pairs = []
    if a.baseline:
        with tempfile.TemporaryDirectory(prefix="sitectl-baseline-") as tmp:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", a.baseline, "sitectl", "stacks", "healthchecks"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            pairs = [time_pair({"baseline": Path(tmp), "this": ROOT}, argv, a.runs) for argv in COMMANDS]
    load_after = os.getloadavg()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    report = {"benchmark": "startup", "command": " ".join(["python", "bench/startup.py", *sys.argv[1:]]),
              "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M"),
              "machine": {"python": platform.python_version(), "platform": platform.platform(),
                          "cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                          "loadavg_after": [round(x, 2) for x in load_after],
                          "PYTHONDONTWRITEBYTECODE_in_caller": os.environ.get("PYTHONDONTWRITEBYTECODE")},
              "docker_containers_of_instance_0": containers_of_instance_0(),
              "method": "wall time of the whole process (subprocess.run, output to /dev/null), "
                        "one untimed run first",
              "floors": floors,
              "commands": results,
              "env_memo_miss": miss,
              "against_baseline": {"ref": a.baseline, "pairs": pairs} if a.baseline else None,
              "targets_met": all(r["target"]["met"] for r in results)}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 1 if any(r["failures"] for r in (*results, miss)) else 0


if __name__ == "__main__":
    sys.exit(main())
