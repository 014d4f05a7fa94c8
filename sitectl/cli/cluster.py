"""``sitectl cluster`` (a fleet on Docker Swarm) and ``sitectl k8s`` (Kubernetes manifests).
See docs/cluster.md."""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import click
from rich.table import Table

from sitectl.cli.common import monitor_options, out, read_or_make_token, run_guarded
from sitectl.errors import UsageError
from sitectl.paths import state_dir
from sitectl.progress import Reporter
from sitectl.stack.loader import STACKS_DIR
from sitectl.stack.target import validate_host


def _guard(f):
    """One clear error and its exit code for a SitectlError; ``--json`` output of the result."""
    @functools.wraps(f)
    def wrapper(as_json, **kw):
        run_guarded(lambda: f(as_json=as_json, **kw), as_json)
    return wrapper


def fleet_options(f):
    """What each instance of the fleet runs: --stack, --sites, --seed, --scale."""
    f = click.option("--scale", type=click.Choice(["tiny", "full"]), default="tiny", show_default=True,
                     help="Replica scale.")(f)
    f = click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Replica seed.")(f)
    f = click.option("--sites", default=None, help="Sites each instance runs, e.g. reddit,shopping (default: all).")(f)
    f = click.option("--stack", default="mini", show_default=True,
                     help="Stack shipped in the agent image: mini or webarena.")(f)
    return f


def _spec(stack: str, sites: str, seed: int, scale: str, **kw):
    """A validated :class:`sitectl.fleet.spec.ClusterSpec` (the stack must be a shipped one:
    the agent image holds only those)."""
    from sitectl.fleet.spec import ClusterSpec  # noqa: PLC0415 - the fleet loads only for the cluster commands

    if not (STACKS_DIR / f"{stack}.yaml").is_file():
        names = ", ".join(sorted(p.stem for p in STACKS_DIR.glob("*.yaml")))
        raise UsageError(f"--stack {stack!r}: a fleet runs a stack shipped in the agent image ({names}); "
                         "put another stack file into stacks/ and rebuild the image")
    names = tuple(s.strip() for s in (sites or "").split(",") if s.strip())
    if sites is not None and not names:
        raise UsageError(f"--sites {sites!r}: name at least one site, or leave --sites out for all of them")
    spec = ClusterSpec(stack=stack, sites=names, seed=seed, scale=scale, **kw)
    t = spec.target(0, "localhost")
    spec.chosen_sites(t)  # unknown site names: UsageError naming them
    return spec


def _engine(docker_host: str | None):
    from sitectl.engine.swarm import engine_at  # noqa: PLC0415 - the Swarm engine loads only for the cluster commands

    eng = engine_at(docker_host)
    eng.ping()
    return eng


def _default_token_file() -> Path:
    return state_dir() / "cluster-token"


docker_host_option = click.option(
    "--docker-host", default=None,
    help="Engine of a Swarm manager, e.g. tcp://10.0.0.2:2375 or ssh://root@manager (default: DOCKER_HOST).")
