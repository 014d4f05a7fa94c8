"""Pydantic models of a stack file and of a health-check file.

A stack file declares the images sitectl may build, and per site: its kind, image, container
name, ports, command override, environment, volumes, post-start steps, health probes (by the
name of a file in ``healthchecks/``), accounts by role and state stores. See
``docs/stack-files.md`` for every field with an example.

Strings in ``url``, ``post_start[].exec`` and ``environment`` may hold placeholders that are
filled at run time, never at load time: ``{host}`` (the host name given on the command line
or in the config file), ``{origin}`` (``scheme://host:port`` of the site's first published
port), ``{url}`` (the site's base URL, e.g. ``{origin}/admin``), ``{port}`` (that host port),
``{scheme}`` (``http``) and ``{data}`` (the data folder given by ``--data-dir`` or the config
file, for archives such as the wiki's ZIM). ``{origin_SITE}`` is another site's origin (e.g.
``{origin_shopping}``), so a page can link to the sites of its own instance.
"""
from __future__ import annotations

import enum
import re
import string
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from sitectl.errors import UsageError

_PORT_RE = re.compile(r"^(\d{1,5}):(\d{1,5})\Z")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}\Z")
_CONTAINER_RE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}\Z")
_PLACEHOLDERS = {"host", "origin", "url", "port", "scheme", "data"}
#: ``{origin_<site>}``: the origin of another site of the same instance.
_SITE_ORIGIN_RE = re.compile(r"^origin_([a-z][a-z0-9_]{0,39})\Z")


class SiteKind(str, enum.Enum):
    """Application kinds; each has one site driver (``sitectl/sites``)."""

    magento_storefront = "magento-storefront"
    magento_admin = "magento-admin"
    postmill = "postmill"
    gitlab = "gitlab"
    kiwix = "kiwix"
    osm = "osm"
    homepage = "homepage"
    osclass = "osclass"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_placeholders(value: str, known: set[str] = _PLACEHOLDERS) -> str:
    """Raise ValueError unless every ``{...}`` in ``value`` is a bare known name (no format
    spec, conversion, attribute or index) and braces are balanced (``{{``/``}}`` escape them)."""
    try:
        parts = list(string.Formatter().parse(value))
    except ValueError as e:
        raise ValueError(f"bad braces in {value!r}: {e}") from None
    for _, name, spec, conv in parts:
        if name is None:
            continue
        site_origin = known is _PLACEHOLDERS and _SITE_ORIGIN_RE.fullmatch(name)
        if (name not in known and not site_origin) or spec or conv:
            shown = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
            extra = ", origin_<site>" if known is _PLACEHOLDERS else ""
            raise ValueError(f"unknown placeholder {shown} (known: {', '.join(sorted(known))}{extra})")
    return value


def _container_name(v: str) -> str:
    if not _CONTAINER_RE.fullmatch(v):
        raise ValueError(f"{v!r} is not a valid container name")
    return v


#: A container name (Docker's rule).
ContainerName = Annotated[str, AfterValidator(_container_name)]
#: An image reference; may use ``{seed}`` and ``{scale}``.
ImageRef = Annotated[str, Field(min_length=1), AfterValidator(lambda v: _check_placeholders(v, {"seed", "scale"}))]
#: A text filled in for the site at run time (environment values, volumes): known placeholders only.
Template = Annotated[str, AfterValidator(_check_placeholders)]


class Account(_Strict):
    """A login of a site for one role (``accounts.<role>`` in the stack file)."""

    username: str = Field(min_length=1)
    password: str = Field(min_length=1, repr=False)


class Step(_Strict):
    """One post-start step: an argv run inside the site's container (``docker exec``).

    No shell is involved: each list item is one argument, placeholders are filled per item.
    """

    name: str = Field(min_length=1)
    exec: list[str] = Field(min_length=1)
    #: Seconds the step may take before it counts as failed.
    timeout: float = Field(default=600, gt=0)
    #: Run it in this service's container (a key of the site's ``services``) instead of the
    #: site's own (e.g. loading the classifieds dump into its database container).
    service: str | None = None

    @field_validator("exec")
    @classmethod
    def _placeholders(cls, v: list[str]) -> list[str]:
        for item in v:
            _check_placeholders(item)
        return v


