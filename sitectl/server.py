"""``sitectl serve``: the reset server, over a :class:`sitectl.ops.pool.Pool`.

Two faces on one port (stdlib ``ThreadingHTTPServer``, one thread per request):

* **BrowserGym's protocol** (``browsergym-webarena`` ``WebArenaInstance.full_reset``; the
  protocol of gasse/webarena-setup's reset server, research/peers.md §1.3–1.4):
  ``GET /reset`` answers 200 when a reset starts and 418 when one is already running;
  ``GET /status`` answers 200 ``Ready for duty!`` when no reset runs and the last one succeeded, 200 ``Reset ongoing``
  while a reset runs, and 500 with the error after a failed one. ``/i/<N>/reset`` and
  ``/i/<N>/status`` address instance N; the bare paths the pool's first instance. So that
  the client needs no change, ``/reset`` answers only once the reset is done or ``reset_wait``
  seconds passed (BrowserGym polls ``/status`` every 20 s; a reset takes about a second).
* **JSON API**: ``GET /api/status`` (per instance: state, lease, last reset, per-site health);
  ``POST /api/reset`` ``{"instance", "sites", "full"}`` (waits; 409 when one runs or the
  instance is leased); ``POST /api/leases`` ``{"client", "ttl"}`` (200 with the instance's URLs,
  WebArena and BrowserGym variables and its own ``WA_FULL_RESET``; 503 when none is free);
  ``GET /api/leases/<id>`` (the lease now: after a cluster failover, its new instance and
  URLs); ``POST /api/leases/<id>/heartbeat``; ``DELETE /api/leases/<id>`` (release: the instance is
  reset before it is leased again; ``?diff=1``: the body also holds the episode's diff, read
  before the reset, docs/diff.md).

Every request that changes something, and the status API, needs the token:
``Authorization: Bearer <token>`` or the path prefix ``/t/<token>/`` (so
``WA_FULL_RESET=http://host:port/t/<token>`` works with BrowserGym's unmodified client). A
lease's holder resets and polls its own instance at ``/l/<lease id>/reset`` and ``/status``,
reads what changed in it since golden at ``/l/<lease id>/diff``, and keeps checkpoints of it
(docs/checkpoints.md): ``GET /l/<lease id>/checkpoints`` lists them, ``POST
/l/<lease id>/checkpoints/<name>`` saves one, ``POST .../<name>/restore`` brings the instance to it
(answers when done), ``DELETE .../<name>`` deletes it; a lease's checkpoints are deleted when it
ends (the lease id is its credential: the server token is never handed out), and a leased instance
is reset only through its lease. Tokens are compared in constant time (``hmac.compare_digest``)
and never logged (``redact``: ``/t/***/``, query values ``***``, lease ids as ``/l/AbCdEf.../``).
"""
from __future__ import annotations

import hmac
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from sitectl.errors import CheckpointUnavailable, DiffUnavailable, InstanceBusy, SitectlError, UsageError
from sitectl.monitor import PROBE_EVERY, Monitor
from sitectl.monitor.log import EventLog, redact
from sitectl.monitor.metrics import CONTENT_TYPE as METRICS_TYPE
from sitectl.monitor.page import CSP
from sitectl.ops.envvars import env_vars
from sitectl.ops.pool import UNHEALTHY, LeaseError, Pool

READY = "Ready for duty!"
ONGOING = "Reset ongoing"
_TOKEN_PATH = re.compile(r"^/t/([^/]+)(/.*)\Z")
_INSTANCE_PATH = re.compile(r"^/i/(\d{1,2})(/(?:reset|status))\Z")
_LEASE_PATH = re.compile(r"^/l/([A-Za-z0-9_-]{1,64})(/(?:reset|status|diff))\Z")
#: A lease's checkpoints: ``/l/<lease id>/checkpoints[/<name>[/restore]]``.
_CHECKPOINT_PATH = re.compile(r"^/l/([A-Za-z0-9_-]{1,64})/checkpoints(?:/([A-Za-z0-9_]{1,64})(/restore)?)?\Z")
MAX_BODY = 64 * 1024
#: Seconds a client has to send one whole request (line, headers and body); then it is cut off.
REQUEST_DEADLINE = 15.0


