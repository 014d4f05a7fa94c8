"""Engine layer, Swarm half: every Docker Swarm call sitectl makes (python-on-whales).

Two classes over :class:`sitectl.engine.docker.DockerEngine`:

* :class:`TaskEngine`, the reset agent's engine (``sitectl cluster agent``). On a Swarm node
  the site containers are *tasks* that Swarm creates and names (``<stack>_<service>.1.<id>``);
  sitectl's operations address containers by the names of the stack file (``shopping``,
  ``i3-forum``). TaskEngine maps each such name to the running task container of its service
  on this node, so ``up``, ``reset``, ``verify`` and the snapshot stores run unchanged. Creating
  and removing a container become what they are under Swarm: removing the task's container
  (Swarm starts a fresh task from the image) and waiting for the new task.
* :class:`Swarm`, a manager's view: nodes, stacks (``docker stack deploy`` from a compose
  mapping, with ``--resolve-image never``: no registry is asked), tasks and secrets.

Docker's references: docs.docker.com "Deploy a stack to a swarm", "docker stack deploy",
"Compose file version 3 reference" (``deploy``: placement, resources, restart_policy; ports in
long syntax with ``mode: host``).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException, NoSuchContainer
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed

from sitectl.engine.base import Adopted, ContainerInfo, Engine, RunSpec
from sitectl.engine.docker import DockerEngine, _one_line
from sitectl.errors import ContainerExited, EngineError, ImageMissing

#: Container label Swarm puts on every task container: the service's full name.
SERVICE_LABEL = "com.docker.swarm.service.name"
#: Seconds :meth:`TaskEngine.run` waits for Swarm to start a task on this node.
TASK_WAIT = 180.0


def engine_at(url: str | None) -> DockerEngine:
    """An :class:`Engine` for the Docker engine at ``url`` (``tcp://host:2375``,
    ``ssh://user@host``, ``unix:///path``); the default engine (``DOCKER_HOST`` or the local
    socket) for None."""
    return DockerEngine(DockerClient(host=url) if url else None)


class TaskEngine(DockerEngine):
    """The engine of one node, where a stack's site containers are Swarm tasks.

    Args:
        services: container name as sitectl knows it (``Target.container(site)``) -> full
            Swarm service name (``<stack>_<service>``). Other names pass through unchanged.
        client: the node's engine (the agent mounts the node's socket).
        task_wait: seconds :meth:`run` waits for a new task.
        persist: service container name -> the paths of its ``persist`` list (named volumes
            of the placement, :mod:`sitectl.fleet.compose`): :meth:`remove` with ``volumes``
            empties them before the task goes, so the next task starts from an empty data
            folder as a re-created container does on one host. A new task of such a container
            is the old one restarted (its data is in those volumes): :meth:`container` reports
            it without adoption and :meth:`replaced` is False for it.
        helper_image: the image :meth:`remove` empties those volumes with (the agent's: it is
            on every node, with ``find``).
        adopted: JSON file listing the task containers sitectl has brought up (post-start
            steps run, golden taken). A running task not in it is new to sitectl:
            :meth:`container` reports it missing, so ``up`` takes it through :meth:`run`
            (which adopts it) and runs its post-start steps, as for a new container. Kept on
            the agent's state volume, so an agent that restarts does not take golden again
            from a container that served leases. None: in memory only.
    """

    def __init__(self, services: dict[str, str], client: DockerClient | None = None, task_wait: float = TASK_WAIT,
                 adopted: Path | None = None, persist: dict[str, list[str]] | None = None,
                 helper_image: str | None = None):
        super().__init__(client)
        self.services = dict(services)
        self._by_service = {v: k for k, v in self.services.items()}
        #: Service containers (keys of ``persist``): a new task of one is the same container
        #: restarted (its data is in the placement's named volumes), not a new one.
        self.kept = set(persist or {})
        self.persist = {k: list(v) for k, v in (persist or {}).items() if v}
        self.helper_image = helper_image
        self.task_wait = task_wait
        self._names: dict[str, str] = {}  # sitectl name -> current task container name
        self._gone: set[str] = set()  # ids of task containers sitectl removed
        self._adopted = Adopted(adopted)

    def _adopt(self, name: str, cid: str | None) -> None:
        self._adopted.set(name, cid)

    def _listed(self, name: str, *states: str) -> list:
        """The task containers of ``name``'s service on this node in ``states`` (default
        ``running``): one ``docker ps``."""
        svc = self.services[name]
        filters = [("label", f"{SERVICE_LABEL}={svc}"), *(("status", st) for st in states or ("running",))]
        try:
            return self.docker.container.list(filters=filters)
        except DockerException as e:
            raise EngineError(f"docker ps for service {svc} failed: {_one_line(e)}") from None

    def _task(self, name: str):
        """The running task container of ``name``'s service (newest first), or None."""
        found = [c for c in self._listed(name) if c.id not in self._gone]
        if not found:
            self._names.pop(name, None)
            return None
        c = max(found, key=lambda c: c.created)
        self._names[name] = c.name
        return c

    def _real(self, name: str) -> str | None:
        """The task container name ``name`` stands for (resolved once, again after a remove or
        when it stopped running); ``name`` itself when it is not a service's; None when its
        service has no running task here (never a same-named container of something else)."""
        if name not in self.services:
            return name
        if name not in self._names:
            self._task(name)
        return self._names.get(name)

    def _no_task(self, name: str) -> str:
        return f"No such container: {name} (no running task of service {self.services[name]} on this node)"

    # -- containers -------------------------------------------------------------------------
    def container(self, name: str) -> ContainerInfo | None:
        """The running task of ``name``'s service as :class:`ContainerInfo` (its ``name`` is the
        task container's); None when none runs (a stopped task is Swarm's to replace)."""
        if name not in self.services:
            return super().container(name)
        c = self._task(name)
        if c is None or (self._adopted.get(name) != c.id and name not in self.kept):
            return None
        try:
            return self._info(c)
        except NoSuchContainer:
            self._names.pop(name, None)
            return None

    def replaced(self, name: str) -> bool:
        """True when the running task of ``name``'s service is not the one sitectl adopted
        (Swarm started a new one, or none runs): one ``docker ps``, no inspect. False for a
        name that is not a service's, and for a site's service container (a new task of it is
        the old one restarted: same volumes, as Docker's restart policy on one host)."""
        if name not in self.services or name in self.kept:
            return False
        return self._adopted.get(name) not in [c.id for c in self._listed(name)]

    def keeps_data_when_absent(self, name: str) -> bool:
        """True for a service container with ``persist`` volumes (named volumes of the stack)."""
        return bool(self.persist.get(name))

    def iter_containers(self, labels: dict[str, str | None]):
        """Running containers carrying ``labels`` (the stopped ones are finished Swarm tasks)."""
        filters = [("label", k if v is None else f"{k}={v}") for k, v in labels.items()] + [("status", "running")]
        for c in self.docker.container.list(filters=filters):
            if c.id in self._gone:
                continue
            try:
                info = self._info(c)
            except NoSuchContainer:
                continue
            # A task of a mapped service is reported under sitectl's name for it, as callers
            # compare names with the stack's (Target.container, Target.service_container).
            mine = self._by_service.get(info.labels.get(SERVICE_LABEL, ""))
            yield dataclasses.replace(info, name=mine) if mine else info

    #: Labels come from this engine's own listing (running task containers), not Docker's.
    container_labels = Engine.container_labels

    def check_ports_free(self, spec: RunSpec, site: str) -> None:
        """Nothing to check: Swarm publishes the ports (``mode: host``) and reports a clash as
        a task error."""

    def ensure_network(self, name: str, labels: dict[str, str]) -> None:
        """Nothing to do: the stack declares its network."""

    def remove_network(self, name: str) -> None:
        """Nothing to do: ``docker stack rm`` removes the stack's network."""

    def run(self, spec: RunSpec) -> None:
        """Wait for Swarm to run a new task of ``spec.name``'s service on this node (the stack
        was deployed with the same :class:`RunSpec`, see :mod:`sitectl.fleet.compose`).

        Raises:
            ImageMissing: the image is not on this node (``sitectl cluster push-images``).
            EngineError: no task ran within ``task_wait`` seconds.
        """
        if spec.name not in self.services:
            return super().run(spec)
        if not self.image_exists(spec.image):
            raise ImageMissing(f"image {spec.image} is not on this node; copy it with `sitectl cluster push-images`")
        self._adopt(spec.name, self._wait_task(spec.name).id)

    def start(self, name: str) -> None:
        """A stopped task is never started again: wait for the task Swarm starts instead."""
        if name not in self.services:
            return super().start(name)
        self._adopt(name, self._wait_task(name).id)

    def _wait_task(self, name: str):
        deadline = time.monotonic() + self.task_wait
        while time.monotonic() < deadline:
            c = self._task(name)
            if c is not None:
                return c
            time.sleep(0.5)
        raise EngineError(f"Swarm ran no task of service {self.services[name]} on this node within "
                          f"{self.task_wait:g} s; see `docker service ps {self.services[name]}` on a manager")

    def remove(self, name: str, volumes: bool = False) -> None:
        """Remove the running task container of ``name``'s service (adopted or not): Swarm
        replaces it with a new task from the image (restart policy ``any``), which :meth:`run`
        waits for.

        With ``volumes``, a service container's ``persist`` volumes are emptied first, so the
        new task starts from nothing, as a re-created container does on one host; this never
        returns without having emptied them. A task that is not running (a crash, Swarm
        between two tasks) is waited for, up to ``task_wait`` seconds: Swarm starts the next
        one on the same volumes, and only a paused running task keeps Swarm from starting
        another while the volumes are emptied.

        Raises:
            EngineError: no task ran within ``task_wait`` seconds, a ``persist`` path is not a
                named volume of the task (a stack deployed by another sitectl), or emptying
                failed (the task is then resumed and left in place).
        """
        if name not in self.services:
            return super().remove(name, volumes)
        self._adopt(name, None)
        if volumes and self.persist.get(name):
            c = self._pause_running_task(name)
            self._empty_volumes(name, c)
        else:
            c = self._task(name)
        self._names.pop(name, None)
        if c is None:
            return
        self._gone.add(c.id)
        # (If this fails, a paused task is left: the next re-creation takes it as it is.)
        super().remove(c.name, volumes)

    def _pause_running_task(self, name: str):
        """The running task container of ``name``'s service, paused (frozen: it writes
        nothing, and Swarm, which sees it running, starts no other task meanwhile). A task
        already paused (by an agent that died while emptying) is taken as it is."""
        deadline = time.monotonic() + self.task_wait
        while time.monotonic() < deadline:
            found = [c for c in self._listed(name, "running", "paused") if c.id not in self._gone]
            if found:
                c = max(found, key=lambda c: c.created)
                if c.state.paused:
                    return c
                try:
                    self.docker.container.pause(c.id)
                    return c
                except DockerException:
                    pass  # it stopped in between: Swarm starts the next one
            time.sleep(0.5)
        raise EngineError(f"no running task of service {self.services[name]} on this node within {self.task_wait:g} s, "
                          "so its volumes could not be emptied for the re-creation; see "
                          f"`docker service ps {self.services[name]}` on a manager")

    def _empty_volumes(self, name: str, c) -> None:
        """Empty the named volumes of paused task container ``c`` at ``self.persist[name]``
        with a throw-away container of :attr:`helper_image` (no network, the volumes only;
        ``find -delete`` follows no symbolic link). The caller removes ``c`` next; on an error
        ``c`` is resumed."""
        done = False
        try:
            try:
                mounts = {m.destination: m for m in self.docker.container.inspect(c.id).mounts}
            except DockerException as e:
                raise EngineError(f"docker inspect {c.name} failed: {_one_line(e)}") from None
            vols = []
            for p in self.persist[name]:
                m = mounts.get(p)
                if m is None or m.type != "volume" or not m.name:
                    raise EngineError(f"container {c.name}: {p} is not a named volume of its task, so a re-creation "
                                      "cannot start it empty; deploy the instance again (`sitectl cluster deploy`)")
                vols.append(m.name)
            if not self.helper_image:
                raise EngineError(f"container {c.name}: no image to empty its volumes with")
            # Nothing else may hold them: Swarm runs one task of the service at a time.
            for v in vols:
                try:
                    others = [o.name for o in self.docker.container.list(filters=[("volume", v), ("status", "running")])
                              if o.id != c.id]
                except DockerException as e:
                    raise EngineError(f"docker ps for volume {v} failed: {_one_line(e)}") from None
                if others:
                    raise EngineError(f"volume {v} is in use by {', '.join(others)} besides {c.name}: not emptied")
            targets = [f"/empty/{i}" for i in range(len(vols))]
            try:
                self.docker.run(self.helper_image, [*targets, "-mindepth", "1", "-delete"], entrypoint="find",
                                volumes=[(v, t) for v, t in zip(vols, targets)], networks=["none"], user="0",
                                remove=True)
            except DockerException as e:
                raise EngineError(f"emptying the volumes of {c.name} ({', '.join(vols)}) failed: "
                                  f"{_one_line(e)}") from None
            done = True
        finally:
            if not done:  # whatever failed: the task runs on as it was
                with contextlib.suppress(DockerException):
                    self.docker.container.unpause(c.id)

    def running_execs(self, name: str) -> int:
        real = self._real(name)
        return 0 if real is None else super().running_execs(real)

    def memory_used(self, names: list[str]) -> dict[str, int]:
        real = {r: n for n in names if (r := self._real(n)) is not None}
        return {real.get(k, k): v for k, v in super().memory_used(list(real)).items()}

    def logs_tail(self, name: str, lines: int = 20) -> str:
        real = self._real(name)
        return self._no_task(name) if real is None else super().logs_tail(real, lines)

    def assert_running(self, name: str, site: str) -> None:
        if name in self.services and self._real(name) is None:

            raise ContainerExited(f"site {site!r}: {self._no_task(name)}")
        super().assert_running(self._real(name), site)

    def exec(self, name: str, argv: list[str], timeout: float = 600) -> tuple[int, str]:
        real = self._real(name)
        if real is None:
            return 1, self._no_task(name)
        rc, out = super().exec(real, argv, timeout)
        if rc != 0 and ("No such container" in out or "is not running" in out):
            self._names.pop(name, None)  # the task was replaced: resolve again
            if name in self.kept and (again := self._real(name)) is not None and again != real:
                # A service container restarted by Swarm (the classifieds database's first
                # start fails, the next task serves): run it in the new task.
                return super().exec(again, argv, timeout)
        return rc, out

    def copy_from(self, name: str, path: str, local: Path) -> None:
        real = self._real(name)
        if real is None:
            raise EngineError(self._no_task(name))
        super().copy_from(real, path, local)

    def copy_to(self, local: Path, name: str, path: str) -> None:
        real = self._real(name)
        if real is None:
            raise EngineError(self._no_task(name))
        super().copy_to(local, real, path)


