#!/usr/bin/env python3
"""A Docker Swarm of N Docker-in-Docker nodes on this machine, for the cluster test and
benchmark (tests/fleet/test_cluster.py, bench/cluster.py) and for trying `sitectl cluster` here.

Each node is a container of scripts/swarm-lab/Dockerfile (Debian's docker.io on the local
Debian base image) running its own dockerd, on the lab network (10.213.0.0/24 by default: outside Docker's default address pools),
its engine at tcp://10.213.0.1<i>:2375. Node 1 is the manager; the others join as workers.
The nodes get every capability but CAP_SYS_RESOURCE (which this machine's bounding set lacks,
so `--privileged` fails here), no seccomp/AppArmor profile and a writable /proc and /sys.

    python scripts/swarm_lab.py up --nodes 3      # prints the nodes as JSON
    python scripts/swarm_lab.py down
    python scripts/swarm_lab.py kill lab-3         # lose a node (docker kill)
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sitectl.engine.swarm import Swarm, engine_at  # noqa: E402

NODE_IMAGE = "sitectl/swarm-node:0.1"
NETWORK = "sitectl-lab"
LABEL = "sitectl.lab"


def _addr(subnet_prefix: str, i: int) -> str:
    return f"{subnet_prefix}.{10 + i}"


def nodes(docker: DockerClient | None = None) -> list[dict]:
    """The lab's nodes: ``[{"name", "addr", "engine"}]`` (running or not)."""
    d = docker or DockerClient()
    out = []
    for c in d.container.list(all=True, filters=[("label", LABEL)]):
        addr = c.config.labels.get("sitectl.lab.addr", "")
        out.append({"name": c.name, "addr": addr, "engine": f"tcp://{addr}:2375", "running": c.state.running})
    return sorted(out, key=lambda n: n["name"])


def up(count: int = 3, prefix: str = "10.213.0", log=print) -> list[dict]:
    """Start ``count`` nodes (idempotent: running nodes are kept) and make them one swarm."""
    d = DockerClient()
    if not d.image.exists(NODE_IMAGE):
        log(f"building {NODE_IMAGE}")
        d.legacy_build(ROOT / "scripts" / "swarm-lab", tags=[NODE_IMAGE], pull=False, quiet=True)
    if not d.network.exists(NETWORK):
        d.network.create(NETWORK, subnet=f"{prefix}.0/24", labels={LABEL: "1"})
    have = {n["name"]: n for n in nodes(d)}
    for i in range(1, count + 1):
        name, addr = f"lab-{i}", _addr(prefix, i)
        if name in have and have[name]["running"]:
            continue
        if name in have:
            d.container.remove(name, force=True)
        log(f"starting node {name} at {addr}")
        d.run(NODE_IMAGE, name=name, hostname=name, detach=True, networks=[NETWORK], ip=addr,
              cap_add=["ALL"], cap_drop=["SYS_RESOURCE"],
              security_options=["seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"],
              volumes=[(f"{name}-docker", "/var/lib/docker"), ("/sys/fs/cgroup", "/sys/fs/cgroup")],
              labels={LABEL: "1", "sitectl.lab.addr": addr})
    engines = {f"lab-{i}": engine_at(f"tcp://{_addr(prefix, i)}:2375") for i in range(1, count + 1)}
    deadline = time.monotonic() + 120
    for name, eng in engines.items():
        while not eng.reachable():
            if time.monotonic() > deadline:
                raise SystemExit(f"node {name}'s engine did not answer within 120 s (docker logs {name})")
            time.sleep(1)
    manager = Swarm(engines["lab-1"])
    if not manager.node_id():
        manager.init(_addr(prefix, 1))
    token = manager.join_token("worker")
    for i in range(2, count + 1):
        sw = Swarm(engines[f"lab-{i}"])
        if not sw.node_id():
            sw.join(f"{_addr(prefix, 1)}:2377", token)
    deadline = time.monotonic() + 60
    while sum(n.state == "ready" for n in manager.nodes()) < count and time.monotonic() < deadline:
        time.sleep(1)
    return [n for n in nodes(d) if n["name"] in engines]


def down(log=print) -> None:
    """Remove the lab's nodes, their volumes and the network."""
    d = DockerClient()
    for n in nodes(d):
        log(f"removing {n['name']}")
        d.container.remove(n["name"], force=True, volumes=True)
        try:
            d.volume.remove(f"{n['name']}-docker")
        except DockerException:
            pass
    if d.network.exists(NETWORK):
        d.network.remove(NETWORK)


def kill(name: str) -> None:
    """Lose node ``name`` at once (``docker kill``: no clean leave)."""
    DockerClient().container.kill(name)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up")
    u.add_argument("--nodes", type=int, default=3)
    sub.add_parser("down")
    k = sub.add_parser("kill")
    k.add_argument("name")
    a = p.parse_args()
    log = lambda m: print(f"[swarm-lab] {m}", file=sys.stderr)  # noqa: E731
    if a.cmd == "up":
        print(json.dumps(up(a.nodes, log=log), indent=2))
    elif a.cmd == "down":
        down(log)
    else:
        kill(a.name)


if __name__ == "__main__":
    main()
