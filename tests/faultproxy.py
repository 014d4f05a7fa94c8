"""A real HTTP reverse proxy in front of a real site, that misbehaves on purpose: it answers
502 to the first N requests, or to every other request (a flapping site), or drops the Cookie header of requests to some paths (the site
then sees a logged-out browser), or answers some paths itself (a backend that answers wrongly). Used to test how sitectl tells a failing site from an expired
or unapplied login. Everything behind it is the real replica; only the faults are made here."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
       "transfer-encoding", "upgrade", "content-length", "content-encoding", "host"}


class FaultProxy:
    """``with FaultProxy("http://127.0.0.1:9999", fail_first=3) as p: p.url``.

    Attributes:
        fail_first: how many requests get 502 before the proxy starts forwarding.
        flap: every other request gets 502 (the 2nd, 4th, ...), for ever.
        drop_cookies_on: path prefixes whose requests are forwarded without their cookies.
        secure_cookies: every Set-Cookie of the site gets ``Secure`` (as behind a TLS proxy that
            the client then reaches over plain http: the cookie is never sent back).
        answer: path prefix -> (status, content type, body) answered instead of forwarding (a
            backend that answers wrongly: a tile server's error page served with 200, a
            geocoder with no results).
        seen: (method, path, status) of every request, in order.
    """

    def __init__(self, upstream: str, fail_first: int = 0, drop_cookies_on: tuple[str, ...] = (),
                 flap: bool = False, answer: dict[str, tuple[int, str, bytes]] | None = None,
                 secure_cookies: bool = False):
        self.upstream = upstream.rstrip("/")
        self.fail_first = fail_first
        self.flap = flap
        self.count = 0
        self.drop_cookies_on = drop_cookies_on
        self.answer = answer or {}
        self.secure_cookies = secure_cookies
        self.seen: list[tuple[str, str, int]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    fail = proxy.fail_first > 0 or (proxy.flap and proxy.count % 2 == 1)
                    proxy.count += 1
                    if proxy.fail_first > 0:
                        proxy.fail_first -= 1
                if fail:
                    # Recorded before answering: the client may read `seen` as soon as it has the answer.
                    proxy.seen.append((self.command, self.path, 502))
                    self.send_response(502)
                    self.send_header("Content-Length", "11")
                    self.end_headers()
                    self.wfile.write(b"Bad Gateway")
                    return
                canned = next((v for k, v in proxy.answer.items() if self.path.startswith(k)), None)
                if canned:
                    proxy.seen.append((self.command, self.path, canned[0]))
                    self.send_response(canned[0])
                    self.send_header("Content-Type", canned[1])
                    self.send_header("Content-Length", str(len(canned[2])))
                    self.end_headers()
                    self.wfile.write(canned[2])
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
                headers["Host"] = self.headers.get("Host", "")
                if any(self.path.startswith(p) for p in proxy.drop_cookies_on):
                    headers.pop("Cookie", None)
                r = requests.request(self.command, proxy.upstream + self.path, headers=headers, data=body,
                                     allow_redirects=False, timeout=30)
                proxy.seen.append((self.command, self.path, r.status_code))
                self.send_response(r.status_code)
                for k, v in r.raw.headers.items():
                    if k.lower() not in HOP:
                        self.send_header(k, v + "; Secure" if proxy.secure_cookies and k.lower() == "set-cookie" else v)
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = _handle

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "FaultProxy":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
