"""What the status page shows beyond a pool's status: the resets of the last hour and the recent
failures, kept from the pool's events (:meth:`sitectl.ops.pool.Pool.emit`)."""
from __future__ import annotations

import threading
import time
from collections import deque

#: Seconds of resets the page charts.
WINDOW = 3600.0
#: Recent failures kept (the oldest go first).
FAILURES = 50


class History:
    """A pool listener: resets finished in the last :data:`WINDOW` seconds and the last
    :data:`FAILURES` failures (failed resets, unhealthy releases, failed probes, failed diffs and
    checkpoints), each with its message.

    Args:
        clock: wall clock (s since the epoch), for the window.
    """

    def __init__(self, clock=time.time):
        self.clock = clock
        self._lock = threading.Lock()
        self._resets: deque[dict] = deque()
        self._failures: deque[dict] = deque(maxlen=FAILURES)

    def __call__(self, e: dict) -> None:
        kind, n = e["event"], e.get("instance")
        with self._lock:
            if kind == "reset_finished":
                self._resets.append({"at": e["at"], "instance": n, "seconds": e["seconds"], "ok": e["ok"],
                                     "methods": sorted({s["method"] for s in e.get("sites", []) if s.get("method")})})
                if not e["ok"]:
                    self._failures.append({"at": e["at"], "what": f"reset of instance {n}", "message": e["error"]})
            elif kind == "lease_released" and not e.get("healthy", True):
                self._failures.append({"at": e["at"], "what": f"instance {n} released unhealthy",
                                       "message": e.get("error", "")})
            elif kind == "probe_failed" and not e.get("repeat"):
                self._failures.append({"at": e["at"], "what": f"probe {e['probe']} of {e['site']} on instance {n}",
                                       "message": e.get("detail", "")})
            elif kind in ("diff", "checkpoint") and not e.get("ok", True):
                what = kind if kind == "diff" else f"checkpoint {e.get('op', '')}"
                self._failures.append({"at": e["at"], "what": f"{what} of lease {e.get('lease', '')}...",
                                       "message": e.get("error", "")})
            self._prune()

    def _prune(self) -> None:
        cut = self.clock() - WINDOW
        while self._resets and self._resets[0]["at"] < cut:
            self._resets.popleft()

    def resets(self) -> list[dict]:
        """The resets finished in the last hour, oldest first: ``{"at", "instance", "seconds",
        "ok", "methods"}``."""
        with self._lock:
            self._prune()
            return list(self._resets)

    def failures(self) -> list[dict]:
        """The recent failures, newest first: ``{"at", "what", "message"}``."""
        with self._lock:
            return list(reversed(self._failures))