_STDOUT_LOCK = threading.Lock()


@contextlib.contextmanager
def _stdout_to_stderr():
    """Send stdout to stderr for the block: file descriptor 1 (a child process inherits it)
    and ``sys.stdout`` (python-on-whales 0.7x ``print``s a secret's reference when it reads
    one)."""

    with _STDOUT_LOCK:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            os.dup2(2, 1)
            with contextlib.redirect_stdout(sys.stderr):
                yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)


@dataclass(frozen=True)
class NodeInfo:
    """One Swarm node as a manager sees it.

    Attributes:
        id, hostname: the node's id and host name.
        addr: the address other nodes and clients reach it at (``Status.Addr``).
        role: ``manager`` or ``worker``; state: ``ready``, ``down``, ``unknown``, ...;
        availability: ``active``, ``pause`` or ``drain``.
        labels: node labels (``docker node update --label-add``).
        memory: bytes of memory; cpus: CPUs (``Description.Resources``).
    """

    id: str
    hostname: str
    addr: str
    role: str
    state: str
    availability: str
    labels: dict[str, str] = field(default_factory=dict)
    memory: int = 0
    cpus: float = 0.0

    @property
    def usable(self) -> bool:
        """Ready and active: Swarm places new tasks on it."""
        return self.state == "ready" and self.availability == "active"

    def as_dict(self) -> dict:
        return {"id": self.id, "hostname": self.hostname, "addr": self.addr, "role": self.role, "state": self.state,
                "availability": self.availability, "labels": self.labels, "memory": self.memory, "cpus": self.cpus}


