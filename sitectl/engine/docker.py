"""The Docker engine: every ``docker`` call of a single host goes through :class:`DockerEngine`
(python-on-whales). The same :class:`~sitectl.engine.base.RunSpec` drives a real ``docker run``
(:meth:`DockerEngine.run`) and the printed plan (:func:`~sitectl.engine.base.run_argv`), so
``sitectl plan`` shows exactly what ``up`` does.
"""
from __future__ import annotations

import errno
import json
import os
import re
import socket
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING

from sitectl.engine.base import ContainerInfo, Engine, RunSpec
from sitectl.errors import EngineError, ImageMissing, PortInUse

if TYPE_CHECKING:
    from python_on_whales import DockerClient
    from python_on_whales.exceptions import DockerException


def _errors():
    """python-on-whales' exception classes (``_errors().DockerException``, ``.NoSuchContainer``),
    imported when an ``except`` clause first matches: the package costs ~0.13 s at start-up."""
    from python_on_whales import exceptions  # noqa: PLC0415 - slow third-party module, on first use

    return exceptions



def _base_images(dockerfile: Path, args: dict[str, str]) -> list[str]:
    """The ``sitectl/base:*`` images the FROM lines of ``dockerfile`` name, with the ARGs declared
    before the first FROM substituted (their defaults, or ``args``), as Docker does."""
    values: dict[str, str] = {}
    found: list[str] = []
    seen_from = False
    for line in dockerfile.read_text(errors="replace").splitlines():
        arg = re.match(r"\s*ARG\s+(\w+)(?:=(\S*))?\s*$", line, re.I)
        if arg and not seen_from:
            values[arg.group(1)] = args.get(arg.group(1), (arg.group(2) or "").strip("\"'"))
            continue
        frm = re.match(r"\s*FROM\s+(?:--\S+\s+)*(\S+)", line, re.I)
        if frm:
            seen_from = True
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values.get(m.group(1) or m.group(2), ""), frm.group(1))
            if image.startswith("sitectl/base:") and image not in found:
                found.append(image)
    return found