token_option = click.option(
    "--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="File with the fleet's token (created, mode 0600, if missing; default: <snapshots dir>/cluster-token).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")


@click.group()
def cluster():
    """A fleet of instances on a Docker Swarm: deploy, status, push-images, rm (docs/cluster.md)."""


@cluster.command("push-images")
@click.option("--node", "nodes", multiple=True, required=True,
              help="Engine URL of a node (repeat), e.g. tcp://10.0.0.5:2375 or ssh://root@node5.")
@click.option("--no-build", is_flag=True, help="Do not build missing images here; fail instead.")
@fleet_options
@click.option("--docker-host", default=None,
              help="The engine the images are built on and saved from (default: DOCKER_HOST, else the local one).")
@json_option
@_guard
def push_images_cmd(as_json, nodes, no_build, stack, sites, seed, scale, docker_host):
    """Copy the fleet's images (sites and agent) to each node: docker save | docker load, no registry."""
    from sitectl.fleet.images import push_images  # noqa: PLC0415 - the fleet loads only for the cluster commands

    spec = _spec(stack, sites, seed, scale)
    res = push_images(spec, _engine(docker_host), list(nodes), Reporter(), build=not no_build)
    if not as_json:
        for r in res:
            out.print(f"{r['node']}: copied {len(r['copied'])} image(s) in {r['seconds']} s")
    return {"nodes": res}


@cluster.command()
@click.option("--instances", type=click.IntRange(1, 50), required=True, help="How many instances (0..N-1).")
@click.option("--node-label", "node_labels", multiple=True,
              help="Place instances only on nodes with this label: KEY or KEY=VALUE (repeat).")
@click.option("--reserve-memory", default="256M", show_default=True, help="Memory reserved per container of an instance (a site's or a service's).")
@click.option("--start-timeout", type=click.FloatRange(30, 7200), default=900, show_default=True,
              help="Seconds an instance has to come up verified before it is placed on another node.")
@click.option("--wait", type=click.FloatRange(0, 7200), default=900, show_default=True,
              help="Seconds to wait for N idle instances (0: return once deployed).")
@click.option("--port", type=click.IntRange(1, 65535), default=7565, show_default=True,
              help="The pool's port on the manager.")
@click.option("--log-format", type=click.Choice(["human", "json"]), default="human", show_default=True,
              help="The pool's log: human lines, or one JSON object a line (docs/monitoring.md).")
@fleet_options
@docker_host_option
@token_option
@json_option
@_guard
def deploy(as_json, instances, node_labels, reserve_memory, start_timeout, wait, port, log_format, stack, sites, seed,
           scale, docker_host, token_file):
    """Deploy N instances (one stack each: sites + reset agent, on one node) and the pool
    that leases them; wait until all N are up, golden and verified."""
    from sitectl.engine.swarm import Swarm  # noqa: PLC0415 - the Swarm engine loads only for the cluster commands
    from sitectl.fleet import deploy as fleet  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.fleet.naming import token_secret_name  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.fleet.spec import parse_labels, parse_size  # noqa: PLC0415 - the fleet loads only for the cluster commands

    spec = _spec(stack, sites, seed, scale, instances=instances, node_labels=parse_labels(node_labels),
                 reserve=parse_size(reserve_memory, "--reserve-memory"), start_timeout=start_timeout,
                 log_format=log_format)
    swarm = Swarm(_engine(docker_host))
    fleet.manager_node(swarm)  # refused before the token file is made
    token = read_or_make_token(token_file or _default_token_file())
    spec = dataclasses.replace(spec, token_secret=token_secret_name(token))
    res = fleet.deploy(swarm, spec, token, Reporter(), wait=wait, port=port)
    if not as_json:
        _print_status(res)
        out.print(f"pool: {res['pool_url']}  (token in {token_file or _default_token_file()})")
    return res


@cluster.command()
@click.option("--port", type=click.IntRange(1, 65535), default=7565, show_default=True,
              help="The pool's port (as given to `cluster deploy`).")
@docker_host_option
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The token file `cluster deploy` used (default: <snapshots dir>/cluster-token).")
@json_option
@_guard
def status(as_json, port, docker_host, token_file):
    """Every instance: its node, state, lease and per-site health; the nodes; failovers."""
    from sitectl.engine.swarm import Swarm  # noqa: PLC0415 - the Swarm engine loads only for the cluster commands
    from sitectl.fleet.deploy import manager_node, pool_status  # noqa: PLC0415 - the fleet loads only for the cluster commands

    tf = token_file or _default_token_file()
    if not tf.exists():
        raise UsageError(f"{tf}: no token file; give the --token-file `sitectl cluster deploy` used")
    me = manager_node(Swarm(_engine(docker_host)))
    url = f"http://{me.addr}:{port}"
    res = {"pool_url": url, **pool_status(url, read_or_make_token(tf))}
    if not as_json:
        _print_status(res)
    return res


def _print_status(res: dict) -> None:
    t = Table("instance", "node", "state", "lease", "healthy sites", "error")
    for r in res.get("instances", []):
        p = r.get("placement") or {}
        sites = r.get("sites") or {}
        healthy = [n for n, s in sites.items() if isinstance(s, dict) and s.get("healthy")]
        lease = r.get("lease") or {}
        t.add_row(str(r["instance"]), f"{p.get('node', '-')} {p.get('addr', '')}".strip(), r["state"],
                  lease.get("client", "") + (f" (moved {lease['failovers']}x)" if lease.get("failovers") else ""),
                  f"{len(healthy)}/{len(sites)}", (r.get("error") or "")[:80])
    out.print(t)
    nodes = res.get("nodes") or []
    if nodes:
        out.print("nodes: " + ", ".join(f"{n['hostname']} ({n['addr']}, {n['state']}/{n['availability']})" for n in nodes))
    for f in res.get("failovers") or []:
        out.print(f"failover: lease of {f['lease']}: instance {f['from']} -> {f['to']} ({f['why']})")


@cluster.command("rm")
@docker_host_option
@json_option
@_guard
def rm(as_json, docker_host):
    """Remove the pool and every instance stack (their volumes stay on the nodes)."""
    from sitectl.engine.swarm import Swarm  # noqa: PLC0415 - the Swarm engine loads only for the cluster commands
    from sitectl.fleet.deploy import remove  # noqa: PLC0415 - the fleet loads only for the cluster commands

    gone = remove(Swarm(_engine(docker_host)), Reporter())
    if not as_json:
        out.print("removed: " + (", ".join(gone) or "nothing"))
    return {"removed": gone}


@cluster.command(hidden=True)
@click.option("--instance", type=click.IntRange(0, 99), required=True)
@click.option("--host", required=True, help="Address of this node (the sites' URLs).")
@click.option("--namespace", required=True, help="This instance's stack name.")
@click.option("--generation", type=click.IntRange(0), required=True)
@click.option("--port", type=click.IntRange(1, 65535), required=True)
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default="/run/secrets/sitectl-token")
@click.option("--engine", "engine_kind", type=click.Choice(["swarm", "pod"]), default="swarm",
              help="swarm: sites are Swarm tasks on this node; pod: a sidecar sharing its site's process namespace.")
