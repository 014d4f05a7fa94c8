"""The http probe's `content_type` and `json_nonempty` (issue 18, item 8), against a local HTTP
server that answers what a broken or hostile backend would (real HTTP on loopback; the map
replica behind a proxy is tests/snapshots/test_faults.py). Found by a breaker run: a body
nested 100,000 deep crashed the probe, `image/pngx` passed for `image/png`, and empty values
turned the checks off."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import ValidationError

from sitectl.sites.probes import PNG_SIGNATURE, http_probe
from sitectl.stack import Probe

ANSWERS = {
    "/png": ("image/png", PNG_SIGNATURE + b"rest"),
    "/png-params": ("image/png; charset=binary", PNG_SIGNATURE + b"rest"),
    "/pngx": ("image/pngx", PNG_SIGNATURE + b"rest"),
    "/html": ("text/html", b"<html>error</html>"),
    "/fake-png": ("image/png", b"<html>error</html>"),
    "/empty": ("application/json", b"[]"),
    "/results": ("application/json", b'[{"lat": "40.44"}]'),
    "/route": ("application/json", b'{"code": "Ok", "routes": [{"distance": 1}]}'),
    "/noroute": ("application/json", b'{"code": "Ok", "routes": []}'),
    "/deep": ("application/json", b"[" * 100_000 + b"]" * 100_000),
}


@pytest.fixture(scope="module")
def base():
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            ctype, body = ANSWERS[self.path]
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("path,fields,ok,why", [
    ("/png", {"content_type": "image/png"}, True, ""),
    ("/png-params", {"content_type": "image/png"}, True, ""),
    ("/png", {"content_type": "image/"}, True, ""),
    ("/pngx", {"content_type": "image/png"}, False, "Content-Type 'image/pngx'"),
    ("/html", {"content_type": "image/png"}, False, "expected image/png"),
    ("/fake-png", {"content_type": "image/png"}, False, "not a PNG"),
    ("/results", {"json_nonempty": "."}, True, ""),
    ("/empty", {"json_nonempty": "."}, False, "[] at '.'"),
    ("/route", {"json_nonempty": "routes"}, True, ""),
    ("/noroute", {"json_nonempty": "routes"}, False, "[] at 'routes'"),
    ("/html", {"json_nonempty": "."}, False, "is not JSON"),
    ("/deep", {"json_nonempty": "."}, False, "is not JSON"),
])
def test_fields_judge_the_answer(base, path, fields, ok, why):
    got, detail = http_probe(base + path, Probe(name="p", type="http", **fields))
    assert got is ok and why in detail, detail


@pytest.mark.parametrize("fields", [{"type": "http", "content_type": ""}, {"type": "http", "json_nonempty": ""},
                                    {"type": "exec", "argv": ["true"], "content_type": "image/png"}])
def test_empty_or_misplaced_fields_are_refused(fields):
    with pytest.raises(ValidationError):
        Probe(name="p", **fields)