class Connect(_Strict):
    """How a SQL store is reached over the network instead of ``docker exec`` (``connect`` of a
    ``mysql`` or ``postgres`` store): from a process beside the site, e.g. a sidecar sharing the
    site's network namespace (``host: 127.0.0.1``). The password is read from the environment
    variable named by ``password_env`` when the store is used; it is never written in the file."""

    host: str = Field(default="127.0.0.1", pattern=r"^[A-Za-z0-9_.:-]{1,253}$")
    port: int = Field(ge=1, le=65535)
    user: str = Field(pattern=r"^[A-Za-z0-9_.@-]{1,64}$")
    password_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class StateStore(_Strict):
    """A place where a site keeps mutable state (``stores`` in the stack file).

    Kinds and their fields:
        ``mysql``: ``database``; ``client`` = argv prefix of a privileged ``mysql`` client in
        the container (default ``[mysql, -u, root]``); or ``connect`` (:class:`Connect`) to
        reach the server over the network with mysql-connector-python.
        ``postgres``: ``database``; ``client`` = argv prefix of a superuser ``psql`` (default
        ``[psql, -U, postgres]``); or ``connect`` to use psycopg over the network.
        ``files``: ``paths`` = folders in the container.
        ``redis``: ``client`` = argv prefix of ``redis-cli`` (default ``[redis-cli]``), ``db``;
        ``apart`` = key prefixes fingerprinted on their own (``redis keys PREFIX*``, e.g. the
        keys a site's jobs write, which :attr:`Jobs.writes` can then name).
        ``cache``: ``flush`` = argv run in the container after every restore of the site.
        ``elasticsearch``: ``url`` = the server as the container reaches it (default
        ``http://127.0.0.1:9200``); ``indices`` = index patterns (``magento2_*``), none of
        them ``sitectl-*`` (sitectl's copies).
    """

    kind: Literal["mysql", "postgres", "files", "redis", "cache", "elasticsearch"]
    url: str | None = None
    indices: list[str] = Field(default_factory=list)
    database: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]{1,64}$")
    paths: list[str] = Field(default_factory=list)
    client: list[str] | None = None
    flush: list[str] | None = None
    db: int = Field(default=0, ge=0, le=14)
    connect: Connect | None = None
    apart: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fields(self) -> "StateStore":
        if self.apart and self.kind != "redis":
            raise ValueError(f"a {self.kind} store cannot have apart (only redis stores)")
        if any(not re.fullmatch(r"[!-~]{1,200}", p) for p in self.apart):
            raise ValueError("apart prefixes are 1-200 printable ASCII characters without spaces")
        if self.kind in ("mysql", "postgres") and not self.database:
            raise ValueError(f"a {self.kind} store needs database")
        if self.connect is not None:
            if self.kind not in ("mysql", "postgres"):
                raise ValueError(f"a {self.kind} store cannot have connect (only mysql and postgres stores)")
            if self.client is not None:
                raise ValueError("a store takes client (docker exec) or connect (network), not both")
        if self.kind == "files":
            if not self.paths:
                raise ValueError("a files store needs paths")
            for p in self.paths:
                if not p.startswith("/") or ".." in p.split("/") or p.rstrip("/") == "":
                    raise ValueError(f"files path {p!r} must be absolute, not / and without '..'")
                if any(c in p for c in "\0\n\t"):
                    raise ValueError(f"files path {p!r} holds a NUL, newline or tab (the stack file's folders "
                                     "are named in sitectl's records one per line)")
        if self.kind == "cache" and not self.flush:
            raise ValueError("a cache store needs flush (an argv)")
        if self.kind == "elasticsearch":
            if not self.indices:
                raise ValueError("an elasticsearch store needs indices (index patterns, e.g. magento2_*)")
            for pat in self.indices:
                if not re.fullmatch(r"[a-z0-9*?][a-z0-9_.*?+-]{0,199}", pat) or pat.startswith("sitectl-"):
                    raise ValueError(f"index pattern {pat!r}: lower-case letters, digits, _ . + - and the wildcards * ?, "
                                     "not starting with sitectl- (sitectl's own copies)")
            if self.url is not None and not re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]{1,200}(:\d{1,5})?", self.url):
                raise ValueError(f"url {self.url!r}: http://HOST[:PORT] as the container reaches the server")
        elif self.url is not None or self.indices:
            raise ValueError(f"a {self.kind} store cannot have url or indices (only elasticsearch stores)")
        return self