class DockerEngine(Engine):
    """The local (or ``DOCKER_HOST``) Docker engine, reached through python-on-whales.

    Args:
        client: a ``python_on_whales.DockerClient``; a default client when None.
    """

    def __init__(self, client: DockerClient | None = None):
        self._client = client
        #: Only the default client's engine is reached through the Engine API's socket.
        self._own_client = client is not None
        self._version: str | None = None

    @property
    def docker(self) -> DockerClient:
        """The python-on-whales client, made (and the package imported) on first use."""
        if self._client is None:
            from python_on_whales import DockerClient  # noqa: PLC0415 - slow third-party module, on first use

            self._client = DockerClient()
        return self._client

    # -- engine -------------------------------------------------------------------------
    def ping(self) -> str:
        """Return the engine's server version.

        Raises:
            EngineError: no engine answers (the message says how to start one).
        """
        if self._version:
            return self._version  # asked once per Engine: later failures surface as they happen
        try:
            v = self.docker.version()
        except _errors().DockerException as e:
            raise EngineError(
                "the Docker engine is not running or not reachable "
                f"({_one_line(e)}); start it with `sudo scripts/bootstrap-engine.sh` (or `make up`)"
            ) from None
        server = getattr(v, "server", None)
        if server is None:
            raise EngineError(
                "the Docker engine is not running; start it with `sudo scripts/bootstrap-engine.sh`"
            )
        self._version = server.version
        return self._version

    def reachable(self) -> bool:
        """True when the engine answers now (asked every time, unlike :meth:`ping`): a reset
        uses it to tell a site's fault from the engine going away under it."""
        try:
            return getattr(self.docker.version(), "server", None) is not None
        except _errors().DockerException:
            return False

    def running_execs(self, name: str) -> int:
        """How many ``docker exec`` processes run in container ``name`` now; 0 when the container
        is gone. The container's ``ExecIDs`` also hold execs that were created and never started
        (a sitectl killed between the Engine API's create and start leaves one, listed until the
        engine's clean-up minutes later): each is asked (``GET /exec/ID/json``, ``Running``) on
        the local socket; where the engine cannot be asked so, every listed exec counts."""
        try:
            ids = self.docker.container.inspect(name).exec_ids or []
        except _errors().NoSuchContainer:
            return 0
        except _errors().DockerException as e:
            raise EngineError(f"docker inspect {name} failed: {_one_line(e)}") from None
        if not ids or self._own_client:  # another engine than the local socket's: cannot ask
            return len(ids)
        running = 0
        for exec_id in ids:
            got = _api_get(f"/exec/{exec_id}/json") if re.fullmatch(r"[0-9a-f]{1,128}", exec_id) else None
            running += 1 if not isinstance(got, dict) else bool(got.get("Running"))
        return running

    # -- images -------------------------------------------------------------------------
    def image_exists(self, tag: str) -> bool:
        """True when ``tag`` is present locally."""
        return self.docker.image.exists(tag)

    def image_id(self, tag: str) -> str | None:
        """The id (``sha256:...``) of local image ``tag``, or None."""
        try:
            return str(self.docker.image.inspect(tag).id)
        except _errors().DockerException:
            return None

    def image_volumes(self, tag: str) -> list[str]:
        """The ``VOLUME`` paths of local image ``tag`` (``Config.Volumes``); empty when the
        image is absent or declares none."""
        try:
            return sorted(self.docker.image.inspect(tag).config.volumes or {})
        except _errors().DockerException:
            return []

    def image_label(self, tag: str, key: str) -> str | None:
        """Label ``key`` of local image ``tag`` (None when the image or the label is absent)."""
        try:
            return (self.docker.image.inspect(tag).config.labels or {}).get(key)
        except _errors().DockerException:
            return None

    def build(self, tag: str, context: Path, dockerfile: Path, args: dict[str, str],
              labels: dict[str, str] | None = None) -> None:
        """Build ``tag`` with the legacy builder (no buildx here). No registry pull.

        Raises:
            EngineError: a sitectl/base image the Dockerfile starts FROM is missing (named, with the
                command that builds it; checked before the build), or the build failed (the message
                ends with the build's last output).
        """
        for base in _base_images(dockerfile, args):
            if not self.image_exists(base):  # nothing is pulled from a registry: the bases are built here
                raise EngineError(
                    f"building image {tag}: its base image {base} is missing here (nothing is pulled from a "
                    "registry): sitectl/base:bookworm comes from `make engine`, sitectl/base:bullseye from "
                    "`make bullseye` (debootstrap; scripts/bootstrap-engine.sh)")
        try:
            self.docker.legacy_build(
                context, file=dockerfile, tags=[tag], build_args=args, labels=labels or {},
                pull=False, quiet=True,
            )
        except _errors().DockerException as e:
            raise EngineError(f"building image {tag} failed:\n{_tail(e, 30)}") from None

    def load_archive(self, path: Path, on_bytes=None) -> list[str]:
        """``docker load`` an image archive (``.tar``); return the loaded image names.

        Args:
            on_bytes: called with the number of bytes sent so far (progress), or None.

        Raises:
            EngineError: the archive is unreadable or not an image archive.
        """
        def chunks():
            sent = 0
            with open(path, "rb") as f:
                while block := f.read(16 << 20):
                    sent += len(block)
                    if on_bytes:
                        on_bytes(sent)
                    yield block

        try:
            return self.docker.image.load(chunks(), quiet=True)
        except _errors().DockerException as e:
            raise EngineError(f"docker load {path} failed: {_one_line(e)}") from None

    # -- networks -----------------------------------------------------------------------
    def ensure_network(self, name: str, labels: dict[str, str]) -> None:
        """Create the bridge network ``name`` unless it exists."""
        if not self.docker.network.exists(name):
            self.docker.network.create(name, labels=labels)

    def remove_network(self, name: str) -> None:
        """Remove ``name`` if it exists and no container uses it."""
        if self.docker.network.exists(name):
            try:
                self.docker.network.remove(name)
            except _errors().DockerException:
                pass  # still used by a container that is not ours: leave it

    # -- containers ---------------------------------------------------------------------
    @staticmethod
    def _info(c) -> ContainerInfo:
        st = c.state
        return ContainerInfo(
            name=c.name,
            status=st.status,
            running=bool(st.running),
            exit_code=st.exit_code,
            image=c.config.image,
            labels=dict(c.config.labels or {}),
            image_id=str(c.image),
        )

    def container(self, name: str) -> ContainerInfo | None:
        """Inspect container ``name``; None when it does not exist.

        Raises:
            EngineError: the engine did not answer (e.g. it stopped).
        """
        try:
            return self._info(self.docker.container.inspect(name))
        except _errors().NoSuchContainer:
            return None
        except _errors().DockerException as e:
            raise EngineError(f"docker inspect {name} failed: {_one_line(e)}") from None

    def iter_containers(self, labels: dict[str, str | None]):
        """Containers (running or not) carrying every label of ``labels`` (a None value: the
        label with any value), inspected one at a time as the caller iterates (stop early to
        inspect fewer)."""
        filters = [("label", k if v is None else f"{k}={v}") for k, v in labels.items()]
        for c in self.docker.container.list(all=True, filters=filters):
            try:
                yield self._info(c)
            except _errors().NoSuchContainer:
                continue  # removed meanwhile

    def container_labels(self, labels: dict[str, str | None], keys: tuple[str, ...]) -> list[dict[str, str]]:
        """The labels named ``keys`` of every container (running or not) carrying every label of
        ``labels``, without python-on-whales (it costs more than the question at start-up):
        one request to the Engine API's ``GET /containers/json`` on the local socket when the
        ``docker`` client would talk to that socket too (:func:`_local_socket`), else one
        ``docker container ls`` whose format prints each wanted label as a JSON string
        (``{{.Label "k" | json}}``). With a client of its own (another ``DOCKER_HOST``),
        through it. Engines that list containers their own way
        (:class:`~sitectl.engine.swarm.TaskEngine`) take the base class's version, over their
        :meth:`iter_containers`.

        Raises:
            ValueError: a key that is not a plain label name (letters, digits, ``._-``).
            EngineError: the ``docker`` client failed (no engine answers), or the engine or
                the client took longer than 5 s and :data:`LABELS_TIMEOUT` s.
            OSError: there is no ``docker`` client.
        """
        if self._client is not None:
            return super().container_labels(labels, keys)
        for k in keys:
            if not re.fullmatch(r"[A-Za-z0-9._-]{1,200}", k):
                raise ValueError(f"label name {k!r}: letters, digits and ._- only")  # it goes into a template
        filters = [k if v is None else f"{k}={v}" for k, v in labels.items()]
        listed = _api_get("/containers/json?all=1&filters=" + urllib.parse.quote(json.dumps({"label": filters})))
        if isinstance(listed, list) and all(isinstance(c, dict) and isinstance(c.get("Labels") or {}, dict)
                                            for c in listed):
            return [{k: v for k in keys if isinstance(v := (c.get("Labels") or {}).get(k), str) and v}
                    for c in listed]
        fmt = "\t".join(f'{{{{.Label "{k}" | json}}}}' for k in keys)
        out = _docker_cli(["container", "ls", "-a", "--no-trunc",
                           *(a for f in filters for a in ("--filter", f"label={f}")), "--format", fmt],
                          timeout=LABELS_TIMEOUT)
        rows = []
        for line in out.splitlines():
            values = [json.loads(v) for v in line.split("\t")]  # JSON strings hold no raw tab
            rows.append({k: v for k, v in zip(keys, values, strict=True) if isinstance(v, str) and v})
        return rows

    def memory_used(self, names: list[str]) -> dict[str, int]:
        """Memory in use per running container (bytes, as ``docker stats`` reports it)."""
        if not names:
            return {}
        return {st.container_name: int(st.memory_used) for st in self.docker.container.stats(names)}

    def check_ports_free(self, spec: RunSpec, site: str) -> None:
        """Raise ``PortInUse`` when a host port of ``spec`` is taken.

        The check binds each port on the publish address for a moment, which is what Docker
        will do; a taken port is attributed to a container when one publishes it.
        """
        for addr, hp, _ in spec.publish:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((addr or "0.0.0.0", hp))
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    raise
                holder = self._port_holder(hp)
                raise PortInUse(
                    f"site {site!r}: host port {hp} is already in use"
                    + (f" by container {holder!r}" if holder else " by another process")
                    + "; stop it or change the port in the stack file"
                ) from None
            finally:
                s.close()

    def _port_holder(self, port: int) -> str | None:
        for c in self.docker.container.list(filters=[("publish", str(port))]):
            return c.name
        return None

    def run(self, spec: RunSpec) -> None:
        """Start a detached container from ``spec`` (never pulls).

        Raises:
            ImageMissing: the image is not present.
            PortInUse: Docker could not bind a host port.
            EngineError: any other refusal; a container created but not started is removed.
        """
        if not self.image_exists(spec.image):
            raise ImageMissing(f"image {spec.image} is not present")
        try:
            self.docker.run(
                spec.image,
                list(spec.command or ()),
                name=spec.name,
                detach=True,
                publish=[(f"{a}:{hp}" if a else hp, cp) for a, hp, cp in spec.publish],
                envs=spec.env,
                volumes=[tuple(v.split(":")) for v in spec.volumes],
                labels=spec.labels,
                networks=[spec.network] if spec.network else [],
                network_aliases=list(spec.aliases),
                restart=spec.restart,
                pull="never",
            )
        except _errors().DockerException as e:
            self.remove(spec.name)  # created but not started: leave nothing half-made
            text = _one_line(e)
            if "port is already allocated" in text or "address already in use" in text:
                raise PortInUse(f"container {spec.name}: {text}") from None
            raise EngineError(f"docker run {spec.name} failed: {text}") from None

    def start(self, name: str) -> None:
        """Start an existing stopped container."""
        try:
            self.docker.container.start(name)
        except _errors().DockerException as e:
            raise EngineError(f"docker start {name} failed: {_one_line(e)}") from None

    def remove(self, name: str, volumes: bool = False) -> None:
        """Force-remove container ``name`` if it exists."""
        try:
            self.docker.container.remove(name, force=True, volumes=volumes)
        except _errors().NoSuchContainer:
            pass
        except _errors().DockerException as e:
            if "No such container" not in str(e):
                raise EngineError(f"docker rm {name} failed: {_one_line(e)}") from None

    def logs_tail(self, name: str, lines: int = 20) -> str:
        """The last ``lines`` lines of the container's output (stdout and stderr)."""
        try:
            return str(self.docker.container.logs(name, tail=lines)).rstrip()
        except _errors().DockerException:
            return "(no logs)"

    def exec(self, name: str, argv: list[str], timeout: float = 600) -> tuple[int, str]:
        """Run ``argv`` inside container ``name`` (no shell); return (exit code, output).

        ``timeout`` bounds how long sitectl waits; on expiry the exit code is 124 (the
        command may still run inside the container).

        With the default client on the local socket, the exec goes through the Engine API
        directly (:func:`_api_exec`: three requests, no ``docker`` process, about 20-30 ms less
        per call); anything unusual before the command starts (no socket, no such container,
        an unexpected answer) takes python-on-whales' ``docker exec``, whose exit codes and
        messages it then reports. The output is the same either way: standard output alone
        without its last newline on success, standard output and error otherwise.
        """
        deadline = time.monotonic() + timeout

        def call() -> tuple[int, str]:
            if not self._own_client:
                done = _api_exec(name, list(argv), deadline)
                if done is not None:
                    return done
            try:
                out = self.docker.container.execute(name, list(argv))
                return 0, out or ""
            except _errors().DockerException as e:
                out = "\n".join(x for x in (_decode(e.stdout), _decode(e.stderr)) if x)
                return (e.return_code or 1), out

        # A daemon thread: on expiry it is left to finish on its own, as the command inside is.
        result: list[tuple[int, str]] = []
        failure: list[BaseException] = []

        def target() -> None:
            try:
                result.append(call())
            except BaseException as e:  # noqa: BLE001 - handed to the caller below
                failure.append(e)

        worker = threading.Thread(target=target, name=f"exec-{name}", daemon=True)
        worker.start()
        worker.join(timeout)
        if failure:
            raise failure[0]
        if not result:
            return 124, f"timed out after {timeout:g} s"
        return result[0]

    def copy_from(self, name: str, path: str, local: Path) -> None:
        """Copy ``path`` out of container ``name`` to ``local`` (``docker cp``)."""
        try:
            self.docker.copy((name, path), local)
        except _errors().DockerException as e:
            raise EngineError(f"docker cp {name}:{path} failed: {_one_line(e)}") from None

    def copy_to(self, local: Path, name: str, path: str) -> None:
        """Copy ``local`` into container ``name`` at ``path`` (``docker cp``)."""
        try:
            self.docker.copy(local, (name, path))
        except _errors().DockerException as e:
            raise EngineError(f"docker cp to {name}:{path} failed: {_one_line(e)}") from None

    def replaced(self, name: str) -> bool:
        """Always False: on a single host sitectl names and creates its containers itself, so the
        container of a name is the one it brought up (or none)."""
        return False


