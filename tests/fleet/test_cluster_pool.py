"""The cluster pool's rules when events come in an awkward order: a node lost while its
instance is leased or resetting, an agent that goes silent and comes back, a pool restarted
over a running fleet, a node in an unclear state.

Mocked, and why: the Swarm manager (:class:`FakeSwarm`, nodes and stacks in memory) and the
agents (their status rows and resets, set by each test) are replaced by doubles, because
these orders of events cannot be produced on demand with real nodes. Everything else is the
real :class:`sitectl.fleet.pool.ClusterPool` with its real locks and reset threads, and a
clock the test moves. tests/fleet/test_cluster.py runs the real fleet on three real nodes.
"""
from __future__ import annotations

import threading

import pytest

from sitectl.engine.swarm import NodeInfo
from sitectl.errors import SitectlError
from sitectl.fleet.compose import instance_compose
from sitectl.fleet.placement import choose_node
from sitectl.fleet.pool import AVOID_FOR, FAILOVER_AFTER, RETRY_FAILED_EVERY, ClusterPool
from sitectl.fleet.spec import ClusterSpec

GiB = 1 << 30


class FakeSwarm:
    """A manager's nodes and stacks, in memory."""

    def __init__(self, n: int = 3):
        self.nodes_ = {f"id{i}": NodeInfo(f"id{i}", f"n{i}", f"10.0.0.{i}", "worker", "ready", "active", {}, 4 * GiB, 2)
                       for i in range(1, n + 1)}
        self.deployed: dict[str, dict] = {}

    def set(self, node: str, **kw) -> None:
        old = self.nodes_[node]
        self.nodes_[node] = NodeInfo(**{**old.as_dict(), **kw})

    def nodes(self):
        return list(self.nodes_.values())

    def deploy(self, name, compose):
        self.deployed[name] = compose

    def stacks(self):
        return sorted(self.deployed)

    def remove_stack(self, name):
        self.deployed.pop(name, None)

    def service_labels(self, stack):
        return {f"{stack}_agent": self.deployed[stack]["services"]["agent"]["deploy"]["labels"]}

    def tasks(self, stack):
        return []


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


class Pool(ClusterPool):
    """The real pool; only the two agent calls go to the test's doubles."""

    def __init__(self, swarm, clock, n=3):
        self.rows: dict[int, dict | None] = {}
        self.resets: list[tuple[int, str]] = []
        self.gate: dict[int, threading.Event] = {}
        self.fail: set[int] = set()
        spec = ClusterSpec(sites=("reddit",), instances=n, token_secret="sitectl-token-x")
        super().__init__(spec, swarm, "token", clock=clock)

    def _agent_rows(self, k):
        return self.rows.get(k)

    def _agent_reset(self, target, sites, full, engine):
        k = target.instance
        self.resets.append((k, "reset"))
        gate = self.gate.get(k)
        if gate is not None:
            gate.wait(10)
        if k in self.fail:
            raise SitectlError(f"agent of instance {k} did not answer")
        return {"sites": [{"site": "reddit", "method": "delta"}], "logins": []}


IDLE = {"state": "idle", "sites": {"reddit": {"healthy": True}}}


def up_pool(n=3):
    swarm, clock = FakeSwarm(), Clock()
    pool = Pool(swarm, clock, n)
    pool.reconcile()  # places every instance
    for k in range(n):
        pool.rows[k] = IDLE
    pool.reconcile()  # agents report idle
    assert [s.state for s in pool.slots.values()] == ["idle"] * n
    return pool, swarm, clock


def node_of(pool, k):
    return pool.placements[k].node_id


def test_instances_spread_one_per_node():
    pool, swarm, _ = up_pool()
    assert sorted(node_of(pool, k) for k in range(3)) == ["id1", "id2", "id3"]
    assert set(swarm.deployed) == {"sitectl-i0", "sitectl-i1", "sitectl-i2"}


