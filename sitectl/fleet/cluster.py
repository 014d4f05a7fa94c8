"""A fleet of instances on a Docker Swarm: placement, stacks, the reset agent, and the pool
that leases instances across nodes and heals itself.

Layout (docs/cluster.md)::

    stack sitectl-pool   service pool   on a manager: leases, placement, healing
    stack sitectl-i<K>   one service per site (Swarm tasks on ONE node)
                         service agent  on the same node, with the node's Docker socket and the
                                        instance's state volume: ``up`` (post-start steps,
                                        golden snapshot), ``verify``, then the reset and lease
                                        API of ``sitectl serve`` for instance K

Every service of an instance is pinned to the node the pool chose (``node.id == ...``): the
sites' state lives in their containers and volumes on that node, and the agent resets it
there with the same code as on one host (:class:`sitectl.engine.swarm.TaskEngine`). The pool
resets an instance by calling its agent. When a node is lost, the pool moves the leases of
its instances to idle instances (or keeps them waiting for the replacement), deploys each lost
instance again on another node, and leases it again only after its agent brought it up,
took golden and passed ``verify``.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from sitectl.engine import DockerEngine, Engine
from sitectl.engine.swarm import NodeInfo, Swarm, TaskEngine, copy_images
from sitectl.errors import NoNodeFits, SitectlError, UsageError
from sitectl.sites.containers import run_spec
from sitectl.ops.pool import Pool, default_reset
from sitectl.progress import QUIET, Reporter
from sitectl.stack import Site
from sitectl.stack.target import PORT_STEP, Target

#: The image of the reset agent and the pool (stacks/agent/Dockerfile), built here.
AGENT_IMAGE = "sitectl/agent:0.1"
#: The image the agent's builds on (stacks/agent/Dockerfile ``BASE``).
AGENT_BASE = "sitectl/replica-runtime:0.1"
#: Instance K's agent answers on AGENT_PORT + 100·K of its node (no site port ends in 50).
AGENT_PORT = 9450
#: The pool's port on the manager.
POOL_PORT = 7565
POOL_STACK = "sitectl-pool"
#: Where the agent keeps its snapshot manifests and journal (a volume of the instance's stack).
STATE_DIR = "/var/lib/sitectl"
#: Where a Swarm secret is mounted in the agent and pool containers.
TOKEN_PATH = "/run/secrets/sitectl-token"
#: Memory reserved per site of an instance (``deploy.resources.reservations``), unless given.
DEFAULT_RESERVE = 256 << 20
#: Seconds between two passes of the pool's reconcile loop.
RECONCILE_EVERY = 2.0
#: Seconds an agent may not answer before its instance's leases fail over.
FAILOVER_AFTER = 10.0
#: Seconds before an instance whose reset failed is reset again (doubling per failure in a row).
RETRY_FAILED_EVERY = 15.0
#: Seconds a node an instance was lost or failed on is not chosen for it again (unless no
#: other node fits).
AVOID_FOR = 600.0
#: Seconds a (re)deployed instance has to come up, golden and verified, before it is placed
#: on another node.
START_TIMEOUT = 900.0


def stack_name(instance: int) -> str:
    """The Swarm stack of ``instance``: ``sitectl-i<K>``."""
    return f"sitectl-i{instance}"


def agent_port(instance: int) -> int:
    return AGENT_PORT + PORT_STEP * instance


def parse_size(text: str) -> int:
    """``"256M"`` → bytes (suffixes K, M, G, powers of 1024; none: bytes).

    Raises:
        UsageError: anything else.
    """
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", str(text), re.I)
    if not m:
        raise UsageError(f"size {text!r}: give a number with K, M or G, e.g. 256M")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def parse_labels(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``["zone=a", "gpu"]`` → ``{"zone": "a", "gpu": ""}`` (an empty value: any value).

    Raises:
        UsageError: a key that is not a Docker label key.
    """
    out = {}
    for it in items:
        k, _, v = it.partition("=")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", k) or not re.fullmatch(r"[A-Za-z0-9._:/-]{0,128}", v):
            raise UsageError(f"--node-label {it!r}: give KEY or KEY=VALUE (letters, digits, . _ - in the key)")
        out[k] = v
    return out