class Jobs(_Strict):
    """A site's background jobs (``jobs`` in the stack file): what the application runs on its
    own, with no request behind it (Magento's cron, GitLab's Sidekiq). sitectl runs ``pause``
    inside the container before it copies, restores or fingerprints the site's stores and
    ``resume`` after, so golden is taken, a reset is made and ``verify --deep`` compares with
    no job writing (research/real-images.md §1.3: "snapshot and compare with cron quiesced").

    Fields:
        ``what``: what the jobs are, for messages (``Magento cron``).
        ``pause``: argv that returns once no job runs and none will start (exit 0), or fails.
        ``resume``: argv that lets the jobs run again.
        ``timeout``: seconds ``pause`` may take (a job in flight is waited for).
        ``writes``: the items the jobs write on their own between resets, as ``verify --deep``
        names them (fnmatch patterns: ``table cron_schedule``, ``redis keys resque:gitlab:stat:*``):
        a difference there is listed under ``jobs`` and does not fail ``verify --deep``; a reset
        still restores it.
    """

    what: str = Field(default="background jobs", min_length=1, max_length=80)
    pause: list[str] = Field(min_length=1)
    resume: list[str] = Field(min_length=1)
    timeout: float = Field(default=120, gt=0, le=3600)
    writes: list[str] = Field(default_factory=list)


class ImageBuild(_Strict):
    """An image sitectl builds with ``docker build`` (legacy builder) from a local context.

    ``context``, ``dockerfile`` and ``inputs`` are relative to the folder of the stack file
    that declares the image.
    ``tag``, ``requires`` and ``args`` values may use ``{seed}`` and ``{scale}``, so each seed
    and scale of a replica is its own image.
    """

    tag: str = Field(min_length=1)
    context: str
    dockerfile: str
    args: dict[str, str] = Field(default_factory=dict)
    #: Tags this image is built on (built first when absent); listed earlier in ``images``.
    requires: list[str] = Field(default_factory=list)
    #: Files and folders (relative to the stack file) whose content the image is made of;
    #: default: the Dockerfile's folder. Their hash (with the required images' hashes) is put
    #: on the image as label ``sitectl.source``; an image whose label differs is rebuilt.
    inputs: list[str] = Field(default_factory=list)
    #: Files from outside the context that the build needs, put into a copy of the context
    #: for the build: name inside the context -> path relative to the stack file's folder
    #: (the mini replicas' real application schemas, read from ``../shared/data/schemas/``).
    #: Part of the source hash; a missing one stops the build naming it.
    files: dict[str, str] = Field(default_factory=dict)
    #: Set by the loader: the folder of the stack file that declares this image, which its
    #: relative paths start from (a file that ``extends`` it may live elsewhere).
    base_dir: str = ""

    @model_validator(mode="after")
    def _placeholders(self) -> "ImageBuild":
        for v in [self.tag, *self.requires, *self.args.values()]:
            _check_placeholders(v, {"seed", "scale"})
        for name in self.files:
            parts = name.split("/")
            if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
                raise ValueError(f"files: {name!r} must be a relative path inside the context (no '..', '.' or empty parts)")
        return self