def test_lease_moves_off_a_down_node_to_an_idle_instance_on_a_ready_node():
    pool, swarm, clock = up_pool()
    lease = pool.acquire("w1")
    lost = lease.instance
    dead = node_of(pool, lost)
    swarm.set(dead, state="down")
    pool.rows[lost] = None
    clock.t += 2
    pool.reconcile()
    assert lease.instance != lost and lease.failovers == 1
    assert pool.slots[lease.instance].lease is lease and pool.slots[lost].lease is None
    # The lost instance went to another node, generation 2, and starts from its images.
    p = pool.placements[lost]
    assert p.node_id != dead and p.generation == 2 and pool.slots[lost].state == "starting"
    assert pool.replacements[0]["instance"] == lost


def test_lease_never_moves_to_an_instance_on_the_same_dead_node():
    swarm, clock = FakeSwarm(2), Clock()
    pool = Pool(swarm, clock, 3)  # three instances, two nodes: two share one
    pool.reconcile()
    for k in range(3):
        pool.rows[k] = IDLE
    pool.reconcile()
    by_node: dict[str, list[int]] = {}
    for k in range(3):
        by_node.setdefault(node_of(pool, k), []).append(k)
    shared_node, pair = next((n, ks) for n, ks in by_node.items() if len(ks) == 2)
    other = next(k for k in range(3) if k not in pair)
    leases = {}
    for _ in range(3):
        lz = pool.acquire("w")
        leases[lz.instance] = lz
    pool.release(leases[pair[1]].id)  # the pair's second instance becomes free (after its reset)
    pool.wait(pair[1], 5)
    assert pool.slots[pair[1]].state == "idle"
    swarm.set(shared_node, state="down")
    pool.rows[pair[0]] = pool.rows[pair[1]] = None
    clock.t += 2
    pool.reconcile()
    moved = leases[pair[0]]
    assert moved.instance != pair[1]  # the free instance was on the dead node too
    assert moved.instance == pair[0] and moved.failovers == 0  # it waits for the replacement
    assert pool.slots[other].lease is leases[other]


def test_an_agent_back_after_silence_is_reset_before_anyone_leases_it():
    pool, swarm, clock = up_pool()
    lease = pool.acquire("w1")
    k = lease.instance
    pool.rows[k] = None  # the agent stops answering; its node stays ready
    pool.reconcile()
    clock.t += FAILOVER_AFTER + 1
    pool.reconcile()
    assert pool.slots[k].state == "starting" and lease.instance != k and lease.failovers == 1
    before = len(pool.resets)
    pool.rows[k] = IDLE  # back, same placement: it may still hold w1's changes
    pool.reconcile()
    assert pool.placements[k].generation == 1  # not deployed again
    assert pool.wait(k, 5)
    assert len(pool.resets) == before + 1 and pool.slots[k].state == "idle"
    assert pool.slots[k].last_reset["reason"].startswith("back after it was lost")


def test_a_stale_reset_from_a_lost_node_does_not_overwrite_the_replacement():
    pool, swarm, clock = up_pool()
    k = 0
    pool.gate[k] = threading.Event()
    pool.fail.add(k)
    assert pool.start_reset(k)  # hangs on the soon-dead node
    swarm.set(node_of(pool, k), state="down")
    pool.rows[k] = None
    clock.t += 2
    pool.reconcile()  # lost, placed again
    assert pool.slots[k].state == "starting" and pool.placements[k].generation == 2
    pool.rows[k] = IDLE
    pool.reconcile()  # the replacement is up (a new placement starts golden: no reset needed)
    pool.gate[k].set()  # the stale reset now ends, failed
    pool.fail.discard(k)
    assert pool.wait(k, 5)
    for _ in range(50):
        if pool.slots[k].state == "idle":
            break
        threading.Event().wait(0.05)
    assert pool.slots[k].state == "idle", pool.slots[k].error
    assert pool.slots[k].last_reset is None  # the stale reset's failure was not recorded on it