class ResetServer(ThreadingHTTPServer):
    """The HTTP server; ``pool``, ``token`` and ``reset_wait`` (s) are set by :func:`make_server`.

    Under a crowd: the kernel queues up to ``request_queue_size`` connections (``listen(2)``'s
    backlog, capped by ``net.core.somaxconn``: 4096 on Linux 5.4+) while at most
    ``max_handlers`` requests are served at once; a connection waits in that queue for a free
    handler instead of being refused or reset. Only the one request that starts an instance's
    reset waits for it (``reset_wait``); the others are answered at once (418, 409), so the
    handlers turn over quickly. When half the handlers are busy, keep-alive is turned off so idle
    connections cannot hold them (bench/serve.py ``--crowd`` measures 10 to 1,000 clients)."""

    daemon_threads = True
    #: ``listen(2)`` backlog (the stdlib's default is 5: a burst of clients met resets and refusals).
    request_queue_size = 1024
    #: Requests served at once (handler threads); further connections wait in the backlog.
    max_handlers = 64
    pool: Pool
    token: str
    reset_wait: float
    public_base: str
    #: The serve log (None: none), the metrics, history and page, and whether /metrics is open.
    events: EventLog | None = None
    monitor: Monitor
    open_metrics: bool = True
    probe_every: float = PROBE_EVERY

    def __init__(self, address: tuple[str, int], handler, max_handlers: int | None = None):
        if max_handlers is not None:
            self.max_handlers = max_handlers
        super().__init__(address, handler)

    def server_activate(self) -> None:
        self._free = threading.BoundedSemaphore(self.max_handlers) if self.max_handlers else None
        self._busy = 0
        self._busy_lock = threading.Lock()
        # Connections still sending their request, with the monotonic time they must be done by.
        self._reading: dict[socket.socket, float] = {}
        self._closed = threading.Event()
        threading.Thread(target=self._watch, daemon=True, name="serve-deadlines").start()
        super().server_activate()

    def reading(self, conn: socket.socket, on: bool) -> None:
        """``conn`` starts (``on``) or ends receiving one request: it gets :data:`REQUEST_DEADLINE`
        seconds for the request line, headers and body together."""
        with self._busy_lock:
            if on:
                self._reading[conn] = time.monotonic() + REQUEST_DEADLINE
            else:
                self._reading.pop(conn, None)

    def _watch(self) -> None:
        # A client that trickles its request (a byte every few seconds keeps each read within the
        # socket timeout) is cut off at the deadline, so that slow clients cannot hold every handler.
        while not self._closed.wait(0.5):
            now = time.monotonic()
            with self._busy_lock:
                late = [c for c, t in self._reading.items() if t < now]
                for c in late:
                    del self._reading[c]
            for c in late:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def server_close(self) -> None:
        self._closed.set()
        super().server_close()

    def process_request(self, request, client_address) -> None:
        # Blocks the accept loop while every handler is busy (the kernel keeps queueing); polled so
        # that shutdown() is still seen (CPython's BaseServer keeps that request in a private
        # attribute; without it, shutdown waits for a handler to end, at most reset_wait).
        while self._free is not None and not self._free.acquire(timeout=0.5):
            if getattr(self, "_BaseServer__shutdown_request", False):
                self.shutdown_request(request)
                return
        with self._busy_lock:
            self._busy += 1
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done()

    def _done(self) -> None:
        with self._busy_lock:
            self._busy -= 1
        if self._free is not None:
            self._free.release()

    def crowded(self) -> bool:
        """True when half the handlers or more are busy (responses then close their connection)."""
        return bool(self.max_handlers) and self._busy * 2 >= self.max_handlers


