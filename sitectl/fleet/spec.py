"""What a fleet is: :class:`ClusterSpec` (stack, sites, how many instances, where), the fleet's
images, ports and paths, and the parsers of the CLI's ``--reserve-memory`` and ``--node-label``.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from sitectl.errors import UsageError
from sitectl.stack import Site, load_stack
from sitectl.stack.target import Target, validate_host

#: The image of the reset agent and the pool (stacks/agent/Dockerfile), built here.
AGENT_IMAGE = "sitectl/agent:0.1"
#: The image the agent's builds on (stacks/agent/Dockerfile ``BASE``).
AGENT_BASE = "sitectl/replica-runtime:0.1"
#: Instance K's agent answers on AGENT_PORT + 100·K of its node (no site port ends in 50).
AGENT_PORT = 9450
#: The pool's port on the manager.
POOL_PORT = 7565
POOL_STACK = "sitectl-pool"
#: Where the agent keeps its snapshot manifests and journal (a volume of the instance's stack).
STATE_DIR = "/var/lib/sitectl"
#: Where a Swarm secret is mounted in the agent and pool containers.
TOKEN_PATH = "/run/secrets/sitectl-token"
#: Memory reserved per container of an instance (a site's, a service's;
#: ``deploy.resources.reservations``), unless given.
DEFAULT_RESERVE = 256 << 20
#: Seconds a (re)deployed instance has to come up, golden and verified, before it is placed
#: on another node.
START_TIMEOUT = 900.0


def parse_size(text: str, what: str = "size") -> int:
    """``"256M"`` → bytes (suffixes K, M, G, powers of 1024; none: bytes).

    Raises:
        UsageError: anything else (naming ``what``: the option).
    """
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", str(text), re.I)
    if not m:
        raise UsageError(f"{what} {text!r}: give a number with K, M or G, e.g. 256M")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def parse_labels(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``["zone=a", "gpu"]`` → ``{"zone": "a", "gpu": ""}`` (an empty value: any value).

    Raises:
        UsageError: a key that is not a Docker label key.
    """
    out = {}
    for it in items:
        k, _, v = it.partition("=")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", k) or not re.fullmatch(r"[A-Za-z0-9._:/-]{0,128}", v):
            raise UsageError(f"--node-label {it!r}: give KEY or KEY=VALUE (letters, digits, . _ - in the key)")
        out[k] = v
    return out


@dataclass(frozen=True)
class ClusterSpec:
    """What the fleet is: which stack and sites each instance runs, how many, where.

    Attributes:
        stack: a stack name shipped in the agent image (``mini``, ``webarena``).
        sites: site names each instance runs (empty: all of the stack's).
        instances: N; instances 0..N-1.
        seed, scale: replica parameters.
        node_labels: a node must carry each (an empty value: any value).
        reserve: bytes of memory reserved per site.
        agent_image: image of the agent and the pool.
        token_secret: name of the Swarm secret with the token.
        log_format: the pool's log (``human`` or ``json``, docs/monitoring.md).
    """

    stack: str = "mini"
    sites: tuple[str, ...] = ()
    instances: int = 1
    seed: int = 0
    scale: str = "tiny"
    node_labels: dict[str, str] = field(default_factory=dict)
    reserve: int = DEFAULT_RESERVE
    agent_image: str = AGENT_IMAGE
    token_secret: str = ""
    start_timeout: float = START_TIMEOUT
    log_format: str = "human"

    def target(self, instance: int, host: str, site_hosts: bool = False) -> Target:
        """The :class:`Target` of ``instance`` placed on a node reached at ``host``; its stack
        holds only the fleet's ``sites`` (so URLs, environment variables and health list only
        what runs).

        Raises:
            UsageError: an unknown site name, or a chosen site whose stack-file values name a
                site left out (the homepage links to every site).
        """
        stack = load_stack(self.stack)
        keep = {s.name for s in stack.select(list(self.sites))} if self.sites else set(stack.sites)
        stack = stack.model_copy(update={"sites": {n: s for n, s in stack.sites.items() if n in keep}})
        t = Target(stack=stack, host=validate_host(host), instance=instance, seed=self.seed, scale=self.scale,
                   site_hosts=site_hosts)
        for site in stack.sites.values():
            try:
                [t.fill(v, site) for v in (*site.environment.values(), *site.volumes)]
                [t.fill(a, site) for step in site.post_start for a in step.exec]
            except KeyError as e:
                raise UsageError(f"site {site.name!r} needs site {str(e.args[0]).removeprefix('origin_')!r} "
                                 "(its stack-file values name it): add it to --sites or leave the first out") from None
        return t

    def chosen_sites(self, target: Target) -> list[Site]:
        """The sites each instance runs, in stack order."""
        return list(target.stack.sites.values())

    def need(self, target: Target) -> int:
        """Bytes an instance reserves: ``reserve`` per container (a site's and each of its
        service containers')."""
        return self.reserve * sum(1 + len(s.services) for s in self.chosen_sites(target))

    def digest(self) -> str:
        """12 hex digits naming what an instance's stack is made from (stack, sites, seed,
        scale, reservation, agent image, token secret): a pool that finds a stack of another
        digest deploys it again."""
        key = [self.stack, list(self.sites), self.seed, self.scale, self.reserve, self.agent_image, self.token_secret,
               sorted(self.node_labels.items())]
        return hashlib.sha256(repr(key).encode()).hexdigest()[:12]

    def pool_args(self) -> list[str]:
        """The pool's own options beyond :meth:`args` (its log format)."""
        return ["--log-format", self.log_format] if self.log_format != "human" else []

    def args(self) -> list[str]:
        """The options that carry this spec on a command line (pool and agent)."""
        return self.args_for(list(self.sites))

    def args_for(self, sites: list[str]) -> list[str]:
        """:meth:`args` with ``sites`` instead of the fleet's (a per-site agent)."""
        a = ["--stack", self.stack, "--seed", str(self.seed), "--scale", self.scale]
        if sites:
            a += ["--sites", ",".join(sites)]
        return a
