"""The fleet on a real multi-node Docker Swarm (docs/cluster.md).

Three Docker-in-Docker nodes built here from Debian's docker.io (scripts/swarm_lab.py), the
images copied to them with docker save | docker load (no registry), three instances of the
forum spread over the nodes through the real CLI (``sitectl cluster push-images / deploy /
status / rm``), leases and resets through the real pool over HTTP; then a node is lost
(``docker kill`` of its container) while it holds a leased instance: the lease moves to an
idle instance, the lost instance is deployed again on a live node, and the pool is back to
three healthy instances that passed ``verify --deep`` golden on their agent.

Placement and the stack rendering are also checked without a swarm, on real node records.
Nothing is mocked.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from scripts import swarm_lab
from sitectl.engine.swarm import NodeInfo
from sitectl.errors import NoNodeFits, UsageError
from sitectl.fleet.compose import instance_compose
from sitectl.fleet.placement import choose_node
from sitectl.fleet.spec import ClusterSpec

SITECTL = str(Path(sys.executable).parent / "sitectl")
GiB = 1 << 30


def _node(i: int, mem: int = 4 * GiB, state: str = "ready", availability: str = "active", **labels) -> NodeInfo:
    return NodeInfo(id=f"id{i}", hostname=f"n{i}", addr=f"10.0.0.{i}", role="worker", state=state,
                    availability=availability, labels=labels, memory=mem, cpus=2)


# -- placement and rendering (no swarm needed) --------------------------------------------------
def test_choose_node_prefers_most_free_memory_and_honours_labels_and_state():
    nodes = [_node(1, zone="a"), _node(2, zone="b"), _node(3, state="down", zone="a"),
             _node(4, availability="drain", zone="a")]
    # n1 already holds 3 GiB of instances: n2 has more free memory.
    assert choose_node(nodes, {"id1": 3 * GiB}, GiB, {}).id == "id2"
    # A label narrows the choice, whatever the free memory.
    assert choose_node(nodes, {"id1": 2 * GiB}, GiB, {"zone": "a"}).id == "id1"
    # A node an instance failed on is avoided.
    assert choose_node(nodes, {}, GiB, {}, avoid={"id2"}).id == "id1"
    with pytest.raises(NoNodeFits) as e:
        choose_node(nodes, {"id1": 3584 << 20}, GiB, {"zone": "a"})
    msg = str(e.value)
    assert "n1: 512 MiB free, 1024 MiB needed" in msg and "n2: lacks label zone=a" in msg
    assert "n3: down/active" in msg and "n4: ready/drain" in msg


def test_instance_compose_pins_every_service_to_one_node_with_the_agent_beside_the_sites():
    spec = ClusterSpec(sites=("reddit", "shopping"), instances=2, token_secret="sitectl-token-x")
    c = instance_compose(spec, 1, _node(7), generation=3)
    assert set(c["services"]) == {"reddit", "shopping", "agent"}
    for svc in c["services"].values():
        assert svc["deploy"]["placement"]["constraints"] == ["node.id == id7"]
    # The same ports, image and labels `sitectl up --instance 1 --host 10.0.0.7` uses, on the node.
    assert c["services"]["reddit"]["ports"] == [{"target": 80, "published": 10099, "protocol": "tcp", "mode": "host"}]
    assert c["services"]["reddit"]["labels"]["sitectl.host"] == "10.0.0.7"
    agent = c["services"]["agent"]
    assert "/var/run/docker.sock:/var/run/docker.sock" in agent["volumes"]
    assert agent["command"][:3] == ["sitectl", "cluster", "agent"]
    assert agent["command"][agent["command"].index("--generation") + 1] == "3"
    assert agent["deploy"]["labels"]["sitectl.node_id"] == "id7"
    assert c["secrets"]["token"] == {"external": True, "name": "sitectl-token-x"}


def test_a_service_container_is_a_service_of_the_stack_on_the_same_node_with_its_alias_and_volumes():
    spec = ClusterSpec(sites=("classifieds",), token_secret="sitectl-token-x")
    c = instance_compose(spec, 2, _node(7), generation=3)
    assert set(c["services"]) == {"classifieds", "classifieds-db", "agent"}
    db = c["services"]["classifieds-db"]
    assert db["deploy"]["placement"]["constraints"] == ["node.id == id7"]
    assert db["networks"] == {"sites": {"aliases": ["db"]}} and "ports" not in db
    assert db["deploy"]["endpoint_mode"] == "dnsrr"  # `db` is the task's address, no virtual IP
    assert db["labels"]["sitectl.service"] == "db" and db["labels"]["sitectl.instance"] == "2"
    # What the database keeps across Swarm's restarts: a named volume of this placement.
    assert db["volumes"] == ["classifieds-db-g3-0:/var/lib/mysql"] and "classifieds-db-g3-0" in c["volumes"]
    assert instance_compose(spec, 2, _node(7), generation=4)["services"]["classifieds-db"]["volumes"] == [
        "classifieds-db-g4-0:/var/lib/mysql"]
    # Memory is reserved per container.
    t = spec.target(2, "10.0.0.7")
    assert spec.need(t) == 2 * spec.reserve
    # The real stack: the init folder is a bind mount of the node's data folder.
    real = instance_compose(ClusterSpec(stack="webarena", sites=("classifieds",)), 0, _node(7), generation=1)
    assert real["services"]["classifieds-db"]["image"] == "mysql:8.1"
    assert any(v.endswith(":/docker-entrypoint-initdb.d") and v.startswith("/")
               for v in real["services"]["classifieds-db"]["volumes"])


def test_fleet_spec_rejects_unknown_and_dangling_sites():
    with pytest.raises(UsageError, match="unknown site 'nosuch'"):
        ClusterSpec(sites=("nosuch",)).target(0, "10.0.0.1")
    with pytest.raises(UsageError, match="site 'homepage' needs site"):
        ClusterSpec(sites=("homepage", "reddit")).target(0, "10.0.0.1")


# -- the real swarm -----------------------------------------------------------------------------
def run(*args, check=True, env=None) -> tuple[int, dict | str]:
    r = subprocess.run([SITECTL, *args], capture_output=True, text=True, timeout=1800, env=env)
    out = r.stdout
    if "--json" in args:
        out = json.loads(r.stdout)  # stdout is JSON and nothing else
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r.returncode, out


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Three DinD nodes in one swarm (lab-1 manager), the forum's and the agent's images on
    each; removed afterwards."""
    swarm_lab.down(log=lambda m: None)
    nodes = swarm_lab.up(3, log=print)
    engines = [n["engine"] for n in nodes]
    push = ["cluster", "push-images", "--sites", "reddit", "--json"]
    for e in engines:
        push += ["--node", e]
    _, res = run(*push)
    assert [r["node"] for r in res["nodes"]] == engines
    env = dict(os.environ, SITECTL_SNAPSHOTS_DIR=str(tmp_path_factory.mktemp("cluster-cli")))
    yield {"nodes": nodes, "manager": engines[0], "env": env}
    run("cluster", "rm", "--docker-host", engines[0], "--json", check=False, env=env)
    swarm_lab.down(log=lambda m: None)


