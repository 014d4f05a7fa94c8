"""A pool's Prometheus metrics (``GET /metrics``, docs/monitoring.md), through the
``prometheus-client`` library: counters and histograms fed by the pool's events, and gauges
read from the pool's status at each scrape.

Every label value is a site, method, outcome, state, instance number, probe or node name: no
lease id, client name, URL or message ever reaches a metric (what makes ``/metrics`` safe to
read without the token, docs/monitoring.md). The instance number's label is
``sitectl_instance``: Prometheus gives ``instance`` to the scraped target itself.
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

#: Histogram buckets (s): a delta reset takes 0.1-1 s, a full one up to minutes, a re-create more.
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
#: The states an instance can be in (``leased``: idle and held by a lease), all exported so that
#: a rule sees a 0 rather than nothing.
STATES = ("idle", "leased", "resetting", "failed", "starting", "unplaced")
CONTENT_TYPE = CONTENT_TYPE_LATEST
# No ``*_created`` series (one per counter and histogram child, the time it was made): they
# double the page and no rule here reads them (prometheus-client's own switch, process-wide).
disable_created_metrics()


def instance_state(row: dict) -> str:
    """The state the page and the metrics show for a status row (``leased`` for a held idle one)."""
    return "leased" if row["state"] == "idle" and row.get("lease") else row["state"]


class _PoolCollector:
    """Gauges read from ``pool.status()`` at each scrape (no health probe runs for a scrape)."""

    def __init__(self, pool):
        self.pool = pool

    def collect(self):
        st = self.pool.status()
        rows = st["instances"]
        by_state = GaugeMetricFamily("sitectl_instances", "Instances of the pool by state.", labels=["state"])
        one = GaugeMetricFamily("sitectl_instance_state", "1 for the state each instance is in, 0 for the others.",
                                labels=["sitectl_instance", "state"])
        active = GaugeMetricFamily("sitectl_leases_active", "Leases held now.")
        last = GaugeMetricFamily("sitectl_instance_last_reset_seconds", "How long each instance's last reset took.",
                                 labels=["sitectl_instance"])
        counts = dict.fromkeys(STATES, 0)
        for row in rows:
            state = instance_state(row)
            counts[state] = counts.get(state, 0) + 1
            for s in sorted(set(STATES) | {state}):
                one.add_metric([str(row["instance"]), s], 1.0 if s == state else 0.0)
            if row.get("last_reset"):
                last.add_metric([str(row["instance"])], float(row["last_reset"]["seconds"]))
        for s, c in counts.items():
            by_state.add_metric([s], float(c))
        active.add_metric([], float(sum(1 for r in rows if r.get("lease"))))
        yield from (by_state, one, active, last)
        if "nodes" in st:  # a cluster pool: where each instance runs
            placed = GaugeMetricFamily("sitectl_cluster_instances", "Instances by the node they run on and state.",
                                       labels=["node", "state"])
            per: dict[tuple[str, str], int] = {}
            for row in rows:
                node = (row.get("placement") or {}).get("node") or "(unplaced)"
                per[(node, instance_state(row))] = per.get((node, instance_state(row)), 0) + 1
            for (node, state), c in sorted(per.items()):
                placed.add_metric([node, state], float(c))
            nodes = GaugeMetricFamily("sitectl_cluster_nodes", "Nodes the cluster pool can place instances on.")
            nodes.add_metric([], float(len(st["nodes"])))
            yield placed
            yield nodes


class Metrics:
    """A pool listener that keeps the pool's metrics in a registry of its own (two servers in one
    process keep theirs apart).

    Args:
        pool: a :class:`sitectl.ops.pool.Pool` or :class:`sitectl.fleet.pool.ClusterPool`.
    """

    def __init__(self, pool):
        r = self.registry = CollectorRegistry()
        self.resets = Counter("sitectl_resets", "Resets of an instance, by outcome (ok, failed).", ["outcome"], registry=r)
        self.reset_seconds = Histogram("sitectl_reset_duration_seconds", "Seconds one reset of an instance took.",
                                       ["outcome"], buckets=BUCKETS, registry=r)
        self.site_resets = Counter(
            "sitectl_site_resets", "Resets of a site, by method (none, delta, full, recreate) and outcome "
            "(ok, escalated: a cheaper method was tried first).", ["site", "method", "outcome"], registry=r)
        self.site_seconds = Histogram("sitectl_site_reset_duration_seconds", "Seconds one site's reset took.",
                                      ["site", "method"], buckets=BUCKETS, registry=r)
        self.leases = Counter("sitectl_lease_events", "Lease events: granted, refused (none free), released, "
                              "released_unhealthy, expired (missed heartbeats).", ["event"], registry=r)
        self.probe_failures = Counter("sitectl_probe_failures", "Health readings in which a site's probe failed.",
                                      ["site", "probe"], registry=r)
        self.calls = Counter("sitectl_state_calls", "Diff and checkpoint calls through leases, by outcome.",
                             ["call", "outcome"], registry=r)
        self.call_seconds = Histogram("sitectl_state_call_duration_seconds", "Seconds a diff or checkpoint call took.",
                                      ["call"], buckets=BUCKETS, registry=r)
        for event in ("granted", "refused", "released", "released_unhealthy", "expired"):
            self.leases.labels(event)  # present at 0 from the start
        for outcome in ("ok", "failed"):
            self.resets.labels(outcome)
        r.register(_PoolCollector(pool))

    def __call__(self, e: dict) -> None:
        kind = e["event"]
        if kind == "reset_finished":
            outcome = "ok" if e["ok"] else "failed"
            self.resets.labels(outcome).inc()
            self.reset_seconds.labels(outcome).observe(e["seconds"])
            for s in e.get("sites", []):
                if not s.get("site") or not s.get("method"):
                    continue
                self.site_resets.labels(s["site"], s["method"], "escalated" if s.get("escalated") else "ok").inc()
                self.site_seconds.labels(s["site"], s["method"]).observe(float(s.get("seconds") or 0.0))
        elif kind == "lease_granted":
            self.leases.labels("granted").inc()
        elif kind == "lease_refused":
            self.leases.labels("refused").inc()
        elif kind == "lease_released":
            self.leases.labels("released" if e.get("healthy", True) else "released_unhealthy").inc()
        elif kind == "lease_expired":
            self.leases.labels("expired").inc()
        elif kind == "probe_failed":
            self.probe_failures.labels(e["site"], e["probe"]).inc()
        elif kind in ("diff", "checkpoint"):
            call = "diff" if kind == "diff" else f"checkpoint_{e.get('op', '')}"
            self.calls.labels(call, "ok" if e.get("ok") else "failed").inc()
            self.call_seconds.labels(call).observe(float(e.get("seconds") or 0.0))

    def exposition(self) -> bytes:
        """The registry in Prometheus' text exposition format (``CONTENT_TYPE``)."""
        return generate_latest(self.registry)