def token_secret_name(token: str) -> str:
    """The Swarm secret holding ``token``: named by a digest of it, since a secret can be
    neither read back nor changed (a new token is a new secret)."""
    return "sitectl-token-" + hashlib.sha256(token.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class ClusterSpec:
    """What the fleet is: which stack and sites each instance runs, how many, where.

    Attributes:
        stack: a stack name shipped in the agent image (``mini``, ``webarena``).
        sites: site names each instance runs (empty: all of the stack's).
        instances: N; instances 0..N-1.
        seed, scale: replica parameters.
        node_labels: a node must carry each (an empty value: any value).
        reserve: bytes of memory reserved per site.
        agent_image: image of the agent and the pool.
        token_secret: name of the Swarm secret with the token.
    """

    stack: str = "mini"
    sites: tuple[str, ...] = ()
    instances: int = 1
    seed: int = 0
    scale: str = "tiny"
    node_labels: dict[str, str] = field(default_factory=dict)
    reserve: int = DEFAULT_RESERVE
    agent_image: str = AGENT_IMAGE
    token_secret: str = ""
    start_timeout: float = START_TIMEOUT

    def target(self, instance: int, host: str, site_hosts: bool = False) -> Target:
        """The :class:`Target` of ``instance`` placed on a node reached at ``host``; its stack
        holds only the fleet's ``sites`` (so URLs, environment variables and health list only
        what runs).

        Raises:
            UsageError: an unknown site name, or a chosen site whose stack-file values name a
                site left out (the homepage links to every site).
        """
        from sitectl.stack import load_stack
        from sitectl.stack.target import validate_host

        stack = load_stack(self.stack)
        if self.sites:
            keep = {s.name for s in stack.select(list(self.sites))}
            stack = stack.model_copy(update={"sites": {n: s for n, s in stack.sites.items() if n in keep}})
        t = Target(stack=stack, host=validate_host(host), instance=instance, seed=self.seed, scale=self.scale,
                   site_hosts=site_hosts)
        for site in stack.sites.values():
            try:
                [t.fill(v, site) for v in (*site.environment.values(), *site.volumes)]
                [t.fill(a, site) for step in site.post_start for a in step.exec]
            except KeyError as e:
                raise UsageError(f"site {site.name!r} needs site {str(e.args[0]).removeprefix('origin_')!r} "
                                 "(its stack-file values name it): add it to --sites or leave the first out") from None
        return t

    def chosen_sites(self, target: Target) -> list[Site]:
        """The sites each instance runs, in stack order."""
        return list(target.stack.sites.values())

    def need(self, target: Target) -> int:
        """Bytes an instance reserves: ``reserve`` per site."""
        return self.reserve * len(self.chosen_sites(target))

    def digest(self) -> str:
        """12 hex digits naming what an instance's stack is made from (stack, sites, seed,
        scale, reservation, agent image, token secret): a pool that finds a stack of another
        digest deploys it again."""
        key = [self.stack, list(self.sites), self.seed, self.scale, self.reserve, self.agent_image, self.token_secret,
               sorted(self.node_labels.items())]
        return hashlib.sha256(repr(key).encode()).hexdigest()[:12]

    def args(self) -> list[str]:
        """The options that carry this spec on a command line (pool and agent)."""
        return self.args_for(list(self.sites))

    def args_for(self, sites: list[str]) -> list[str]:
        """:meth:`args` with ``sites`` instead of the fleet's (a per-site agent)."""
        a = ["--stack", self.stack, "--seed", str(self.seed), "--scale", self.scale]
        if sites:
            a += ["--sites", ",".join(sites)]
        return a


# -- placement ----------------------------------------------------------------------------
def choose_node(nodes: list[NodeInfo], placed: dict[str, int], need: int, labels: dict[str, str],
                avoid: set[str] = frozenset()) -> NodeInfo:
    """The node for a new instance: ready and active, carrying ``labels``, not in ``avoid``,
    with ``need`` bytes of memory free after what the fleet's instances there reserve; of
    those, the one with the most free memory (then the least reserved, then the first host name).

    Args:
        placed: bytes already reserved on each node id by other instances.

    Raises:
        NoNodeFits: the message says, per node, why it does not fit.
    """
    why = []
    fits = []
    for n in nodes:
        free = n.memory - placed.get(n.id, 0)
        missing = [f"{k}={v}" if v else k for k, v in labels.items()
                   if k not in n.labels or (v and n.labels[k] != v)]
        if not n.usable:
            why.append(f"{n.hostname}: {n.state}/{n.availability}")
        elif n.id in avoid:
            why.append(f"{n.hostname}: the instance failed there")
        elif missing:
            why.append(f"{n.hostname}: lacks label {', '.join(missing)}")
        elif free < need:
            why.append(f"{n.hostname}: {free >> 20} MiB free, {need >> 20} MiB needed")
        else:
            fits.append((free, n))
    if not fits:
        raise NoNodeFits("no node can take the instance: " + ("; ".join(why) or "the swarm has no nodes"))
    return min(fits, key=lambda fn: (-fn[0], placed.get(fn[1].id, 0), fn[1].hostname))[1]


# -- stacks -------------------------------------------------------------------------------
def _service(spec, constraint: str, reserve: int) -> dict:
    """A compose service from a :class:`sitectl.engine.RunSpec`: the same image, command,
    environment, labels, volumes and ports (``mode: host``, on the node) as ``docker run``."""
    svc: dict = {"image": spec.image}
    if spec.command:
        svc["command"] = list(spec.command)
    if spec.env:
        svc["environment"] = dict(spec.env)
    svc["labels"] = dict(spec.labels)
    if spec.volumes:
        svc["volumes"] = list(spec.volumes)
    svc["ports"] = [{"target": cp, "published": hp, "protocol": "tcp", "mode": "host"} for _, hp, cp in spec.publish]
    svc["networks"] = ["sites"]
    svc["deploy"] = {"placement": {"constraints": [constraint]},
                     "restart_policy": {"condition": "any", "delay": "1s"},
                     "resources": {"reservations": {"memory": str(reserve)}}}
    return svc


def instance_compose(spec: ClusterSpec, instance: int, node: NodeInfo, generation: int) -> dict:
    """The compose mapping of instance ``instance``'s stack placed on ``node``: one service per
    site (from the same :func:`sitectl.ops.lifecycle.run_spec` as ``sitectl up``) and the agent,
    all constrained to ``node``. ``generation`` counts placements: a new one starts the agent
    with an empty state volume."""
    target = spec.target(instance, node.addr)
    sites = spec.chosen_sites(target)
    constraint = f"node.id == {node.id}"
    services = {s.name: _service(run_spec(target, s), constraint, spec.reserve) for s in sites}
    for svc in services.values():
        # A new placement changes every service, so Swarm replaces the site tasks too: they
        # start from their images even when the new node is the old one.
        svc["labels"]["sitectl.generation"] = str(generation)
    volumes = {"state": {}}
    for s in services.values():
        for v in s.get("volumes", []):
            src = v.split(":", 1)[0]
            if not src.startswith(("/", ".")):
                volumes[src] = {}
    port = agent_port(instance)
    placement = {"sitectl.cluster": "instance", "sitectl.instance": str(instance), "sitectl.node_id": node.id,
                 "sitectl.node": node.hostname, "sitectl.node_addr": node.addr, "sitectl.generation": str(generation),
                 "sitectl.spec": spec.digest()}
    services["agent"] = {
        "image": spec.agent_image,
        "command": ["sitectl", "cluster", "agent", *spec.args(), "--instance", str(instance), "--host", node.addr,
                    "--namespace", stack_name(instance), "--generation", str(generation), "--port", str(port)],
        "environment": {"SITECTL_SNAPSHOTS_DIR": f"{STATE_DIR}/snapshots"},
        "volumes": ["/var/run/docker.sock:/var/run/docker.sock", f"state:{STATE_DIR}"],
        "ports": [{"target": port, "published": port, "protocol": "tcp", "mode": "host"}],
        "networks": ["sites"],
        "secrets": [{"source": "token", "target": "sitectl-token", "mode": 0o400}],
        "labels": {"sitectl.cluster": "agent", "sitectl.instance": str(instance)},
        "deploy": {"placement": {"constraints": [constraint]}, "labels": placement,
                   "restart_policy": {"condition": "any", "delay": "5s"}},
    }
    return {"version": "3.8", "services": services, "networks": {"sites": {"driver": "overlay"}},
            "volumes": volumes, "secrets": {"token": {"external": True, "name": spec.token_secret}}}


def pool_compose(spec: ClusterSpec, manager: NodeInfo, port: int = POOL_PORT) -> dict:
    """The compose mapping of the pool's stack: one service on ``manager`` with the manager's
    Docker socket (to place and deploy instances) and the token secret."""
    labels = [f"--node-label={k}={v}" if v else f"--node-label={k}" for k, v in spec.node_labels.items()]
    return {
        "version": "3.8",
        "services": {"pool": {
            "image": spec.agent_image,
            "command": ["sitectl", "cluster", "pool", *spec.args(), "--instances", str(spec.instances), *labels,
                        "--reserve-memory", str(spec.reserve), "--agent-image", spec.agent_image,
                        "--token-secret", spec.token_secret, "--start-timeout", f"{spec.start_timeout:g}",
                        "--port", str(port), "--public-url", f"http://{manager.addr}:{port}"],
            "volumes": ["/var/run/docker.sock:/var/run/docker.sock"],
            "ports": [{"target": port, "published": port, "protocol": "tcp", "mode": "host"}],
            "secrets": [{"source": "token", "target": "sitectl-token", "mode": 0o400}],
            "labels": {"sitectl.cluster": "pool"},
            "deploy": {"placement": {"constraints": [f"node.id == {manager.id}"]},
                       "restart_policy": {"condition": "any", "delay": "2s"}},
        }},
        "secrets": {"token": {"external": True, "name": spec.token_secret}},
    }


# -- the agent ------------------------------------------------------------------------------
def agent_engine(target: Target, sites: list[Site], namespace: str, adopted: Path | None) -> TaskEngine:
    """The agent's engine: sitectl's container names of ``sites`` mapped to their services."""
    return TaskEngine({target.container(s): f"{namespace}_{s.name}" for s in sites}, adopted=adopted)


def prepare_state_dir(generation: int) -> None:
    """Start the agent's state folder for placement ``generation``: empty it when it holds
    another placement's manifests (a node the instance ran on before)."""
    from sitectl.paths import state_dir

    root = state_dir().parent
    root.mkdir(parents=True, exist_ok=True)
    mark = root / "generation"
    if mark.exists() and mark.read_text().strip() == str(generation):
        return
    for p in root.iterdir():
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    mark.write_text(str(generation))


class AgentClient:
    """HTTP client of one instance's agent (its ``sitectl serve`` API).

    Args:
        base: ``http://node:port``; token: the fleet's token.
    """

    def __init__(self, base: str, token: str):
        self.base = base.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def status(self, timeout: float = 3.0) -> dict:
        """The agent's ``/api/status`` (raises ``requests.RequestException`` when it does not
        answer 200)."""
        r = self.session.get(f"{self.base}/api/status", timeout=timeout)
        r.raise_for_status()
        return r.json()

    def reset(self, instance: int, sites: list[str] | None, full: bool, timeout: float = 1800) -> dict:
        """``POST /api/reset``; returns the reset's result.

        Raises:
            SitectlError: the agent refused or the reset failed (its message).
        """
        try:
            r = self.session.post(f"{self.base}/api/reset", json={"instance": instance, "sites": sites, "full": full},
                                  timeout=timeout)
        except requests.RequestException as e:
            raise SitectlError(f"agent {self.base} did not answer: {type(e).__name__}") from None
        body = r.json() if r.headers.get("Content-Type", "").startswith("application/json") else {"error": r.text}
        if r.status_code != 200:
            raise SitectlError(f"agent {self.base}: HTTP {r.status_code}: {body.get('error') or body}")
        return body.get("result") or body


# -- the pool -------------------------------------------------------------------------------
@dataclass
class Placement:
    """Where an instance runs: node id, host name and address, and the placement count."""

    node_id: str
    node: str
    addr: str
    generation: int
    since: float = field(default_factory=time.monotonic)

    def as_dict(self) -> dict:
        return {"node_id": self.node_id, "node": self.node, "addr": self.addr, "generation": self.generation}


class ClusterPool(Pool):
    """The fleet's pool: instances 0..N-1 on Swarm nodes, reset through their agents.

    States of an instance, beyond :class:`sitectl.ops.pool.Pool`'s ``idle / resetting /
    failed``: ``starting`` (deployed; its agent has not yet reported it up, golden and
    verified) and ``unplaced`` (no node fits; retried every pass).

    Args:
        spec: the fleet; swarm: a manager; token: the fleet's token (the agents' too).
        clock: monotonic clock (s).
    """

    def __init__(self, spec: ClusterSpec, swarm: Swarm, token: str, clock=time.monotonic):
        self.spec = spec
        self.swarm = swarm
        self.token = token
        targets = [spec.target(k, "localhost") for k in range(spec.instances)]
        sites = {t.instance: [s.name for s in spec.chosen_sites(t) if s.mutable] for t in targets}
        super().__init__(targets, DockerEngine(), reset_fn=self._agent_reset, clock=clock, sites=sites)
        self.placements: dict[int, Placement] = {}
        self._fleet_state()
        for slot in self.slots.values():
            slot.state = "unplaced"
            slot.done.set()
        self._adopt_deployed()

    def _fleet_state(self) -> None:
        """The pool's bookkeeping beyond :class:`Pool`'s (shared with :class:`K8sPool`)."""
        self.failovers: list[dict] = []
        self.replacements: list[dict] = []
        self._misses: dict[int, float] = {}  # instance -> monotonic time of the first unanswered check
        self._avoid: dict[int, dict[str, float]] = {}  # instance -> {node id: avoided until}
        self._agents: dict[int, dict] = {}  # last /api/status row per instance
        self._nodes: list[NodeInfo] = []
        self._retried: dict[int, tuple[float, int]] = {}  # instance -> (last retry, retries in a row)
        self._dirty: set[int] = set()  # starting instances that may hold a worker's changes
        self._clients: dict[str, AgentClient] = {}
        self._boots: dict[int, tuple] = {}  # instance -> its agents' boot ids, last seen

    # -- agents -------------------------------------------------------------------------
    def agents(self, instance: int) -> list[AgentClient]:
        """The agents of ``instance``: on Swarm one, beside all its sites."""
        p = self.placements[instance]
        return [self._client(f"http://{p.addr}:{agent_port(instance)}")]

    def _client(self, base: str) -> AgentClient:
        if base not in self._clients:
            self._clients[base] = AgentClient(base, self.token)
        return self._clients[base]

    def _agent_reset(self, target: Target, sites, full, engine) -> dict:
        """Reset through every agent of the instance at once; their site rows combined.

        Raises:
            SitectlError: any agent failed (each failure named).
        """
        import concurrent.futures

        agents = self.agents(target.instance)
        if not agents:
            return {"sites": [], "logins": []}
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(agents)) as ex:
            futs = [ex.submit(a.reset, target.instance, None if len(agents) > 1 else sites, full) for a in agents]
        errors = [str(f.exception()) for f in futs if f.exception() is not None]
        if errors:
            raise SitectlError("; ".join(errors))
        res = {"sites": [], "logins": []}
        for f in futs:
            r = f.result()
            res["sites"] += r.get("sites", [])
            res["logins"] += r.get("logins", [])
        return res

    def _agent_rows(self, instance: int) -> dict | None:
        """The instance as its agents report it: ``{"state": idle|resetting|failed|...,
        "sites": {site: health}}``; None when one of them does not answer."""
        rows, boots = [], []
        for a in self.agents(instance):
            try:
                st = a.status()
                rows.append(st["instances"][0])
                boots.append(st.get("boot", ""))
            except (requests.RequestException, ValueError, KeyError, IndexError):
                return None
        if not rows:  # no site of the fleet needs an agent
            return {"state": "idle", "sites": {}, "health_age_s": None, "boots": ()}
        states = {r.get("state") for r in rows}
        sites: dict = {}
        for r in rows:
            sites.update(r.get("sites") or {})
        return {"state": "idle" if states == {"idle"} else ",".join(sorted(map(str, states))), "sites": sites,
                "health_age_s": max((r.get("health_age_s") or 0) for r in rows) if rows else None,
                "boots": tuple(boots)}

    def _begin(self, slot) -> bool:
        if slot.state in ("starting", "unplaced"):
            return False  # being (re)placed: it comes back golden
        return super()._begin(slot)

    # -- placement ------------------------------------------------------------------------
    def _adopt_deployed(self) -> None:
        """Take over the instances an earlier pool deployed (their agents' service labels say
        where); remove the stacks of instances beyond N."""
        for name in self.swarm.stacks():
            m = re.fullmatch(r"sitectl-i(\d+)", name)
            if not m:
                continue
            k = int(m.group(1))
            if k >= self.spec.instances:
                self.swarm.remove_stack(name)
                continue
            lab = self.swarm.service_labels(name).get(f"{name}_agent", {})
            if lab.get("sitectl.node_id"):
                self.placements[k] = Placement(lab["sitectl.node_id"], lab.get("sitectl.node", ""),
                                               lab.get("sitectl.node_addr", ""), int(lab.get("sitectl.generation", "0")))
                if lab.get("sitectl.spec") != self.spec.digest():
                    continue  # made from another spec (sites, seed, image, token): deployed again
                self.slots[k].target = self.spec.target(k, self.placements[k].addr)
                self.slots[k].state = "starting"
                self._dirty.add(k)  # it may have been leased and changed: reset before leasing it

    def _reserved(self, nodes: list[NodeInfo], but: int) -> dict[str, int]:
        need = self.spec.need(self.slots[but].target)
        out: dict[str, int] = {}
        for k, p in self.placements.items():
            if k != but:
                out[p.node_id] = out.get(p.node_id, 0) + need
        return out

    def place(self, instance: int, why: str) -> Placement | None:
        """Deploy ``instance`` on the best node (:func:`choose_node`); None when none fits
        (the slot says why)."""
        slot = self.slots[instance]
        need = self.spec.need(slot.target)
        now = self.clock()
        avoid = {n for n, until in self._avoid.get(instance, {}).items() if until > now}
        reserved = self._reserved(self._nodes, instance)
        try:
            try:
                node = choose_node(self._nodes, reserved, need, self.spec.node_labels, avoid)
            except NoNodeFits:
                if not avoid:
                    raise
                node = choose_node(self._nodes, reserved, need, self.spec.node_labels)  # better than nowhere
        except NoNodeFits as e:
            with self._lock:
                slot.state, slot.error = "unplaced", str(e)
            return None
        old = self.placements.get(instance)
        gen = (old.generation if old else 0) + 1
        self.swarm.deploy(stack_name(instance), instance_compose(self.spec, instance, node, gen))
        p = Placement(node.id, node.hostname, node.addr, gen, since=self.clock())
        with self._lock:
            self.placements[instance] = p
            slot.target = self.spec.target(instance, node.addr)
            slot.state, slot.error, slot.again = "starting", "", False
            slot.epoch += 1
            self._dirty.discard(instance)  # a new placement starts from the images, golden
            self._misses.pop(instance, None)
            self._agents.pop(instance, None)
            if old is not None:
                self.replacements.append({"instance": instance, "from": old.node, "to": node.hostname, "why": why,
                                          "at": time.time()})
        return p

    def _lost(self, instance: int, why: str) -> None:
        """``instance`` stopped serving: mark it starting and move its lease to an idle
        instance, if one is free (else the lease waits for this instance's replacement)."""
        ready = {n.id for n in self._nodes if n.state == "ready" and n.availability != "drain"}
        with self._lock:
            slot = self.slots[instance]
            if slot.state in ("starting", "unplaced"):
                slot.error = why
                return  # lost already: its lease (if any) was moved or waits already
            if slot.lease is not None or slot.state != "idle" or slot.again:
                self._dirty.add(instance)  # when it answers again, it is reset before anyone leases it
            slot.state, slot.error, slot.again = "starting", why, False
            slot.epoch += 1  # a reset still running there applies nothing
            slot.done.set()
            lease = slot.lease
            if lease is None:
                return
            for k, other in self.slots.items():
                p = self.placements.get(k)
                if (other.state == "idle" and other.lease is None and k not in self._misses
                        and p is not None and (p.node_id in ready or not self._nodes)):
                    slot.lease = None
                    other.lease = lease
                    lease.instance = other.target.instance
                    lease.failovers += 1
                    self.failovers.append({"lease": lease.client, "from": instance, "to": lease.instance,
                                           "why": why, "at": time.time()})
                    return
            self.failovers.append({"lease": lease.client, "from": instance, "to": instance,
                                   "why": why + "; no idle instance: the lease waits for the replacement",
                                   "at": time.time()})

    def reconcile(self) -> None:
        """One pass: place what is unplaced; notice lost nodes and silent agents; mark
        instances whose agent reports them up and verified as idle."""
        self._nodes = self.swarm.nodes()
        by_id = {n.id: n for n in self._nodes}
        now = self.clock()
        for k, slot in self.slots.items():
            try:
                self._reconcile_one(k, slot, by_id, now)
            except SitectlError as e:  # one instance's trouble (a refused deploy) does not stop the others
                slot.error = str(e)

    def _reconcile_one(self, k: int, slot, by_id: dict, now: float) -> None:
        """One instance's part of :meth:`reconcile`."""
        p = self.placements.get(k)
        if p is None or slot.state == "unplaced":
            self.place(k, "not placed")
            return
        node = by_id.get(p.node_id)
        if node is None or node.state == "down" or node.availability == "drain":
            # Its tasks are pinned there: they cannot run anywhere else. (Other states, such as
            # "unknown" right after a manager restarts, wait for the agent's own silence.)
            what = "gone" if node is None else ("drained" if node.availability == "drain" else node.state)
            self._lost(k, f"node {p.node} is {what}")
            self._avoid.setdefault(k, {})[p.node_id] = now + AVOID_FOR
            self.place(k, f"node {p.node} {what}")
            return
        row = self._agent_rows(k)
        if row is not None:
            self._agents[k] = row
            self._misses.pop(k, None)
        if row is not None and self._restarted(k, row) and slot.state not in ("starting", "unplaced"):
            self._lost(k, f"its agent on {p.node} restarted")  # it may have reset under a lease
        if slot.state == "starting":
            if row is not None:
                self._back(k, slot, row)
            if slot.state != "starting":
                return
            if now - p.since > self.spec.start_timeout:
                self._avoid.setdefault(k, {})[p.node_id] = now + AVOID_FOR
                self.place(k, f"not up within {self.spec.start_timeout:g} s on {p.node}: {self._task_errors(k)}")
            else:
                errs = self._task_errors(k)
                if errs:
                    slot.error = errs
            return
        if row is None:
            first = self._misses.setdefault(k, now)
            if now - first >= FAILOVER_AFTER and slot.state != "resetting":
                self._lost(k, f"agent on {p.node} did not answer for {now - first:.0f} s")
                p.since = now  # it has START_TIMEOUT to come back before it is placed elsewhere
        else:
            self._retry_failed(k, slot, now)

    def _back(self, k: int, slot, row: dict) -> None:
        """``k``'s agents answer again: idle, or first a reset when it may hold a worker's
        changes (it was lost while leased or resetting, a new pool found it) or its agents
        report their last reset failed."""
        if row["state"] != "idle" and "failed" not in row["state"]:
            return  # still resetting there
        with self._lock:
            if slot.state != "starting":
                return
            slot.error, slot.again = "", False
            if "failed" in row["state"]:
                self._dirty.add(k)
            if k not in self._dirty:
                slot.state = "idle"
                return
            self._dirty.discard(k)
            slot.epoch += 1  # _begin refuses a starting instance: switch it by hand
            slot.state = "resetting"
            slot.done.clear()
        self._spawn(slot, None, False, "back after it was lost: reset before anyone leases it")

    def _restarted(self, k: int, row: dict) -> bool:
        """True when an agent of ``k`` answers with another boot id than last time (it was
        restarted; its start-up may have reset the instance under a lease)."""
        boots = row.get("boots")
        seen = self._boots.get(k)
        self._boots[k] = boots
        return bool(seen) and bool(boots) and seen != boots

    def _retry_failed(self, k: int, slot, now: float) -> None:
        """Reset an instance whose last reset failed again, while its agents answer: after
        :data:`RETRY_FAILED_EVERY` s, doubling per failure in a row (at most 5 min)."""
        if slot.state == "idle":
            self._retried.pop(k, None)
        if slot.state != "failed":
            return
        last, n = self._retried.setdefault(k, (now, 0))  # counted from the first failure seen
        if now - last >= min(300.0, RETRY_FAILED_EVERY * 2 ** n):
            self._retried[k] = (now, n + 1)
            self.start_reset(k, reason="retry after a failed reset")

    def _task_errors(self, instance: int) -> str:
        try:
            errs = {f"{t['service']}: {t['error']}" for t in self.swarm.tasks(stack_name(instance)) if t["error"]}
        except SitectlError:
            return ""
        return "; ".join(sorted(errs))[:500]

    def run_reconciler(self, every: float = RECONCILE_EVERY) -> threading.Thread:
        """:meth:`reconcile` every ``every`` seconds in a daemon thread until :meth:`stop`
        (an error in one pass is kept in ``last_error`` and the next pass runs)."""
        self.last_error = ""

        def loop():
            while not self._stop.is_set():
                try:
                    self.reconcile()
                    self.last_error = ""
                except Exception as e:  # noqa: BLE001 - the loop must outlive one bad pass
                    self.last_error = f"{type(e).__name__}: {e}"
                self._stop.wait(every)
        t = threading.Thread(target=loop, daemon=True, name="reconcile")
        t.start()
        return t

    # -- status -------------------------------------------------------------------------
    def status(self, health: bool = False) -> dict:
        """:meth:`Pool.status` plus, per instance, ``placement`` and the agent's per-site
        ``sites`` health (as of the last reconcile pass); and ``nodes``, ``failovers``,
        ``replacements``."""
        now = self.clock()
        with self._lock:
            rows = []
            for n, s in self.slots.items():
                p = self.placements.get(n)
                agent = self._agents.get(n) or {}
                rows.append({"instance": n, "state": s.state, "lease": s.lease.as_dict(now) if s.lease else None,
                             "last_reset": s.last_reset, "resets": s.resets, "error": s.error,
                             "placement": p.as_dict() if p else None,
                             "urls": s.target.urls() if p else {},
                             "agents": [a.base for a in self.agents(n)] if p else [],
                             "sites": agent.get("sites", {}), "health_age_s": agent.get("health_age_s")})
        return {"instances": rows, "nodes": [n.as_dict() for n in self._nodes], "failovers": list(self.failovers),
                "replacements": list(self.replacements), "last_error": getattr(self, "last_error", "")}


