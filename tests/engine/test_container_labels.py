"""`Engine.container_labels`: the Docker engine's fast paths (one Engine API request on the
local socket; one `docker container ls` with a JSON format) answer exactly what the
engine-neutral version over python-on-whales answers, also for label values a hostile
container could carry (tabs, newlines, quotes, braces, unicode); an answer from the socket that
is not a plain 200 with JSON is never taken (the client is asked instead)."""
import os
import socket
import threading

import pytest

from sitectl.engine import DockerEngine
from sitectl.engine import docker as docker_engine
from sitectl.engine.base import Engine

pytestmark = pytest.mark.docker

KEYS = ("sitectl.host", "sitectl.site_hosts", "test.absent")
VALUES = ['plain', 'tab\there', 'new\nline', '"quoted" {{.ID}}', 'é ü 中', ' lead and trail ', 'a=b,c=d']


@pytest.fixture
def labelled(engine):
    names = []
    for i, v in enumerate(VALUES):
        name = f"sitectl-test-labels-{i}"
        engine.docker.container.remove(name, force=True) if engine.docker.container.exists(name) else None
        engine.docker.container.create("sitectl/base:bookworm", ["true"], name=name,
                                       labels={"sitectl.test-labels": "1", "sitectl.host": v,
                                               "sitectl.site_hosts": str(i)})
        names.append(name)
    yield
    engine.docker.container.remove(names, force=True)


def test_both_fast_paths_equal_the_engine_neutral_answer(labelled, monkeypatch):
    e = DockerEngine()
    assert docker_engine._local_socket() is not None, "this machine's client talks to the local socket"
    api = e.container_labels({"sitectl.test-labels": "1"}, KEYS)
    neutral = Engine.container_labels(e, {"sitectl.test-labels": "1"}, KEYS)
    # The CLI path is the one taken when the client would talk elsewhere (another context):
    # here by saying there is no local socket, so the same engine is asked through `docker`.
    monkeypatch.setattr(docker_engine, "_local_socket", lambda: None)
    cli = e.container_labels({"sitectl.test-labels": "1"}, KEYS)
    assert sorted(api, key=str) == sorted(neutral, key=str) == sorted(cli, key=str)
    assert sorted(d["sitectl.host"] for d in api) == sorted(VALUES)
    assert all("test.absent" not in d for d in api)


def test_where_the_client_would_go_decides_the_socket(monkeypatch, tmp_path):
    for var in ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    assert docker_engine._local_socket() == "/var/run/docker.sock"
    (tmp_path / "config.json").write_text('{"currentContext": "remote"}')
    assert docker_engine._local_socket() is None
    (tmp_path / "config.json").write_text('{"currentContext": "default"}')
    assert docker_engine._local_socket() == "/var/run/docker.sock"
    (tmp_path / "config.json").write_text('[1, 2]')
    assert docker_engine._local_socket() is None
    monkeypatch.setenv("DOCKER_CONTEXT", "other")
    assert docker_engine._local_socket() is None
    monkeypatch.setenv("DOCKER_HOST", "tcp://10.0.0.1:2375")
    assert docker_engine._local_socket() is None
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/user/1000/docker.sock")
    assert docker_engine._local_socket() == "/run/user/1000/docker.sock"


@pytest.mark.parametrize("answer", [
    b"HTTP/1.0 500 Internal Server Error\r\n\r\n[]",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n",
    b"HTTP/1.0 200 OK\r\n\r\n[{\"Labels\": ",
    b"HTTP/1.0 200 OK\r\n\r\n" + b"[" + b" " * (1 << 21),
    b"garbage",
    b"",
])
def test_an_answer_that_is_not_plain_json_is_not_taken(tmp_path, monkeypatch, answer):
    """A stand-in for the engine's socket (a real Unix socket server, answering badly)."""
    path = str(tmp_path / "d.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def serve():
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(answer)
            except BrokenPipeError:  # the oversized answer: the client stopped reading, as it should
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    try:
        assert docker_engine._api_get("/containers/json", limit=1 << 20) is None
    finally:
        t.join(5)
        server.close()
    os.unlink(path)


def test_a_label_name_that_is_not_plain_is_refused(engine):
    with pytest.raises(ValueError, match="label name"):
        DockerEngine().container_labels({}, ('x" }}{{.ID',))


def test_no_container_no_rows(engine):
    assert DockerEngine().container_labels({"sitectl.test-labels": "none-such"}, KEYS) == []


@pytest.mark.parametrize("how", ["silent", "drip"])
def test_an_engine_that_does_not_answer_in_time_is_an_error_within_the_time(tmp_path, monkeypatch, how):
    """A stand-in for the engine's socket that accepts and then says nothing, or one byte at a
    time: the whole request is bounded, not each read."""
    import time

    from sitectl.errors import EngineError

    path = str(tmp_path / "d.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    stop = threading.Event()

    def serve():
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            while not stop.is_set():
                if how == "drip":
                    try:
                        conn.sendall(b"H")
                    except OSError:
                        return
                stop.wait(0.1)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    t0 = time.monotonic()
    try:
        with pytest.raises(EngineError, match="did not answer within 1 s"):
            docker_engine._api_get("/containers/json", timeout=1.0)
        assert time.monotonic() - t0 < 3
    finally:
        stop.set()
        t.join(5)
        server.close()
