"""Which stack, host and instance a command acts on, and the names and URLs that follow.

Values come from, in order: the command line, the config file, the host recorded on the
running containers (label ``sitectl.host``), the stack file's ``defaults``. The config file is
``./sitectl.yaml`` or the file named by ``SITECTL_CONFIG``; it may set ``stack``, ``host``,
``site_hosts``, ``instance``, ``seed``, ``scale`` and ``data_dir``. Nothing here is hard-coded
per machine.

Site host names (``site_hosts``): every site gets its own name under the host, e.g.
``shopping.localhost`` and ``reddit.localhost`` instead of ``localhost`` for both. Browsers
scope cookies to the host name, not the port (RFC 6265 §8.5), so on one name the forum's and
the shop's ``PHPSESSID`` overwrite each other and no combined storage state of the two can
work; on their own names they never meet.
"""
from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sitectl.errors import UsageError

if TYPE_CHECKING:
    from sitectl.stack.model import Site, Stack

_HOST_RE = re.compile(r"^(?=.{1,253}\Z)[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\Z")
_CONFIG_KEYS = {"stack", "host", "site_hosts", "instance", "seed", "scale", "data_dir"}
#: Instance N publishes each port at the declared port + PORT_STEP * N (see docs/cli.md).
PORT_STEP = 100


def validate_host(host: str) -> str:
    """Return ``host`` if it is a DNS name or a dotted-quad IPv4 address.

    Raises:
        UsageError: anything else: empty, a scheme, a port, a path, spaces, shell or SQL
            characters, the unspecified address 0.0.0.0, or numeric forms such as ``127.1``
            (a name whose last label is all digits), which browsers and Docker read differently.
    """
    try:
        ip = ipaddress.IPv4Address(host)
    except ValueError:
        ip = None
    if ip is not None:
        if ip.is_unspecified:
            raise UsageError(f"invalid host {host!r}: 0.0.0.0 is not an address a browser can use")
        return host
    if not _HOST_RE.fullmatch(host) or host.rsplit(".", 1)[-1].isdigit():
        raise UsageError(
            f"invalid host {host!r}: give a host name or IPv4 address only "
            "(no scheme, port or path), e.g. 127.0.0.1 or shop.example.org"
        )
    return host


def is_loopback(host: str) -> bool:
    """True for ``localhost`` (any case, with or without subdomains) and 127.0.0.0/8."""
    h = host.lower().rstrip(".")
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        return False


def read_config(path: str | None = None) -> dict:
    """Read the config file (``SITECTL_CONFIG`` or ``./sitectl.yaml``); {} when there is none.

    Raises:
        UsageError: malformed YAML or an unknown key (the file and key are named).
    """
    p = Path(path or os.environ.get("SITECTL_CONFIG", "sitectl.yaml"))
    if p.exists() and not p.is_file():
        raise UsageError(f"{p}: config file is not a file")
    if not p.is_file():
        if path or os.environ.get("SITECTL_CONFIG"):
            raise UsageError(f"{p}: config file not found")
        return {}
    import yaml  # noqa: PLC0415 - slow third-party module at start-up (only when there is a config file)

    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise UsageError(f"{p}: malformed YAML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{p}: cannot read the config file: {e}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p}: the config file is a mapping")
    unknown = set(data) - _CONFIG_KEYS
    if unknown:
        raise UsageError(f"{p}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_CONFIG_KEYS))})")
    types = {"stack": str, "host": str, "site_hosts": bool, "instance": int, "seed": int, "scale": str,
             "data_dir": str}
    for k, v in data.items():
        if type(v) is not types[k]:  # bool is not an int here, 1.9 is not an instance
            raise UsageError(f"{p}: key {k!r} must be a {types[k].__name__}, not {v!r}")
    return data