class K8sPool(ClusterPool):
    """The fleet's pool on Kubernetes (``sitectl cluster pool --k8s``, rendered by
    ``sitectl k8s render``): Kubernetes places and restarts the pods, so there is no placement
    here. Each stateful site of an instance has its own agent (a sidecar), reached at its
    Service; an instance is idle when all of them report it so. An instance whose agents stop
    answering for :data:`FAILOVER_AFTER` seconds loses its lease to an idle instance and is
    leased again once they all answer idle (the restarted pod's agent took golden and passed
    ``verify --deep``)."""

    def __init__(self, spec: ClusterSpec, token: str, namespace: str, clock=time.monotonic):
        from sitectl.fleet.k8s import instance_namespace, instance_target

        self.spec, self.swarm, self.token, self.namespace = spec, None, token, namespace
        targets = [instance_target(spec, namespace, k) for k in range(spec.instances)]
        sites = {t.instance: [s.name for s in spec.chosen_sites(t) if s.mutable] for t in targets}
        Pool.__init__(self, targets, DockerEngine(), reset_fn=self._agent_reset, clock=clock, sites=sites)
        self.placements = {t.instance: Placement("kubernetes", "kubernetes", instance_namespace(namespace, t.instance), 1)
                           for t in targets}
        self._fleet_state()
        self._dirty = set(range(spec.instances))  # a pool (re)start: reset each before leasing it
        for slot in self.slots.values():
            slot.state = "starting"

    def agents(self, instance: int) -> list[AgentClient]:
        from sitectl.fleet.k8s import instance_namespace, service_name

        t = self.slots[instance].target
        ns = instance_namespace(self.namespace, instance)
        return [self._client(f"http://{service_name(s)}.{ns}.svc.cluster.local:{agent_port(instance)}")
                for s in self.spec.chosen_sites(t) if s.stores or s.post_start]

    def reconcile(self) -> None:
        now = self.clock()
        for k, slot in self.slots.items():
            row = self._agent_rows(k)
            if row is not None:
                self._agents[k] = row
                self._misses.pop(k, None)
                if self._restarted(k, row) and slot.state not in ("starting", "unplaced"):
                    self._lost(k, "its agents restarted")
                if slot.state == "starting":
                    self._back(k, slot, row)
                else:
                    self._retry_failed(k, slot, now)
                continue
            first = self._misses.setdefault(k, now)
            if slot.state not in ("starting", "resetting") and now - first >= FAILOVER_AFTER:
                self._lost(k, f"its agents did not answer for {now - first:.0f} s")


