"""The Kubernetes sidecar agent, run for real with Docker: the forum replica in one container,
``sitectl cluster agent --engine pod`` in another that shares its process and network
namespaces and a state volume, exactly as ``shareProcessNamespace: true`` and a shared PVC make
them share in the pod ``sitectl k8s render`` writes. No Docker socket is given to the agent:
it reaches the site only through nsenter (sitectl/engine/pod.py).

The agent brings the site up (golden snapshot), passes ``verify --deep``, serves; a change
made in the site's database is undone by a reset through the agent's API.
"""
from __future__ import annotations

import os
import subprocess

import pytest
import requests

from sitectl.fleet.images import build_agent_image
from sitectl.fleet.naming import agent_port
from sitectl.fleet.spec import ClusterSpec
from tests.fleet.sidecar import docker, start_agent

pytestmark = pytest.mark.docker

INSTANCE = 6
SITE = "sitectl-podtest-site"
AGENT = "sitectl-podtest-agent"
VOLUME = "sitectl-podtest-state"
PSQL = ["psql", "-U", "postgres", "-d", "postmill", "-tAc"]


def _cleanup():
    docker("rm", "-f", AGENT, SITE, check=False)
    docker("volume", "rm", VOLUME, check=False)


@pytest.fixture(scope="module")
def pod(tmp_path_factory, engine):
    spec = ClusterSpec(sites=("reddit",))
    t = spec.target(INSTANCE, "localhost")
    site = t.stack.sites["reddit"]
    from sitectl.sites.containers import ensure_images

    ensure_images(t, [site], engine)
    build_agent_image(engine)
    gw = docker("network", "inspect", "bridge", "--format", "{{(index .IPAM.Config 0).Gateway}}")
    url_port, aport = t.host_port(site), agent_port(INSTANCE)
    token = tmp_path_factory.mktemp("pod") / "token"
    token.write_text("pod-test-token-0123456789abcdef\n")
    os.chmod(token, 0o644)  # read by the agent container's root through a bind mount
    _cleanup()
    # The "pod": the site container owns the network (its ports are the Service's).
    docker("run", "-d", "--name", SITE, "-p", f"{gw}:{url_port}:80", "-p", f"{gw}:{aport}:{aport}",
           "-e", "SITECTL_SITE=reddit",  # as `sitectl k8s render` marks the site container
           "-v", f"{VOLUME}:/var/lib/sitectl", t.image(site))
    base = start_agent(AGENT, [f"--pid=container:{SITE}", f"--network=container:{SITE}"], VOLUME, token, "reddit",
                       INSTANCE, gw, "podtest", aport, timeout=300)
    yield {"base": base, "token": "pod-test-token-0123456789abcdef"}
    _cleanup()


def test_sidecar_brings_the_site_up_verified_without_a_docker_socket(pod):
    logs = subprocess.run(["docker", "logs", AGENT], capture_output=True, text=True).stderr
    assert "golden snapshot of reddit" in logs and "verified" in logs
    mounts = docker("inspect", "-f", "{{range .Mounts}}{{.Destination}} {{end}}", AGENT)
    assert "docker.sock" not in mounts
    st = requests.get(f"{pod['base']}/api/status", headers={"Authorization": f"Bearer {pod['token']}"}, timeout=30).json()
    row = st["instances"][0]
    assert row["state"] == "idle" and row["sites"]["reddit"]["healthy"] is True
    # The state the agent keeps is on the shared volume, beside the site's own golden copies.
    assert "golden" in docker("exec", SITE, "ls", f"/var/lib/sitectl/agent/snapshots/i{INSTANCE}")


def test_reset_through_the_sidecar_undoes_a_change(pod):
    before = docker("exec", SITE, *PSQL, "SELECT sum(net_score) FROM submissions")
    docker("exec", SITE, *PSQL, "UPDATE submissions SET net_score = net_score + 1")
    assert docker("exec", SITE, *PSQL, "SELECT sum(net_score) FROM submissions") != before
    r = requests.post(f"{pod['base']}/api/reset", json={"instance": INSTANCE},
                      headers={"Authorization": f"Bearer {pod['token']}"}, timeout=300)
    assert r.status_code == 200, r.text
    site = r.json()["result"]["sites"][0]
    assert site["site"] == "reddit" and site["method"] == "delta"
    assert any("submissions" in c for c in site["changed"]), site["changed"]
    assert docker("exec", SITE, *PSQL, "SELECT sum(net_score) FROM submissions") == before
    # Without the token nothing happens.
    assert requests.post(f"{pod['base']}/api/reset", json={"instance": INSTANCE}, timeout=30).status_code == 401