@dataclass
class Target:
    """A stack at a host, as one isolated instance.

    Attributes:
        stack: the loaded stack.
        host: host name or IPv4 address the browser and harness use (no scheme, no port).
        site_hosts: give each site its own host name under ``host`` (:meth:`site_host`).
        instance: 0 for the default instance (WebArena's exact names and ports).
        seed, scale: replica seeding parameters (build args of the mini images).
        data_dir: folder substituted for ``{data}`` (e.g. where the wiki's ZIM is).
        publish_address: host address ports are published on: ``127.0.0.1`` for a loopback
            host, all interfaces otherwise (WebArena's ``-p 7770:80``).
    """

    stack: Stack
    host: str
    instance: int = 0
    seed: int = 0
    scale: str = "tiny"
    data_dir: str = field(default_factory=lambda: str(Path("data").resolve()))
    scheme: str = "http"
    site_hosts: bool = False

    @property
    def publish_address(self) -> str:
        return "127.0.0.1" if is_loopback(self.host) else ""

    # -- names --------------------------------------------------------------------------
    @property
    def network(self) -> str:
        """Name of the instance's Docker network."""
        return "sitectl" if self.instance == 0 else f"sitectl-i{self.instance}"

    def container(self, site: Site) -> str:
        """Container name of ``site``: WebArena's name for instance 0."""
        return site.container if self.instance == 0 else f"i{self.instance}-{site.container}"

    def service_container(self, site: Site, service: str) -> str:
        """Container name of ``site``'s service ``service`` (a key of ``site.services``):
        its stack-file name for instance 0, ``i<N>-`` before it on instance N."""
        name = site.services[service].container
        return name if self.instance == 0 else f"i{self.instance}-{name}"

    def containers_of(self, site: Site) -> list[str]:
        """Every container of ``site``: its services' (in stack-file order), then its own."""
        return [*(self.service_container(site, k) for k in site.services), self.container(site)]

    def labels(self, site: Site | None = None) -> dict[str, str]:
        """The ``sitectl.*`` labels put on the instance's containers and network."""
        out = {"sitectl.instance": str(self.instance), "sitectl.stack": self.stack.name}
        if site is not None:
            out.update({"sitectl.site": site.name, "sitectl.kind": site.kind.value, "sitectl.host": self.host,
                        "sitectl.site_hosts": "1" if self.site_hosts else "0"})
        return out

    # -- images -------------------------------------------------------------------------
    def image_ref(self, template: str) -> str:
        """Fill ``{seed}`` and ``{scale}`` in an image tag (replica images are per seed/scale)."""
        return template.format(seed=self.seed, scale=self.scale)

    def image(self, site: Site) -> str:
        """The image ``site`` runs, placeholders filled."""
        return self.image_ref(site.image)

    def image_build(self, tag: str):
        """The stack's build recipe whose filled tag is ``tag``, or None."""
        return next((b for b in self.stack.images if self.image_ref(b.tag) == tag), None)

    # -- URLs ---------------------------------------------------------------------------
    def host_port(self, site: Site, index: int = 0) -> int:
        """Host port ``index`` of ``site``: as declared for instance 0, plus
        ``PORT_STEP * instance`` for instance N (instances up to :func:`max_instance` never
        share a port)."""
        return site.host_ports[index] + PORT_STEP * self.instance

    def container_port(self, site: Site, index: int = 0) -> int:
        """Container port ``index``: as declared, except the first port of a site that
        ``listens_on_url_port`` (GitLab listens where ``external_url`` says), which is the host
        port on every instance."""
        if index == 0 and site.listens_on_url_port:
            return self.host_port(site, index)
        return site.container_ports[index]

    def site_host(self, site: Site) -> str:
        """The host name the browser uses for ``site``: ``host`` itself, or with
        ``site_hosts`` the site's own name under it, its name with ``_`` turned into ``-``
        (host names have no underscores, RFC 1123): ``shopping-admin.localhost``."""
        return f"{site.name.replace('_', '-')}.{self.host}" if self.site_hosts else self.host

    def origin(self, site: Site) -> str:
        """``scheme://host:port`` of the site's first published port (its own host name with
        ``site_hosts``)."""
        return f"{self.scheme}://{self.site_host(site)}:{self.host_port(site)}"

    def fill(self, template: str, site: Site) -> str:
        """Fill the placeholders of a stack-file string for ``site``."""
        values = {
            "host": self.site_host(site),
            "scheme": self.scheme,
            "port": str(self.host_port(site)),
            "origin": self.origin(site),
            "data": self.data_dir,
        }
        values.update({f"origin_{n}": self.origin(s) for n, s in self.stack.sites.items()})
        values["url"] = site.url.format(**values)
        return template.format(**values)

    def url(self, site: Site) -> str:
        """The site's base URL, as WebArena's environment variable holds it (no trailing /)."""
        return self.fill(site.url, site)

    def urls(self) -> dict[str, str]:
        """Base URL of every site, by site name."""
        return {name: self.url(s) for name, s in self.stack.sites.items()}


