"""What the two pod tests share (tests/fleet/test_pod_agent.py, test_pod_services.py): the
``docker`` CLI, a container's output, and the sidecar agent started as ``sitectl k8s render``
starts it in a pod (``--engine pod``, SYS_ADMIN and SYS_PTRACE, the state volume, the token,
no Docker socket), then waited for until it serves.
"""
from __future__ import annotations

import subprocess
import time

import pytest
import requests

from sitectl.fleet.spec import AGENT_IMAGE


def docker(*args, check=True, timeout=600) -> str:
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def logs(name: str) -> str:
    """A container's output, both streams (the agent reports on stderr)."""
    r = subprocess.run(["docker", "logs", "--tail", "60", name], capture_output=True, text=True, timeout=60)
    return r.stdout + r.stderr


def start_agent(name: str, share: list[str], state_volume: str, token_file, site: str, instance: int, host: str,
                namespace: str, port: int, timeout: float = 600) -> str:
    """Run the sidecar agent container ``name`` in the namespaces ``share`` names and wait
    until it serves; returns its base URL."""
    docker("run", "-d", "--name", name, *share,
           "--cap-add", "SYS_ADMIN", "--cap-add", "SYS_PTRACE", "--security-opt", "apparmor=unconfined",
           "-v", f"{state_volume}:/var/lib/sitectl", "-v", f"{token_file}:/run/secrets/sitectl-token:ro",
           "-e", "SITECTL_SNAPSHOTS_DIR=/var/lib/sitectl/agent/snapshots", AGENT_IMAGE,
           "sitectl", "cluster", "agent", "--engine", "pod", "--sites", site, "--instance", str(instance),
           "--host", host, "--namespace", namespace, "--generation", "1", "--port", str(port))
    base = f"http://{host}:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{base}/status", timeout=3).text == "Ready for duty!":
                return base
        except requests.RequestException:
            pass
        assert docker("inspect", "-f", "{{.State.Running}}", name) == "true", logs(name)
        time.sleep(2)
    pytest.fail("the sidecar agent never served: " + logs(name))