#: The socket the ``docker`` client talks to when nothing says otherwise.
DEFAULT_SOCKET = "/var/run/docker.sock"


def _local_socket() -> str | None:
    """The Unix socket of the engine the ``docker`` client would talk to, or None when the
    client would be sent elsewhere or the answer is not plain: ``DOCKER_HOST`` when it is a
    ``unix://`` address, else the default socket unless ``DOCKER_CONTEXT`` or the client
    config's ``currentContext`` (``$DOCKER_CONFIG/config.json``, default ``~/.docker``) names
    a context other than ``default`` (the client's order: docs.docker.com, "docker context",
    "Use a context with the DOCKER_HOST/DOCKER_CONTEXT environment variables")."""
    host = os.environ.get("DOCKER_HOST")
    if host:
        return host.removeprefix("unix://") if host.startswith("unix:///") else None
    if os.environ.get("DOCKER_CONTEXT", "default") != "default":
        return None
    config = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker") / "config.json"
    try:
        current = json.loads(config.read_text(encoding="utf-8")).get("currentContext")
    except FileNotFoundError:
        current = None
    except (OSError, ValueError, AttributeError):
        return None  # unreadable or not a mapping: the client decides
    return DEFAULT_SOCKET if current in (None, "", "default") else None


def _api_chunks(where: str, method: str, path: str, body: object, deadline: float):
    """Send ``method path`` (``body`` as JSON, None: none) on the Unix socket ``where`` as
    HTTP/1.0 and yield the answer's bytes as they arrive, until the engine closes the connection.

    Raises:
        TimeoutError: ``deadline`` (``time.monotonic()``) passed.
        OSError: the socket failed.
    """
    payload = b"" if body is None else json.dumps(body).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(max(0.001, deadline - time.monotonic()))
        s.connect(where)
        s.sendall(f"{method} {path} HTTP/1.0\r\nHost: docker\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(payload)}\r\n\r\n".encode("ascii") + payload)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            s.settimeout(left)
            chunk = s.recv(1 << 16)
            if not chunk:
                return
            yield chunk