def test_a_node_in_an_unclear_state_is_not_a_lost_node():
    pool, swarm, clock = up_pool()
    swarm.set(node_of(pool, 1), state="unknown")  # e.g. right after a manager restart
    clock.t += 2
    pool.reconcile()
    assert pool.slots[1].state == "idle" and pool.placements[1].generation == 1 and not pool.replacements
    drained = node_of(pool, 1)
    swarm.set(drained, state="ready", availability="drain")  # pinned tasks cannot run anywhere else
    pool.reconcile()
    assert pool.placements[1].generation == 2 and pool.placements[1].node_id != drained
    assert pool.replacements[0]["why"].endswith("drained")


def test_an_avoided_node_is_used_when_no_other_fits():
    swarm, clock = FakeSwarm(1), Clock()
    pool = Pool(swarm, clock, 1)
    pool.reconcile()
    assert node_of(pool, 0) == "id1"
    pool._avoid[0] = {"id1": clock.t + AVOID_FOR}
    pool.place(0, "test")
    assert node_of(pool, 0) == "id1" and pool.placements[0].generation == 2  # better than nowhere


def test_a_restarted_pool_takes_over_and_resets_before_leasing():
    pool, swarm, clock = up_pool()
    # A new pool process over the same swarm: it finds the three stacks where they run.
    again = Pool(swarm, clock)
    assert {k: p.generation for k, p in again.placements.items()} == {0: 1, 1: 1, 2: 1}
    assert [s.state for s in again.slots.values()] == ["starting"] * 3
    for k in range(3):
        again.rows[k] = IDLE
    again.reconcile()
    for k in range(3):
        assert again.wait(k, 5)
    assert [s.state for s in again.slots.values()] == ["idle"] * 3
    assert sorted(k for k, _ in again.resets) == [0, 1, 2]  # each reset once before any lease
    assert set(swarm.deployed) == {"sitectl-i0", "sitectl-i1", "sitectl-i2"}


def test_a_restarted_pool_with_another_spec_deploys_again():
    pool, swarm, clock = up_pool()
    other = Pool.__new__(Pool)
    other.rows, other.resets, other.gate, other.fail = {}, [], {}, set()
    spec = ClusterSpec(sites=("reddit",), instances=3, seed=7, token_secret="sitectl-token-x")
    ClusterPool.__init__(other, spec, swarm, "token", clock=clock)
    assert [s.state for s in other.slots.values()] == ["unplaced"] * 3
    other.reconcile()
    assert {k: p.generation for k, p in other.placements.items()} == {0: 2, 1: 2, 2: 2}
    assert all("--seed" in c["services"]["agent"]["command"] and
               c["services"]["agent"]["command"][c["services"]["agent"]["command"].index("--seed") + 1] == "7"
               for c in swarm.deployed.values())


def test_a_release_while_starting_does_not_skip_the_reset():
    pool, swarm, clock = up_pool()
    lease = pool.acquire("w1")
    k = lease.instance
    for other in range(3):  # no idle instance to move to: the lease waits on its own
        if other != k:
            pool.acquire("busy")
    pool.rows[k] = None
    pool.reconcile()
    clock.t += FAILOVER_AFTER + 1
    pool.reconcile()
    assert lease.instance == k and pool.slots[k].state == "starting"
    pool.release(lease.id)
    pool.rows[k] = IDLE
    pool.reconcile()
    assert pool.wait(k, 5) and pool.slots[k].state == "idle"
    assert pool.slots[k].last_reset["reason"].startswith("back after it was lost")


@pytest.mark.parametrize("placed,want", [({}, "n1"), ({"id1": GiB}, "n2")])
def test_tie_break_takes_the_first_host_name(placed, want):
    nodes = [NodeInfo(f"id{i}", f"n{i}", "", "worker", "ready", "active", {}, 4 * GiB, 2) for i in (2, 1, 3)]
    assert choose_node(nodes, placed, GiB, {}).hostname == want