class Swarm:
    """A Swarm manager's engine.

    Args:
        engine: an :class:`Engine` whose engine is a Swarm manager (or will become one, see
            :meth:`init`).
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        self.docker = engine.docker

    def _call(self, what: str, fn, *args, quiet: bool = False, **kwargs):
        """``fn(*args, **kwargs)``; a DockerException becomes EngineError naming ``what``.
        ``quiet``: the docker CLI's own output (``docker stack deploy`` and ``docker secret
        create`` print to the inherited stdout) goes to stderr, so ``--json`` stays JSON."""
        try:
            if not quiet:
                return fn(*args, **kwargs)
            with _stdout_to_stderr():
                return fn(*args, **kwargs)
        except DockerException as e:
            raise EngineError(f"{what} failed: {_one_line(e)}") from None

    # -- the swarm --------------------------------------------------------------------------
    def node_id(self) -> str:
        """The id of this engine's node; '' when the engine is in no swarm."""
        info = self._call("docker info", self.docker.system.info)
        return str(getattr(info.swarm, "node_id", "") or "")

    def is_manager(self) -> bool:
        """True when this engine is a Swarm manager."""
        info = self._call("docker info", self.docker.system.info)
        return bool(getattr(info.swarm, "control_available", False))

    def init(self, advertise_addr: str) -> None:
        """``docker swarm init`` on this engine."""
        self._call("docker swarm init", self.docker.swarm.init, advertise_address=advertise_addr)

    def join_token(self, role: str = "worker") -> str:
        return str(self._call("docker swarm join-token", self.docker.swarm.join_token, role)).strip()

    def join(self, manager_addr: str, token: str) -> None:
        """``docker swarm join`` this engine to the swarm whose manager is ``manager_addr``."""
        self._call("docker swarm join", self.docker.swarm.join, manager_addr, token=token)

    def nodes(self) -> list[NodeInfo]:
        """Every node, as :class:`NodeInfo`, by host name."""
        out = []
        for n in self._call("docker node ls", self.docker.node.list):
            d, st, sp = n.description, n.status, n.spec
            res = d.resources
            out.append(NodeInfo(id=n.id, hostname=d.hostname, addr=str(st.addr), role=str(sp.role),
                                state=str(st.state), availability=str(sp.availability), labels=dict(sp.labels or {}),
                                memory=int(res.memory_bytes or 0), cpus=(res.nano_cpus or 0) / 1e9))
        return sorted(out, key=lambda n: n.hostname)

    def label_node(self, node: str, labels: dict[str, str]) -> None:
        """Add ``labels`` to ``node`` (id or host name)."""
        self._call(f"docker node update {node}", self.docker.node.update, node, labels_add=labels)

    # -- stacks -----------------------------------------------------------------------------
    def deploy(self, name: str, compose: dict) -> None:
        """``docker stack deploy --resolve-image never --prune`` of the compose mapping
        ``compose`` as stack ``name`` (creates it or updates its services in place).

        Raises:
            EngineError: Docker refused the stack; the message has its reason.
        """
        fd, path = tempfile.mkstemp(prefix=f"{name}-", suffix=".yaml")
        try:
            with os.fdopen(fd, "w") as f:
                yaml.safe_dump(compose, f, sort_keys=False)
            self._call(f"docker stack deploy {name}", self.docker.stack.deploy, name, compose_files=[path],
                       resolve_image="never", prune=True, quiet=True)
        finally:
            os.unlink(path)

    def remove_stack(self, name: str, wait: float = 60.0) -> None:
        """``docker stack rm name``; nothing when it does not exist.

        Swarm answers ``network ... is in use by task`` while it still detaches the stack's
        tasks from its network (the services are gone, the network is removed later); the call
        is repeated, 1 s apart, for up to ``wait`` seconds while that is the answer.

        Raises:
            EngineError: Docker refused for another reason, or still after ``wait`` s.
        """
        if name not in self.stacks():
            return
        for attempt in Retrying(stop=stop_after_delay(wait), wait=wait_fixed(1.0), reraise=True,
                                retry=retry_if_exception(lambda e: isinstance(e, EngineError)
                                                         and "in use" in str(e))):
            with attempt:
                self._call(f"docker stack rm {name}", self.docker.stack.remove, name, quiet=True)

    def stacks(self) -> list[str]:
        """Names of the deployed stacks."""
        return sorted(s.name for s in self._call("docker stack ls", self.docker.stack.list))

    def service_labels(self, stack: str) -> dict[str, dict[str, str]]:
        """Per service of ``stack``: its service labels (``deploy.labels``)."""
        out = {}
        for s in self._call(f"docker stack services {stack}", self.docker.stack.services, stack):
            out[s.spec.name] = dict(s.spec.labels or {})
        return out

    def tasks(self, stack: str) -> list[dict]:
        """The tasks of ``stack``: ``[{"service", "node", "state", "desired", "error"}]`` (node
        id; state ``running``, ``rejected``, ...; error Swarm's message, e.g. ``No such image``)."""
        out = []
        services = {s.id: s.spec.name for s in self._call(f"docker stack services {stack}", self.docker.stack.services, stack)}
        for t in self._call(f"docker stack ps {stack}", self.docker.stack.ps, stack):
            st = t.status
            out.append({"service": services.get(t.service_id, t.service_id), "node": t.node_id or "",
                        "state": str(st.state), "desired": str(t.desired_state), "error": str(st.err or "")})
        return out

    # -- secrets ----------------------------------------------------------------------------
    def ensure_secret(self, name: str, value: str) -> bool:
        """Create secret ``name`` holding ``value`` unless it exists (a secret cannot be read
        back or changed); True when it was created. The value goes through a mode-0600
        temporary file, never a command line."""
        if any(s.spec.name == name for s in self._call("docker secret ls", self.docker.secret.list, quiet=True)):
            return False
        fd, path = tempfile.mkstemp(prefix="sitectl-secret-")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(value)
            self._call(f"docker secret create {name}", self.docker.secret.create, name, path, quiet=True)
        finally:
            os.unlink(path)
        return True

    def secrets(self, prefix: str = "") -> list[str]:
        """Names of the swarm's secrets that start with ``prefix``."""
        return sorted(s.spec.name for s in self._call("docker secret ls", self.docker.secret.list, quiet=True)
                      if s.spec.name.startswith(prefix))

    def remove_secret(self, name: str) -> None:
        if any(s.spec.name == name for s in self._call("docker secret ls", self.docker.secret.list, quiet=True)):
            self._call(f"docker secret rm {name}", self.docker.secret.remove, name)