def _api_call(method: str, path: str, body: object, deadline: float, limit: int | None = 64 << 20,
              where: str | None = None) -> tuple[bytes, bytes] | None:
    """One ``method path`` request of the Engine API on :func:`_local_socket` with ``body`` as
    JSON (None: no body), HTTP/1.0 (the answer ends when the engine closes the connection):
    ``(status line and headers, body)``, or None when there is no local socket, it refuses,
    or the answer is over ``limit`` bytes (None: no limit).

    Raises:
        TimeoutError: ``deadline`` (``time.monotonic()``) passed.
    """
    where = where or _local_socket()  # a caller making several requests finds the socket once
    if where is None:
        return None
    data = bytearray()
    try:
        for chunk in _api_chunks(where, method, path, body, deadline):
            data += chunk
            if limit is not None and len(data) > limit:
                return None
    except TimeoutError:
        raise
    except OSError:
        return None
    head, sep, rest = bytes(data).partition(b"\r\n\r\n")
    return (head, rest) if sep else None


def _status(head: bytes) -> bytes:
    parts = head.split(b"\r\n", 1)[0].split()
    return parts[1] if len(parts) > 1 else b""


#: Bytes of output one exec may send back through the Engine API (the ``docker`` client kept
#: everything; a command's whole output is held in memory once, decoded once).
EXEC_OUTPUT_LIMIT = 2 << 30


