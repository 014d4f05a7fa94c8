"""Benchmark of the fleet on Docker Swarm: reset latency and lease throughput with the
instances spread over three nodes against the same instances on one node, in one run.

Setup: the 3-node Docker-in-Docker swarm of scripts/swarm_lab.py (built and joined if
absent), the forum's and the agent's images on every node (``sitectl cluster push-images``).
Then, per layout:

* ``spread``: ``sitectl cluster deploy --instances I --sites reddit`` (the pool places one
  instance per node);
* ``one-node``: the same, with ``--node-label sitectl.bench=one``, a label only lab-2 carries.

In each layout, through the real pool over HTTP (the code path a harness uses):

* **reset latency**: one lease per instance, then ``--resets`` rounds of a forum post (the
  site's own HTTP) followed by ``GET /l/<lease>/reset`` on every lease at once (BrowserGym's
  call; it answers when the reset is done); the time of each call, and the agent's own
  measure of the reset;
* **lease throughput**: for each client count, ``--seconds`` of N clients looping: lease,
  post, release (the agent resets the instance before it is leased again); leases completed
  per minute.

All three lab nodes are containers on this one machine: they share its CPUs and disk, so the
comparison measures what spreading costs or saves (network hops, contention inside one
node's engine), not added hardware. Output: JSON with medians, p95 and the spread/one-node
ratios.

    python bench/cluster.py --instances 3 --resets 10 --clients 3 6 --seconds 60
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.leasing import forum_post, run_lease_loop  # noqa: E402
from scripts import swarm_lab  # noqa: E402
from sitectl.engine.swarm import Swarm, engine_at  # noqa: E402

SITECTL = str(Path(sys.executable).parent / "sitectl")


def cli(*args, env) -> dict:
    r = subprocess.run([SITECTL, *args, "--json"], capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(f"sitectl {' '.join(args)} failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))], 3)


def summary(xs: list[float]) -> dict:
    return {"n": len(xs), "median_s": round(statistics.median(xs), 3) if xs else None,
            "p95_s": pct(xs, 95) if xs else None, "max_s": round(max(xs), 3) if xs else None}


def reset_latency(pool: str, hdr: dict, instances: int, rounds: int) -> dict:
    leases = []
    for i in range(instances):
        r = requests.post(f"{pool}/api/leases", json={"client": f"latency-{i}", "ttl": 3600}, headers=hdr, timeout=30)
        r.raise_for_status()
        leases.append(r.json())
    walls, agent, errors = [], [], []

    def one(lz):
        forum_post(lz)
        t0 = time.monotonic()
        r = requests.get(f"{pool}/l/{lz['lease']}/reset", timeout=120)
        wall = time.monotonic() - t0
        if r.status_code != 200 or requests.get(f"{pool}/l/{lz['lease']}/status", timeout=30).text != "Ready for duty!":
            errors.append(f"instance {lz['instance']}: {r.status_code} {r.text[:200]}")
        return wall

    with concurrent.futures.ThreadPoolExecutor(max_workers=instances) as ex:
        for _ in range(rounds):
            walls += list(ex.map(one, leases))
            st = requests.get(f"{pool}/api/status", headers=hdr, timeout=30).json()
            agent += [row["last_reset"]["seconds"] for row in st["instances"] if row.get("last_reset")]
    for lz in leases:
        requests.delete(f"{pool}/api/leases/{lz['lease']}", headers=hdr, timeout=30)
    return {"rounds": rounds, "instances": instances, "reset_call": summary(walls), "agent_reset": summary(agent),
            "errors": errors[:5]}


def throughput(pool: str, hdr: dict, clients: int, seconds: float) -> dict:
    loop = run_lease_loop(pool, hdr, clients, seconds, name="tp-", mutate=forum_post)
    elapsed = loop["elapsed"]
    return {"clients": clients, "seconds": round(elapsed, 1), "leases": len(loop["done"]),
            "leases_per_minute": round(60 * len(loop["done"]) / elapsed, 1), "lease_wait": summary(loop["waits"]),
            "errors": loop["errors"][:5]}


def wait_stacks_gone(swarm: Swarm, nodes: list[dict]) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        busy = [n for n in nodes if engine_at(n["engine"]).containers({"sitectl.instance": None})
                or engine_at(n["engine"]).containers({"sitectl.cluster": None})]
        if not swarm.stacks() and not busy:
            return
        time.sleep(2)


def layout(name: str, labels: list[str], a, env, manager: str, nodes: list[dict]) -> dict:
    swarm = Swarm(engine_at(manager))
    cli("cluster", "rm", "--docker-host", manager, env=env)
    wait_stacks_gone(swarm, nodes)
    t0 = time.monotonic()
    dep = cli("cluster", "deploy", "--instances", str(a.instances), "--sites", "reddit", "--docker-host", manager,
              "--wait", "900", *labels, env=env)
    deploy_s = round(time.monotonic() - t0, 1)
    pool = dep["pool_url"]
    token = Path(env["SITECTL_SNAPSHOTS_DIR"], "cluster-token").read_text().strip()
    hdr = {"Authorization": f"Bearer {token}"}
    placed = {r["instance"]: r["placement"]["node"] for r in dep["instances"]}
    print(f"[{name}] deployed in {deploy_s} s: {placed}", file=sys.stderr)
    res = {"layout": name, "placement": placed, "deploy_s": deploy_s,
           "reset_latency": reset_latency(pool, hdr, a.instances, a.resets), "throughput": []}
    print(f"[{name}] reset latency {res['reset_latency']['reset_call']}", file=sys.stderr)
    for c in a.clients:
        tp = throughput(pool, hdr, c, a.seconds)
        print(f"[{name}] {c} clients: {tp['leases_per_minute']} leases/min", file=sys.stderr)
        res["throughput"].append(tp)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--resets", type=int, default=10, help="Reset rounds per layout (every instance each round).")
    ap.add_argument("--clients", type=int, nargs="+", default=[3, 6])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/cluster.json")
    a = ap.parse_args()
    t_all = time.monotonic()
    nodes = swarm_lab.up(3, log=lambda m: print(f"[lab] {m}", file=sys.stderr))
    manager = nodes[0]["engine"]
    env = dict(os.environ, SITECTL_SNAPSHOTS_DIR=str(ROOT / ".bench-cluster"))
    push = ["cluster", "push-images", "--sites", "reddit"]
    for n in nodes:
        push += ["--node", n["engine"]]
    cli(*push, env=env)
    swarm = Swarm(engine_at(manager))
    one = next(n for n in swarm.nodes() if n.hostname == "lab-2")
    swarm.label_node(one.id, {"sitectl.bench": "one"})
    spread = layout("spread", [], a, env, manager, nodes)
    single = layout("one-node", ["--node-label", "sitectl.bench=one"], a, env, manager, nodes)
    cli("cluster", "rm", "--docker-host", manager, env=env)
    ratio = {
        "reset_call_median_spread_over_one": round(spread["reset_latency"]["reset_call"]["median_s"]
                                                   / single["reset_latency"]["reset_call"]["median_s"], 3),
        "leases_per_minute_spread_over_one": {
            str(s["clients"]): round(s["leases_per_minute"] / o["leases_per_minute"], 3)
            for s, o in zip(spread["throughput"], single["throughput"])},
    }
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    out = {"benchmark": "cluster", "commit": commit, "date": time.strftime("%Y-%m-%d"),
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
           "command": "python bench/cluster.py " + " ".join(sys.argv[1:]),
           "nodes": "3 Docker-in-Docker nodes on this one machine (shared CPUs and disk)",
           "layouts": [spread, single], "ratios": ratio, "seconds": round(time.monotonic() - t_all, 1)}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(ratio, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
