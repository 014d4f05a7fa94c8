"""Engine layer, pod half: the reset agent as a sidecar that shares its site's process
namespace, with no Docker engine at all (Kubernetes ``shareProcessNamespace: true``; with
Docker, ``docker run --pid container:SITE``).

Commands run inside the site container the way ``docker exec`` runs them: in the container's
mount, UTS, IPC, network and PID namespaces (``setns(2)``), here through util-linux's
``nsenter(1)``, with the container's own environment (``/proc/PID/environ``). The sidecar needs
``CAP_SYS_ADMIN`` (setns) and ``CAP_SYS_PTRACE`` (another container's ``/proc/PID/root`` and
``environ``). Files are copied through ``/proc/PID/root``, one folder at a time without
following a link (a link inside the container would resolve in the agent's own files).

The site container is the one process whose parent is outside the shared PID namespace
(parent pid 0), that lives in another mount namespace than the agent, that is not the pod's
``/pause`` process, and whose environment has ``SITECTL_SITE=<site>`` (``sitectl k8s render``
sets it on the site container, so a service-mesh proxy or a debug container in the same pod is
never taken for the site). Its identity is ``PID:start time`` (``/proc/PID/stat`` field 22): a
restarted container is a new process, so, as with :class:`sitectl.engine.swarm.TaskEngine`,
``container()`` reports an identity the agent has not adopted as missing and ``up`` takes it
through ``run()`` (post-start steps, golden snapshot).

A site's service containers (the classifieds database) run in the same pod and are found the
same way, with ``SITECTL_SERVICE=<key>`` in their environment as well; what a service keeps
across restarts (its ``persist`` folders, ``emptyDir`` volumes) is emptied through its
``/proc/PID/root`` when sitectl re-creates the site, its processes stopped meanwhile.

Not available here (no engine): image builds and loads, ``docker logs`` (use
``kubectl logs``), memory figures; leftover execs of a killed agent are not counted. Where the
site is PID 1 of the shared namespace (``docker run --pid container:SITE``), the kernel ignores
the sidecar's signals to it, so :meth:`PodEngine.remove` fails instead of re-creating.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

from sitectl.engine.base import Adopted, ContainerInfo, Engine, RunSpec
from sitectl.errors import ContainerExited, EngineError

PROC = Path("/proc")
#: Seconds :meth:`PodEngine.run` waits for a container (a restart by the kubelet): more than
#: the kubelet's longest restart back-off, 300 s (kubernetes.io, "Pod Lifecycle", "Container
#: restarts").
CONTAINER_WAIT = 360.0


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3, the state, first);
    None when ``pid`` is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of ``pid``; None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else (int(fields[1]), int(fields[19]))


def _state(pid: int) -> str | None:
    """The state letter of ``pid`` (``T``: stopped); None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else fields[0]


def _mnt_ns(pid: int | str) -> str | None:
    try:
        return os.readlink(PROC / str(pid) / "ns" / "mnt")
    except OSError:
        return None