def test_a_failed_instance_that_goes_silent_is_reset_when_it_answers_again():
    pool, swarm, clock = up_pool()
    k = 1
    pool.fail.add(k)
    lease = pool.acquire("w1")
    assert lease.instance == 0
    pool.release(lease.id)  # instance 0 resets; make instance 1's own reset fail:
    assert pool.start_reset(k) and pool.wait(k, 5) and pool.slots[k].state == "failed"
    pool.fail.discard(k)
    pool.rows[k] = None
    pool.reconcile()
    clock.t += FAILOVER_AFTER + 1
    pool.reconcile()
    assert pool.slots[k].state == "starting"
    pool.rows[k] = IDLE
    pool.reconcile()
    assert pool.wait(k, 5) and pool.slots[k].state == "idle"
    assert pool.slots[k].last_reset["reason"].startswith("back after it was lost")


def test_a_starting_instance_whose_agent_reports_a_failed_reset_is_reset():
    pool, swarm, clock = up_pool()
    again = Pool(swarm, clock)  # a new pool: every instance starting
    again.rows = {0: {"state": "failed", "sites": {}}, 1: IDLE, 2: IDLE}
    again.reconcile()
    for k in range(3):
        assert again.wait(k, 5)
    assert [s.state for s in again.slots.values()] == ["idle"] * 3


def test_an_agent_restart_moves_the_lease_and_resets_the_instance():
    pool, swarm, clock = up_pool()
    for k in range(3):
        pool.rows[k] = {**IDLE, "boots": ("boot-a",)}
    pool.reconcile()
    lease = pool.acquire("w1")
    k = lease.instance
    pool.rows[k] = {**IDLE, "boots": ("boot-b",)}  # back within FAILOVER_AFTER, a new process
    clock.t += 2
    pool.reconcile()
    assert lease.instance != k and lease.failovers == 1
    assert pool.wait(k, 5) and pool.slots[k].state == "idle"
    assert pool.slots[k].last_reset["reason"].startswith("back after it was lost")


def test_failed_resets_are_retried_with_a_growing_gap():
    pool, swarm, clock = up_pool()
    k = 2
    pool.fail.add(k)
    assert pool.start_reset(k) and pool.wait(k, 5)
    times = []
    for _ in range(60):  # 120 s in 2 s passes
        before = len(pool.resets)
        pool.reconcile()
        pool.wait(k, 5)
        if len(pool.resets) > before:
            times.append(clock.t)
        clock.t += 2
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert times and times[0] - 1000.0 >= RETRY_FAILED_EVERY  # not at once
    assert gaps == sorted(gaps) and gaps[-1] >= 2 * gaps[0], gaps


def test_no_failover_onto_an_instance_on_a_drained_node():
    pool, swarm, clock = up_pool()
    lease = pool.acquire("w1")
    k = lease.instance  # instance 0: handled first in a pass
    pool.acquire("w2")  # instance 1 leased; instance 2 idle
    idle = 2
    assert k == 0 and pool.slots[idle].lease is None
    pool.rows[k] = None
    pool.reconcile()
    clock.t += FAILOVER_AFTER + 1
    drained = node_of(pool, idle)
    swarm.set(drained, availability="drain")  # in the same pass as instance 0's loss
    pool.reconcile()
    # The only idle instance sat on the node being drained: the lease waits for its own
    # instance instead of moving onto it; that instance is placed again elsewhere.
    assert lease.instance == k and lease.failovers == 0
    assert pool.slots[idle].state == "starting" and pool.placements[idle].node_id != drained


def test_a_new_placement_replaces_the_site_tasks_even_on_the_same_node():
    spec = ClusterSpec(sites=("reddit",), instances=1, token_secret="t")
    node = FakeSwarm(1).nodes()[0]
    one, two = instance_compose(spec, 0, node, 1), instance_compose(spec, 0, node, 2)
    assert one["services"]["reddit"] != two["services"]["reddit"]  # Swarm updates (replaces) the task
    assert two["services"]["reddit"]["labels"]["sitectl.generation"] == "2"
