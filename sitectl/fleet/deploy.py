"""The fleet as the CLI runs it from outside the swarm (``sitectl cluster deploy / status /
rm``): the manager node, deploying the pool's stack and waiting for the fleet, the pool's
status, removing every stack and token secret, reading the token file.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import requests

from sitectl.engine.swarm import NodeInfo, Swarm
from sitectl.errors import SitectlError, UsageError
from sitectl.fleet.compose import pool_compose
from sitectl.fleet.spec import POOL_PORT, POOL_STACK, ClusterSpec
from sitectl.progress import QUIET, Reporter


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
        The pool's status (:meth:`sitectl.fleet.pool.ClusterPool.status`) and ``pool_url``.

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
    The instances' state volumes stay on their nodes (``docker volume rm`` there)."""
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
