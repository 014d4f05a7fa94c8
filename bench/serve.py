"""Benchmark of the reset server's leases: resets per minute with N concurrent clients.

Setup (measured and reported): tiny mini instances 0..I-1, all seven sites each, up at once
on this machine; their memory (``docker stats``), health (``sitectl instances``) and the time
to bring them up.

Then, for each client count N, for ``--seconds`` seconds, N client threads loop against a real
``sitectl serve`` server (in this process, real HTTP on loopback): lease an instance, make a
task-sized change through the site's own HTTP (a forum post), release (the server resets the
instance before leasing it again). The same loop runs with the server's reset replaced by
WebArena's way, re-creating the mutable sites' containers (``sitectl reset --recreate``'s
code), for ``--baseline-seconds``. Output: JSON with leases completed, resets per minute per
side, lease wait times, and the ratio.

    python bench/serve.py --instances 4 --clients 1 2 4 --seconds 60 --baseline-seconds 120
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.leasing import run_lease_loop  # noqa: E402
from sitectl.engine import DockerEngine  # noqa: E402
from sitectl.ops import lifecycle  # noqa: E402
from sitectl.ops.instances import list_instances  # noqa: E402
from sitectl.ops.pool import Pool, default_reset  # noqa: E402
from sitectl.progress import Reporter  # noqa: E402
from sitectl.server import make_server, serve  # noqa: E402
from sitectl.stack.target import resolve_target  # noqa: E402

TOKEN = "bench-" + uuid.uuid4().hex
MUTABLE = ["shopping", "shopping_admin", "reddit", "gitlab"]


def recreate_reset(target, sites, full, engine) -> dict:
    """WebArena's reset: re-create the containers from their images, re-run post-start steps."""
    rows = lifecycle.reset_recreate(target, target.stack.select(sites or MUTABLE), engine)
    return {"sites": [r.as_dict() for r in rows]}


def run_clients(pool: Pool, n: int, seconds: float) -> dict:
    srv = make_server(pool, TOKEN, ("127.0.0.1", 0), log=None)
    th = threading.Thread(target=serve, args=(srv, 0.2), daemon=True)
    th.start()
    base, hdr = srv.public_base, {"Authorization": f"Bearer {TOKEN}"}
    t_start = time.monotonic()
    loop = run_lease_loop(base, hdr, n, seconds)
    done, waits, errors = loop["done"], loop["waits"], loop["errors"]
    for num in pool.slots:  # the last releases' resets count too
        pool.wait(num, 1800)
    elapsed = time.monotonic() - t_start
    srv.shutdown()
    th.join(10)
    resets = sum(s.resets for s in pool.slots.values())
    failed = [s.last_reset for s in pool.slots.values() if s.last_reset and not s.last_reset["ok"]]
    return {"clients": n, "seconds": round(elapsed, 1), "leases": len(done), "resets": resets,
            "resets_per_minute": round(60 * resets / elapsed, 1),
            "lease_wait_median_s": round(statistics.median(waits), 3) if waits else None,
            "lease_wait_max_s": round(max(waits), 3) if waits else None,
            "errors": errors[:5], "failed_resets": [f["error"] for f in failed][:5]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=4)
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--baseline-seconds", type=float, default=120)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/serve.json")
    a = ap.parse_args()
    engine = DockerEngine()
    targets = [resolve_target("mini", host="127.0.0.1", instance=i) for i in range(a.instances)]
    t0 = time.monotonic()
    threads = [threading.Thread(target=lifecycle.up, args=(t, list(t.stack.sites.values()), engine, Reporter()))
               for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    up_s = time.monotonic() - t0
    rows = list_instances(targets[0], engine)
    mem = engine.memory_used([c for r in rows for c in r["containers"]])
    setup = {"instances": a.instances, "up_seconds": round(up_s, 1),
             "all_healthy": all(r["healthy"] for r in rows if r["instance"] < a.instances),
             "memory_mib_per_instance": {r["instance"]: round(sum(mem.get(c, 0) for c in r["containers"]) / 2**20)
                                         for r in rows},
             "cpus": os.cpu_count()}
    print(json.dumps(setup), file=sys.stderr)
    results = {"sitectl": [], "recreate": []}
    for n in a.clients:
        pool = Pool(targets, engine, reset_fn=default_reset, sites={t.instance: MUTABLE for t in targets})
        results["sitectl"].append(run_clients(pool, n, a.seconds))
        print(json.dumps(results["sitectl"][-1]), file=sys.stderr)
    n = max(a.clients)
    pool = Pool(targets, engine, reset_fn=recreate_reset, sites={t.instance: MUTABLE for t in targets})
    results["recreate"].append(run_clients(pool, n, a.baseline_seconds))
    print(json.dumps(results["recreate"][-1]), file=sys.stderr)
    best = next(r for r in results["sitectl"] if r["clients"] == n)
    ratio = round(best["resets_per_minute"] / max(results["recreate"][0]["resets_per_minute"], 1e-9), 1)
    report = {"command": " ".join(["python", "bench/serve.py", *sys.argv[1:]]),
              "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
              "setup": setup, "results": results,
              "ratio_at_max_clients": ratio}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    bad = any(r["errors"] or r["failed_resets"] for side in results.values() for r in side)
    return 1 if bad or not setup["all_healthy"] else 0


if __name__ == "__main__":
    sys.exit(main())
