"""Benchmark of the Magento cache flush a reset runs (issue 17's target: at most 0.05 s).

`stacks/webarena.yaml` declares the Magento pair's cache store as a flush of Redis databases 0
and 1 (Magento's cache and full-page cache on the real images); WebArena's own post-start step,
`bin/magento cache:flush`, bootstraps PHP on the real images. A reset runs the store's flush in
the same `docker exec` as the restore (the store's `after_restore_requests`), so what it adds to
a reset is the flush command's own time inside the container: that is what is timed here, with
Python's clock in the container, around the very argv the stack file declares (read from it).
Baselines in the same run: the flush as its own `docker exec` from the host (what it costs as a
separate round trip), and `bin/magento cache:flush` inside the container (the replica's is a
Python program, not Magento's PHP bootstrap: a floor for the real one, not its time).

The container is a fresh one of the mini stack's storefront image (no ports, removed after), so
no instance is touched. Output: JSON with median and p95 per measurement and the target met or
missed, in ``bench/results/cache-flush.json``.

    python bench/cache_flush.py --runs 50
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from python_on_whales import docker  # noqa: E402

from sitectl.stack.target import resolve_target  # noqa: E402

TARGET_S = 0.05
NAME = "sitectl-bench-cache-flush"

# Runs inside the container: times argv N times with a monotonic clock (stdlib only).
INSIDE = """
import json, subprocess, sys, time
argv, n = json.loads(sys.argv[1]), int(sys.argv[2])
out = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out.append(time.perf_counter() - t)
print(json.dumps(out))
"""


def stats(xs: list[float]) -> dict:
    s = sorted(xs)
    return {"n": len(s), "median_s": round(statistics.median(s), 4),
            "p95_s": round(s[max(0, int(len(s) * 0.95) - 1)], 4), "min_s": round(s[0], 4)}


def inside(argv: list[str], runs: int) -> list[float]:
    return json.loads(docker.execute(NAME, ["python3", "-c", INSIDE, json.dumps(argv), str(runs)]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/cache-flush.json")
    a = ap.parse_args()

    target = resolve_target("mini", host="127.0.0.1", instance=0)
    site = target.stack.sites["shopping"]
    flush = next(s.flush for s in site.stores if s.kind == "cache")
    image = target.image(site)
    if docker.container.exists(NAME):
        docker.container.remove(NAME, force=True)
    docker.run(image, name=NAME, detach=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if docker.execute(NAME, ["redis-cli", "PING"]).strip() == "PONG":
                    break
            except Exception:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("redis did not answer in the benchmark's container within 60 s")
            time.sleep(0.5)
        load0 = os.getloadavg()
        in_container = inside(flush, a.runs)
        execs = []
        for _ in range(a.runs):
            t = time.perf_counter()
            docker.execute(NAME, flush)
            execs.append(time.perf_counter() - t)
        cli = inside(["/var/www/magento2/bin/magento", "cache:flush"], min(a.runs, 10))
        load1 = os.getloadavg()
    finally:
        docker.container.remove(NAME, force=True)

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    res = {
        "benchmark": "cache_flush", "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python bench/cache_flush.py " + " ".join(sys.argv[1:]),
        "what": "Magento cache flush declared by stacks/webarena.yaml (Redis databases 0 and 1)",
        "flush_argv": flush, "image": image,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_before": load0, "load_after": load1},
        "flush_in_container": stats(in_container),
        "baseline_flush_as_own_docker_exec": stats(execs),
        "baseline_replica_bin_magento_cache_flush": stats(cli),
        "target": {"flush_in_container_median_le_s": TARGET_S,
                   "met": statistics.median(in_container) <= TARGET_S},
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