class _Malformed(Exception):
    """The engine's answer to an exec start is not the documented stream."""


def _read_stream(exec_id: str, deadline: float, where: str | None) -> tuple[bytes, bytes]:
    """Start exec ``exec_id`` attached (``POST /exec/ID/start``, HTTP/1.0) and read its
    multiplexed stream as it arrives: 8-byte frame headers (stream type 1 stdout or 2 stderr,
    three zero bytes, a big-endian length) until the engine closes the connection.

    Returns:
        (standard output, standard error).

    Raises:
        _Malformed: no local socket, a refused start, a status other than 200, a chunked or
            framed-otherwise answer, a frame of another type (3: the engine's own error), a
            frame cut short, or more than :data:`EXEC_OUTPUT_LIMIT` bytes; the message says which.
        TimeoutError: ``deadline`` passed.
    """
    if where is None:
        raise _Malformed("the Docker engine's socket is gone")
    streams = {1: bytearray(), 2: bytearray()}
    buf = bytearray()
    head: bytes | None = None
    chunks = _api_chunks(where, "POST", f"/exec/{exec_id}/start", {"Detach": False, "Tty": False}, deadline)
    try:
        total = 0
        for chunk in chunks:
            total += len(chunk)
            if total > EXEC_OUTPUT_LIMIT:
                raise _Malformed(f"the exec's output passed {EXEC_OUTPUT_LIMIT >> 20} MiB")
            buf += chunk
            if head is None:
                at = buf.find(b"\r\n\r\n")
                if at < 0:
                    if len(buf) > 1 << 16:
                        raise _Malformed("the engine's answer has no end of headers")
                    continue
                head = bytes(buf[:at])
                del buf[:at + 4]
                if _status(head) != b"200":
                    status = _status(head).decode("ascii", "replace")
                    rest = bytes(buf[:300]) + next(chunks, b"")[:300]
                    raise _Malformed(f"the Docker engine refused to start the exec (HTTP {status}): "
                                     f"{rest.decode(errors='replace').strip()}")
                if b"transfer-encoding:" in head.lower():
                    raise _Malformed("the engine answered the exec in chunks, not as a stream")
            at = 0
            while len(buf) - at >= 8:
                kind, pad, size = buf[at], buf[at + 1:at + 4], int.from_bytes(buf[at + 4:at + 8], "big")
                if kind not in (1, 2) or pad != b"\0\0\0":
                    text = bytes(buf[at + 8:at + 8 + min(size, 300)]).decode(errors="replace").strip()
                    raise _Malformed(f"the engine's exec stream holds a frame of type {kind}" + (f": {text}" if text else ""))
                if len(buf) - at - 8 < size:
                    break
                streams[kind] += buf[at + 8:at + 8 + size]
                at += 8 + size
            del buf[:at]
    except OSError as e:
        if isinstance(e, TimeoutError):
            raise
        raise _Malformed(f"the Docker engine's socket failed during the exec ({e.strerror or e})") from None
    finally:
        chunks.close()
    if head is None:
        raise _Malformed("the Docker engine's socket closed before the exec's answer")
    if buf:
        raise _Malformed(f"the engine's exec stream ended inside a frame ({len(buf)} bytes left over)")
    return bytes(streams[1]), bytes(streams[2])