class Service(_Strict):
    """A container a site needs beside its own (``services.<name>`` of a site): VisualWebArena's
    classifieds database ``classifieds_db``, which the web container reaches as host ``db``
    (research/family-formats.md §4.1). sitectl starts a site's services before the site, on the
    instance's network, and removes and re-creates them with it: the site and its services are
    one unit (a reset by re-creation, ``down``). A service publishes no port.
    """

    name: str
    image: ImageRef
    #: File name of the official image archive, for ``sitectl images load``.
    image_archive: str | None = None
    container: ContainerName
    #: Host names the site's container reaches this one by, on the instance's network
    #: (``db``: the name the classifieds web image's ``config.php`` hard-codes).
    aliases: list[str] = Field(default_factory=list)
    command: list[str] | None = None
    environment: dict[str, Template] = Field(default_factory=dict)
    volumes: list[Template] = Field(default_factory=list)
    #: Docker's restart policy. The classifieds database needs ``always``: its first start
    #: fails in its init scripts and the restart brings the server up (family-formats.md §4.3).
    restart: Literal["no", "always", "on-failure", "unless-stopped"] = "no"
    #: Paths inside the container whose content a restart of the container keeps and a
    #: re-creation empties: the image's ``VOLUME`` paths (``/var/lib/mysql`` of the MySQL
    #: images, docs.docker.com "mysql" image page, "Where to Store Data"). On one host Docker's
    #: anonymous volumes do this without it; a cluster cannot (a Swarm task restarted is a new
    #: container, a Kubernetes container restarted keeps no image volume), so the cluster
    #: mounts a volume at each path (Swarm: a named volume of the placement; Kubernetes: an
    #: ``emptyDir`` of the pod) and sitectl empties it when it re-creates the site. The Swarm
    #: agent refuses an image whose ``VOLUME`` paths are not all listed.
    persist: list[str] = Field(default_factory=list)
    #: The working directory ``docker exec`` runs a post-start step in: the image's
    #: ``WORKDIR`` (``/`` when it sets none, as mysql:8.1). Docker reads it from the image; the
    #: Kubernetes sidecar agent cannot, and a server that changes its own directory (mysqld
    #: runs in its data folder) would otherwise decide it. None: the container's process's.
    workdir: str | None = None

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, v: str | None) -> str | None:
        if v is not None and (not v.startswith("/") or any(x in (".", "..") for x in v.split("/"))):
            raise ValueError(f"workdir: {v!r} must be an absolute path without '.' or '..'")
        return v

    @field_validator("persist")
    @classmethod
    def _persist(cls, v: list[str]) -> list[str]:
        for p in v:
            parts = p.split("/")
            if not p.startswith("/") or p == "/" or any(x in ("", ".", "..") for x in parts[1:]):
                raise ValueError(f"persist: {p!r} must be an absolute path without '.', '..' or empty parts, not /")
        if len(set(v)) != len(v):
            raise ValueError("persist: a path is listed twice")
        return v

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, v: list[str]) -> list[str]:
        for a in v:
            if not re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", a):
                raise ValueError(f"alias {a!r} is not a host name (lower-case letters, digits, -)")
        return v


class Site(_Strict):
    """One site of a stack. ``name`` is the WebArena site key (``shopping``, ``reddit``...)."""

    name: str
    kind: SiteKind
    #: Image reference; may use ``{seed}`` and ``{scale}`` (replica images).
    image: ImageRef
    #: File name of the official image archive, for ``sitectl images load`` (real stack).
    image_archive: str | None = None
    container: ContainerName
    ports: list[str] = Field(min_length=1)
    #: The application listens on the port of its own URL (GitLab's nginx after
    #: ``external_url``), so on instance N the first container port is the host port too.
    listens_on_url_port: StrictBool = False
    url: str = "{origin}"
    env_var: str = Field(pattern=r"^[A-Z][A-Z_]*$")
    command: list[str] | None = None
    environment: dict[str, Template] = Field(default_factory=dict)
    volumes: list[Template] = Field(default_factory=list)
    post_start: list[Step] = Field(default_factory=list)
    health: str | None = None
    accounts: dict[str, Account] = Field(default_factory=dict)
    stores: list[StateStore] = Field(default_factory=list)
    #: Background jobs paused around sitectl's work on the stores (:class:`Jobs`).
    jobs: Jobs | None = None
    #: Containers the site needs beside its own, by name (:class:`Service`).
    services: dict[str, Service] = Field(default_factory=dict)
    #: Sites whose state tasks change; ``sitectl reset`` with no site names resets these.
    mutable: bool = False
    #: Seconds ``up`` waits for the readiness probes.
    start_timeout: float = Field(default=300, gt=0)
    #: Files inside the container whose absence makes the image's entrypoint re-initialise its
    #: database at the next start (adhocore/docker-lemp's ``/run/mysqld/.init`` and
    #: ``/run/postgresql/.init``: research/real-images.md §1.1); ``sitectl doctor`` checks them.
    init_markers: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME_RE.fullmatch(v):
            raise ValueError("site names are lower-case letters, digits and _ (max 40)")
        return v

    @model_validator(mode="before")
    @classmethod
    def _service_names(cls, data):
        # Each service gets its key as its name, so errors can name it.
        if isinstance(data, dict) and isinstance(data.get("services"), dict):
            data = dict(data)
            data["services"] = {k: ({**v, "name": k} if isinstance(v, dict) else v)
                                for k, v in data["services"].items()}
        return data

    @model_validator(mode="after")
    def _steps_services(self) -> "Site":
        for k in self.services:
            if not _NAME_RE.fullmatch(k):
                raise ValueError(f"service name {k!r}: lower-case letters, digits and _ (max 40)")
        for st in self.post_start:
            if st.service is not None and st.service not in self.services:
                raise ValueError(f"post_start step {st.name!r} names service {st.service!r}, which the site does not "
                                 f"declare (services: {', '.join(self.services) or 'none'})")
        return self

    @field_validator("ports")
    @classmethod
    def _ports(cls, v: list[str]) -> list[str]:
        for p in v:
            m = _PORT_RE.fullmatch(p)
            if not m or not all(1 <= int(x) <= 65535 for x in m.groups()):
                raise ValueError(f"{p!r} is not HOST:CONTAINER with ports 1-65535")
        return v

    @field_validator("init_markers")
    @classmethod
    def _init_markers(cls, v: list[str]) -> list[str]:
        for m in v:
            if not m.startswith("/") or "\0" in m or "\n" in m:
                raise ValueError(f"{m!r} is not an absolute path")
        return v

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        _check_placeholders(v)
        if v.endswith("/"):
            raise ValueError("a base URL has no trailing slash (WebArena appends paths)")
        return v

    @property
    def host_ports(self) -> list[int]:
        """Host ports in declaration order."""
        return [int(p.split(":")[0]) for p in self.ports]

    @property
    def container_ports(self) -> list[int]:
        """Container ports in declaration order."""
        return [int(p.split(":")[1]) for p in self.ports]

    def account(self, role: str = "default") -> Account:
        """Return the account of ``role``; raises ``KeyError`` naming the known roles."""
        try:
            return self.accounts[role]
        except KeyError:
            raise KeyError(
                f"site {self.name!r} has no account for role {role!r} "
                f"(roles: {', '.join(self.accounts) or 'none'})"
            ) from None