def _status(pool: str, token: str) -> dict:
    r = requests.get(f"{pool}/api/status", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    r.raise_for_status()
    return r.json()


@pytest.mark.docker
def test_deploy_refuses_a_worker_and_bad_input(lab):
    worker = lab["nodes"][1]["engine"]
    code, out = run("cluster", "deploy", "--instances", "1", "--docker-host", worker, "--json", check=False, env=lab["env"])
    assert code == 2 and "not a Swarm manager" in out["error"]
    code, out = run("cluster", "deploy", "--instances", "1", "--sites", "reddit,nosuch", "--docker-host", lab["manager"],
                    "--json", check=False, env=lab["env"])
    assert code == 2 and "unknown site 'nosuch'" in out["error"]
    code, out = run("cluster", "deploy", "--instances", "1", "--stack", "/etc/passwd", "--docker-host", lab["manager"],
                    "--json", check=False, env=lab["env"])
    assert code == 2 and "--stack '/etc/passwd'" in out["error"]
    # Nothing was deployed by the refused commands.
    assert "sitectl-pool" not in subprocess.run(["docker", "-H", lab["manager"], "stack", "ls"], capture_output=True,
                                                text=True).stdout


@pytest.mark.docker
def test_fleet_spreads_over_nodes_fails_over_a_lost_node_and_heals(lab):
    env, manager = lab["env"], lab["manager"]
    t0 = time.monotonic()
    _, dep = run("cluster", "deploy", "--instances", "3", "--sites", "reddit", "--docker-host", manager,
                 "--wait", "600", "--json", env=env)
    print(f"deploy: {time.monotonic() - t0:.1f} s")
    token = Path(env["SITECTL_SNAPSHOTS_DIR"], "cluster-token").read_text().strip()
    pool = dep["pool_url"]
    rows = dep["instances"]
    assert [r["state"] for r in rows] == ["idle"] * 3
    # Spread: one instance per node (equal nodes, the most free memory first).
    assert sorted(r["placement"]["node"] for r in rows) == ["lab-1", "lab-2", "lab-3"]
    assert all(r["sites"]["reddit"]["healthy"] for r in rows)
    for r in rows:  # each instance's forum answers on its node
        assert requests.get(r["urls"]["reddit"] + "/", timeout=10).status_code == 200

    auth = {"Authorization": f"Bearer {token}"}
    leases = []
    for client in ("worker-a", "worker-b"):
        r = requests.post(f"{pool}/api/leases", json={"client": client, "ttl": 600}, headers=auth, timeout=10)
        assert r.status_code == 200, r.text
        leases.append(r.json())
    assert len({lz["instance"] for lz in leases}) == 2
    # A reset through a lease runs on the instance's node, by its agent.
    for lz in leases:
        r = requests.get(f"{pool}/l/{lz['lease']}/reset", timeout=120)
        assert r.status_code == 200 and r.text == "Reset initiated"
        assert requests.get(f"{pool}/l/{lz['lease']}/status", timeout=10).text == "Ready for duty!"
    st = _status(pool, token)
    for lz in leases:
        row = st["instances"][lz["instance"]]
        assert row["last_reset"]["ok"] and row["last_reset"]["result"]["sites"][0]["site"] == "reddit"
    # The pool's metrics (docs/monitoring.md), read by prometheus-client's own parser: where each
    # instance runs and in which state, and the agents' resets by site and method.
    from prometheus_client.parser import text_string_to_metric_families

    got = {(x.name, *sorted(x.labels.items())): x.value
           for fam in text_string_to_metric_families(requests.get(f"{pool}/metrics", timeout=10).text) for x in fam.samples}
    placed = {(dict(k[1:])["node"], dict(k[1:])["state"]): v for k, v in got.items() if k[0] == "sitectl_cluster_instances"}
    assert sorted(placed.values()) == [1.0, 1.0, 1.0] and {s for _, s in placed} == {"idle", "leased"}
    assert {n for n, _ in placed} == {"lab-1", "lab-2", "lab-3"} and got[("sitectl_cluster_nodes",)] == 3
    assert got[("sitectl_resets_total", ("outcome", "ok"))] >= 2
    assert any(k[0] == "sitectl_site_resets_total" and ("site", "reddit") in k for k in got)
    page = requests.get(f"{pool}/t/{token}/", timeout=30)
    assert page.status_code == 200 and "<th>node</th>" in page.text and "worker-a" in page.text

    # Lose a node holding a leased instance (not the manager: the pool runs there).
    by_inst = {r["instance"]: r["placement"]["node"] for r in rows}
    victim = next(lz for lz in leases if by_inst[lz["instance"]] != "lab-1")
    lost_node, lost_inst = by_inst[victim["instance"]], victim["instance"]
    free_inst = ({0, 1, 2} - {lz["instance"] for lz in leases}).pop()
    swarm_lab.kill(lost_node)
    t_kill = time.monotonic()

    # The lease fails over to the idle instance ...
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        now = requests.get(f"{pool}/api/leases/{victim['lease']}", timeout=10).json()
        if now["instance"] != lost_inst:
            break
        time.sleep(1)
    t_failover = time.monotonic() - t_kill
    assert now["instance"] == free_inst and now["failovers"] == 1, now
    assert lost_node not in json.dumps(now["urls"])
    assert requests.get(now["urls"]["reddit"] + "/", timeout=10).status_code == 200
    r = requests.get(f"{pool}/l/{victim['lease']}/reset", timeout=120)  # the same reset URL, the new instance
    assert r.status_code == 200

    # ... and the pool heals: the lost instance runs again on a live node, verified golden.
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        st = _status(pool, token)
        if all(r["state"] == "idle" for r in st["instances"]) and st["replacements"]:
            break
        time.sleep(2)
    t_heal = time.monotonic() - t_kill
    print(f"failover after {t_failover:.1f} s, healed after {t_heal:.1f} s")
    assert [r["state"] for r in st["instances"]] == ["idle"] * 3, st["instances"]
    moved = st["instances"][lost_inst]
    assert moved["placement"]["node"] != lost_node and moved["placement"]["generation"] == 2
    assert st["replacements"][0]["from"] == lost_node and st["replacements"][0]["instance"] == lost_inst
    assert all(r["sites"]["reddit"]["healthy"] for r in st["instances"])
    assert requests.get(moved["urls"]["reddit"] + "/", timeout=10).status_code == 200
    assert {n["hostname"]: n["state"] for n in st["nodes"]}[lost_node] == "down"
    # The replaced instance holds no lease; the two leases are held on live nodes.
    assert moved["lease"] is None
    assert sorted(r["lease"]["client"] for r in st["instances"] if r["lease"]) == ["worker-a", "worker-b"]

    # `sitectl cluster status` (JSON and table) shows the same: every instance, node, lease, health.
    _, cst = run("cluster", "status", "--docker-host", manager, "--json", env=env)
    assert [r["state"] for r in cst["instances"]] == ["idle"] * 3
    assert cst["failovers"][0]["from"] == lost_inst and cst["failovers"][0]["to"] == free_inst
    _, table = run("cluster", "status", "--docker-host", manager, env=env)
    assert "worker-a" in table and "(moved 1x)" in table and lost_node in table

    # A released lease's instance is reset by its agent before anyone leases it again.
    before = {r["instance"]: r["resets"] for r in _status(pool, token)["instances"]}
    released = []
    for lz in leases:
        r = requests.delete(f"{pool}/api/leases/{lz['lease']}", headers=auth, timeout=10)
        assert r.status_code == 200
        released.append(r.json()["instance"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rows = {r["instance"]: r for r in _status(pool, token)["instances"]}
        if all(rows[i]["resets"] > before[i] and rows[i]["state"] == "idle" for i in released):
            break
        time.sleep(1)
    for i in released:
        assert rows[i]["resets"] > before[i] and rows[i]["last_reset"]["reason"].startswith("release of worker-")
        assert rows[i]["last_reset"]["ok"] and rows[i]["state"] == "idle"

    # The pool restarted (Swarm starts a new task of it) takes the deployed instances over
    # where they run: same nodes, same placement generations, nothing deployed again.
    placed = {r["instance"]: (r["placement"]["node"], r["placement"]["generation"]) for r in st["instances"]}
    subprocess.run(["docker", "-H", manager, "service", "update", "--force", "--detach", "sitectl-pool_pool"],
                   check=True, capture_output=True)
    time.sleep(3)
    deadline = time.monotonic() + 180
    again = {}
    while time.monotonic() < deadline:
        try:
            again = _status(pool, token)
            if [r["state"] for r in again["instances"]] == ["idle"] * 3 and not again["failovers"]:
                break
        except requests.RequestException:
            pass
        time.sleep(2)
    assert [r["state"] for r in again["instances"]] == ["idle"] * 3, again
    assert {r["instance"]: (r["placement"]["node"], r["placement"]["generation"]) for r in again["instances"]} == placed
    assert again["replacements"] == []  # a new pool process: nothing was moved by it
    _, gone = run("cluster", "rm", "--docker-host", manager, "--json", env=env)
    assert set(gone["removed"]) == {"sitectl-pool", "sitectl-i0", "sitectl-i1", "sitectl-i2",
                                    "sitectl-token-" + __import__("hashlib").sha256(token.encode()).hexdigest()[:12]}


def _lab_docker(manager: str, *args: str) -> str:
    r = subprocess.run(["docker", "-H", manager, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def _task(manager: str, service: str) -> str:
    """The running task container of ``service`` on the manager node (lab-1)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        ids = _lab_docker(manager, "ps", "-q", "--filter", f"label=com.docker.swarm.service.name={service}",
                          "--filter", "status=running").split()
        if ids:
            return ids[0]
        time.sleep(1)
    raise AssertionError(f"no running task of {service}")


def _sql(manager: str, statement: str) -> str:
    """SQL of the test's own in the database task (not sitectl's)."""
    deadline = time.monotonic() + 180
    while True:
        r = subprocess.run(["docker", "-H", manager, "exec", _task(manager, "sitectl-i0_classifieds-db"), "mysql", "-N",
                            "-uroot", "-ppassword", "osclass", "-e", statement], capture_output=True, text=True, timeout=300)
        if r.returncode == 0 or time.monotonic() > deadline:
            assert r.returncode == 0, r.stderr
            return r.stdout.strip()
        time.sleep(1)  # the server is restarting


CHECKSUMS = "CHECKSUM TABLE oc_t_item, oc_t_item_description, oc_t_item_comment, oc_t_user, oc_t_item_resource"


@pytest.mark.docker
def test_classifieds_runs_on_the_swarm_with_its_database_service(lab):
    """VisualWebArena's classifieds and its database (host ``db``) as two services of the
    instance's stack on one node: the database's first start fails and Swarm's next task, on
    the placement's named volume, serves (as ``restart: always`` does on one host); a change
    is undone by a reset through a lease; a restarted database task keeps its data (a delta
    reset follows); a restarted site task makes the agent re-create the site with an emptied
    database, golden again with the same table checksums."""
    env, manager = lab["env"], lab["manager"]
    run("cluster", "rm", "--docker-host", manager, "--json", check=False, env=env)  # whatever the last test left
    run("cluster", "push-images", "--sites", "classifieds", "--node", manager, "--json")
    _lab_docker(manager, "node", "update", "--label-add", "sitectl-test=classifieds", "lab-1")
    _, dep = run("cluster", "deploy", "--instances", "1", "--sites", "classifieds", "--node-label",
                 "sitectl-test=classifieds", "--docker-host", manager, "--wait", "900", "--json", env=env)
    token = Path(env["SITECTL_SNAPSHOTS_DIR"], "cluster-token").read_text().strip()
    auth = {"Authorization": f"Bearer {token}"}
    pool, row = dep["pool_url"], dep["instances"][0]
    assert row["state"] == "idle" and row["placement"]["node"] == "lab-1" and row["sites"]["classifieds"]["healthy"]
    assert "Publish your ad" in requests.get(row["urls"]["classifieds"] + "/", timeout=30).text
    # The database's tasks: the failing first start, then the one that serves (same volume).
    tasks = _lab_docker(manager, "service", "ps", "sitectl-i0_classifieds-db", "--format", "{{.CurrentState}}")
    assert len(tasks.splitlines()) >= 2, tasks

    lease = requests.post(f"{pool}/api/leases", json={"client": "vwa", "ttl": 600}, headers=auth, timeout=30).json()

    def reset() -> dict:
        assert requests.get(f"{pool}/l/{lease['lease']}/reset", timeout=1800).status_code == 200
        got = _status(pool, token)["instances"][0]["last_reset"]
        assert got["ok"], got
        return got["result"]["sites"][0]

    # Golden as a reset leaves it (the agent's `verify --deep` logged in since: an OSClass
    # login writes the user's access date).
    reset()
    golden = _sql(manager, CHECKSUMS)

    _sql(manager, "UPDATE oc_t_item SET i_price = i_price + 1000 WHERE pk_i_id = 84143")
    assert _sql(manager, CHECKSUMS) != golden
    assert reset()["method"] == "delta"
    assert _sql(manager, CHECKSUMS) == golden

    # Swarm replaces a stopped database task with a new container on the same named volume.
    _sql(manager, "UPDATE oc_t_user SET s_name = 'restarted' WHERE pk_i_id = 1")
    _lab_docker(manager, "kill", _task(manager, "sitectl-i0_classifieds-db"))
    time.sleep(3)
    assert _sql(manager, "SELECT s_name FROM oc_t_user WHERE pk_i_id = 1") == "restarted"
    assert reset()["method"] == "delta"
    assert _sql(manager, CHECKSUMS) == golden

    # A new site task: the agent re-creates the site and its database from nothing, also
    # when the database task is itself between two tasks then (killed just before).
    db = _task(manager, "sitectl-i0_classifieds-db")
    _lab_docker(manager, "exec", db, "touch", "/var/lib/mysql/left-by-the-test")
    _sql(manager, "UPDATE oc_t_item SET s_contact_name = 'before the re-creation' WHERE pk_i_id = 84143")
    _lab_docker(manager, "kill", _task(manager, "sitectl-i0_classifieds"))
    time.sleep(3)
    _lab_docker(manager, "kill", _task(manager, "sitectl-i0_classifieds-db"))
    reset()
    agent_log = subprocess.run(["docker", "-H", manager, "service", "logs", "--raw", "sitectl-i0_agent"],
                               capture_output=True, text=True, timeout=60)
    agent_log = agent_log.stdout + agent_log.stderr
    assert "a site container was replaced" in agent_log, agent_log[-3000:]
    assert "left-by-the-test" not in _lab_docker(manager, "exec", _task(manager, "sitectl-i0_classifieds-db"),
                                                 "ls", "/var/lib/mysql"), agent_log[-3000:]
    assert _sql(manager, CHECKSUMS) == golden
    assert _sql(manager, "SELECT COUNT(*) FROM oc_t_item WHERE s_contact_name = 'before the re-creation'") == "0"
    # Health is polled (the agent keeps it up to 5 s, the pool asks every 2 s): one from before
    # the re-creation ended may still be shown for a few seconds.
    deadline = time.monotonic() + 60
    while True:
        st = _status(pool, token)["instances"][0]
        if st["sites"]["classifieds"]["healthy"] or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert st["state"] in ("leased", "idle") and st["sites"]["classifieds"]["healthy"], st
    _, gone = run("cluster", "rm", "--docker-host", manager, "--json", env=env)
    assert "sitectl-i0" in gone["removed"]
