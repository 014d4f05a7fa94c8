"""The fleet's Swarm stacks as compose mappings (``docker stack deploy``): an instance's stack
(one service per site and its reset agent, all pinned to one node) and the pool's stack.
"""
from __future__ import annotations

from sitectl.engine.swarm import NodeInfo
from sitectl.fleet.naming import agent_port, persist_volume, service_key, stack_name
from sitectl.fleet.spec import POOL_PORT, STATE_DIR, ClusterSpec
from sitectl.sites.containers import run_spec, service_spec


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
    if spec.publish:
        svc["ports"] = [{"target": cp, "published": hp, "protocol": "tcp", "mode": "host"} for _, hp, cp in spec.publish]
    svc["networks"] = {"sites": {"aliases": list(spec.aliases)}} if spec.aliases else ["sites"]
    svc["deploy"] = {"placement": {"constraints": [constraint]},
                     "restart_policy": {"condition": "any", "delay": "1s"},
                     "resources": {"reservations": {"memory": str(reserve)}}}
    return svc


def instance_compose(spec: ClusterSpec, instance: int, node: NodeInfo, generation: int) -> dict:
    """The compose mapping of instance ``instance``'s stack placed on ``node``: one service per
    site (from the same :func:`sitectl.sites.containers.run_spec` as ``sitectl up``), one per
    service container of a site (``<site>-<key>``, from
    :func:`~sitectl.sites.containers.service_spec`, under its aliases) and the agent, all
    constrained to ``node``. ``generation`` counts placements: a new one starts the agent
    with an empty state volume."""
    target = spec.target(instance, node.addr)
    sites = spec.chosen_sites(target)
    constraint = f"node.id == {node.id}"
    services = {s.name: _service(run_spec(target, s), constraint, spec.reserve) for s in sites}
    for s in sites:
        # A site's service containers (the classifieds database, host ``db``): services of the
        # same stack on the same node, reached by their aliases on the stack's network. Swarm
        # restarts a task as a new container, so what the image keeps in its VOLUME paths
        # (``persist``) lives in named volumes of this placement: a restart keeps it (the
        # classifieds database's first start fails and the restart brings it up, as with
        # ``restart: always`` on one host); the agent empties them when it re-creates the site
        # (sitectl.engine.swarm.TaskEngine.remove).
        for k, v in s.services.items():
            svc = _service(service_spec(target, s, k), constraint, spec.reserve)
            # Its aliases name its task's own address (DNS round robin over the one task), as
            # a network alias names a container on one host; not a virtual IP in front of it.
            svc["deploy"]["endpoint_mode"] = "dnsrr"
            svc["volumes"] = [*svc.get("volumes", []),
                              *(f"{persist_volume(s, k, i, generation)}:{p}" for i, p in enumerate(v.persist))]
            services[service_key(s, k)] = svc
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
                    "--namespace", stack_name(instance), "--generation", str(generation), "--port", str(port),
                    "--agent-image", spec.agent_image],
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
                        "--port", str(port), "--public-url", f"http://{manager.addr}:{port}", *spec.pool_args()],
            "volumes": ["/var/run/docker.sock:/var/run/docker.sock"],
            "ports": [{"target": port, "published": port, "protocol": "tcp", "mode": "host"}],
            "secrets": [{"source": "token", "target": "sitectl-token", "mode": 0o400}],
            "labels": {"sitectl.cluster": "pool"},
            "deploy": {"placement": {"constraints": [f"node.id == {manager.id}"]},
                       "restart_policy": {"condition": "any", "delay": "2s"}},
        }},
        "secrets": {"token": {"external": True, "name": spec.token_secret}},
    }
