"""What the parts of a fleet are called and where they answer: an instance's Swarm stack, its
agent's port, the token's Swarm secret; on Kubernetes an instance's namespace, a site's Service
and the :class:`Target` its sites are reached at. Shared by the Swarm side (compose, pool) and
the Kubernetes side (:mod:`sitectl.fleet.k8s`, :class:`sitectl.fleet.pool.K8sPool`).
"""
from __future__ import annotations

import hashlib

from sitectl.fleet.spec import AGENT_PORT, ClusterSpec
from sitectl.stack import Site
from sitectl.stack.target import PORT_STEP, Target


def stack_name(instance: int) -> str:
    """The Swarm stack of ``instance``: ``sitectl-i<K>``."""
    return f"sitectl-i{instance}"


def service_key(site: Site, key: str) -> str:
    """The Swarm service (compose key) of ``site``'s service container ``key``: ``<site>-<key>``
    (``classifieds-db``; a site name has no ``-``, so it never clashes with a site's)."""
    return f"{site.name}-{key}"


def persist_volume(site: Site, key: str, index: int, generation: int) -> str:
    """The named volume of path ``index`` of service ``key``'s ``persist`` list, for placement
    ``generation``: a new placement starts from an empty one, even on the node of the last."""
    return f"{site.name}-{key}-g{generation}-{index}"


def pod_container(key: str) -> str:
    """The container of service ``key`` in its site's pod: ``svc-<key>`` (DNS-1123)."""
    return "svc-" + key.replace("_", "-")


def agent_port(instance: int) -> int:
    return AGENT_PORT + PORT_STEP * instance


def token_secret_name(token: str) -> str:
    """The Swarm secret holding ``token``: named by a digest of it, since a secret can be
    neither read back nor changed (a new token is a new secret)."""
    return "sitectl-token-" + hashlib.sha256(token.encode()).hexdigest()[:12]


def instance_namespace(prefix: str, instance: int) -> str:
    return f"{prefix}-i{instance}"


def service_name(site: Site) -> str:
    """A site's Service: its name, ``_`` turned into ``-`` (DNS-1035), as ``Target.site_host``."""
    return site.name.replace("_", "-")


def instance_target(spec: ClusterSpec, prefix: str, instance: int) -> Target:
    """The Target of an instance on Kubernetes: sites at ``<site>.<ns>-i<K>.svc.cluster.local``."""
    return spec.target(instance, f"{instance_namespace(prefix, instance)}.svc.cluster.local", site_hosts=True)
