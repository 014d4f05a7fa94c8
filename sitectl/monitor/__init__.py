"""What operators look at (docs/monitoring.md): a pool's Prometheus metrics
(:mod:`.metrics`), its log as human or JSON lines (:mod:`.log`), and its status page
(:mod:`.page`, with the last hour kept by :mod:`.history`). :class:`Monitor` ties them to one
pool; the reset server (``sitectl/server.py``) serves them."""
from __future__ import annotations

import threading

from sitectl.monitor.history import History
from sitectl.monitor.log import EventLog
from sitectl.monitor.metrics import Metrics
from sitectl.monitor.page import render

#: Seconds between the health readings of the probe loop (``--probe-every``).
PROBE_EVERY = 30.0


class Monitor:
    """The metrics, log and history of one pool, fed by its events.

    Args:
        pool: the pool (local or cluster).
        log: an :class:`EventLog` (None: no log).
        title: the status page's heading.
    """

    def __init__(self, pool, log: EventLog | None = None, title: str = "sitectl reset server"):
        self.pool, self.log, self.title = pool, log, title
        self.metrics = Metrics(pool)
        self.history = History()
        pool.listeners += [self.metrics, self.history] + ([log] if log is not None else [])
        self._stop = threading.Event()
        self._failing: set[tuple] = set()  # (instance, site, probe) failing at the last reading

    def probe_once(self) -> int:
        """Read every instance's site health once (``pool.status(health=True)``) and emit a
        ``probe_failed`` event per failed probe, ``repeat`` true when it failed at the last
        reading too (the metrics count every one; the log and the page's failures only the
        first of a run). Returns how many failed."""
        now: set[tuple] = set()
        for row in self.pool.status(health=True)["instances"]:
            sites = row.get("sites") or {}
            if isinstance(sites.get("error"), str):  # no reading at all (the engine failed): one failure
                sites = {"*": {"healthy": False, "detail": sites["error"], "failed": ["status"]}}
            for site, h in sites.items():
                if not isinstance(h, dict) or h.get("healthy", True):
                    continue
                for probe in h.get("failed") or ["ready"]:
                    key = (row["instance"], site, probe)
                    now.add(key)
                    self.pool.emit("probe_failed", instance=row["instance"], site=site, probe=probe,
                                   detail=h.get("detail", ""), repeat=key in self._failing)
        self._failing = now
        return len(now)

    def run_probes(self, every: float = PROBE_EVERY) -> threading.Thread | None:
        """Call :meth:`probe_once` every ``every`` seconds in a daemon thread until :meth:`stop`
        (none for ``every`` <= 0)."""
        if every <= 0:
            return None

        def loop():
            while not self._stop.wait(every):
                try:
                    self.probe_once()
                except Exception:  # noqa: BLE001 - a failed reading is retried at the next pass
                    pass
        t = threading.Thread(target=loop, daemon=True, name="health-probes")
        t.start()
        return t

    def stop(self) -> None:
        self._stop.set()

    def page(self, token: str = "") -> str:
        """The status page's HTML, with a fresh (at most 5 s old) health reading; what a
        holder's name or an error message says passes through :func:`redact` as a log line does
        (no ``token``, no whole lease id), so a screenshot of the page can be shared."""
        return render(self.pool.status(health=True), self.history.resets(), self.history.failures(),
                      title=self.title, token=token)
