"""The engine protocol: everything the layers above ask of a container engine.

Three engines implement it, one module each: :mod:`sitectl.engine.docker` (a Docker engine,
the single-host case), :mod:`sitectl.engine.swarm` (the reset agent on a Swarm node, whose site
containers are Swarm tasks) and :mod:`sitectl.engine.pod` (the agent as a sidecar in a
Kubernetes pod, no engine at all). Nothing above this layer imports python-on-whales or builds
docker command lines; this module imports neither, so the types here cost nothing at start-up.
"""
from __future__ import annotations

import json
import os
import shlex
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from sitectl.errors import ContainerExited, EngineError, StepFailed

LABEL_PREFIX = "sitectl."


@dataclass(frozen=True)
class RunSpec:
    """Everything needed to start one site's container.

    Attributes:
        name: container name.
        image: image reference.
        publish: ``(host_address, host_port, container_port)``; an empty host address means
            all interfaces (``-p 7770:80``), as WebArena's commands do.
        command: command override (argv) or None for the image's default.
        env: environment variables.
        volumes: ``SRC:DST[:MODE]`` strings.
        labels: container labels (``sitectl.*``).
        network: network to attach, or None.
        aliases: the container's extra host names on that network (``--network-alias``).
        restart: Docker's restart policy (``--restart``).
    """

    name: str
    image: str
    publish: tuple[tuple[str, int, int], ...]
    command: tuple[str, ...] | None = None
    env: dict[str, str] = field(default_factory=dict)
    volumes: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    network: str | None = None
    aliases: tuple[str, ...] = ()
    restart: str = "no"


def run_argv(spec: RunSpec, *, with_labels: bool = True) -> list[str]:
    """The ``docker run`` argv equivalent to :meth:`Engine.run` of ``spec`` (for ``plan``)."""
    argv = ["docker", "run", "--name", spec.name, "-d"]
    for addr, hp, cp in spec.publish:
        argv += ["-p", f"{addr + ':' if addr else ''}{hp}:{cp}"]
    if spec.network:
        argv += ["--network", spec.network]
    for a in spec.aliases:
        argv += ["--network-alias", a]
    if spec.restart != "no":
        argv += ["--restart", spec.restart]
    for k, v in spec.env.items():
        argv += ["-e", f"{k}={v}"]
    for v in spec.volumes:
        argv += ["-v", v]
    if with_labels:
        for k, v in spec.labels.items():
            argv += ["--label", f"{k}={v}"]
    argv.append(spec.image)
    if spec.command:
        argv += list(spec.command)
    return argv


def format_argv(argv: list[str]) -> str:
    """Quote an argv for display (never executed through a shell)."""
    return shlex.join(argv)


@dataclass
class ContainerInfo:
    """What sitectl needs to know about one container."""

    name: str
    status: str  # created, running, exited, ...
    running: bool
    exit_code: int | None
    image: str
    labels: dict[str, str]
    image_id: str = ""


