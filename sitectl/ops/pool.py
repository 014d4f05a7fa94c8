"""A pool of stack instances that clients lease, and the resets that return them golden.

The reset server (``sitectl serve``, :mod:`sitectl.server`) is one face of this; the logic
lives here so it can be driven and tested without HTTP.

Life of an instance in the pool::

    resetting --ok--> idle --acquire--> leased --release / missed heartbeat--> resetting
        \\--error--> failed --reset--> resetting

An instance is leased only when idle (golden, last reset succeeded) and not leased. A release
resets it before anyone else gets it; so does a lease whose holder stopped sending heartbeats.
At most one reset per instance runs at a time (:meth:`Pool.start_reset` returns False while one
runs, which BrowserGym's protocol answers with 418).
"""
from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field

from sitectl import snapshots
from sitectl.engine import Engine
from sitectl.errors import InstanceBusy, LeaseError, SitectlError
from sitectl.ops import checks, lease_record
from sitectl.ops.reset import reset
from sitectl.stack.target import Target


@dataclass
class Lease:
    """One client's hold on one instance.

    Attributes:
        id: opaque lease id (random, URL-safe).
        client: the name the client gave (for status pages).
        instance: the instance number leased.
        ttl: seconds a heartbeat keeps the lease alive.
        expires: monotonic deadline of the next heartbeat.
        failovers: how many times the lease moved to another instance because its instance
            was lost (a cluster pool, :mod:`sitectl.fleet.pool`).
    """

    id: str
    client: str
    instance: int
    ttl: float
    expires: float
    since: float = field(default_factory=time.time)
    failovers: int = 0

    def as_dict(self, now: float) -> dict:
        return {"lease": self.id, "client": self.client, "instance": self.instance, "ttl": self.ttl,
                "expires_in": round(max(0.0, self.expires - now), 1), "since": self.since,
                "failovers": self.failovers}


@dataclass
class Slot:
    """The pool's view of one instance."""

    target: Target
    #: The sites a reset without a site list restores (None: the stack's mutable sites).
    sites: list[str] | None = None
    state: str = "idle"  # idle | resetting | failed
    lease: Lease | None = None
    error: str = ""
    last_reset: dict | None = None
    resets: int = 0
    #: A reset asked for while one runs (a lease ended meanwhile): run once more when it ends.
    again: bool = False
    #: Bumped whenever the slot changes hands (a reset begins, a cluster instance is lost or
    #: placed again): a reset applies its result only if the epoch it started in still holds.
    epoch: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    #: Checkpoints saved through the current lease: deleted when it ends (the next holder starts
    #: from golden with none of them).
    checkpoints: set[str] = field(default_factory=set)


#: How a failed instance's error begins when its holder released it as unhealthy (the rest, the
#: holder's name and words, is not said on the open ``/status``).
UNHEALTHY = "released as unhealthy"
#: Seconds a pool reset waits for the instance lock held by another process.
LOCK_WAIT = 600.0
#: Seconds a health reading of :meth:`Pool.status` is reused (probes are real requests).
HEALTH_TTL = 5.0


def default_reset(target: Target, sites: list[str] | None, full: bool, engine: Engine) -> dict:
    """Reset ``sites`` of ``target`` (default: its mutable sites) to golden; nothing is written
    after the restore (BrowserGym's clients log in themselves). Returns ``{"sites": [...],
    "logins": [...]}`` (``logins``: the recorded storage states the reset made stale)."""

    chosen = target.stack.reset_sites(sites)
    # A bounded wait for the instance lock: a stuck holder fails this reset instead of the pool.
    res = reset(target, chosen, engine, full=full, wait=LOCK_WAIT, by_pool=True)
    return {"sites": [r.as_dict() for r in res["sites"]], "logins": res["logins"]}