# -- images ---------------------------------------------------------------------------------
def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def agent_source_hash() -> str:
    """SHA-256 (16 hex) of what the agent image holds: sitectl's code, pyproject, the stack
    files and health checks."""
    root = _repo_root()
    h = hashlib.sha256()
    for sub in ("sitectl", "stacks", "healthchecks", "pyproject.toml", "README.md"):
        p = root / sub
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts
                                              and not f.name.endswith(".pyc"))
        for f in files:
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build_agent_image(engine: Engine, reporter: Reporter = QUIET, tag: str = AGENT_IMAGE) -> bool:
    """Build the agent image (stacks/agent/Dockerfile) unless it is current: sitectl and its
    Python dependencies as wheels (``pip wheel``, built here), Debian's python3 and docker CLI,
    the stack files. True when it was built.

    Raises:
        EngineError: the build failed; SitectlError: ``pip wheel`` failed.
    """
    from sitectl.sites.containers import SOURCE_LABEL

    want = agent_source_hash()
    if engine.image_exists(tag) and engine.image_label(tag, SOURCE_LABEL) == want:
        return False
    if not engine.image_exists(AGENT_BASE):
        from sitectl.errors import ImageMissing

        raise ImageMissing(f"the agent image builds on {AGENT_BASE}: build it first (`sitectl build`)")
    root = _repo_root()
    with tempfile.TemporaryDirectory(prefix="sitectl-agent-") as tmp:
        ctx = Path(tmp)
        reporter.step("build", "pip wheel sitectl and its dependencies (for the agent image)")
        src = ctx / "src"
        src.mkdir()
        for sub in ("sitectl", "pyproject.toml", "README.md"):
            p = root / sub
            (shutil.copytree(p, src / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
             if p.is_dir() else shutil.copy2(p, src / sub))
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(ctx / "wheels"), str(src)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SitectlError(f"pip wheel for the agent image failed: {r.stderr.strip()[-1500:]}")
        shutil.rmtree(src)
        for sub in ("stacks", "healthchecks"):
            shutil.copytree(root / sub, ctx / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copy2(root / "stacks" / "agent" / "Dockerfile", ctx / "Dockerfile")
        reporter.step("build", f"building {tag} (docker build, legacy builder)")
        engine.build(tag, ctx, ctx / "Dockerfile", {}, labels={SOURCE_LABEL: want})
    return True


def fleet_images(spec: ClusterSpec) -> list[str]:
    """Every image a node of the fleet needs: the sites' images and the agent's."""
    t = spec.target(0, "localhost")
    return sorted({t.image(s) for s in spec.chosen_sites(t)} | {spec.agent_image})


def push_images(spec: ClusterSpec, source: Engine, nodes: list[str], reporter: Reporter = QUIET,
                build: bool = True) -> list[dict]:
    """Make the fleet's images present on every node engine in ``nodes`` (URLs such as
    ``tcp://10.0.0.5:2375`` or ``ssh://root@node``): built here when missing (``build``),
    then ``docker save`` streamed into each node's ``docker load``. No registry.

    Returns:
        ``[{"node", "copied": [tag], "seconds"}]``.

    Raises:
        ImageMissing, EngineError.
    """
    from sitectl.engine.swarm import engine_at
    from sitectl.sites.containers import ensure_images

    t = spec.target(0, "localhost")
    if build:
        ensure_images(t, spec.chosen_sites(t), source, reporter)
        build_agent_image(source, reporter, spec.agent_image)
    tags = fleet_images(spec)
    t0 = time.monotonic()
    engines = []
    for url in nodes:
        dst = engine_at(url)
        dst.ping()
        engines.append(dst)
    reporter.step("images", f"docker save | docker load into {len(nodes)} node(s): {', '.join(tags)}")
    done: dict[int, float] = {}

    def finished(i: int, copied: list[str]) -> None:
        done[i] = round(time.monotonic() - t0, 1)
        reporter.step("images", f"{nodes[i]}: {len(copied)} image(s) copied, {len(tags) - len(copied)} present")

    copied = copy_images(source, engines, tags, on_node=finished)
    return [{"node": url, "copied": copied[i], "seconds": done.get(i)} for i, url in enumerate(nodes)]


# -- the CLI's operations ---------------------------------------------------------------------
def manager_node(swarm: Swarm) -> NodeInfo:
    """This engine's node, which must be a Swarm manager.

    Raises:
        UsageError: the engine is in no swarm, or is a worker.
    """
    if not swarm.is_manager():
        raise UsageError("this Docker engine is not a Swarm manager: point DOCKER_HOST (or --docker-host) at a "
                         "manager, or run `docker swarm init` first")
    me = swarm.node_id()
    return next(n for n in swarm.nodes() if n.id == me)


def deploy(swarm: Swarm, spec: ClusterSpec, token: str, reporter: Reporter = QUIET, wait: float = 900.0,
           port: int = POOL_PORT) -> dict:
    """Deploy the fleet: the token secret, then the pool's stack on this manager; the pool
    places and deploys the N instance stacks. Waits up to ``wait`` seconds (0: not at all) for
    N idle instances.

    Returns:
        The pool's status (:meth:`ClusterPool.status`) and ``pool_url``.

    Raises:
        UsageError: not a manager; SitectlError: not ready in time (the status says why).
    """
    me = manager_node(swarm)
    swarm.ensure_secret(spec.token_secret, token)
    reporter.step("cluster", f"deploying stack {POOL_STACK} on {me.hostname} ({me.addr})")
    swarm.deploy(POOL_STACK, pool_compose(spec, me, port))
    url = f"http://{me.addr}:{port}"
    if wait <= 0:
        return {"pool_url": url}
    deadline = time.monotonic() + wait
    last = ""
    st: dict = {}
    while time.monotonic() < deadline:
        try:
            st = pool_status(url, token)
        except SitectlError:
            time.sleep(2)
            continue
        rows = st["instances"]
        summary = ", ".join(f"i{r['instance']}:{r['state']}@{(r['placement'] or {}).get('node', '-')}" for r in rows)
        if summary != last:
            reporter.step("cluster", summary)
            last = summary
        if len(rows) == spec.instances and all(r["state"] == "idle" for r in rows):
            return {"pool_url": url, **st}
        time.sleep(2)
    bad = [f"instance {r['instance']}: {r['state']} {r['error']}".strip() for r in st.get("instances", [])
           if r["state"] != "idle"]
    raise SitectlError(f"the fleet was not ready within {wait:g} s: " + ("; ".join(bad) or f"the pool at {url} did not answer")
                       + " (see `sitectl cluster status`)")


def pool_status(url: str, token: str, timeout: float = 10) -> dict:
    """The pool's ``/api/status``.

    Raises:
        SitectlError: it did not answer, or refused the token.
    """
    try:
        r = requests.get(f"{url}/api/status", headers={"Authorization": f"Bearer {token}"}, timeout=timeout)
    except requests.RequestException as e:
        raise SitectlError(f"the pool at {url} did not answer ({type(e).__name__}); is the fleet deployed "
                           "(`sitectl cluster deploy`)?") from None
    if r.status_code == 401:
        raise SitectlError(f"the pool at {url} refused the token (give the --token-file `cluster deploy` used)")
    if r.status_code != 200:
        raise SitectlError(f"the pool at {url}: HTTP {r.status_code}")
    return r.json()


def remove(swarm: Swarm, reporter: Reporter = QUIET, wait: float = 60.0) -> list[str]:
    """Remove the pool's stack and every instance stack (``docker stack rm``), then the token
    secrets once no service uses them (waiting up to ``wait`` s); returns what was removed.
    The instances' state volumes stay on their nodes (``docker volume prune`` there)."""
    gone = []
    for name in swarm.stacks():
        if name == POOL_STACK or re.fullmatch(r"sitectl-i\d+", name):
            reporter.step("cluster", f"docker stack rm {name}")
            swarm.remove_stack(name)
            gone.append(name)
    deadline = time.monotonic() + wait
    for secret in swarm.secrets(prefix="sitectl-token-"):
        while True:
            try:
                swarm.remove_secret(secret)
                gone.append(secret)
                break
            except SitectlError as e:
                if time.monotonic() > deadline:  # still in use by a service being removed
                    reporter.step("cluster", f"secret {secret} left: {e}")
                    break
                time.sleep(1)
    return gone


def read_token(path: Path) -> str:
    """The token in ``path`` (a Swarm secret file or the CLI's token file).

    Raises:
        UsageError: missing or empty.
    """
    try:
        tok = path.read_text().strip()
    except OSError as e:
        raise UsageError(f"{path}: cannot read the token: {e.strerror}") from None
    if not tok:
        raise UsageError(f"{path}: the token file is empty")
    return tok


# -- the processes inside the swarm -----------------------------------------------------------
def run_agent(spec: ClusterSpec, instance: int, host: str, namespace: str, generation: int, port: int, token: str,
              reporter: Reporter = QUIET, engine_kind: str = "swarm", site_hosts: bool = False) -> None:
    """The reset agent of ``instance`` (``sitectl cluster agent``, inside its stack): bring
    the instance's site tasks up as ``sitectl up`` does (post-start steps, health probes, golden
    snapshot), check them with ``verify --deep``, then serve the reset and lease API of
    ``sitectl serve`` for this one instance on ``port`` until stopped.

    ``engine_kind``: ``swarm`` (the sites are Swarm tasks on this node,
    :class:`sitectl.engine.swarm.TaskEngine`) or ``pod`` (a sidecar sharing the site's process
    namespace, :class:`sitectl.engine.pod.PodEngine`; one site).

    Raises:
        VerifyFailed: the instance did not pass verify (the agent exits; Swarm or the kubelet
            starts it again).
        UsageError: ``pod`` with other than one site.
        Any error of ``up``.
    """
    from sitectl import server as srvmod
    from sitectl.errors import VerifyFailed
    from sitectl.ops import checks
    from sitectl.ops.lifecycle import up
    from sitectl.paths import state_dir

    prepare_state_dir(generation)
    target = spec.target(instance, host, site_hosts=site_hosts)
    sites = spec.chosen_sites(target)
    adopted = state_dir().parent / "adopted.json"
    if engine_kind == "pod":
        from sitectl.engine.pod import PodEngine

        if len(sites) != 1:
            raise UsageError("--engine pod: give the one site of this pod (--sites NAME)")
        engine = PodEngine({target.container(s): {"image": target.image(s), "labels": target.labels(s)} for s in sites},
                           adopted=adopted, site=sites[0].name)
    else:
        engine = agent_engine(target, sites, namespace, adopted)
    engine.ping()
    check_images = engine_kind != "pod"
    reporter.step("agent", f"instance {instance} on {host}: bringing up {', '.join(s.name for s in sites)}")
    up(target, sites, engine, reporter, build=False, check_images=check_images)
    rep = checks.verify_report(target, sites, engine, deep=True)
    if not rep["ok"] and any(not st["ok"] for st in rep.get("state", [])):
        # The state is not golden: an agent that restarted while a worker had changed the
        # instance (a changed password can fail a login probe too). Reset, check again. The
        # pool sees the agent's new boot id and moves the instance's lease.
        from sitectl.ops.reset import reset

        reporter.step("agent", "state differs from golden after a restart: resetting")
        reset(target, sites, engine, reporter=reporter)
        rep = checks.verify_report(target, sites, engine, deep=True)
    if not rep["ok"]:
        bad = [f"{r['site']}/{r['probe']}: {r['detail']}" for r in rep["results"] if not r["ok"]]
        bad += [f"{s['site']}/{s['store']}: differs from golden" for s in rep.get("state", []) if not s["ok"]]
        raise VerifyFailed("instance did not pass verify --deep: " + "; ".join(bad))
    reporter.step("agent", f"instance {instance} verified; serving on :{port}")

    def agent_reset(t: Target, names, full, eng) -> dict:
        # A site container replaced since (Swarm started a new task, the kubelet restarted it)
        # is new to sitectl: bring it up first (post-start steps, golden from the fresh image).
        if any(eng.replaced(t.container(s)) for s in sites):  # one cheap look per site
            reporter.step("agent", "a site container was replaced: bringing it up before the reset")
            up(t, sites, eng, reporter, build=False, check_images=check_images)
        return default_reset(t, names, full, eng)

    pool = Pool([target], engine, reset_fn=agent_reset, sites={instance: [s.name for s in sites if s.mutable]})
    srv = srvmod.make_server(pool, token, ("0.0.0.0", port), public_url=f"http://{host}:{port}")
    srvmod.serve(srv)


def run_pool(spec: ClusterSpec, token: str, port: int, public_url: str, reporter: Reporter = QUIET,
             k8s_namespace: str | None = None) -> None:
    """The fleet's pool (``sitectl cluster pool``, on a Swarm manager, or in Kubernetes with
    ``k8s_namespace``): place and heal the N instances (:class:`ClusterPool`,
    :class:`K8sPool`) and serve leases and resets on ``port`` until stopped."""
    from sitectl import server as srvmod

    pool = K8sPool(spec, token, k8s_namespace) if k8s_namespace else ClusterPool(spec, Swarm(DockerEngine()), token)
    srv = srvmod.make_server(pool, token, ("0.0.0.0", port), public_url=public_url)
    pool.run_reconciler()
    reporter.step("pool", f"{spec.instances} instance(s) of {spec.stack}; serving on {public_url}")
    srvmod.serve(srv)