class Engine(ABC):
    """What sitectl's sites, stores, snapshots and operations ask of a container engine.

    Every name below is called from above this layer; an engine that cannot do one (a pod has
    no images to build) raises :class:`~sitectl.errors.EngineError` saying so.
    """

    # -- engine -------------------------------------------------------------------------
    @abstractmethod
    def ping(self) -> str:
        """The engine's server version (asked once per engine).

        Raises:
            EngineError: no engine answers (the message says how to start one).
        """

    @abstractmethod
    def reachable(self) -> bool:
        """True when the engine answers now (asked every time, unlike :meth:`ping`)."""

    @abstractmethod
    def running_execs(self, name: str) -> int:
        """How many ``exec`` processes run in container ``name`` now; 0 when it is gone."""

    # -- images -------------------------------------------------------------------------
    @abstractmethod
    def image_exists(self, tag: str) -> bool:
        """True when image ``tag`` is present."""

    @abstractmethod
    def image_id(self, tag: str) -> str | None:
        """The id (``sha256:...``) of image ``tag``, or None."""

    @abstractmethod
    def image_label(self, tag: str, key: str) -> str | None:
        """Label ``key`` of image ``tag`` (None when the image or the label is absent)."""

    def image_volumes(self, tag: str) -> list[str]:
        """The ``VOLUME`` paths of local image ``tag``.

        Raises:
            EngineError: this engine cannot inspect images (a pod's).
        """
        raise EngineError(f"cannot inspect image {tag} here")

    @abstractmethod
    def build(self, tag: str, context: Path, dockerfile: Path, args: dict[str, str],
              labels: dict[str, str] | None = None) -> None:
        """Build image ``tag`` (no registry pull).

        Raises:
            EngineError: the build failed, or this engine builds no images.
        """

    @abstractmethod
    def load_archive(self, path: Path, on_bytes=None) -> list[str]:
        """Load an image archive (``.tar``); return the loaded image names.

        Raises:
            EngineError: the archive is unreadable, or this engine loads no images.
        """

    # -- networks -----------------------------------------------------------------------
    @abstractmethod
    def ensure_network(self, name: str, labels: dict[str, str]) -> None:
        """Create network ``name`` unless it exists (a no-op where the platform owns networks)."""

    @abstractmethod
    def remove_network(self, name: str) -> None:
        """Remove network ``name`` if it exists and nothing uses it."""

    # -- containers ---------------------------------------------------------------------
    @abstractmethod
    def container(self, name: str) -> ContainerInfo | None:
        """Inspect container ``name``; None when it does not exist.

        Raises:
            EngineError: the engine did not answer.
        """

    @abstractmethod
    def replaced(self, name: str) -> bool:
        """True when the running container of ``name`` is not the one sitectl brought up
        (a platform restarted or re-created it), so its post-start steps and golden snapshot
        are owed; one cheap look, no inspect."""

    def keeps_data_when_absent(self, name: str) -> bool:
        """True when container ``name`` may be absent here (not running, not yet listed) while
        its data lives on in volumes: a Swarm service's named volumes between two tasks, a
        pod's ``emptyDir`` while the kubelet restarts it. Re-creating its site must then empty
        them (``remove(name, volumes=True)`` waits for it). False on one host, where an absent
        container has nothing left."""
        return False

    @abstractmethod
    def iter_containers(self, labels: dict[str, str | None]):
        """Containers carrying every label of ``labels`` (a None value: any value), as
        :class:`ContainerInfo`, inspected one at a time as the caller iterates."""

    def container_labels(self, labels: dict[str, str | None], keys: tuple[str, ...]) -> list[dict[str, str]]:
        """The labels named ``keys`` of every container (running or not) carrying every label of
        ``labels``, one dict per container; a label the container lacks or has empty is left
        out. Engines may answer this faster than :meth:`iter_containers`."""
        return [{k: c.labels[k] for k in keys if c.labels.get(k)} for c in self.iter_containers(labels)]

    def containers(self, labels: dict[str, str | None]) -> list[ContainerInfo]:
        """All containers (running or not) carrying every label of ``labels``."""
        return list(self.iter_containers(labels))

    @abstractmethod
    def memory_used(self, names: list[str]) -> dict[str, int]:
        """Memory in use per running container, bytes."""

    @abstractmethod
    def check_ports_free(self, spec: RunSpec, site: str) -> None:
        """Raise ``PortInUse`` when a host port of ``spec`` is taken."""

    @abstractmethod
    def run(self, spec: RunSpec) -> None:
        """Start a detached container from ``spec`` (never pulls).

        Raises:
            ImageMissing, PortInUse, EngineError.
        """

    @abstractmethod
    def start(self, name: str) -> None:
        """Start an existing stopped container."""

    @abstractmethod
    def remove(self, name: str, volumes: bool = False) -> None:
        """Remove container ``name`` if it exists (its state goes with it)."""

    @abstractmethod
    def logs_tail(self, name: str, lines: int = 20) -> str:
        """The last ``lines`` lines of the container's output."""

    def assert_running(self, name: str, site: str) -> None:
        """Raise ``ContainerExited`` with the last log lines when ``name`` is not running."""
        info = self.container(name)
        if info is None:
            raise ContainerExited(f"site {site!r}: container {name} disappeared")
        if not info.running:
            raise ContainerExited(
                f"site {site!r}: container {name} exited during start "
                f"(status {info.status}, exit code {info.exit_code}); last log lines:\n"
                + self.logs_tail(name)
            )

    @abstractmethod
    def exec(self, name: str, argv: list[str], timeout: float = 600) -> tuple[int, str]:
        """Run ``argv`` inside container ``name`` (no shell); return (exit code, output).
        ``timeout`` (seconds) bounds the wait; on expiry the exit code is 124."""

    def exec_checked(self, name: str, argv: list[str], what: str, timeout: float = 600) -> str:
        """:meth:`exec` that raises ``StepFailed`` (naming ``what``) on a non-zero exit."""
        rc, out = self.exec(name, argv, timeout)
        if rc != 0:
            raise StepFailed(f"{what}: exit code {rc}: {out.strip()[-2000:]}")
        return out

    @abstractmethod
    def copy_from(self, name: str, path: str, local: Path) -> None:
        """Copy ``path`` out of container ``name`` to ``local``.

        Raises:
            EngineError: the copy failed.
        """

    @abstractmethod
    def copy_to(self, local: Path, name: str, path: str) -> None:
        """Copy ``local`` into container ``name`` at ``path``.

        Raises:
            EngineError: the copy failed.
        """


class Adopted:
    """sitectl container name -> identity of the container sitectl brought up, kept in a JSON
    file (or in memory for None). Thread-safe: ``up`` brings sites up at once. Written through a
    unique temporary file and an atomic rename."""

    def __init__(self, path: Path | None):
        self.path = path
        self._lock = threading.Lock()
        self._map: dict[str, str] = {}
        if path is not None and path.is_file():
            try:
                self._map = {str(k): str(v) for k, v in json.loads(path.read_text()).items()}
            except (ValueError, TypeError, AttributeError):
                self._map = {}

    def get(self, name: str) -> str | None:
        with self._lock:
            return self._map.get(name)

    def set(self, name: str, ident: str | None) -> None:
        with self._lock:
            if ident is None:
                self._map.pop(name, None)
            else:
                self._map[name] = ident
            if self.path is None:
                return
            tmp = self.path.with_name(f".adopted-{os.getpid()}-{os.urandom(4).hex()}.tmp")
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
                json.dump(self._map, f)
            os.replace(tmp, self.path)