def max_instance(stack: Stack) -> int:
    """The highest instance number whose ports collide with no other instance's: instance N
    publishes port p + 100·N, so sites whose ports differ by 100·k meet at instance distance k
    (VisualWebArena's classifieds 9980 and WebArena's shop admin 7780: k = 22, so instances 0-21;
    WebArena's forum 9999 and homepage 4399 alone: k = 56). At most 99."""
    ports = [p for s in stack.sites.values() for p in s.host_ports]
    gaps = [abs(a - b) // PORT_STEP for a in ports for b in ports if a != b and (a - b) % PORT_STEP == 0]
    return min([99, *(g - 1 for g in gaps)])


def resolve_target(
    stack: str | None = None,
    host: str | None = None,
    instance: int | None = None,
    data_dir: str | None = None,
    config: str | None = None,
    recorded_host: str | None = None,
    seed: int | None = None,
    scale: str | None = None,
    site_hosts: bool | None = None,
    recorded_site_hosts: bool | None = None,
    cfg: dict | None = None,
) -> Target:
    """Build the :class:`Target` of a command from its options, the config file and defaults.

    Args:
        recorded_host: the host found on running containers (``sitectl.host``), used when
            neither the command line nor the config file gives one.
        site_hosts, recorded_site_hosts: per-site host names from the command line and from
            the running containers (``sitectl.site_hosts``); with them on and no host given
            anywhere, the host is ``localhost`` (an address has no names under it).
        cfg: the config file as :func:`read_config` returned it, when the caller read it
            already (else it is read here).

    Raises:
        UsageError, sitectl.errors.StackError: bad values, naming the option or file.
    """
    for opt, val in (("--stack", stack), ("--host", host), ("--data-dir", data_dir)):
        if val is not None and not str(val).strip():
            raise UsageError(f"{opt} is empty")
    from sitectl.stack.loader import load_stack  # noqa: PLC0415 - slow third-party module at start-up (pydantic)

    cfg = read_config(config) if cfg is None else cfg
    st = load_stack(stack or cfg.get("stack") or "mini")
    sh = next(v for v in (site_hosts, cfg.get("site_hosts"), recorded_site_hosts, st.defaults.site_hosts)
              if v is not None)
    h = host or cfg.get("host") or recorded_host or ("localhost" if sh and _is_ipv4(st.defaults.host) else st.defaults.host)
    if sh and _is_ipv4(str(h)):
        raise UsageError(
            f"--site-hosts names each site under the host (shopping.HOST), and {h} is an address: "
            "give a host name, e.g. --host localhost"
        )
    inst = instance if instance is not None else int(cfg.get("instance", 0))
    top = max_instance(st)
    if inst < 0 or inst > top:
        raise UsageError(f"--instance {inst}: give 0 to {top} (with this stack's ports, instance "
                         f"{top + 1} would publish a port of instance 0)")
    seed = seed if seed is not None else int(cfg.get("seed", st.defaults.seed))
    if seed < 0:
        raise UsageError(f"seed {seed}: give 0 or more")
    scale = scale or str(cfg.get("scale", st.defaults.scale))
    if scale not in ("tiny", "full"):
        raise UsageError(f"scale {scale!r}: give tiny or full")
    dd = data_dir or cfg.get("data_dir") or "data"
    t = Target(stack=st, host=validate_host(str(h)), instance=inst, seed=seed, scale=scale,
               data_dir=str(Path(dd).resolve()), site_hosts=bool(sh))
    if t.site_hosts:
        for s in st.sites.values():
            try:
                validate_host(t.site_host(s))
            except UsageError:
                raise UsageError(f"--site-hosts: site {s.name!r} would get the host name {t.site_host(s)!r}, "
                                 "which is not a valid host name (too long?)") from None
    return t


def _is_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
        return True
    except ValueError:
        return False