def make_server(pool: Pool, token: str, bind: tuple[str, int] = ("127.0.0.1", 7565), reset_wait: float = 30.0,
                log=sys.stderr, public_url: str | None = None, server_class: type[ResetServer] = ResetServer,
                log_format: str = "human", open_metrics: bool = True, probe_every: float = PROBE_EVERY,
                title: str = "sitectl reset server") -> ResetServer:
    """Build (not start) the server on ``bind``; ``serve_forever()`` runs it. ``public_url``
    is the base URL clients reach it at (default: ``http://<bind address>:<port>``), used in the
    reset URLs a lease hands out. Handlers: ``server_class.max_handlers``, and at least two per
    instance plus 16 (a reset's waiting request and a status poll per instance stay possible
    while every instance resets); ``server_class`` is for benchmarks of other settings.

    Monitoring (docs/monitoring.md): ``log`` gets a line per request and per pool event in
    ``log_format`` (``human`` or ``json``); ``GET /metrics`` needs the token unless
    ``open_metrics``; the probe loop :func:`serve` starts reads site health every
    ``probe_every`` s (0: never; failures count in ``sitectl_probe_failures_total``); ``title``
    heads the status page at ``/``.

    Raises:
        ValueError: an empty token, an unknown log format.
        OSError: the address is taken or cannot be bound.
    """
    if not token:
        raise ValueError("the reset server needs a non-empty token")
    events = EventLog(log, log_format, token) if log is not None else None
    cap = server_class.max_handlers
    srv = server_class(bind, Handler, max(cap, 2 * len(pool.slots) + 16) if cap else cap)
    srv.pool, srv.token, srv.reset_wait = pool, token, reset_wait
    srv.events, srv.open_metrics, srv.probe_every = events, open_metrics, probe_every
    srv.monitor = Monitor(pool, events, title)
    host, port = srv.server_address[:2]
    srv.public_base = (public_url or f"http://{host}:{port}").rstrip("/")
    return srv


