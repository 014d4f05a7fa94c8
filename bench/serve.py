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

With ``--crowd``: the reset server under a crowd (issue 18). One mini instance (``--instance``,
brought up if needed) behind the real server and pool; for each client count (10, 100, 1,000),
that many clients connect at once (released together by a barrier), each sends one request
(three in four BrowserGym's ``GET /reset`` with the token, one in four ``GET /status``) and
reads the answer. Recorded per count: the answers by status, connection errors (refused, reset,
timed out), latency median / p95 / max, the resets run and the most that ran at once (the
pool's real reset, wrapped to count). Baseline in the same run: the same server with the
stdlib's settings (a backlog of 5, a thread per connection, no bound). Output:
``bench/results/serve-crowd.json``.

    python bench/serve.py --crowd --instance 3 --clients 10 100 1000
"""
from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import platform
import resource
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
from sitectl.server import ResetServer, make_server, serve  # noqa: E402
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


class StdlibServer(ResetServer):
    """The baseline: the stdlib's ThreadingHTTPServer settings (backlog 5, unbounded threads)."""

    request_queue_size = 5
    max_handlers = 0


def counting(reset_fn):
    """``reset_fn`` wrapped to count the resets running at once; returns (fn, stats dict)."""
    st = {"running": 0, "most": 0, "runs": 0}
    lock = threading.Lock()

    def fn(*args):
        with lock:
            st["running"] += 1
            st["runs"] += 1
            st["most"] = max(st["most"], st["running"])
        try:
            return reset_fn(*args)
        finally:
            with lock:
                st["running"] -= 1
    return fn, st


def crowd(base: str, token: str, n: int, timeout: float = 120.0) -> dict:
    """``n`` clients released at once, one request each (3 in 4 ``GET /t/TOKEN/reset``, the rest
    ``GET /status``). Returns answers by path and status, connection errors by kind, latencies."""
    host, port = base.split("//", 1)[1].rsplit(":", 1)
    answers: collections.Counter = collections.Counter()
    errors: collections.Counter = collections.Counter()
    lat: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(n)

    def one(i: int) -> None:
        path = "/status" if i % 4 == 3 else f"/t/{token}/reset"
        gate.wait()
        t0 = time.monotonic()
        try:
            c = http.client.HTTPConnection(host, int(port), timeout=timeout)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            c.close()
            with lock:
                answers[f"{path.rsplit('/', 1)[1]} {r.status}"] += 1
                lat.append(time.monotonic() - t0)
        except Exception as e:  # noqa: BLE001 - every failure is what is measured
            with lock:
                errors[type(e).__name__] += 1

    old = threading.stack_size(256 * 1024)
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    threading.stack_size(old)
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 30)
    lat.sort()
    return {"answers": dict(sorted(answers.items())), "errors": dict(errors),
            "latency_median_s": round(statistics.median(lat), 3) if lat else None,
            "latency_p95_s": round(lat[max(0, int(len(lat) * 0.95) - 1)], 3) if lat else None,
            "latency_max_s": round(lat[-1], 3) if lat else None}


def run_crowd(target, engine, counts: list[int], server_class) -> list[dict]:
    rows = []
    for n in counts:
        fn, st = counting(default_reset)
        pool = Pool([target], engine, reset_fn=fn, sites={target.instance: ["reddit"]})
        srv = make_server(pool, TOKEN, ("127.0.0.1", 0), log=None, server_class=server_class)
        th = threading.Thread(target=serve, args=(srv, 0.5), daemon=True)
        th.start()
        row = {"clients": n, **crowd(srv.public_base, TOKEN, n)}
        pool.wait(target.instance, 600)
        srv.shutdown()
        th.join(30)
        row.update({"resets": st["runs"], "most_resets_at_once": st["most"],
                    "failed_resets": [pool.slot(target.instance).last_reset["error"]]
                    if pool.slot(target.instance).last_reset and not pool.slot(target.instance).last_reset["ok"] else []})
        print(json.dumps(row), file=sys.stderr)
        rows.append(row)
    return rows


def main_crowd(a) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # n client sockets and the server's
    engine = DockerEngine()
    target = resolve_target("mini", host="127.0.0.1", instance=a.instance)
    lifecycle.up(target, target.stack.select(["reddit"]), engine, Reporter())
    results = {"sitectl": run_crowd(target, engine, a.clients, ResetServer),
               "stdlib_defaults": run_crowd(target, engine, a.clients, StdlibServer)}
    report = {"command": " ".join(["python", "bench/serve.py", *sys.argv[1:]]),
              "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                          "somaxconn": Path("/proc/sys/net/core/somaxconn").read_text().strip()},
              "server": {"request_queue_size": ResetServer.request_queue_size, "max_handlers": ResetServer.max_handlers},
              "results": results}
    out = a.out if a.out != ROOT / "bench/results/serve.json" else ROOT / "bench/results/serve-crowd.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    ok = all(not r["errors"] and r["most_resets_at_once"] <= 1 and not r["failed_resets"]
             and sum(r["answers"].values()) == r["clients"] for r in results["sitectl"])
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=4)
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--baseline-seconds", type=float, default=120)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/serve.json")
    ap.add_argument("--crowd", action="store_true", help="the reset server under a crowd (see the module's text)")
    ap.add_argument("--instance", type=int, default=3, help="--crowd: the mini instance to serve")
    a = ap.parse_args()
    if a.crowd:
        if a.clients == [1, 2, 4]:
            a.clients = [10, 100, 1000]
        return main_crowd(a)
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