def _api_exec(name: str, argv: list[str], deadline: float) -> tuple[int, str] | None:
    """``docker exec name argv`` through the Engine API (create the exec, start it attached,
    read its multiplexed stream until the engine closes it, then its exit code), with
    python-on-whales' output rules: on exit code 0 standard output with one trailing newline
    removed; otherwise standard output and standard error joined by a newline; undecodable
    bytes replaced. Engine API: docs.docker.com/engine/api/v1.41, "Exec" (ContainerExec,
    ExecStart, ExecInspect) and "Stream format" (8-byte frame headers: stream type, 3 zero
    bytes, big-endian length).

    Returns:
        ``(exit code, output)``; 124 when ``deadline`` passed while it ran; 1 and what was
        wrong when the engine's answer after the start is not the documented one (the command
        may have run: it is never run again); None when it could not be started this way (no
        local socket, no such container, not running, any other answer than the documented
        one before the start): nothing ran, the caller asks the ``docker`` client.
    """
    where = _local_socket()
    if where is None:
        return None
    try:
        made = _api_call("POST", f"/containers/{urllib.parse.quote(name, safe='')}/exec",
                         {"Cmd": argv, "AttachStdout": True, "AttachStderr": True}, deadline, limit=1 << 16, where=where)
        if made is None or _status(made[0]) != b"201":
            return None
        try:
            exec_id = json.loads(made[1])["Id"]
        except (ValueError, KeyError, TypeError, RecursionError):
            return None
        if not isinstance(exec_id, str) or not re.fullmatch(r"[0-9a-f]{16,128}", exec_id):
            return None
        # From here on the command may have run: never handed to the client to run again.
        try:
            out_b, err_b = _read_stream(exec_id, deadline, where)
        except _Malformed as e:
            return 1, str(e)
        wait = 0.001
        while True:  # the exit code is recorded as the process ends, the stream may close first
            seen = _api_call("GET", f"/exec/{exec_id}/json", None, deadline, limit=1 << 20, where=where)
            try:
                info = json.loads(seen[1]) if seen is not None and _status(seen[0]) == b"200" else None
            except (ValueError, RecursionError):
                info = None
            if not isinstance(info, dict):
                return 1, "the Docker engine did not report the exec's exit code"
            code = info.get("ExitCode")
            if not info.get("Running") and type(code) is int:
                rc = code
                break
            time.sleep(wait)
            wait = min(wait * 2, 0.05)
    except TimeoutError:
        return 124, "timed out"
    out, err = out_b.decode(errors="replace"), err_b.decode(errors="replace")
    if rc == 0:
        return 0, out[:-1] if out.endswith("\n") else out
    return rc, "\n".join(x for x in (out, err) if x)


