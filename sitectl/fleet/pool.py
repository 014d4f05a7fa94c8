"""The fleet's pool: instances 0..N-1 leased and reset through their agents, placed on Swarm
nodes and healed when a node or an agent is lost (:class:`ClusterPool`), or run by Kubernetes
(:class:`K8sPool`); the healing timings; :func:`make_pool`, the pool ``sitectl cluster pool``
serves (the face makes and runs the server: :mod:`sitectl.cli.cluster`).
"""
from __future__ import annotations

import concurrent.futures
import re
import threading
import time
from dataclasses import dataclass, field

import requests

from sitectl.engine import DockerEngine
from sitectl.engine.swarm import NodeInfo, Swarm
from sitectl.errors import NoNodeFits, SitectlError, UsageError
from sitectl.fleet.agent import AgentClient
from sitectl.fleet.compose import instance_compose
from sitectl.fleet.naming import agent_port, instance_namespace, instance_target, service_name, stack_name
from sitectl.fleet.placement import choose_node
from sitectl.fleet.spec import ClusterSpec
from sitectl.ops.pool import Pool
from sitectl.stack.target import Target

#: Seconds between two passes of the pool's reconcile loop.
RECONCILE_EVERY = 2.0
#: Seconds an agent may not answer before its instance's leases fail over.
FAILOVER_AFTER = 10.0
#: Seconds before an instance whose reset failed is reset again (doubling per failure in a row).
RETRY_FAILED_EVERY = 15.0
#: Seconds a node an instance was lost or failed on is not chosen for it again (unless no
#: other node fits).
AVOID_FOR = 600.0


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

    RECORDS_LEASES = False  # its instances' state folders are on other nodes

    def __init__(self, spec: ClusterSpec, swarm: Swarm, token: str, clock=time.monotonic):
        self.spec = spec
        self.swarm = swarm
        self.token = token
        targets = [spec.target(k, "localhost") for k in range(spec.instances)]
        sites = {t.instance: [s.name for s in t.stack.reset_sites()] for t in targets}
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

    def checkpoint(self, lease_id: str, op: str, name: str | None = None) -> dict:
        """Checkpoints are not kept through the cluster pool (its instances' containers and
        state folders are on other nodes, reached through their agents, which keep none yet).

        Raises:
            LeaseError: unknown or ended lease. UsageError: always otherwise (400).
        """
        self.lease(lease_id)
        raise UsageError("checkpoints are not kept through the cluster pool yet (docs/checkpoints.md): run "
                         "`sitectl checkpoint` on the instance's node, or `sitectl serve` there")

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
        self.spec, self.swarm, self.token, self.namespace = spec, None, token, namespace
        targets = [instance_target(spec, namespace, k) for k in range(spec.instances)]
        sites = {t.instance: [s.name for s in t.stack.reset_sites()] for t in targets}
        Pool.__init__(self, targets, DockerEngine(), reset_fn=self._agent_reset, clock=clock, sites=sites)
        self.placements = {t.instance: Placement("kubernetes", "kubernetes", instance_namespace(namespace, t.instance), 1)
                           for t in targets}
        self._fleet_state()
        self._dirty = set(range(spec.instances))  # a pool (re)start: reset each before leasing it
        for slot in self.slots.values():
            slot.state = "starting"

    def agents(self, instance: int) -> list[AgentClient]:
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


def make_pool(spec: ClusterSpec, token: str, k8s_namespace: str | None = None) -> ClusterPool:
    """The fleet's pool (``sitectl cluster pool``, on a Swarm manager, or in Kubernetes with
    ``k8s_namespace``): it places and heals the N instances (:class:`ClusterPool`,
    :class:`K8sPool`) once its reconciler runs (:meth:`ClusterPool.run_reconciler`), and the
    face serves leases and resets from it on its port until stopped."""
    return K8sPool(spec, token, k8s_namespace) if k8s_namespace else ClusterPool(spec, Swarm(DockerEngine()), token)