def _cmdline(pid: int) -> list[str]:
    try:
        return [a.decode(errors="replace") for a in (PROC / str(pid) / "cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return []


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    return dict(kv.split("=", 1) for kv in raw.decode(errors="replace").split("\0") if "=" in kv)


def site_process(site: str | None = None, service: str | None = None) -> tuple[int, str] | None:
    """``(pid, identity)`` of the site container's first process, or None when it is not
    running (see the module doc for how it is told apart). With ``site``, only a process whose
    environment has ``SITECTL_SITE=<site>`` counts (``sitectl k8s render`` sets it on the site
    container), so another container of the pod (a service-mesh proxy, a debug container) is
    never taken for it; and only one whose ``SITECTL_SERVICE`` is ``service`` (the site's own
    container has none; a service container of the site, ``db``, has its key)."""
    mine = _mnt_ns("self")
    found = []
    for p in PROC.iterdir():
        if not p.name.isdigit():
            continue
        pid = int(p.name)
        st = _stat(pid)
        if st is None or st[0] != 0:
            continue
        ns = _mnt_ns(pid)
        if ns is None or ns == mine or _cmdline(pid)[:1] == ["/pause"]:
            continue
        if site is not None:
            env = _environ(pid)
            if env.get("SITECTL_SITE") != site or env.get("SITECTL_SERVICE") != service:
                continue
        found.append((pid, f"{pid}:{st[1]}"))
    return min(found) if found else None


def _same_container(pid: int) -> list[int]:
    """Every process of the container whose first process is ``pid``: those in its mount
    namespace (``pid`` first)."""
    ns = _mnt_ns(pid)
    others = [int(p.name) for p in PROC.iterdir() if p.name.isdigit() and int(p.name) != pid
              and ns is not None and _mnt_ns(p.name) == ns]
    return [pid, *others]


def _open_folder(pid: int, path: str) -> int:
    """A file descriptor of folder ``path`` of the container whose first process is ``pid``,
    opened through ``/proc/PID/root`` one component at a time without following a symbolic
    link (a link inside a container would otherwise resolve in the agent's own file system).

    Raises:
        OSError: a component is missing, a link or not a folder.
    """
    fd = os.open(PROC / str(pid) / "root", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in [p for p in path.split("/") if p]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError:
        os.close(fd)
        raise
    return fd


def _empty_folder(pid: int, path: str, name: str) -> None:
    """Empty folder ``path`` of the container whose first process is ``pid``, reached through
    ``/proc/PID/root`` one component at a time without following a symbolic link (a link
    inside a container would otherwise resolve in the agent's own file system).

    Raises:
        EngineError: a component is missing, a link or not a folder, or a removal failed.
    """
    try:
        fd = _open_folder(pid, path)
    except OSError as e:
        raise EngineError(f"container {name}: cannot empty {path} for its re-creation: {_why(e)}") from None
    try:
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        for entry, is_dir in entries:
            if is_dir:
                shutil.rmtree(entry, dir_fd=fd)
            else:
                os.unlink(entry, dir_fd=fd)
    except OSError as e:
        raise EngineError(f"container {name}: cannot empty {path} for its re-creation: {e}") from None
    finally:
        os.close(fd)


class PodEngine(Engine):
    """The engine of a sidecar agent: one site's containers in its pod (the site's own and its
    service containers), each reached through its first process.

    Args:
        containers: sitectl's container name -> ``{"image", "labels"}`` that ``container()``
            reports for it (what the agent's Target expects: the pod runs that image), plus
            for a service container ``"service"`` (its key: the process has
            ``SITECTL_SERVICE=<key>``), ``"persist"`` (its ``persist`` paths, emptied by
            :meth:`remove` with ``volumes``) and ``"workdir"`` (the directory :meth:`exec`
            runs in, as ``docker exec`` does in the image's ``WORKDIR``).
        adopted: JSON file with the identity of each container process sitectl brought up (on
            the shared state volume); see the module doc.
        container_wait: seconds :meth:`run` waits for the container.
        site: the site's name (``SITECTL_SITE`` of its containers).
    """

    def __init__(self, containers: dict[str, dict], adopted: Path | None = None,
                 container_wait: float = CONTAINER_WAIT, site: str | None = None):
        self.docker = None  # no Docker engine in a pod
        self._version = "pod"
        self.expect = dict(containers)
        self.container_wait = container_wait
        self.site = site
        self._adopted = Adopted(adopted)
        self._removed: set[str] = set()  # identities sitectl stopped: never adopted again

    def _find(self, name: str) -> tuple[int, str] | None:
        return site_process(self.site, self.expect.get(name, {}).get("service"))

    def _pid(self, name: str) -> int:
        found = self._find(name)
        if found is None:
            raise ContainerExited(f"container {name}: its process is not running in this pod")
        return found[0]

    # -- engine ---------------------------------------------------------------------------
    def ping(self) -> str:
        return "pod"

    def reachable(self) -> bool:
        return True

    def image_exists(self, tag: str) -> bool:
        return True  # the kubelet pulled it before the pod started

    def image_id(self, tag: str) -> str | None:
        return None

    def image_label(self, tag: str, key: str) -> str | None:
        return None

    def build(self, *a, **kw) -> None:
        raise EngineError("no Docker engine in a pod: images are built and pushed outside the cluster")

    def load_archive(self, path: Path, on_bytes=None) -> list[str]:
        raise EngineError("no Docker engine in a pod: images are loaded and pushed outside the cluster")

    def ensure_network(self, name: str, labels: dict[str, str]) -> None:
        """The pod's network is Kubernetes'."""

    def remove_network(self, name: str) -> None:
        """The pod's network is Kubernetes'."""

    def check_ports_free(self, spec: RunSpec, site: str) -> None:
        """The Service publishes the ports."""

    # -- containers -------------------------------------------------------------------------
    def container(self, name: str) -> ContainerInfo | None:
        """Container ``name`` as :class:`ContainerInfo` (running, the expected image and
        labels); None when its process is not running or is not adopted yet."""
        if name not in self.expect:
            return None
        found = self._find(name)
        if found is None or found[1] in self._removed:
            return None
        if self._adopted.get(name) != found[1] and "service" not in self.expect[name]:
            # A service container the kubelet restarted is the same container: its data is in
            # its emptyDir volumes, as a Docker restart keeps a container's volumes.
            return None
        e = self.expect[name]
        return ContainerInfo(name=name, status="running", running=True, exit_code=0, image=e["image"],
                             labels=dict(e["labels"]), image_id="")

    def replaced(self, name: str) -> bool:
        """True when container ``name``'s process is not the one sitectl adopted (a restarted
        container), or none runs; False for a name that is not one of this pod's and for a
        service container (restarted, it keeps its emptyDir volumes)."""
        if name not in self.expect or "service" in self.expect[name]:
            return False
        found = self._find(name)
        return found is None or self._adopted.get(name) != found[1]

    def keeps_data_when_absent(self, name: str) -> bool:
        """True for a service container with ``persist`` folders (the pod's emptyDir volumes)."""
        return bool(self.expect.get(name, {}).get("persist"))

    def iter_containers(self, labels: dict[str, str | None]):
        for name in self.expect:
            info = self.container(name)
            if info and all(k in info.labels and (v is None or info.labels[k] == v) for k, v in labels.items()):
                yield info

    def memory_used(self, names: list[str]) -> dict[str, int]:
        return {}

    def running_execs(self, name: str) -> int:
        return 0

    def run(self, spec: RunSpec) -> None:
        """Wait for container ``spec.name``'s process (the kubelet starts the container) and
        adopt it.

        Raises:
            EngineError: it did not run within ``container_wait`` seconds.
        """
        deadline = time.monotonic() + self.container_wait
        while time.monotonic() < deadline:
            found = self._find(spec.name)
            if found is not None and found[1] not in self._removed:
                self._adopted.set(spec.name, found[1])
                return
            time.sleep(0.5)
        raise EngineError(f"container {spec.name}: no process within {self.container_wait:g} s "
                          "(see `kubectl describe pod`)")

    def start(self, name: str) -> None:
        self.run(RunSpec(name=name, image=self.expect.get(name, {}).get("image", ""), publish=()))

    def remove(self, name: str, volumes: bool = False) -> None:
        """Stop container ``name`` (SIGKILL to its first process): the kubelet starts a new
        one from the image (``restartPolicy: Always``), which :meth:`run` waits for.

        With ``volumes``, a service container's ``persist`` folders (``emptyDir`` volumes,
        which outlive a restart) are emptied first, so the new container starts from nothing;
        this never returns without having emptied them. Its processes are stopped (SIGSTOP)
        meanwhile, so nothing writes and the kubelet, which sees it running, starts no other;
        a container that is not running (the kubelet is starting it again) is waited for, up
        to ``container_wait`` seconds. Its processes are killed whatever happens.

        Raises:
            EngineError: the process cannot be stopped from here (PID 1 of the namespace), no
                process ran within ``container_wait`` seconds, or emptying failed.
        """
        persist = self.expect.get(name, {}).get("persist") or []
        self._adopted.set(name, None)
        if volumes and persist:
            found, group = self._stop_running(name)
            self._removed.add(found[1])
            try:
                for path in persist:
                    _empty_folder(found[0], path, name)
            finally:
                for pid in group:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
        else:
            found = self._find(name)
            if found is None:
                return
            self._removed.add(found[1])
        try:
            os.kill(found[0], signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (self._find(name) or (None, None))[1] == found[1]:
            time.sleep(0.2)
        if (self._find(name) or (None, None))[1] == found[1]:
            # The kernel ignores a signal to a namespace's init sent from inside it: with
            # `docker run --pid container:SITE` the site is PID 1 of the shared namespace.
            raise EngineError(f"container {name}: its process {found[0]} cannot be stopped from this sidecar "
                              "(it is PID 1 of the shared namespace); restart the container from outside")

    def _stop_running(self, name: str) -> tuple[tuple[int, str], list[int]]:
        """((pid, identity), pids) of container ``name``'s running processes, all stopped by
        SIGSTOP (checked: state ``T``); waits for a process up to ``container_wait`` s."""
        deadline = time.monotonic() + self.container_wait
        while time.monotonic() < deadline:
            found = self._find(name)
            if found is not None and found[1] not in self._removed:
                group: list[int] = []
                for _ in range(2):  # again: a process forked while the first ones were stopped
                    for pid in _same_container(found[0]):
                        if pid not in group:
                            group.append(pid)
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGSTOP)
                settle = time.monotonic() + 5
                while time.monotonic() < settle and _state(found[0]) not in ("T", None):
                    time.sleep(0.05)
                if _state(found[0]) == "T":
                    return found, group
                for pid in group:  # it ended meanwhile: the kubelet starts the next one
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGCONT)
            time.sleep(0.5)
        raise EngineError(f"container {name}: no process ran within {self.container_wait:g} s, so what it keeps "
                          "could not be emptied for the re-creation (see `kubectl describe pod`)")

    def logs_tail(self, name: str, lines: int = 20) -> str:
        c = self.expect.get(name, {}).get("pod_container", "site")
        return f"(no logs from inside the pod: `kubectl logs POD -c {c}`)"

    def assert_running(self, name: str, site: str) -> None:
        if self._find(name) is None:
            raise ContainerExited(f"site {site!r}: container {name} is not running in this pod")

    def exec(self, name: str, argv: list[str], timeout: float = 600) -> tuple[int, str]:
        """Run ``argv`` in container ``name``'s namespaces with its environment (no shell);
        ``(exit code, output)``; 124 on timeout (the command is killed)."""
        try:
            pid = self._pid(name)
        except ContainerExited as e:
            return 1, f"No such container: {name} ({e})"
        env = _environ(pid)
        # No --pid: the PID namespace is already the site's (shared), and without it nsenter
        # execs the command itself, so a timeout kills the command, not only nsenter.
        # The working directory `docker exec` would use (the image's WORKDIR) when the stack
        # file gives it, else the process's own. nsenter opens a --wd path before it enters
        # the namespaces, so it is given the folder already opened inside the container.
        wd = self.expect.get(name, {}).get("workdir")
        wd_fd = None
        if wd:
            try:
                wd_fd = _open_folder(pid, wd)
            except OSError as e:
                return 1, f"container {name}: cannot enter its working directory {wd}: {e}"
        cmd = ["nsenter", f"--target={pid}", "--mount", "--uts", "--ipc", "--net", "--root",
               f"--wd=/proc/self/fd/{wd_fd}" if wd_fd is not None else "--wd", "--", *argv]
        # Its own process group, so that a timeout kills the command and whatever it started.
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True, pass_fds=(wd_fd,) if wd_fd is not None else ())
        finally:
            if wd_fd is not None:
                os.close(wd_fd)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
            return 124, f"timed out after {timeout:g} s"
        return proc.returncode, out.decode(errors="replace")

    def copy_from(self, name: str, path: str, local: Path) -> None:
        """Copy ``path`` of container ``name`` into folder ``local`` (or to file ``local``), as
        ``docker cp`` does, reaching it without following a link on the way (the container is
        not trusted: a link would resolve in the agent's own file system).

        Raises:
            EngineError: a part of the path is missing, a link, or the copy failed.
        """
        try:
            _copy_out(self._pid(name), path, local)
        except OSError as e:
            raise EngineError(f"copy {name}:{path} failed: {_why(e)}") from None

    def copy_to(self, local: Path, name: str, path: str) -> None:
        """Copy ``local`` to ``path`` of container ``name`` (into it when it is a folder), as
        ``docker cp`` does, reaching it without following a link on the way.

        Raises:
            EngineError: a part of the path is missing, a link, or the copy failed.
        """
        try:
            _copy_in(local, self._pid(name), path)
        except OSError as e:
            raise EngineError(f"copy to {name}:{path} failed: {_why(e)}") from None


def _why(e: OSError) -> str:
    return "a part of it is a link or not a folder" if e.errno in (errno.ENOTDIR, errno.ELOOP) else str(e)


def _parent_and_name(path: str) -> tuple[str, str]:
    parent, _, base = path.rstrip("/").rpartition("/")
    if base in ("", ".", ".."):
        raise OSError(errno.EINVAL, f"{path!r} names no file")
    return parent or "/", base


def _copy_out(pid: int, path: str, local: Path) -> None:
    """:meth:`PodEngine.copy_from` on the container whose first process is ``pid``."""
    parent, base = _parent_and_name(path)
    fd = _open_folder(pid, parent)
    try:
        if stat.S_ISLNK(os.lstat(base, dir_fd=fd).st_mode):
            raise OSError(errno.ELOOP, f"{path} is a link")
        src = Path(f"/proc/self/fd/{fd}") / base
        if src.is_dir():
            shutil.copytree(src, local / base, symlinks=True)
        else:
            shutil.copy2(src, local / base if local.is_dir() else local)
    finally:
        os.close(fd)


def _copy_in(local: Path, pid: int, path: str) -> None:
    """:meth:`PodEngine.copy_to` on the container whose first process is ``pid``."""
    try:
        fd, base = _open_folder(pid, path), None  # an existing folder: copy into it
    except OSError as e:
        if e.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise
        parent, base = _parent_and_name(path)
        fd = _open_folder(pid, parent)
    try:
        if base is not None:
            try:
                if not stat.S_ISREG(os.lstat(base, dir_fd=fd).st_mode):
                    raise OSError(errno.ELOOP, f"{path} exists and is not a plain file")
            except FileNotFoundError:
                pass
        where = Path(f"/proc/self/fd/{fd}")
        if local.is_dir():
            shutil.copytree(local, where / (base or local.name), symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(local, where / (base or local.name))
    finally:
        os.close(fd)