def _api_get(path: str, timeout: float = 5.0, limit: int = 64 << 20) -> object | None:
    """``GET path`` of the Engine API on :func:`_local_socket` (HTTP/1.0: the answer ends when
    the engine closes the connection): the JSON body of a 200 answer, or None for anything
    else (no socket, refused, another status, chunked or not JSON, more than ``limit``
    bytes), when the caller asks the ``docker`` client instead.

    Raises:
        EngineError: the engine took more than ``timeout`` seconds in all (then the client,
            which would wait for the same engine, is not asked).
    """
    where = _local_socket()
    if where is None:
        return None
    try:
        got = _api_call("GET", path, None, time.monotonic() + timeout, limit, where)
    except TimeoutError:
        raise EngineError(f"the Docker engine at {where} did not answer within {timeout:g} s") from None
    if got is None:
        return None
    head, body = got
    if _status(head) != b"200" or b"transfer-encoding:" in head.lower():
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


#: Seconds the label lookup waits for the ``docker`` client.
LABELS_TIMEOUT = 10.0


def _docker_cli(args: list[str], ok_codes: tuple[int, ...] = (0,), timeout: float | None = None) -> str:
    """Run ``docker ARGS`` (an argv, never a shell) and return its standard output.

    Raises:
        EngineError: the command exited with a code not in ``ok_codes``, or ran past ``timeout``
            seconds (None: no limit, as python-on-whales' calls have none).
    """
    try:
        r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise EngineError(f"docker {args[0]} {args[1]} did not answer within {timeout:g} s") from None
    if r.returncode not in ok_codes:
        raise EngineError(f"docker {args[0]} {args[1]} failed: {' '.join(r.stderr.split())[:500]}")
    return r.stdout


def _decode(x) -> str:
    if x is None:
        return ""
    return x.decode(errors="replace") if isinstance(x, bytes) else str(x)


def _one_line(e: DockerException) -> str:
    err = _decode(getattr(e, "stderr", "")).strip() or str(e)
    return " ".join(err.split())[:500]


def _tail(e: DockerException, n: int) -> str:
    text = "\n".join(x for x in (_decode(e.stdout), _decode(e.stderr)) if x) or str(e)
    return "\n".join(text.rstrip().splitlines()[-n:])
