"""The reset agent of one instance (``sitectl cluster agent``, inside its stack or a site's pod):
its engine, its state folder, its start-up (up, golden, ``verify --deep``) and the HTTP
client the pool reaches it with (:class:`AgentClient`). The face (:mod:`sitectl.cli.cluster`)
serves the :class:`Pool` that :func:`start_agent` returns with :mod:`sitectl.server`.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import requests

from sitectl.engine.pod import PodEngine
from sitectl.engine.swarm import TaskEngine
from sitectl.errors import SitectlError, UsageError, VerifyFailed
from sitectl.fleet.images import check_persist
from sitectl.fleet.naming import pod_container, service_key
from sitectl.fleet.spec import ClusterSpec
from sitectl.ops import checks
from sitectl.ops.lifecycle import up
from sitectl.ops.pool import Pool, default_reset
from sitectl.ops.reset import reset
from sitectl.paths import state_dir
from sitectl.progress import QUIET, Reporter
from sitectl.sites.containers import service_spec
from sitectl.stack import Site
from sitectl.stack.target import Target


def agent_engine(target: Target, sites: list[Site], namespace: str, adopted: Path | None,
                 helper_image: str | None = None) -> TaskEngine:
    """The agent's engine: sitectl's container names of ``sites`` and of their service
    containers mapped to their Swarm services (:mod:`sitectl.fleet.compose`), with the
    service containers' ``persist`` paths (emptied with ``helper_image`` on a re-creation)."""
    services = {target.container(s): f"{namespace}_{s.name}" for s in sites}
    services.update({target.service_container(s, k): f"{namespace}_{service_key(s, k)}"
                     for s in sites for k in s.services})
    persist = {target.service_container(s, k): v.persist for s in sites for k, v in s.services.items()}
    return TaskEngine(services, adopted=adopted, persist=persist, helper_image=helper_image)


def pod_containers(target: Target, site: Site) -> dict[str, dict]:
    """What :class:`~sitectl.engine.pod.PodEngine` expects in ``site``'s pod: the site's
    container and its service containers (image, labels, service key, ``persist`` paths)."""
    out = {target.container(site): {"image": target.image(site), "labels": target.labels(site)}}
    for k, v in site.services.items():
        spec = service_spec(target, site, k)
        out[spec.name] = {"image": spec.image, "labels": spec.labels, "service": k, "persist": list(v.persist),
                          "workdir": v.workdir, "pod_container": pod_container(k)}
    return out


def prepare_state_dir(generation: int) -> None:
    """Start the agent's state folder for placement ``generation``: empty it when it holds
    another placement's manifests (a node the instance ran on before)."""
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


def start_agent(spec: ClusterSpec, instance: int, host: str, namespace: str, generation: int,
                reporter: Reporter = QUIET, engine_kind: str = "swarm", site_hosts: bool = False) -> Pool:
    """The reset agent of ``instance`` (``sitectl cluster agent``, inside its stack): bring
    the instance's site tasks up as ``sitectl up`` does (post-start steps, health probes, golden
    snapshot), check them with ``verify --deep``; returns the one-instance :class:`Pool` whose
    reset and lease API (that of ``sitectl serve``) the agent then serves for this one instance
    until stopped (the face makes and runs the server: :mod:`sitectl.cli.cluster`).

    ``engine_kind``: ``swarm`` (the sites are Swarm tasks on this node,
    :class:`sitectl.engine.swarm.TaskEngine`) or ``pod`` (a sidecar sharing the site's process
    namespace, :class:`sitectl.engine.pod.PodEngine`; one site).

    Raises:
        VerifyFailed: the instance did not pass verify (the agent exits; Swarm or the kubelet
            starts it again).
        UsageError: ``pod`` with other than one site.
        Any error of ``up``.
    """
    prepare_state_dir(generation)
    target = spec.target(instance, host, site_hosts=site_hosts)
    sites = spec.chosen_sites(target)
    adopted = state_dir().parent / "adopted.json"
    if engine_kind == "pod":
        if len(sites) != 1:
            raise UsageError("--engine pod: give the one site of this pod (--sites NAME)")
        engine = PodEngine(pod_containers(target, sites[0]), adopted=adopted, site=sites[0].name)
        engine.ping()
    else:
        engine = agent_engine(target, sites, namespace, adopted, helper_image=spec.agent_image)
        engine.ping()
        check_persist(target, sites, engine)
    check_images = engine_kind != "pod"
    reporter.step("agent", f"instance {instance} on {host}: bringing up {', '.join(s.name for s in sites)}")
    up(target, sites, engine, reporter, build=False, check_images=check_images)
    rep = checks.verify_report(target, sites, engine, deep=True)
    if not rep["ok"] and any(not st["ok"] for st in rep.get("state", [])):
        # The state is not golden: an agent that restarted while a worker had changed the
        # instance (a changed password can fail a login probe too). Reset, check again. The
        # pool sees the agent's new boot id and moves the instance's lease.
        reporter.step("agent", "state differs from golden after a restart: resetting")
        reset(target, sites, engine, reporter=reporter)
        rep = checks.verify_report(target, sites, engine, deep=True)
    if not rep["ok"]:
        bad = [f"{r['site']}/{r['probe']}: {r['detail']}" for r in rep["results"] if not r["ok"]]
        bad += [f"{s['site']}/{s['store']}: differs from golden" for s in rep.get("state", []) if not s["ok"]]
        raise VerifyFailed("instance did not pass verify --deep: " + "; ".join(bad))

    def agent_reset(t: Target, names, full, eng) -> dict:
        # A site container replaced since (Swarm started a new task, the kubelet restarted it)
        # is new to sitectl: bring it up first (post-start steps, golden from the fresh image).
        if any(eng.replaced(c) for s in sites for c in t.containers_of(s)):  # one cheap look per container
            reporter.step("agent", "a site container was replaced: bringing it up before the reset")
            up(t, sites, eng, reporter, build=False, check_images=check_images)
        return default_reset(t, names, full, eng)

    return Pool([target], engine, reset_fn=agent_reset, sites={instance: [s.name for s in target.stack.reset_sites()]})
