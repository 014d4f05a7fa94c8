"""`DockerEngine.exec` through the Engine API (no `docker` process) answers exactly what
python-on-whales' `docker exec` answers, for every kind of result a store's command can give:
output on both streams, exit codes (a failure, a missing program, a killed process), empty
and trailing-newline output, undecodable bytes, output larger than one read, a timeout; a
container that is missing or stopped takes the client's path and its message; a command is
never run twice."""
import json
import socket
import threading
import time

import pytest
from python_on_whales import DockerClient

from sitectl.engine import DockerEngine
from sitectl.engine import docker as docker_engine

pytestmark = pytest.mark.docker

NAME = "sitectl-test-exec-api"

CASES = [
    ["sh", "-c", "echo out; echo err >&2"],
    ["sh", "-c", "echo out; echo err >&2; exit 3"],
    ["sh", "-c", "printf 'a\\n\\n'"],
    ["sh", "-c", "printf ''"],
    ["sh", "-c", "printf 'no newline'"],
    ["sh", "-c", "printf '\\377\\376 bytes\\n'"],
    ["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo tail"],
    ["sh", "-c", "for i in 1 2 3; do echo o$i; echo e$i >&2; done; exit 1"],
    ["sh", "-c", "kill -9 $$"],
    ["no-such-program"],
    ["printf", "%s|", "spaces in one arg", "'quotes'", "$(not run)", "é 中"],
]


@pytest.fixture
def box(engine):
    if engine.docker.container.exists(NAME):
        engine.docker.container.remove(NAME, force=True)
    engine.docker.container.run("sitectl/base:bookworm", ["sleep", "600"], name=NAME, detach=True)
    yield NAME
    engine.docker.container.remove(NAME, force=True)


def test_api_and_client_answer_alike(box):
    api, cli = DockerEngine(), DockerEngine(DockerClient())  # a client of its own: the CLI path
    assert docker_engine._local_socket() is not None, "this machine's client talks to the local socket"
    for argv in CASES:
        assert api.exec(box, argv) == cli.exec(box, argv), argv


def test_the_api_path_is_the_one_taken(box, monkeypatch):
    taken = []
    real = docker_engine._api_exec

    def spy(*a):
        taken.append(a[1])
        return real(*a)

    monkeypatch.setattr(docker_engine, "_api_exec", spy)
    assert DockerEngine().exec(box, ["echo", "hi"]) == (0, "hi")
    assert taken == [["echo", "hi"]]


def test_runs_once(box):
    e = DockerEngine()
    e.exec(box, ["sh", "-c", "echo x >> /tmp/count"])
    assert e.exec(box, ["cat", "/tmp/count"]) == (0, "x")


def test_timeout_is_124_and_fast(box):
    t0 = time.monotonic()
    rc, out = DockerEngine().exec(box, ["sleep", "5"], timeout=1)
    assert rc == 124 and "timed out" in out
    assert time.monotonic() - t0 < 3


def test_missing_and_stopped_containers_answer_as_the_client_does(box, engine):
    api, cli = DockerEngine(), DockerEngine(DockerClient())
    missing = api.exec("sitectl-test-exec-api-missing", ["true"])
    assert missing == cli.exec("sitectl-test-exec-api-missing", ["true"])
    assert missing[0] != 0 and "No such container" in missing[1]
    engine.docker.container.stop(box, time=0)
    stopped = api.exec(box, ["true"])
    assert stopped == cli.exec(box, ["true"])
    assert stopped[0] != 0 and "is not running" in stopped[1]


def test_no_local_socket_takes_the_client(box, monkeypatch):
    monkeypatch.setattr(docker_engine, "_local_socket", lambda: None)
    assert DockerEngine().exec(box, ["sh", "-c", "echo a; exit 4"]) == (4, "a\n")


# -- an engine whose answers are not the documented ones ---------------------------------------
# Mocked, and why: the real engine never sends a malformed exec stream, a frame of its own error
# type, a chunked or cut answer, or an exit code that never comes; a fake Engine API on a Unix
# socket of the test's own (DOCKER_HOST) sends them. DockerEngine.exec is the real code.

EID = "a" * 64


def _frame(kind: int, data: bytes, pad: bytes = b"\0\0\0") -> bytes:
    return bytes([kind]) + pad + len(data).to_bytes(4, "big") + data