class Defaults(_Strict):
    """Values used when neither the command line nor the config file gives one."""

    host: str = "127.0.0.1"
    #: Give each site its own host name under ``host`` (``shopping.localhost``; target.py).
    site_hosts: StrictBool = False
    seed: int = 0
    scale: Literal["tiny", "full"] = "tiny"


class Stack(_Strict):
    """A whole stack file: images to build and sites to run."""

    name: str
    description: str = ""
    #: The stack file this one was merged onto (relative path as written), or None.
    extends: str | None = None
    defaults: Defaults = Defaults()
    images: list[ImageBuild] = Field(default_factory=list)
    sites: dict[str, Site]
    #: Absolute path of the file this stack was loaded from (set by the loader).
    path: str = ""
    #: Every file the loader read to make this stack, by the absolute path it was named by
    #: (symbolic links not resolved): the file, the files it ``extends``, its sites'
    #: health-check files, each with ``(the path resolved, SHA-256 hex of the bytes read)``
    #: (set by the loader; what a memo of anything computed from the stack checks,
    #: :mod:`sitectl.ops.envvars`).
    sources: dict[str, tuple[str, str]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _site_names(cls, data):
        # Each site gets its key as its name, so errors and drivers can name it.
        if isinstance(data, dict) and isinstance(data.get("sites"), dict):
            data = dict(data)
            data["sites"] = {
                k: ({**v, "name": k} if isinstance(v, dict) else v)
                for k, v in data["sites"].items()
            }
        return data

    @model_validator(mode="after")
    def _unique(self) -> Stack:
        seen_c: dict[str, str] = {}
        seen_p: dict[int, str] = {}
        seen_a: dict[str, str] = {}
        for s in self.sites.values():
            for c, who in [(s.container, f"site {s.name!r}"),
                           *((v.container, f"service {k!r} of site {s.name!r}") for k, v in s.services.items())]:
                if c in seen_c:
                    raise ValueError(f"{seen_c[c]} and {who} share container {c!r}")
                seen_c[c] = who
            for k, v in s.services.items():
                for a in v.aliases:
                    if a in seen_a:
                        raise ValueError(f"{seen_a[a]} and service {k!r} of site {s.name!r} share network alias {a!r}")
                    seen_a[a] = f"service {k!r} of site {s.name!r}"
            for p in s.host_ports:
                if p in seen_p:
                    raise ValueError(f"sites {seen_p[p]!r} and {s.name!r} share host port {p}")
                seen_p[p] = s.name
        # A container's name is a host name on the network too: an alias equal to one would be
        # two hosts of one name (on instance 0, where names carry no prefix).
        for a, who in seen_a.items():
            if a in seen_c:
                raise ValueError(f"{who}: network alias {a!r} is the container name of {seen_c[a]}")
        for s in self.sites.values():
            texts = [s.url, *s.environment.values(), *s.volumes, *(a for st in s.post_start for a in st.exec),
                     *(x for v in s.services.values() for x in [*v.environment.values(), *v.volumes])]
            for t in texts:
                for _, name, _, _ in string.Formatter().parse(t):
                    m = name and _SITE_ORIGIN_RE.fullmatch(name)
                    if m and m.group(1) not in self.sites:
                        raise ValueError(f"site {s.name!r}: placeholder {{{name}}} names no site of this stack")
        return self

    def select(self, names: list[str] | tuple[str, ...] | None) -> list[Site]:
        """Return the sites named (all when ``names`` is empty), in stack order.

        Raises:
            sitectl.errors.UsageError: a name is not a site of this stack.
        """
        if not names:
            return list(self.sites.values())
        unknown = [n for n in names if n not in self.sites]
        if unknown:
            raise UsageError(
                f"unknown site {', '.join(map(repr, unknown))} in stack {self.name!r} "
                f"(sites: {', '.join(self.sites)})"
            )
        return [s for n, s in self.sites.items() if n in names]

    def reset_sites(self, names: list[str] | tuple[str, ...] | None = None) -> list[Site]:
        """The sites a reset restores: those named (see :meth:`select`), else every mutable
        site (``mutable: true`` in the stack file), in stack order. The one place that decides
        what a reset without a site list means (CLI, API, reset server, cluster, journal).

        Raises:
            sitectl.errors.UsageError: a name is not a site of this stack.
        """
        if names:
            return self.select(names)
        return [s for s in self.sites.values() if s.mutable]



class Probe(_Strict):
    """One health probe of a health-check file (``healthchecks/<kind>.yaml``).

    Types:
        ``http``: GET ``path`` (relative to the site's base URL, or to its origin when
        ``from_origin``) without following redirects; passes when the status is in
        ``status``, ``contains`` (if set) is in the body and ``absent`` (if set) is not,
        the media type is ``content_type`` (if set; ``image/png`` also needs the PNG
        signature, RFC 2083 §3.1), and the JSON value at ``json_nonempty`` (if set: a dotted
        path, ``.`` for the whole body) is a non-empty list or object. A redirect to another origin
        always fails, naming both origins (Magento redirects to its configured base URL).
        ``exec``: run ``argv`` in the container; passes on exit code 0.
        ``login_page``: the driver's login form is served.
        ``login``: the driver logs ``role`` in and runs WebArena's logged-in probe.
    """

    name: str
    type: Literal["http", "exec", "login_page", "login"]
    path: str = "/"
    from_origin: bool = False
    status: list[int] = Field(default_factory=lambda: [200])
    contains: str | None = None
    #: Text that must NOT be in the body (e.g. a placeholder a post-start step replaces).
    absent: str | None = None
    #: The response's media type (its Content-Type without parameters, case-insensitive), e.g.
    #: ``image/png``; one ending in ``/`` (``image/``) takes any subtype.
    content_type: str | None = Field(default=None, min_length=1)
    #: Dotted path of a JSON value in the body that must be a non-empty list or object (``.``:
    #: the body itself), e.g. a geocoder's results.
    json_nonempty: str | None = Field(default=None, min_length=1)
    #: Fill stack placeholders (``{origin_shopping}`` ...) in ``contains`` and ``absent`` for
    #: the instance probed (off by default: bodies may hold literal braces).
    fill: StrictBool = False
    argv: list[str] = Field(default_factory=list)
    role: str = "default"
    #: ``ready``: ``up`` waits for it; ``deep``: only ``verify`` runs it.
    level: Literal["ready", "deep"] = "deep"

    @model_validator(mode="after")
    def _fields(self) -> Probe:
        if self.fill:
            for v in (self.contains, self.absent):
                if v:
                    _check_placeholders(v)
        if self.type == "exec" and not self.argv:
            raise ValueError("an exec probe needs argv")
        if self.type != "http" and (self.content_type or self.json_nonempty):
            raise ValueError("content_type and json_nonempty are for http probes")
        if self.type in ("login_page", "login") and self.level == "ready":
            raise ValueError("login probes run in verify only (level: deep)")
        return self


class HealthSpec(_Strict):
    """A health-check file: the probes of one application kind."""

    kind: SiteKind
    probes: list[Probe] = Field(min_length=1)
    path: str = ""
