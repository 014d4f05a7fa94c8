"""sitectl's HTTP sessions reach ``*.localhost`` names on loopback (RFC 6761 §6.3, as browsers
do) while the request keeps the site's own name in its Host header, on every request of a
kept-alive connection. A real HTTP server on 127.0.0.1 answers; nothing is mocked."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from sitectl.hostnames import is_localhost_name, system_resolves
from sitectl.http import new_session


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so one connection serves several requests

    def do_GET(self):
        body = f"{self.headers.get('Host')}|{self.client_address[0]}|{id(self.connection)}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", "sid=abc; Path=/")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


@pytest.fixture
def echo_port():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def test_localhost_names_dial_loopback_and_keep_their_host_header(echo_port):
    s = new_session()
    seen = [s.get(f"http://shopping-admin.localhost:{echo_port}/x", timeout=5).text.split("|") for _ in range(3)]
    # Same Host header on every request, including those reusing the kept-alive connection.
    assert [h for h, _, _ in seen] == [f"shopping-admin.localhost:{echo_port}"] * 3
    assert {ip for _, ip, _ in seen} == {"127.0.0.1"}
    assert len({conn for _, _, conn in seen}) == 1, "the connection is kept alive and reused"
    # Cookies are kept under the site's own name, as a browser would.
    assert [(c.name, c.domain) for c in s.cookies] == [("sid", "shopping-admin.localhost")]


def test_other_names_still_use_the_system_resolver(echo_port):
    assert is_localhost_name("Reddit.LOCALHOST.") and not is_localhost_name("localhost.example.org")
    with pytest.raises(requests.ConnectionError):
        new_session().get(f"http://no-such-site.invalid:{echo_port}/", timeout=5)
    assert not system_resolves("no-such-site.invalid") and system_resolves("127.0.0.1")