@click.option("--site-hosts", is_flag=True, help="Each site at its own host name under --host.")
@click.option("--agent-image", default=None,
              help="This agent's image (on the node): it empties a service's volumes when a site is re-created.")
@fleet_options
@json_option
@_guard
def agent(as_json, instance, host, namespace, generation, port, token_file, engine_kind, site_hosts, agent_image,
          stack, sites, seed, scale):
    """The reset agent of one instance (inside the instance's stack, or a site's pod)."""
    # Up, golden, verify --deep (start_agent), then the reset and lease API of `sitectl serve`
    # for this one instance on --port until stopped.
    from sitectl.fleet.agent import start_agent  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.fleet.deploy import read_token  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.server import make_server, serve  # noqa: PLC0415 - the reset server loads only for the agent and pool commands

    spec = _spec(stack, sites, seed, scale, **({"agent_image": agent_image} if agent_image else {}))
    host = validate_host(host)
    token = read_token(token_file)
    reporter = Reporter()
    agent_pool = start_agent(spec, instance, host, namespace, generation, reporter, engine_kind=engine_kind,
                             site_hosts=site_hosts)
    reporter.step("agent", f"instance {instance} verified; serving on :{port}")
    # No probe loop of its own: the fleet's pool reads the agent's health (docs/monitoring.md).
    srv = make_server(agent_pool, token, ("0.0.0.0", port), public_url=f"http://{host}:{port}", probe_every=0,
                      title=f"sitectl reset agent, instance {instance}")
    serve(srv)