def _site_rows(res) -> list[dict]:
    """A reset result's per-site rows as events carry them (site, method, seconds, escalated);
    rows of another shape (a remote agent's) are left out, never raised on."""
    rows = res.get("sites") if isinstance(res, dict) else None
    out = []
    for r in rows if isinstance(rows, list) else []:
        if isinstance(r, dict) and isinstance(r.get("site"), str) and isinstance(r.get("method"), str):
            secs = r.get("seconds")
            out.append({"site": r["site"], "method": r["method"],
                        "seconds": float(secs) if isinstance(secs, (int, float)) and not isinstance(secs, bool) else 0.0,
                        "escalated": bool(r.get("escalations"))})
    return out


class Pool:
    """Instances to lease and reset.

    Args:
        targets: one :class:`Target` per instance (distinct instance numbers).
        engine: the Docker engine.
        sites: per instance, the sites a plain reset restores (default: the stack's mutable
            sites; give the ones that run when an instance runs only some).
        reset_fn: ``(target, sites, full, engine) -> dict``; :func:`default_reset` unless
            given (tests give a slow or failing one only where a real reset cannot be made
            slow or fail on demand).
        clock: monotonic clock (seconds).
    """

    #: Whether leases are written to the instances' state folders (:mod:`sitectl.ops.lease_record`),
    #: where a reset from outside the server finds them. A cluster pool's instances live on other
    #: nodes: it does not.
    RECORDS_LEASES = True

    def __init__(self, targets: list[Target], engine: Engine, reset_fn=default_reset, clock=time.monotonic,
                 sites: dict[int, list[str]] | None = None):
        if not targets:
            raise ValueError("a pool needs at least one instance")
        nums = [t.instance for t in targets]
        if len(set(nums)) != len(nums):
            raise ValueError(f"instances listed twice: {nums}")
        self.engine = engine
        self.reset_fn = reset_fn
        self.clock = clock
        self.slots: dict[int, Slot] = {t.instance: Slot(t, (sites or {}).get(t.instance)) for t in targets}
        for s in self.slots.values():
            s.done.set()
        self._lock = threading.Lock()
        self._leases: dict[str, Lease] = {}
        self._stop = threading.Event()
        self._health: dict[int, tuple[float, dict]] = {}  # instance -> (when, per-site health)
        #: A random id of this pool object: a cluster pool tells an agent that restarted by it.
        self.boot = secrets.token_hex(8)
        #: Called with every event of the pool (:meth:`emit`): the metrics, the log, the status
        #: page's history (sitectl/monitor).
        self.listeners: list = []

    def emit(self, event: str, **fields) -> None:
        """Tell every listener ``{"event": event, "at": time.time(), **fields}``. The fields never
        hold a whole lease id (``lease``: its first 6 characters). A listener that raises is
        skipped: monitoring never fails the pool."""
        if "lease" in fields and fields["lease"]:
            fields["lease"] = fields["lease"][:6]
        e = {"event": event, "at": time.time(), **fields}
        for fn in list(self.listeners):
            try:
                fn(e)
            except Exception:  # noqa: BLE001 - a broken listener must not break a reset or a lease
                pass

    @property
    def default_instance(self) -> int:
        """The instance BrowserGym's un-numbered ``/reset`` and ``/status`` act on: the first."""
        return next(iter(self.slots))

    def slot(self, instance: int) -> Slot:
        try:
            return self.slots[instance]
        except KeyError:
            raise LeaseError(f"instance {instance} is not in this pool ({', '.join(map(str, self.slots))})") from None

    # -- resets ----------------------------------------------------------------------------
    def start_reset(self, instance: int, sites: list[str] | None = None, full: bool = False,
                    reason: str = "request") -> bool:
        """Start a reset of ``instance`` in the background; False if one is already running
        (nothing is started then)."""
        slot = self.slot(instance)
        with self._lock:
            if not self._begin(slot):
                return False
        self._spawn(slot, sites, full, reason)
        return True

    def _begin(self, slot: Slot) -> bool:
        """Mark ``slot`` resetting (caller holds ``_lock``); False if a reset already runs."""
        if slot.state == "resetting":
            return False
        slot.epoch += 1
        slot.state, slot.error = "resetting", ""
        slot.done.clear()
        return True

    def _spawn(self, slot: Slot, sites, full, reason) -> None:
        self.emit("reset_started", instance=slot.target.instance, reason=reason)
        threading.Thread(target=self._run_reset, args=(slot, sites, full, reason, slot.epoch), daemon=True,
                         name=f"reset-i{slot.target.instance}").start()

    def _run_reset(self, slot: Slot, sites, full, reason, epoch: int) -> None:
        t0, started = self.clock(), time.time()
        with self._lock:
            ended = sorted(slot.checkpoints) if slot.lease is None else []
            slot.checkpoints -= set(ended)
        for name in ended:  # the ended lease's checkpoints (best effort: a record may be gone already)
            try:
                snapshots.delete_checkpoint(slot.target, name, self.engine)
            except SitectlError:
                pass
        try:
            res = self.reset_fn(slot.target, sites or slot.sites, full, self.engine)
            ok, err = True, ""
        except Exception as e:  # noqa: BLE001 - any failure is reported through /status, never lost
            res, ok, err = None, False, f"{type(e).__name__}: {e}"
        again = False
        with self._lock:
            if slot.epoch != epoch or slot.state != "resetting":
                return  # the slot changed hands meanwhile (a cluster instance lost, placed again)
            slot.resets += 1
            slot.last_reset = {"at": started, "seconds": round(self.clock() - t0, 3), "ok": ok, "reason": reason,
                               "error": err, "result": res}
            if slot.again:  # a lease ended while this reset ran: its changes need one more
                slot.again, again = False, True
                slot.epoch += 1
            else:
                slot.state = "idle" if ok else "failed"
                slot.error = err
                slot.done.set()
        self.emit("reset_finished", instance=slot.target.instance, seconds=slot.last_reset["seconds"], ok=ok,
                  error=err, reason=reason, sites=_site_rows(res))
        if again:
            self._spawn(slot, None, False, "lease ended during a reset")

    def wait(self, instance: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the running reset of ``instance``; True when none
        runs any more."""
        return self.slot(instance).done.wait(timeout)

    def reset_now(self, instance: int, sites: list[str] | None = None, full: bool = False,
                  timeout: float = 1800) -> dict | None:
        """Reset ``instance`` and wait for it; None if a reset was already running (then
        nothing new is started). Returns the slot's ``last_reset``."""
        if not self.start_reset(instance, sites, full, reason="api"):
            return None
        if not self.wait(instance, timeout):
            return {"ok": False, "error": f"still running after {timeout:g} s", "running": True}
        return self.slot(instance).last_reset

    # -- leases ----------------------------------------------------------------------------
    def acquire(self, client: str, ttl: float = 60.0) -> Lease | None:
        """Lease an idle, un-leased instance; None when every instance is leased, resetting or
        failed. Two callers never get the same instance (one lock covers choice and mark)."""
        if not (0 < ttl <= 86400):
            raise LeaseError(f"ttl {ttl}: give 0 < ttl <= 86400 seconds")
        with self._lock:
            for slot in self.slots.values():
                if slot.state == "idle" and slot.lease is None:
                    lease = Lease(secrets.token_urlsafe(18), client[:80], slot.target.instance, ttl,
                                  self.clock() + ttl)
                    slot.lease = lease
                    self._leases[lease.id] = lease
                    if self.RECORDS_LEASES:
                        lease_record.record(lease.instance, lease.id, lease.client, ttl)
                    self.emit("lease_granted", instance=lease.instance, client=lease.client, lease=lease.id)
                    return lease
        self.emit("lease_refused", client=client[:80])
        return None

    def _lease(self, lease_id: str) -> Lease:
        lease = self._leases.get(lease_id)
        if lease is None:
            raise LeaseError("unknown or expired lease")
        return lease

    def lease(self, lease_id: str) -> Lease:
        """The live lease ``lease_id``.

        Raises:
            LeaseError: unknown or ended.
        """
        with self._lock:
            return self._lease(lease_id)

    def diff(self, lease_id: str) -> dict:
        """What changed in lease ``lease_id``'s instance since golden (its reset sites; the JSON
        of :func:`sitectl.snapshots.diff`, docs/diff.md). Reads only; the lease stays.

        Raises:
            LeaseError: unknown or ended lease.
            InstanceBusy: the instance is resetting (its holder reset it) or failed.
            DiffUnavailable, StoreError: as :func:`sitectl.snapshots.diff`.
        """
        slot = self.slots[self.lease(lease_id).instance]
        if slot.state != "idle":  # a diff read during the instance's reset would be half of each
            raise InstanceBusy(f"instance {slot.target.instance} is {slot.state}: read its diff when it is idle again")
        return snapshots.diff(slot.target, slot.target.stack.reset_sites(slot.sites), self.engine, named=bool(slot.sites))

    def checkpoint(self, lease_id: str, op: str, name: str | None = None) -> dict:
        """A checkpoint operation on lease ``lease_id``'s instance (its reset sites): ``op``
        ``save``, ``restore`` (synchronous, under the instance lock), ``list`` or ``delete``
        (docs/checkpoints.md). The checkpoints a lease saves are deleted when it ends.

        Returns:
            ``save``: ``{"name", "created", "sites": [{"site", "changed", "seconds"}]}``;
            ``restore``: ``{"name", "sites": [reset row]}``; ``list``: ``{"checkpoints": [...]}``;
            ``delete``: ``{"name", "dropped": [site]}``.

        Raises:
            LeaseError: unknown or ended lease.
            InstanceBusy: the instance is resetting or failed.
            UsageError, CheckpointUnavailable, StoreError: as :mod:`sitectl.snapshots.checkpoint`.
        """
        slot = self.slots[self.lease(lease_id).instance]
        if slot.state != "idle":
            raise InstanceBusy(f"instance {slot.target.instance} is {slot.state}: try again when it is idle")
        t = slot.target
        if op == "list":
            return {"checkpoints": snapshots.list_checkpoints(t)}
        if op == "save":
            rec = snapshots.save_checkpoint(t, name, t.stack.reset_sites(slot.sites), self.engine, named=bool(slot.sites))
            with self._lock:
                slot.checkpoints.add(name)
            return {"name": name, "created": rec["created"],
                    "sites": [{"site": s, "changed": e["changed"], "seconds": e["seconds"]}
                              for s, e in sorted(rec["sites"].items())]}
        if op == "restore":
            rows = snapshots.restore_checkpoint(t, name, None, self.engine, wait=LOCK_WAIT)
            return {"name": name, "sites": [r.as_dict() for r in rows]}
        if op == "delete":
            done = snapshots.delete_checkpoint(t, name, self.engine)
            with self._lock:
                slot.checkpoints.discard(name)
            return {"name": name, "dropped": done}
        raise ValueError(f"unknown checkpoint operation {op!r}")

    def leased(self, instance: int) -> Lease | None:
        """The lease holding ``instance``, if any."""
        with self._lock:
            return self.slot(instance).lease

    def heartbeat(self, lease_id: str) -> Lease:
        """Extend a lease by its ttl from now.

        Raises:
            LeaseError: unknown lease, or one that already expired (its instance was reset).
        """
        with self._lock:
            lease = self._lease(lease_id)
            lease.expires = self.clock() + lease.ttl
            if self.RECORDS_LEASES:
                lease_record.record(lease.instance, lease.id, lease.client, lease.ttl)
            return lease

    def release(self, lease_id: str, healthy: bool = True, reason: str = "") -> int:
        """End a lease. Healthy (the default): its instance is reset before it is leased again.
        Not healthy (its holder saw the instance misbehave): the instance is marked ``failed``
        with the holder's ``reason`` and no reset runs; nobody leases it until a reset asked for
        through ``POST /api/reset`` (or :meth:`reset_now`) succeeds. Returns the instance.

        Raises:
            LeaseError: unknown or ended lease.
        """
        with self._lock:
            lease = self._lease(lease_id)
            self._drop(lease)
            slot = self.slots[lease.instance]
            if not healthy:
                why = " ".join(reason.split())[:300] or "no reason given"
                slot.state, slot.error = "failed", f"{UNHEALTHY} by {lease.client}: {why}"
                slot.again = False
                slot.epoch += 1  # a reset its holder started no longer decides the state
                slot.done.set()
                self.emit("lease_released", instance=lease.instance, client=lease.client, lease=lease.id,
                          healthy=False, error=slot.error)
                return lease.instance
            spawn = self._end(slot)
        self.emit("lease_released", instance=lease.instance, client=lease.client, lease=lease.id, healthy=True)
        if spawn:
            self._spawn(self.slots[lease.instance], None, False, f"release of {lease.client}")
        return lease.instance

    def _end(self, slot: Slot) -> bool:
        """A lease of ``slot`` ended (caller holds ``_lock``): it is resetting from now on, so no
        one can lease it in between. True when the caller must start the reset; False when
        one runs already (then it runs once more when that one ends)."""
        if self._begin(slot):
            return True
        slot.again = True
        return False

    def _drop(self, lease: Lease) -> None:
        self._leases.pop(lease.id, None)
        if self.RECORDS_LEASES:
            lease_record.drop(lease.instance, lease.id)
        slot = self.slots[lease.instance]
        if slot.lease is lease:
            slot.lease = None

    def reap(self) -> list[Lease]:
        """End every lease whose heartbeat is overdue and reset its instance; returns them."""
        now = self.clock()
        with self._lock:
            late = [lease for lease in self._leases.values() if lease.expires < now]
            spawn = []
            for lease in late:
                self._drop(lease)
                if self._end(self.slots[lease.instance]):
                    spawn.append(lease)
        for lease in late:
            self.emit("lease_expired", instance=lease.instance, client=lease.client, lease=lease.id)
        for lease in spawn:
            self._spawn(self.slots[lease.instance], None, False, f"missed heartbeat of {lease.client}")
        return late

    def run_reaper(self, every: float = 1.0) -> threading.Thread:
        """Call :meth:`reap` every ``every`` seconds in a daemon thread until :meth:`stop`."""
        def loop():
            while not self._stop.wait(every):
                self.reap()
        t = threading.Thread(target=loop, daemon=True, name="lease-reaper")
        t.start()
        return t

    def stop(self) -> None:
        self._stop.set()

    # -- status ----------------------------------------------------------------------------
    def status(self, health: bool = False) -> dict:
        """``{"instances": [{"instance", "state", "lease", "last_reset", "resets", "error",
        "urls", "sites" (with ``health``: per site ``{"state", "healthy", "detail"}``, at most
        :data:`HEALTH_TTL` s old, its age in ``health_age_s``)}]}``."""

        now = self.clock()
        with self._lock:
            rows = [{"instance": n, "state": s.state, "lease": s.lease.as_dict(now) if s.lease else None,
                     "last_reset": s.last_reset, "resets": s.resets, "error": s.error,
                     "urls": s.target.urls()} for n, s in self.slots.items()]
        if self.RECORDS_LEASES:  # resets forced past a lease from outside the server
            for row, slot in zip(rows, self.slots.values()):
                if row["lease"] is not None and slot.lease is not None:
                    row["lease"]["forced_resets"] = lease_record.forced(slot.lease.instance, slot.lease.id)
        if health:
            for row in rows:
                n, t = row["instance"], self.slots[row["instance"]].target
                cached = self._health.get(n)
                if cached and now - cached[0] < HEALTH_TTL:  # a polling client does not load the sites
                    row["sites"], row["health_age_s"] = cached[1], round(now - cached[0], 1)
                    continue
                try:
                    st = checks.status(t, list(t.stack.sites.values()), self.engine)
                    row["sites"] = {r["site"]: {"state": r["state"], "healthy": r["healthy"], "detail": r["detail"],
                                                "failed": r["failed"]} for r in st}
                except Exception as e:  # noqa: BLE001 - an engine that fails oddly is shown, not raised
                    row["sites"] = {"error": str(e) if isinstance(e, SitectlError) else f"{type(e).__name__}: {e}"}
                self._health[n] = (now, row["sites"])
                row["health_age_s"] = 0.0
        return {"instances": rows, "boot": self.boot}
