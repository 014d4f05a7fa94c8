"""`DockerEngine.exec` through the Engine API (no `docker` process) answers exactly what
python-on-whales' `docker exec` answers, for every kind of result a store's command can give:
output on both streams, exit codes (a failure, a missing program, a killed process), empty
and trailing-newline output, undecodable bytes, output larger than one read, a timeout; a
container that is missing or stopped takes the client's path and its message; a command is
never run twice."""
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