@cluster.command(hidden=True)
@click.option("--instances", type=click.IntRange(1, 50), required=True)
@click.option("--node-label", "node_labels", multiple=True)
@click.option("--reserve-memory", default="256M")
@click.option("--agent-image", default=None)
@click.option("--token-secret", required=True)
@click.option("--k8s", "on_k8s", is_flag=True, help="Run in Kubernetes (manifests of `sitectl k8s render`).")
@click.option("--k8s-namespace", default="sitectl", help="The pool's namespace (instances: <ns>-i<K>).")
@click.option("--start-timeout", type=click.FloatRange(30, 7200), default=900)
@click.option("--port", type=click.IntRange(1, 65535), default=7565)
@click.option("--public-url", required=True)
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default="/run/secrets/sitectl-token")
@monitor_options
@fleet_options
@json_option
@_guard
def pool(as_json, instances, node_labels, reserve_memory, agent_image, token_secret, on_k8s, k8s_namespace,
         start_timeout, port, public_url, token_file, log_format, private_metrics, probe_every, stack, sites, seed, scale):
    """The fleet's pool (runs as a service on a manager)."""
    # Place and heal the N instances (make_pool; K8sPool with --k8s) and serve leases and
    # resets on --port until stopped.
    from sitectl.fleet.deploy import read_token  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.fleet.pool import make_pool  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.fleet.spec import AGENT_IMAGE, parse_labels, parse_size  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.server import make_server, serve  # noqa: PLC0415 - the reset server loads only for the agent and pool commands

    spec = _spec(stack, sites, seed, scale, instances=instances, node_labels=parse_labels(node_labels),
                 reserve=parse_size(reserve_memory, "--reserve-memory"), agent_image=agent_image or AGENT_IMAGE,
                 token_secret=token_secret, start_timeout=start_timeout)
    token = read_token(token_file)
    reporter = Reporter()
    fleet_pool = make_pool(spec, token, k8s_namespace=k8s_namespace if on_k8s else None)
    srv = make_server(fleet_pool, token, ("0.0.0.0", port), public_url=public_url, log_format=log_format,
                      open_metrics=not private_metrics, probe_every=probe_every, title="sitectl cluster pool")
    fleet_pool.run_reconciler()  # after make_server: a port that cannot be bound stops the pool before it places anything
    reporter.step("pool", f"{spec.instances} instance(s) of {spec.stack}; serving on {public_url}")
    serve(srv)


@click.group()
def k8s():
    """Kubernetes manifests for a fleet (docs/cluster.md#kubernetes)."""


@k8s.command()
@click.option("--instances", type=click.IntRange(1, 50), required=True, help="How many instances.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write the manifests to (created).")
@click.option("--namespace", default="sitectl", show_default=True,
              help="The pool's namespace; instance K's is <NAMESPACE>-i<K>.")
@click.option("--storage-class", default=None, help="StorageClass of the PersistentVolumeClaims (default: the cluster's).")
@click.option("--volume-size", default="10Gi", show_default=True, help="Size of every PersistentVolumeClaim.")
@click.option("--reserve-memory", default="256M", show_default=True,
              help="Memory each site and service container requests.")
@click.option("--agent-image", default=None, help="Image of the reset agent and the pool (default sitectl/agent:0.1).")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File with the token for the Secret (created, mode 0600, if missing; default: <snapshots dir>/cluster-token).")
@click.option("--log-format", type=click.Choice(["human", "json"]), default="human", show_default=True,
              help="The pool's log: human lines, or one JSON object a line (docs/monitoring.md).")
@fleet_options
@json_option
@_guard
def render(as_json, instances, out_dir, namespace, storage_class, volume_size, reserve_memory, agent_image, token_file,
           log_format, stack, sites, seed, scale):
    """Write Kubernetes manifests: a StatefulSet per stateful site with the reset agent as a
    sidecar, Services, the pool Deployment, PVCs, readiness probes, Secrets."""
    from sitectl.fleet import k8s as k8smod  # noqa: PLC0415 - the fleet loads only for the cluster commands
    from sitectl.fleet.spec import AGENT_IMAGE, parse_size  # noqa: PLC0415 - the fleet loads only for the cluster commands

    spec = _spec(stack, sites, seed, scale, instances=instances, agent_image=agent_image or AGENT_IMAGE,
                 reserve=parse_size(reserve_memory, "--reserve-memory"), log_format=log_format)
    k8smod.check_options(spec, namespace, storage_class, volume_size)  # before the token file is made
    token = read_or_make_token(token_file or _default_token_file())
    files = k8smod.write(spec, out_dir, token, namespace=namespace, storage_class=storage_class,
                         volume_size=volume_size)
    if not as_json:
        for f in files:
            out.print(str(f))
    return {"files": [str(f) for f in files]}