def copy_images(src: Engine, dsts: list[Engine], tags: list[str], on_node=None) -> list[list[str]]:
    """Copy images ``tags`` from engine ``src`` to each engine of ``dsts`` with no registry:
    one ``docker save`` of what any destination lacks (an image a destination has with the
    same id is skipped) into a temporary archive, then ``docker load`` of it into every
    destination that lacks something, all at once.

    Args:
        on_node: called with ``(index, tags copied)`` as each destination finishes, or None.

    Returns:
        Per destination, in order, the tags copied.

    Raises:
        ImageMissing: a tag is not on ``src``; EngineError: the save or a load failed (every
            failed destination is named).
    """

    ids = {}
    for tag in tags:
        ids[tag] = src.image_id(tag)
        if ids[tag] is None:
            raise ImageMissing(f"image {tag} is not on the source engine; build it first (`sitectl build`)")
    todo = [[t for t in tags if d.image_id(t) != ids[t]] for d in dsts]
    union = sorted({t for want in todo for t in want})
    if not union:
        return todo
    with tempfile.TemporaryDirectory(prefix="sitectl-images-", dir=os.environ.get("TMPDIR", "/var/tmp")) as tmp:
        archive = Path(tmp) / "images.tar"
        try:
            src.docker.image.save(union, output=archive)
        except DockerException as e:
            raise EngineError(f"docker save {' '.join(union)} failed: {_one_line(e)}") from None

        def load(i: int) -> None:
            if todo[i]:
                try:
                    dsts[i].docker.image.load(archive, quiet=True)
                except DockerException as e:
                    raise EngineError(f"docker load into {dsts[i].docker.client_config.host or 'the engine'} "
                                      f"failed: {_one_line(e)}") from None
            if on_node:
                on_node(i, todo[i])

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(dsts))) as pool:
            futs = [pool.submit(load, i) for i in range(len(dsts))]
            errors = [str(f.exception()) for f in futs if f.exception() is not None]
    if errors:
        raise EngineError("; ".join(errors))
    return todo
