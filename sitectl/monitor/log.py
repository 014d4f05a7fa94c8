"""The serve log: one line per HTTP request and per pool event, as today's human lines or as
JSON objects (``--log-format json``, docs/monitoring.md).

A JSON line holds ``time`` (UTC, ISO 8601 with milliseconds), ``level`` (``info``, ``warning``,
``error``), ``event``, and where they apply ``instance``, ``site``, ``lease`` (its first 6
characters), ``duration`` (s), ``client`` (the holder's name), ``message``; an HTTP line also
``remote``, ``request`` and ``status``. Both formats pass through :func:`redact`, so neither ever
holds the token or a whole lease id.
"""
from __future__ import annotations

import json
import re
import threading
from datetime import datetime, timezone

FORMATS = ("human", "json")
#: C0 and C1 control characters, DEL and the line and paragraph separators, written as ``\xNN``
#: in a human line (a client cannot forge a line or move the terminal's cursor).
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7f, 0xa0)]} | {0x2028: "\\u2028", 0x2029: "\\u2029"}


def redact(line: str, token: str) -> str:
    """``line`` as a log may show it: the token nowhere (in a ``/t/`` path, a header echoed in
    an error, anywhere), every query value ``***``, and a lease id (the credential of its holder,
    in ``/l/<id>`` and ``/api/leases/<id>``) cut to its first 6 characters."""
    if token:
        line = line.replace(token, "***")
    line = re.sub(r"/t/[^/\s?#\"]+", "/t/***", line)
    line = re.sub(r"([?&;][^=&;\s\"#]*=)[^&;\s\"#]*", r"\1***", line)
    return re.sub(r"/(l|api/leases)/([A-Za-z0-9_-]{7,64})", lambda m: f"/{m.group(1)}/{m.group(2)[:6]}...", line)


def _sites(e: dict) -> str:
    return ", ".join(f"{s['site']} {s['method']} {s['seconds']:.2f} s" for s in e.get("sites", [])
                     if s.get("site") and s.get("method") and s.get("seconds") is not None)


def describe(e: dict) -> tuple[str, str]:
    """``(level, message)`` of a pool event, in words."""
    kind, n, who = e["event"], e.get("instance"), e.get("client", "")
    if kind == "reset_started":
        return "info", f"reset of instance {n} started ({e.get('reason', '')})"
    if kind == "reset_finished":
        if e["ok"]:
            done = _sites(e)
            return "info", f"reset of instance {n} done in {e['seconds']:.2f} s" + (f": {done}" if done else "")
        return "error", f"reset of instance {n} failed after {e['seconds']:.2f} s: {e.get('error', '')}"
    if kind == "lease_granted":
        return "info", f"instance {n} leased to {who}"
    if kind == "lease_refused":
        return "warning", f"no instance free for {who}"
    if kind == "lease_released":
        if e.get("healthy", True):
            return "info", f"{who} released instance {n}"
        return "error", f"{who} released instance {n} as unhealthy: it is failed until reset ({e.get('error', '')})"
    if kind == "lease_expired":
        return "warning", f"lease of {who} on instance {n} expired (missed heartbeats): resetting"
    if kind == "probe_failed":
        return "warning", f"probe {e['probe']} of {e['site']} on instance {n} failed: {e.get('detail', '')}"
    if kind in ("diff", "checkpoint"):
        what = kind if kind == "diff" else f"checkpoint {e.get('op', '')}"
        if e.get("ok"):
            return "info", f"{what} done in {e.get('seconds', 0):.2f} s"
        return "warning", f"{what} failed: {e.get('error', '')}"
    return "info", kind


class EventLog:
    """A pool listener that writes the serve log.

    Args:
        stream: where lines go (a text stream; None: nowhere).
        fmt: ``human`` (``[serve] ...`` lines, today's) or ``json`` (one object a line).
        token: the server token, redacted from every line.

    Raises:
        ValueError: an unknown format.
    """

    def __init__(self, stream, fmt: str = "human", token: str = ""):
        if fmt not in FORMATS:
            raise ValueError(f"log format {fmt!r}: give one of {', '.join(FORMATS)}")
        self.stream, self.fmt, self.token = stream, fmt, token
        self._lock = threading.Lock()

    def _clean(self, value, paths: bool = True):
        """A value as a line may hold it: strings redacted (:func:`redact`; only the token
        replaced when ``paths`` is false), other values as they are."""
        if not isinstance(value, str):
            return value
        if paths:
            return redact(value, self.token)
        return value.replace(self.token, "***") if self.token else value

    def _human(self, text: str, paths: bool = True) -> None:
        self._write(self._clean(text, paths).translate(_CONTROLS))

    def _json(self, obj: dict) -> None:
        """One JSON line; every string in it redacted before encoding (so the encoding's own
        escapes are never taken for part of a path or query)."""
        def deep(v):
            if isinstance(v, dict):
                return {k: deep(x) for k, x in v.items()}
            if isinstance(v, list):
                return [deep(x) for x in v]
            return self._clean(v)
        self._write(json.dumps(deep(obj), default=str))

    def _write(self, line: str) -> None:
        if self.stream is None:
            return
        with self._lock:
            self.stream.write(line + "\n")
            flush = getattr(self.stream, "flush", None)
            if flush:
                flush()

    @staticmethod
    def _now(at: float | None = None) -> str:
        t = datetime.fromtimestamp(at, timezone.utc) if at else datetime.now(timezone.utc)
        return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def __call__(self, e: dict) -> None:
        if e.get("repeat"):
            return  # a probe still failing: said at the first reading of the run
        level, message = describe(e)
        if self.fmt == "human":
            return self._human(f"[serve] {message}")
        obj = {"time": self._now(e.get("at")), "level": level, "event": e["event"]}
        for key in ("instance", "site", "probe", "lease", "client", "op", "reason", "healthy", "error"):
            if e.get(key) not in (None, ""):
                obj[key] = e[key]
        if e.get("seconds") is not None:
            obj["duration"] = e["seconds"]
        if "ok" in e:
            obj["ok"] = e["ok"]
        if e.get("sites"):
            obj["sites"] = e["sites"]
        obj["message"] = message
        self._json(obj)

    def note(self, event: str, message: str, level: str = "info") -> None:
        """A line of the server's own (``serve_started``, ...), not of the pool's events."""
        if self.fmt == "human":
            return self._human(message, paths=False)
        obj = {"time": self._now(), "level": level, "event": event, "message": self._clean(message, paths=False)}
        self._write(json.dumps(obj))

    def http(self, remote: str, text: str) -> None:
        """One HTTP line: ``text`` is what the stdlib's handler logs (the request line, status
        and size, or an error)."""
        if self.fmt == "human":
            return self._human(f"[serve] {remote} {text}")
        m = re.match(r'^"(.*)" (\d{3}) \S+\Z', text)
        obj = {"time": self._now(), "level": "info", "event": "http", "remote": remote}
        if m:
            code = int(m.group(2))
            obj.update(request=m.group(1), status=code, level="warning" if code >= 500 else "info")
        else:
            obj.update(level="warning", message=text)
        self._json(obj)
