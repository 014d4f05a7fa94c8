"""Engine layer, pod half: the reset agent as a sidecar that shares its site's process
namespace, with no Docker engine at all (Kubernetes ``shareProcessNamespace: true``; with
Docker, ``docker run --pid container:SITE``).

Commands run inside the site container the way ``docker exec`` runs them: in the container's
mount, UTS, IPC, network and PID namespaces (``setns(2)``), here through util-linux's
``nsenter(1)``, with the container's own environment (``/proc/PID/environ``). The sidecar needs
``CAP_SYS_ADMIN`` (setns) and ``CAP_SYS_PTRACE`` (another container's ``/proc/PID/root`` and
``environ``). Files are copied through ``/proc/PID/root``.

The site container is the one process whose parent is outside the shared PID namespace
(parent pid 0), that lives in another mount namespace than the agent, that is not the pod's
``/pause`` process, and whose environment has ``SITECTL_SITE=<site>`` (``sitectl k8s render``
sets it on the site container, so a service-mesh proxy or a debug container in the same pod is
never taken for the site). Its identity is ``PID:start time`` (``/proc/PID/stat`` field 22): a
restarted container is a new process, so, as with :class:`sitectl.engine.swarm.TaskEngine`,
``container()`` reports an identity the agent has not adopted as missing and ``up`` takes it
through ``run()`` (post-start steps, golden snapshot).

Not available here (no engine): image builds and loads, ``docker logs`` (use
``kubectl logs``), memory figures; leftover execs of a killed agent are not counted. Where the
site is PID 1 of the shared namespace (``docker run --pid container:SITE``), the kernel ignores
the sidecar's signals to it, so :meth:`PodEngine.remove` fails instead of re-creating.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from sitectl.engine.base import Adopted, ContainerInfo, Engine, RunSpec
from sitectl.errors import ContainerExited, EngineError

PROC = Path("/proc")
#: Seconds :meth:`PodEngine.run` waits for the site container (a restart by the kubelet).
CONTAINER_WAIT = 300.0


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of ``pid``; None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[19])


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


def site_process(site: str | None = None) -> tuple[int, str] | None:
    """``(pid, identity)`` of the site container's first process, or None when it is not
    running (see the module doc for how it is told apart). With ``site``, only a process whose
    environment has ``SITECTL_SITE=<site>`` counts (``sitectl k8s render`` sets it on the site
    container), so another container of the pod (a service-mesh proxy, a debug container) is
    never taken for it."""
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
        if site is not None and _environ(pid).get("SITECTL_SITE") != site:
            continue
        found.append((pid, f"{pid}:{st[1]}"))
    return min(found) if found else None


class PodEngine(Engine):
    """The engine of a sidecar agent: one site container, reached through its process.

    Args:
        containers: sitectl's container name -> ``{"image", "labels"}`` that ``container()``
            reports for it (what the agent's Target expects: the pod runs that image).
        adopted: JSON file with the identity of the container process sitectl brought up (on
            the shared state volume); see the module doc.
        container_wait: seconds :meth:`run` waits for the container.
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

    def _find(self) -> tuple[int, str] | None:
        return site_process(self.site)

    def _pid(self, name: str) -> int:
        found = self._find()
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
        """The site container as :class:`ContainerInfo` (running, the expected image and
        labels); None when its process is not running or is not adopted yet."""
        found = self._find()
        if found is None or name not in self.expect or self._adopted.get(name) != found[1]:
            return None
        e = self.expect[name]
        return ContainerInfo(name=name, status="running", running=True, exit_code=0, image=e["image"],
                             labels=dict(e["labels"]), image_id="")

    def replaced(self, name: str) -> bool:
        """True when the site's process is not the one sitectl adopted (a restarted container),
        or none runs."""
        found = self._find()
        return found is None or self._adopted.get(name) != found[1]

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
        """Wait for the site container's process (the kubelet starts the container) and adopt it.

        Raises:
            EngineError: it did not run within ``container_wait`` seconds.
        """
        deadline = time.monotonic() + self.container_wait
        while time.monotonic() < deadline:
            found = self._find()
            if found is not None and found[1] not in self._removed:
                self._adopted.set(spec.name, found[1])
                return
            time.sleep(0.5)
        raise EngineError(f"container {spec.name}: no process within {self.container_wait:g} s "
                          "(see `kubectl describe pod`)")

    def start(self, name: str) -> None:
        self.run(RunSpec(name=name, image=self.expect.get(name, {}).get("image", ""), publish=()))

    def remove(self, name: str, volumes: bool = False) -> None:
        """Stop the site container (SIGKILL to its first process): the kubelet starts a new
        one from the image (``restartPolicy: Always``), which :meth:`run` waits for."""
        found = self._find()
        self._adopted.set(name, None)
        if found is None:
            return
        self._removed.add(found[1])
        try:
            os.kill(found[0], signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (self._find() or (None, None))[1] == found[1]:
            time.sleep(0.2)
        if (self._find() or (None, None))[1] == found[1]:
            # The kernel ignores a signal to a namespace's init sent from inside it: with
            # `docker run --pid container:SITE` the site is PID 1 of the shared namespace.
            raise EngineError(f"container {name}: its process {found[0]} cannot be stopped from this sidecar "
                              "(it is PID 1 of the shared namespace); restart the container from outside")

    def logs_tail(self, name: str, lines: int = 20) -> str:
        return "(no logs from inside the pod: `kubectl logs POD -c site`)"

    def assert_running(self, name: str, site: str) -> None:
        if self._find() is None:
            raise ContainerExited(f"site {site!r}: container {name} is not running in this pod")

    def exec(self, name: str, argv: list[str], timeout: float = 600) -> tuple[int, str]:
        """Run ``argv`` in the site container's namespaces with its environment (no shell);
        ``(exit code, output)``; 124 on timeout (the command is killed)."""
        try:
            pid = self._pid(name)
        except ContainerExited as e:
            return 1, f"No such container: {name} ({e})"
        env = _environ(pid)
        # No --pid: the PID namespace is already the site's (shared), and without it nsenter
        # execs the command itself, so a timeout kills the command, not only nsenter.
        cmd = ["nsenter", f"--target={pid}", "--mount", "--uts", "--ipc", "--net", "--root", "--wd", "--", *argv]
        # Its own process group, so that a timeout kills the command and whatever it started.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
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
        src = PROC / str(self._pid(name)) / "root" / path.lstrip("/")
        try:
            (shutil.copytree(src, local / src.name, symlinks=True) if src.is_dir()
             else shutil.copy2(src, local if local.is_dir() else local))
        except OSError as e:
            raise EngineError(f"copy {name}:{path} failed: {e}") from None

    def copy_to(self, local: Path, name: str, path: str) -> None:
        dst = PROC / str(self._pid(name)) / "root" / path.lstrip("/")
        try:
            (shutil.copytree(local, dst / local.name, symlinks=True, dirs_exist_ok=True) if local.is_dir()
             else shutil.copy2(local, dst))
        except OSError as e:
            raise EngineError(f"copy to {name}:{path} failed: {e}") from None