class FakeEngine:
    """Answers create with 201 and exec id EID, start with ``start`` (raw bytes after the
    request), inspect with ``inspect``; counts the starts."""

    def __init__(self, path, start: bytes, inspect: bytes | None = None):
        self.starts, self.start, self.inspect = 0, start, inspect or b'{"Running": false, "ExitCode": 0}'
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        self.sock.listen(8)
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(c,), daemon=True).start()

    def _one(self, c):
        with c:
            data = b""
            while b"\r\n\r\n" not in data:
                part = c.recv(65536)
                if not part:
                    return
                data += part
            line = data.split(b"\r\n", 1)[0].decode()
            if line.startswith("POST /containers/"):
                c.sendall(b"HTTP/1.0 201 Created\r\n\r\n" + json.dumps({"Id": EID}).encode())
            elif line.startswith(f"POST /exec/{EID}/start"):
                self.starts += 1
                c.sendall(self.start)
            elif line.startswith(f"GET /exec/{EID}/json"):
                c.sendall(b"HTTP/1.0 200 OK\r\n\r\n" + self.inspect)


OK_HEAD = b"HTTP/1.0 200 OK\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\n\r\n"


@pytest.mark.parametrize("start, expect", [
    (OK_HEAD + _frame(1, b"out\n") + _frame(2, b"err\n"), (0, "out")),
    (OK_HEAD + _frame(1, b"") + _frame(1, b"x"), (0, "x")),
    (OK_HEAD + _frame(1, b"hello world")[:-4], (1, "ended inside a frame")),
    (OK_HEAD + _frame(1, b"ok") + b"junk", (1, "ended inside a frame")),
    (OK_HEAD + _frame(3, b"OCI runtime exec failed"), (1, "frame of type 3: OCI runtime exec failed")),
    (OK_HEAD + _frame(1, b"abc", pad=b"\0\1\0"), (1, "frame of type 1")),
    (OK_HEAD + b"raw text, as a TTY would send", (1, "frame of type")),
    (b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", (1, "in chunks")),
    (b"HTTP/1.0 500 Internal Server Error\r\n\r\n{\"message\": \"boom\"}", (1, "HTTP 500")),
    (b"", (1, "closed before the exec's answer")),
])
def test_a_malformed_answer_after_the_start_is_an_error_never_a_second_run(tmp_path, monkeypatch, start, expect):
    sock = tmp_path / "engine.sock"
    fake = FakeEngine(sock, start)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{sock}")
    cli_runs = []
    engine = DockerEngine()
    monkeypatch.setattr(DockerEngine, "docker", property(lambda self: cli_runs.append(1)))  # the client must not be asked
    rc, out = engine.exec("any", ["true"], timeout=5)
    assert rc == expect[0] and expect[1] in out, (rc, out)
    assert fake.starts == 1 and not cli_runs


def test_an_exit_code_that_never_comes_is_a_timeout(tmp_path, monkeypatch):
    sock = tmp_path / "engine.sock"
    FakeEngine(sock, OK_HEAD + _frame(1, b"x"), inspect=b'{"Running": false, "ExitCode": true}')
    monkeypatch.setenv("DOCKER_HOST", f"unix://{sock}")
    assert DockerEngine().exec("any", ["true"], timeout=2) == (124, "timed out after 2 s")


def test_an_exec_created_and_never_started_is_no_running_command(box, engine):
    # A sitectl killed between the Engine API's exec create and start leaves an exec the
    # container lists (ExecIDs) until the engine's clean-up: it runs nothing, so a recovery
    # must not wait for it. A started one counts while it runs.
    created = docker_engine._api_call("POST", f"/containers/{box}/exec", {"Cmd": ["sleep", "30"]},
                                      time.monotonic() + 10)
    assert created is not None and docker_engine._status(created[0]) == b"201", created
    assert engine.docker.container.inspect(box).exec_ids  # listed...
    assert engine.running_execs(box) == 0  # ...and not running
    t = threading.Thread(target=engine.exec, args=(box, ["sleep", "3"]), daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    while engine.running_execs(box) != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert engine.running_execs(box) == 1
    t.join(20)
    assert engine.running_execs(box) == 0
