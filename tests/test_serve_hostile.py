"""The reset server against hostile clients (found by a breaker run): slow clients that trickle
their requests cannot hold every handler; a body that cannot be delimited (two Content-Length
values, Transfer-Encoding) is refused, never read as a next request; a body cut short is
refused and grants nothing; a client gone before its answer holds no lease.

Real server, real sockets on loopback. The pool's reset is replaced by one that returns at once
(stated here: these tests are about HTTP, and no reset runs in them except after a release)."""
from __future__ import annotations

import socket
import threading
import time

import pytest

import sitectl.server as srvmod
from sitectl.engine import DockerEngine
from sitectl.ops.pool import Pool
from sitectl.stack.target import resolve_target

TOKEN = "hostile-test-token-0123456789"


@pytest.fixture
def server(monkeypatch, tmp_path):
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path))
    monkeypatch.setattr(srvmod, "REQUEST_DEADLINE", 2.0)
    pool = Pool([resolve_target("mini", host="127.0.0.1", instance=9)], DockerEngine(),
                reset_fn=lambda *a: {"sites": [], "logins": []})
    srv = srvmod.make_server(pool, TOKEN, ("127.0.0.1", 0), log=None)
    th = threading.Thread(target=srvmod.serve, args=(srv, 0.1), daemon=True)
    th.start()
    yield srv
    srv.shutdown()
    th.join(10)


def talk(srv, raw: bytes, timeout: float = 10.0) -> bytes:
    """Send ``raw``, then read until the server closes (or ``timeout``)."""
    s = socket.create_connection(srv.server_address[:2], timeout=timeout)
    s.sendall(raw)
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except TimeoutError:
        pass
    s.close()
    return out


def status_answer_time(srv) -> float:
    t0 = time.monotonic()
    got = talk(srv, b"GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=60)
    assert got.startswith(b"HTTP/1.1 200") and b"Ready for duty!" in got, got[:200]
    return time.monotonic() - t0


def test_clients_that_trickle_their_requests_are_cut_off(server):
    n = server.max_handlers + 6
    slow = [socket.create_connection(server.server_address[:2], timeout=30) for _ in range(n)]
    stop = threading.Event()

    def trickle():  # one header line every second on every connection, each read well within 10 s
        for s in slow:
            s.sendall(b"GET /status HTTP/1.1\r\n")
        i = 0
        while not stop.wait(1.0):
            for s in slow:
                try:
                    s.sendall(b"X-Slow-%d: 1\r\n" % i)
                except OSError:
                    pass
            i += 1

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    try:
        time.sleep(1.0)  # every handler is taken by now
        # The deadline (2 s here) frees the handlers: a normal request is answered soon after.
        assert status_answer_time(server) < 8.0
    finally:
        stop.set()
        t.join(5)
    # The slow connections were closed by the server.
    closed = 0
    for s in slow:
        try:
            s.settimeout(5)
            closed += s.recv(1) == b""
        except OSError:
            closed += 1
        s.close()
    assert closed == n


def test_a_body_that_cannot_be_delimited_is_refused_and_never_read_as_a_request(server):
    smuggled = b"GET /nonexistent-smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    got = talk(server, b"POST /api/leases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
               + b"\r\nContent-Length: 0\r\nContent-Length: %d\r\n\r\n" % len(smuggled) + smuggled)
    assert got.startswith(b"HTTP/1.1 400") and b"Content-Length given twice" in got, got
    assert got.count(b"HTTP/1.1 ") == 1  # the body was not answered as a request
    got = talk(server, b"POST /api/leases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
               + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(smuggled) + smuggled + b"\r\n0\r\n\r\n")
    assert got.startswith(b"HTTP/1.1 400") and b"Transfer-Encoding" in got and got.count(b"HTTP/1.1 ") == 1, got


def test_a_body_cut_short_grants_nothing(server):
    s = socket.create_connection(server.server_address[:2], timeout=10)
    s.sendall(b"POST /api/leases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
              + b"\r\nContent-Length: 50\r\n\r\n{}")
    s.shutdown(socket.SHUT_WR)  # the client stops sending: 2 of 50 bytes
    got = b""
    while chunk := s.recv(65536):  # the answer, to the server's close
        got += chunk
    s.close()
    assert got.startswith(b"HTTP/1.1 400") and b"the body ended after 2 of its 50 bytes" in got, got
    assert server.pool.leased(9) is None


def test_a_client_gone_before_its_lease_arrives_holds_no_lease(server):
    # Ask for a lease and leave at once (reset the connection): the answer cannot be delivered.
    s = socket.create_connection(server.server_address[:2], timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    body = b'{"client": "gone", "ttl": 600}'
    s.sendall(b"POST /api/leases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
              + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    s.close()  # RST: the server's answer meets a reset connection
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (server.pool.leased(9) is not None or server.pool.slot(9).state != "idle"):
        time.sleep(0.1)
    assert server.pool.leased(9) is None