class Handler(BaseHTTPRequestHandler):
    server: ResetServer
    protocol_version = "HTTP/1.1"
    timeout = 10  # seconds a connection may idle (keep-alive) or stall mid-request before it is closed

    # -- plumbing ----------------------------------------------------------------------------
    def handle_one_request(self) -> None:
        self.server.reading(self.connection, True)
        try:
            super().handle_one_request()
        finally:
            self.server.reading(self.connection, False)

    def _received(self) -> None:
        """The request is in: what follows (a reset's wait, the answer) is not under the deadline."""
        self.server.reading(self.connection, False)

    def _framing_problem(self) -> str | None:
        """Why the request's body cannot be delimited safely, or None: two Content-Length values
        that differ, or any Transfer-Encoding (a body the server would not read could be taken
        for the next request by a proxy in front of it)."""
        lengths = {v.strip() for v in self.headers.get_all("Content-Length") or []}
        if len(lengths) > 1:
            return "Content-Length given twice with different values"
        if self.headers.get("Transfer-Encoding"):
            return "Transfer-Encoding is not accepted: send a Content-Length"
        return None

    def log_message(self, fmt, *args):  # the token must never reach a log (EventLog redacts every line)
        if self.server.events is not None:
            self.server.events.http(self.address_string(), fmt % args)

    def _send(self, code: int, body, content_type: str | None = None, headers: dict | None = None) -> bool:
        """Answer; False (and the connection closed, nothing logged) when the client is gone."""
        self._received()
        if not getattr(self, "_body_read", False) and self.headers.get("Content-Length", "0").strip() not in ("", "0"):
            self.close_connection = True  # an unread body must not be parsed as the next request
        if self.server.crowded():
            self.close_connection = True  # under a crowd an idle keep-alive connection must not hold a handler
        if isinstance(body, (dict, list)):
            data, content_type = json.dumps(body, default=str).encode(), "application/json"
        else:
            data = str(body).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", content_type or "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
            return False
        return True

    def _route(self) -> tuple[str, bool]:
        """The path without a token prefix, and whether a valid token came with the request."""
        path = urlsplit(self.path).path
        given = None
        m = _TOKEN_PATH.match(path)
        if m:
            given, path = m.group(1), m.group(2)
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and given is None:
            given = auth[7:].strip()
        ok = given is not None and hmac.compare_digest(given.encode(), self.server.token.encode())
        return path, ok

    def _json_body(self) -> dict:
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise ValueError("bad Content-Length") from None
        if n < 0 or n > MAX_BODY:
            raise ValueError(f"Content-Length must be 0 to {MAX_BODY} bytes")
        raw = self.rfile.read(n) if n else b""
        self._body_read = True
        self._received()
        if len(raw) != n:
            self.close_connection = True
            raise ValueError(f"the body ended after {len(raw)} of its {n} bytes")
        if not raw.strip():
            return {}
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("the body is a JSON object")
        return data

    def _deny(self) -> None:
        self._send(401, {"error": "a valid token is required (Authorization: Bearer <token>, or /t/<token>/ in the path)"})

    # -- methods -------------------------------------------------------------------------------
    def _leased_elsewhere(self, inst: int, lease_id: str | None) -> str | None:
        held = self.server.pool.leased(inst)
        if held is not None and held.id != lease_id:
            return f"instance {inst} is leased by {held.client}; its holder resets it through the lease"
        return None

    def _refuse_framing(self) -> bool:
        why = self._framing_problem()
        if why:
            self.close_connection = True
            self._send(400, {"error": why})
        return bool(why)

    def do_GET(self):
        if self._refuse_framing():
            return
        self._received()
        path, authed = self._route()
        pool = self.server.pool
        inst, sub, lease_id = pool.default_instance, path, None
        m = _INSTANCE_PATH.match(path)
        lm = _LEASE_PATH.match(path)
        if m:
            inst, sub = int(m.group(1)), m.group(2)
            if inst not in pool.slots:
                return self._send(404, f"instance {inst} is not in this pool")
        elif lm:
            try:
                lease = pool.lease(lm.group(1))
            except LeaseError:
                return self._send(404, "unknown or ended lease")
            inst, sub, lease_id, authed = lease.instance, lm.group(2), lease.id, True
        if sub == "/diff" and lease_id is not None:  # the lease's holder reads what its episode changed
            return self._diff(lease_id)
        cm = _CHECKPOINT_PATH.match(path)
        if cm and cm.group(2) is None:
            return self._checkpoint(cm.group(1), "list")
        if sub == "/reset":
            if not authed:
                return self._deny()
            busy = self._leased_elsewhere(inst, lease_id)
            if busy:
                return self._send(409, busy)
            if not pool.start_reset(inst, reason="GET /reset"):
                return self._send(418, "Reset already running")
            pool.wait(inst, self.server.reset_wait)
            return self._send(200, "Reset initiated")
        if sub == "/status":
            slot = pool.slot(inst)
            if slot.state in ("resetting", "starting", "unplaced"):  # a cluster instance being (re)placed
                return self._send(200, ONGOING)
            if slot.state == "failed":  # open to anyone: a holder's name and words stay behind the token
                why = slot.error if not slot.error.startswith(UNHEALTHY) else \
                    f"{UNHEALTHY} by its holder (GET /api/status with the token says why)"
                return self._send(500, f"Reset failed: {redact(why, self.server.token)}")
            return self._send(200, READY)
        if path == "/api/status":
            if not authed:
                return self._deny()
            return self._send(200, pool.status(health=True))
        if path == "/metrics":  # counts only (sitectl/monitor/metrics.py): open unless --private-metrics
            if not (authed or self.server.open_metrics):
                return self._deny()
            return self._send(200, self.server.monitor.metrics.exposition().decode(), METRICS_TYPE)
        if path == "/":  # the status page: holders' names and error messages, so behind the token
            if not authed:
                return self._deny()
            try:
                page = self.server.monitor.page(self.server.token)
            except Exception as e:  # noqa: BLE001 - a page that cannot be drawn says why, the server stays up
                return self._send(500, redact(f"the status page could not be drawn: {type(e).__name__}: {e}",
                                              self.server.token))
            return self._send(200, page, "text/html; charset=utf-8",
                              {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                               "Referrer-Policy": "no-referrer"})
        m = re.match(r"^/api/leases/([A-Za-z0-9_-]{1,64})\Z", path)
        if m:  # the lease id is the credential: its holder reads where it points now
            try:
                return self._send(200, self._lease_body(pool.lease(m.group(1))))
            except LeaseError:
                return self._send(404, {"error": "unknown or ended lease"})
        return self._send(404, {"error": f"no such endpoint: GET {path}"})

    def do_POST(self):
        if self._refuse_framing():
            return
        path, authed = self._route()
        cm = _CHECKPOINT_PATH.match(path)
        if cm and cm.group(2) is not None:  # the lease id is the credential
            try:
                self._json_body()  # read (and ignore) a body, so the connection stays in step
            except ValueError as e:
                return self._send(400, {"error": f"bad request body: {e}"})
            return self._checkpoint(cm.group(1), "restore" if cm.group(3) else "save", cm.group(2))
        if not authed:
            return self._deny()
        pool = self.server.pool
        try:
            body = self._json_body()
        except ValueError as e:
            return self._send(400, {"error": f"bad request body: {e}"})
        try:
            if path == "/api/reset":
                inst = body.get("instance", pool.default_instance)
                sites = body.get("sites")
                if not isinstance(inst, int) or isinstance(inst, bool):
                    return self._send(400, {"error": "'instance' is an integer"})
                if sites is not None and (not isinstance(sites, list) or not all(isinstance(s, str) for s in sites)):
                    return self._send(400, {"error": "'sites' is a list of site names"})
                if sites:
                    pool.slot(inst).target.stack.select(sites)  # unknown names: UsageError below
                busy = self._leased_elsewhere(inst, None)
                if busy:
                    return self._send(409, {"error": busy})
                res = pool.reset_now(inst, sites, bool(body.get("full", False)))
                if res is None:
                    return self._send(409, {"error": f"a reset of instance {inst} is already running"})
                if res.get("running"):
                    return self._send(504, res)
                return self._send(200 if res["ok"] else 500, res)
            if path == "/api/leases":
                ttl = body.get("ttl", 60)
                if not isinstance(ttl, (int, float)) or isinstance(ttl, bool):
                    return self._send(400, {"error": "'ttl' is a number of seconds"})
                lease = pool.acquire(str(body.get("client", self.address_string())), float(ttl))
                if lease is None:
                    return self._send(503, {"error": "no instance is free (all leased, resetting or failed)"})
                if not self._send(200, self._lease_body(lease)):
                    pool.release(lease.id)  # the client is gone: nobody holds the lease
                return None
            m = re.match(r"^/api/leases/([A-Za-z0-9_-]{1,64})/heartbeat\Z", path)
            if m:
                lease = pool.heartbeat(m.group(1))
                return self._send(200, lease.as_dict(pool.clock()))
        except LeaseError as e:
            return self._send(404, {"error": str(e)})
        except Exception as e:  # noqa: BLE001 - a bad request must not kill the server thread

            return self._send(400 if isinstance(e, SitectlError) else 500, {"error": str(e)})
        return self._send(404, {"error": f"no such endpoint: POST {path}"})

    def do_DELETE(self):
        if self._refuse_framing():
            return
        path, authed = self._route()
        cm = _CHECKPOINT_PATH.match(path)
        if cm and cm.group(2) is not None and cm.group(3) is None:  # the lease id is the credential
            return self._checkpoint(cm.group(1), "delete", cm.group(2))
        if not authed:
            return self._deny()
        m = re.match(r"^/api/leases/([A-Za-z0-9_-]{1,64})\Z", path)
        if not m:
            return self._send(404, {"error": f"no such endpoint: DELETE {path}"})
        changed = None
        if parse_qs(urlsplit(self.path).query).get("diff") == ["1"]:  # the episode's diff, read before its reset
            try:
                changed = self.server.pool.diff(m.group(1))
            except LeaseError as e:
                return self._send(404, {"error": str(e)})
            except Exception as e:  # noqa: BLE001 - the lease ends all the same: its instance is reset
                changed = {"error": str(e)}
        query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
        said = {v.strip().lower() for v in query.get("healthy", ["1"])}
        if len(said) != 1 or not said <= {"1", "true", "yes", "0", "false", "no"}:
            return self._send(400, {"error": "'healthy' is one of 1, true, yes (reset it) or 0, false, no (mark it failed)"})
        healthy = said <= {"1", "true", "yes"}
        try:
            inst = self.server.pool.release(m.group(1), healthy, (query.get("reason") or [""])[0])
        except LeaseError as e:
            return self._send(404, {"error": str(e)})
        body = {"released": True, "instance": inst, "state": "resetting" if healthy else "failed"}
        return self._send(200, body if changed is None else {**body, "diff": changed})

    def _timed(self, event: str, fn, **fields):
        """``fn()``, with a ``diff`` or ``checkpoint`` event for the pool's listeners (outcome,
        seconds, the error's class)."""
        pool, t0 = self.server.pool, time.monotonic()
        try:
            res = fn()
        except Exception as e:
            pool.emit(event, ok=False, seconds=round(time.monotonic() - t0, 3), error=f"{type(e).__name__}: {e}", **fields)
            raise
        pool.emit(event, ok=True, seconds=round(time.monotonic() - t0, 3), **fields)
        return res

    def _diff(self, lease_id: str) -> bool:
        try:
            return self._send(200, self._timed("diff", lambda: self.server.pool.diff(lease_id), lease=lease_id))
        except LeaseError:
            return self._send(404, {"error": "unknown or ended lease"})
        except Exception as e:  # noqa: BLE001 - a failed read must not kill the server thread
            return self._send(409 if isinstance(e, (DiffUnavailable, InstanceBusy)) else 500, {"error": str(e)})

    def _checkpoint(self, lease_id: str, op: str, name: str | None = None) -> bool:
        """A lease's checkpoint operation (:meth:`Pool.checkpoint`): 404 unknown lease or
        checkpoint, 409 while the instance resets or when no exact checkpoint can be kept or
        brought back, 400 a bad name, 500 any other failure."""
        try:
            return self._send(200, self._timed("checkpoint", lambda: self.server.pool.checkpoint(lease_id, op, name),
                                               op=op, lease=lease_id))
        except LeaseError:
            return self._send(404, {"error": "unknown or ended lease"})
        except Exception as e:  # noqa: BLE001 - a failed operation must not kill the server thread
            if isinstance(e, UsageError):
                code = 404 if str(e).startswith("no checkpoint") else 400
            else:
                code = 409 if isinstance(e, (CheckpointUnavailable, InstanceBusy)) else 500
            return self._send(code, {"error": str(e)})

    def _lease_body(self, lease) -> dict:
        t = self.server.pool.slot(lease.instance).target
        reset_base = f"{self.server.public_base}/l/{lease.id}"
        bg = env_vars(t, "browsergym")
        bg["WA_FULL_RESET"] = reset_base
        return {**lease.as_dict(self.server.pool.clock()), "urls": t.urls(), "env": env_vars(t, "webarena"),
                "browsergym_env": bg, "reset_url": reset_base}


def serve(srv: ResetServer, reap_every: float = 1.0) -> None:
    """Run until interrupted (or ``srv.shutdown()``); the lease reaper runs beside it, every
    ``reap_every`` seconds."""
    srv.pool.run_reaper(reap_every)
    srv.monitor.run_probes(srv.probe_every)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        srv.pool.stop()
        srv.monitor.stop()
        srv.server_close()
