"""The Kubernetes pod of a site with a service container, run for real with Docker:
VisualWebArena's classifieds (the web container and its database, host ``db``) and the sidecar
agent (``sitectl cluster agent --engine pod``), all in the process and network namespaces of a
pause container, as in the StatefulSet ``sitectl k8s render`` writes (tests/fleet/test_k8s.py
checks those manifests). What Kubernetes would do is done by Docker here, and only that: the
kubelet restarting a container is ``--restart always``, the database's ``emptyDir`` is a named
volume, ``hostAliases`` is ``--add-host db:127.0.0.1`` on the pause container. The agent has no
Docker socket: it reaches both containers through their processes (sitectl/engine/pod.py).

Checked with SQL of its own (``CHECKSUM TABLE`` in the database container), not sitectl's:

- the database's first start fails in its init scripts and its restart, on the same volume,
  serves (the replica does what mysql:8.1 does there); the agent brings the site up golden;
- a change in the database is undone by a reset through the agent's API;
- the database container restarted keeps its data and is the same site (a delta reset);
- the site container restarted: the agent re-creates the site with its database: the volume is
  emptied (a file put there is gone), the server initialised again, populated, golden again,
  with the same table checksums as the first golden.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest
import requests

from sitectl.fleet.images import build_agent_image
from sitectl.fleet.naming import agent_port
from sitectl.fleet.spec import AGENT_IMAGE, ClusterSpec
from sitectl.sites.containers import run_spec, service_spec
from tests.fleet.sidecar import docker, start_agent

pytestmark = pytest.mark.docker

INSTANCE = 19  # not used by another test
PAUSE, SITE, DB, AGENT = (f"sitectl-podsvc-{n}" for n in ("pause", "site", "db", "agent"))
VOLUMES = ("sitectl-podsvc-state", "sitectl-podsvc-mysql")
TOKEN = "pod-services-token-0123456789abcdef"
TABLES = "oc_t_item, oc_t_item_description, oc_t_item_comment, oc_t_user, oc_t_item_resource"
SQL = ["mysql", "-N", "-uroot", "-ppassword", "osclass", "-e"]


def checksums() -> dict[str, str]:
    out = docker("exec", DB, *SQL, f"CHECKSUM TABLE {TABLES}")
    return dict(line.split("\t") for line in out.splitlines())


def sql(statement: str) -> str:
    return docker("exec", DB, *SQL, statement)


def _cleanup():
    docker("rm", "-f", AGENT, SITE, DB, PAUSE, check=False)
    for v in VOLUMES:
        docker("volume", "rm", v, check=False)


class Kubelet:
    """What the kubelet does to the pod's containers under ``restartPolicy: Always``, and only
    that: a container that stopped is started again as a new container (a fresh writable layer)
    with the same volumes. (Docker's own ``--restart`` would keep the writable layer: the
    database's socket lock file would survive, naming a pid that in a shared PID namespace is
    another container's process.) ``starts[name]`` counts the starts."""

    def __init__(self, containers: dict[str, list[str]]):
        self.containers = containers
        self.starts = dict.fromkeys(containers, 0)
        self.errors: list[str] = []
        self._stop = threading.Event()
        for name in containers:
            self._start(name)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _start(self, name: str) -> None:
        docker("rm", "-f", name, check=False)
        docker("run", "-d", "--name", name, *self.containers[name])
        self.starts[name] += 1

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            for name in self.containers:
                try:
                    r = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", name], capture_output=True,
                                       text=True, timeout=60)
                    if r.stdout.strip() != "true" and not self._stop.is_set():
                        self._start(name)
                except (AssertionError, subprocess.SubprocessError) as e:
                    self.errors.append(f"{name}: {e}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def _env_args(env: dict[str, str]) -> list[str]:
    return [a for k, v in env.items() for a in ("-e", f"{k}={v}")]


def _api(pod, method: str, path: str, **kw) -> requests.Response:
    return requests.request(method, f"{pod['base']}{path}", headers={"Authorization": f"Bearer {TOKEN}"},
                            timeout=900, **kw)


@pytest.fixture(scope="module")
def pod(tmp_path_factory, engine):
    spec = ClusterSpec(sites=("classifieds",))
    t = spec.target(INSTANCE, "localhost")
    site = t.stack.sites["classifieds"]
    from sitectl.sites.containers import ensure_images

    ensure_images(t, [site], engine)
    build_agent_image(engine)
    gw = docker("network", "inspect", "bridge", "--format", "{{(index .IPAM.Config 0).Gateway}}")
    t = spec.target(INSTANCE, gw)
    url_port, aport = t.host_port(site), agent_port(INSTANCE)
    token = tmp_path_factory.mktemp("podsvc") / "token"
    token.write_text(TOKEN + "\n")
    os.chmod(token, 0o644)  # read by the agent container's root through a bind mount
    _cleanup()
    share = ["--pid", f"container:{PAUSE}", "--network", f"container:{PAUSE}"]
    # The pod's pause container owns the namespaces and the ports (the Service's).
    docker("run", "-d", "--name", PAUSE, "-p", f"{gw}:{url_port}:{t.container_port(site)}", "-p", f"{gw}:{aport}:{aport}",
           "--add-host", "db:127.0.0.1", "--entrypoint", "sleep", AGENT_IMAGE, "infinity")
    web, db = run_spec(t, site), service_spec(t, site, "db")
    kubelet = Kubelet({
        DB: [*share, *_env_args(db.env), "-e", "SITECTL_SITE=classifieds", "-e", "SITECTL_SERVICE=db",
             "-v", f"{VOLUMES[1]}:/var/lib/mysql", db.image],  # the emptyDir
        SITE: [*share, *_env_args(web.env), "-e", "SITECTL_SITE=classifieds", "-v", f"{VOLUMES[0]}:/var/lib/sitectl",
               web.image],
    })
    try:
        base = start_agent(AGENT, share, VOLUMES[0], token, "classifieds", INSTANCE, gw, "podsvc", aport)
        yield from _golden(base, url_port, gw, kubelet)
    finally:
        kubelet.stop()
        _cleanup()


def _golden(base: str, url_port: int, gw: str, kubelet: Kubelet):
    # Golden as a reset leaves it (the agent's own `verify --deep` logged in since, and an
    # OSClass login writes the user's access date).
    r = requests.post(f"{base}/api/reset", json={"instance": INSTANCE}, headers={"Authorization": f"Bearer {TOKEN}"},
                      timeout=900)
    assert r.status_code == 200, r.text
    yield {"base": base, "url": f"http://{gw}:{url_port}", "golden": checksums(), "kubelet": kubelet}


def test_the_stack_file_names_what_the_database_image_keeps_and_runs_in(pod, engine):
    # The pod's emptyDir paths and exec directory come from the stack file (no engine in a
    # pod): they must be the image's VOLUME and WORKDIR.
    for stack in ("mini", "webarena"):
        v = ClusterSpec(stack=stack, sites=("classifieds",)).target(0, "localhost").stack.sites["classifieds"].services["db"]
        assert v.persist == ["/var/lib/mysql"] and v.workdir == "/"
    img = service_spec(ClusterSpec(sites=("classifieds",)).target(INSTANCE, "localhost"),
                       ClusterSpec(sites=("classifieds",)).target(INSTANCE, "localhost").stack.sites["classifieds"],
                       "db").image
    assert engine.image_volumes(img) == ["/var/lib/mysql"]
    assert docker("image", "inspect", "-f", "{{.Config.WorkingDir}}", img) in ("", "/")


def test_the_database_restarts_after_its_failing_first_start_and_the_agent_brings_the_site_up(pod):
    # The replica's first start fails as mysql:8.1's does with VWA's init folder; the restart
    # (same volume) serves: the container was started more than once.
    assert pod["kubelet"].starts[DB] >= 2
    agent_log = subprocess.run(["docker", "logs", AGENT], capture_output=True, text=True).stderr
    assert "golden snapshot of classifieds" in agent_log and "verified" in agent_log
    assert "docker.sock" not in docker("inspect", "-f", "{{range .Mounts}}{{.Destination}} {{end}}", AGENT)
    st = _api(pod, "GET", "/api/status").json()
    assert st["instances"][0]["state"] == "idle" and st["instances"][0]["sites"]["classifieds"]["healthy"]
    # The web container reaches its database as host db, inside the pod.
    assert "Publish your ad" in requests.get(pod["url"] + "/", timeout=30).text
    assert int(sql("SELECT COUNT(*) FROM oc_t_item")) > 0


def test_a_database_change_is_undone_by_a_reset_through_the_agent(pod):
    sql("UPDATE oc_t_item SET i_price = i_price + 1000 WHERE pk_i_id = 84143")
    sql("DELETE FROM oc_t_item_comment ORDER BY pk_i_id DESC LIMIT 1")
    assert checksums() != pod["golden"]
    r = _api(pod, "POST", "/api/reset", json={"instance": INSTANCE})
    assert r.status_code == 200, r.text
    res = r.json()["result"]["sites"][0]
    assert res["site"] == "classifieds" and res["method"] == "delta", res
    assert checksums() == pod["golden"]


def test_a_restarted_database_keeps_its_data_and_is_the_same_site(pod):
    sql("UPDATE oc_t_user SET s_name = 'restarted' WHERE pk_i_id = 1")
    starts = pod["kubelet"].starts[DB]
    docker("kill", DB)  # the kubelet starts a new container on the same emptyDir
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        r = subprocess.run(["docker", "exec", DB, *SQL, "SELECT s_name FROM oc_t_user WHERE pk_i_id = 1"],
                           capture_output=True, text=True)
        if r.returncode == 0 and pod["kubelet"].starts[DB] > starts:
            break
        time.sleep(1)
    assert pod["kubelet"].starts[DB] > starts
    assert r.stdout.strip() == "restarted"  # kept across the restart
    res = _api(pod, "POST", "/api/reset", json={"instance": INSTANCE}).json()["result"]["sites"][0]
    assert res["method"] == "delta", res  # not re-created: the database was only restarted
    assert checksums() == pod["golden"]


def test_a_restarted_site_container_recreates_the_site_with_an_emptied_database(pod):
    docker("exec", DB, "touch", "/var/lib/mysql/left-by-the-test")
    sql("UPDATE oc_t_item SET s_contact_name = 'before the re-creation' WHERE pk_i_id = 84143")
    starts = pod["kubelet"].starts[DB]
    docker("kill", SITE)  # the site container stops; "the kubelet" starts a new one from its image
    deadline = time.monotonic() + 60
    while pod["kubelet"].starts[SITE] < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    r = _api(pod, "POST", "/api/reset", json={"instance": INSTANCE})
    assert r.status_code == 200, r.text
    agent_log = subprocess.run(["docker", "logs", AGENT], capture_output=True, text=True).stderr
    assert "a site container was replaced" in agent_log
    # The database was emptied and initialised again: its failing first start and the restart.
    assert docker("exec", DB, "ls", "/var/lib/mysql").count("left-by-the-test") == 0
    assert pod["kubelet"].starts[DB] >= starts + 2
    assert checksums() == pod["golden"]
    assert sql("SELECT COUNT(*) FROM oc_t_item WHERE s_contact_name = 'before the re-creation'") == "0"
    st = _api(pod, "GET", "/api/status").json()
    assert st["instances"][0]["state"] == "idle" and st["instances"][0]["sites"]["classifieds"]["healthy"]


def test_an_image_volume_the_stack_file_does_not_persist_is_refused(pod, engine):
    """`push-images` and the Swarm agent refuse a service image whose VOLUME the stack file's
    persist leaves out (a restarted task would start it empty): checked on the real image."""
    from sitectl.errors import ImageMissing, UsageError
    from sitectl.fleet.images import check_persist

    t = ClusterSpec(sites=("classifieds",)).target(INSTANCE, "localhost")
    site = t.stack.sites["classifieds"]
    check_persist(t, [site], engine)  # the stack file as shipped passes
    bare = site.model_copy(update={"services": {"db": site.services["db"].model_copy(update={"persist": []})}})
    with pytest.raises(UsageError, match=r"site 'classifieds' service 'db'.*keeps /var/lib/mysql.*services\.db\.persist"):
        check_persist(t, [bare], engine)
    gone = site.model_copy(update={"services": {"db": site.services["db"].model_copy(update={"image": "sitectl/nosuch:1"})}})
    with pytest.raises(ImageMissing, match="push-images"):
        check_persist(t, [gone], engine)
