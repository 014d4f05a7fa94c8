"""Resets: every site back to a snapshot, only what changed, proven by a closing check.

A reset of a site asks its stores what changed (:class:`sitectl.stores.site.SiteStores`),
restores that (delta) and checks; a mismatch escalates delta → full → re-create, and each step
is recorded in the site's :class:`SiteReset`. A reset runs under the instance lock and a journal
(:mod:`sitectl.snapshots.journal`): an interrupted one is rolled forward by :func:`recover`.
"""
from __future__ import annotations

import concurrent.futures
import json
import time
from dataclasses import dataclass, field

from sitectl.engine.base import Engine
from sitectl.errors import (
    DamagedRecord,
    EngineGone,
    JobsPauseFailed,
    SitectlError,
    StoreError,
    UsageError,
    WrittenDuringReset,
)
from sitectl.paths import state_dir
from sitectl.progress import QUIET, Reporter
from sitectl.snapshots.containers import bring_up
from sitectl.snapshots.journal import clear_journal, instance_lock, read_journal, wait_for_leftover_execs, write_journal
from sitectl.snapshots.manifest import GOLDEN, check_covered, manifest_path, read_manifest, stateful
from sitectl.snapshots.take import take_unlocked
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores.site import SiteChanges, SiteStores


@dataclass
class SiteReset:
    """What a reset did for one site."""

    site: str
    method: str  # none, delta, full, recreate
    changed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    escalations: list[str] = field(default_factory=list)
    #: Warnings that do not change the reset's result (the site's jobs could not be resumed).
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return self.__dict__.copy()

def _start_if_stopped(target: Target, site: Site, engine: Engine, res: SiteReset, reporter: Reporter) -> bool:
    """Start the site's container when it exists and is stopped (its state is kept; post-start
    steps and readiness as ``up`` runs them). Returns whether it did.

    Raises:
        EngineError, ContainerExited, ProbeTimeout, StepFailed: it would not start.
    """
    cname = target.container(site)
    info = engine.container(cname)
    if info is None or info.running:
        return False
    reporter.step(site.name, f"container {cname} is {info.status}: starting it (its state is kept)")
    res.escalations.append(f"container {cname} was {info.status} (exit code {info.exit_code}): started it again")
    bring_up(target, site, engine, reporter)
    return True

def restore_stores(site: Site, stores: SiteStores, name: str, full: bool, res: SiteReset, reporter: Reporter) -> None:
    """The delta (or ``full``) restore of one site's stores with its closing check, escalating
    delta → full on a mismatch; fills ``res``.

    Raises:
        StoreError: still changed after a full restore, or a store command failed.
    """
    # A snapshot missing in the container makes changes() or restore() fail: that escalates.
    found = None if full else stores.changes(name)
    res.changed = [] if found is None else found.items
    if not (full or found):
        return
    res.method = "full" if full or found.needs_full else "delta"
    reporter.step(site.name, f"{res.method} restore from {name}" + (f": {len(res.changed)} item(s)" if res.changed else ""))
    # A delta restores, flushes and checks in one round trip when every store can.
    left, restored = stores.restore_rounds(name, found)
    if left:
        stores.hold_jobs()  # the watch and the escalation see no job's writes
    if left and not _settled(site, stores, name, res.method, restored):
        res.escalations.append(f"after {res.method}: still changed: {', '.join(left[:5])}")
        reporter.step(site.name, f"check failed after {res.method}; escalating to full")
        res.method = "full"
        left = stores.restore_all(name)
        if left and not _settled(site, stores, name, "full"):
            raise StoreError(f"{site.name}: still changed after a full restore: {', '.join(left[:5])}")


#: How long the closing check's leftovers are watched before they are called the application's
#: writes (they changed with nothing of sitectl running) rather than a failed restore (s).
WRITE_WATCH_S = 0.5


def _settled(site: Site, stores: SiteStores, name: str, method: str, restored: SiteChanges | None = None) -> bool:
    """After a restore's closing check found something: is it the restore that did not take, or
    writes that came while it ran? Nothing found on a new detection: True (the site equals the
    snapshot; no escalation). Something that the last delta round did not restore (``restored``:
    a row, file or key it did not list, :meth:`SiteChanges.new_since`), or a second detection
    :data:`WRITE_WATCH_S` later, with nothing of sitectl running in between, that differs from
    the first: the site is being written to (an agent or a job still at work), which no
    escalation would cure: raises :class:`WrittenDuringReset`. The same both times, all of it
    restored before: False (a restore that did not take; the caller escalates)."""
    first, found = _detected(stores, name)
    if not first:
        return True
    new = found.new_since(restored) if restored is not None else []
    if not new:
        time.sleep(WRITE_WATCH_S)
        later, found = _detected(stores, name)
        if not later:
            return True
        if later == first:
            return False
    items = found.items
    raise WrittenDuringReset(
        f"{site.name}: written to while it was reset (what differs after the {method} restore "
        f"{'was written after it began' if new else 'kept changing'}: "
        f"{', '.join(items[:5])}{' ...' if len(items) > 5 else ''}); what changed before the reset began was "
        "restored, what came during it is still logged. Stop what writes to the site, then "
        f"`sitectl reset {site.name}` again (a delta)")


def _detected(stores: SiteStores, name: str) -> tuple[list[str], SiteChanges]:
    """One detection: what it finds store by store, items and the detail behind them (logged
    keys, counts), as comparable text; and the detection itself."""
    found = stores.changes(name)
    return ([json.dumps([c.items, c.detail], sort_keys=True, default=str) for _, c in found.per_store if c],
            found)


def _restore_paused(site: Site, stores: SiteStores, name: str, full: bool, res: SiteReset,
                    reporter: Reporter) -> None:
    """:func:`restore_stores` with the site's background jobs paused (``jobs`` in the stack
    file) over every round trip: by the trips' own first and last steps
    (:meth:`SiteStores.jobs_inline`); a failed resume becomes a note of ``res``."""
    stores.notes = []
    with stores.jobs_inline():
        restore_stores(site, stores, name, full, res, reporter)
    res.notes += stores.notes
    for n in stores.notes:
        reporter.step(site.name, n)


def reset_site(target: Target, site: Site, engine: Engine, name: str = GOLDEN, full: bool = False,
               reporter: Reporter = QUIET) -> SiteReset:
    """Reset one site's stores to snapshot ``name``: delta (only what changed) by default,
    every store with ``full``. Ends with a cheap check (nothing left in any changed set); on a
    mismatch it escalates delta → full → re-create (and says so in ``escalations``).

    Raises:
        StoreError, EngineError: the re-create path failed too.
    """
    t0 = time.monotonic()
    stores = SiteStores(site, target.container(site), engine)
    res = SiteReset(site.name, "none")
    try:
        check_covered(target, site, name)
        try:
            _restore_paused(site, stores, name, full, res, reporter)
        except SitectlError:
            # Not looked at on the fast path (an inspect costs a round trip): a stopped
            # container (killed, or the engine restarted) is started with its state and reset again.
            if not _start_if_stopped(target, site, engine, res, reporter):
                raise
            _restore_paused(site, stores, name, full, res, reporter)
    except SitectlError as e:
        if isinstance(e, (DamagedRecord, WrittenDuringReset, JobsPauseFailed)):
            raise  # the host's record, the site's traffic or its jobs: re-creating the site would not mend it
        if not engine.reachable():
            raise EngineGone(
                f"{site.name}: the Docker engine stopped answering during the reset ({e}); when it is back "
                "(`sudo scripts/bootstrap-engine.sh`), run `sitectl reset` again: it starts stopped "
                "containers and finishes this reset from its journal") from None
        if name != GOLDEN:
            raise
        res.escalations.append(f"{type(e).__name__}: {e}")
        reporter.step(site.name, f"{e}; escalating to re-create")
        res.method = "recreate"
        bring_up(target, site, engine, reporter, recreate=True)
        take_unlocked(target, GOLDEN, [site], engine, reporter)  # under the reset's lock (a worker thread)
    res.seconds = round(time.monotonic() - t0, 3)
    return res


def _reset_sites(target: Target, chosen: list[Site], engine: Engine, name: str, full: bool | set,
                 reporter: Reporter) -> list[SiteReset]:
    """Reset ``chosen`` concurrently under a journal (the caller holds the instance lock);
    ``full`` may be the set of site names to restore in full. The journal is removed only when
    every site ended golden and checked."""
    write_journal(target, {"op": "reset", "sites": [s.name for s in chosen], "snapshot": name})
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
        futs = [pool.submit(reset_site, target, s, engine, name, full if isinstance(full, bool) else s.name in full,
                            reporter) for s in chosen]
        concurrent.futures.wait(futs)  # every site ends (golden or failed) before anything is reported
    failed = [f.exception() for f in futs if f.exception() is not None]
    if failed:
        # The engine going away explains the others; else every failure is named, one per line.
        gone = [e for e in failed if isinstance(e, EngineGone)]
        e = gone[0] if gone else failed[0]
        if all(isinstance(x, (WrittenDuringReset, JobsPauseFailed)) for x in failed):
            # Every restore ran to its end and the change logs hold what came meanwhile, or
            # nothing was restored (the jobs would not pause): the next reset is a plain one.
            clear_journal(target)
            if len(failed) > 1:
                e.args = ("\n".join(str(x) for x in failed),)
            raise e
        if isinstance(e, SitectlError) and not gone:
            # The journal stays: the next reset or verify restores these sites in full.
            e.args = ("\n".join(str(x) for x in failed)
                      + "\nThe reset did not finish; its journal is kept: `sitectl reset` finishes it "
                      "(a full restore), `sitectl reset --recreate SITE` re-creates a site from its image",)
        raise e
    clear_journal(target)
    return [f.result() for f in futs]

def recover(target: Target, engine: Engine, reporter: Reporter = QUIET) -> list[SiteReset]:
    """Roll an interrupted reset forward (the caller holds the instance lock): every site its
    journal names is restored in full from the journal's snapshot, then checked. Returns those
    sites' rows (each says what it recovered), or [] when no journal is pending."""
    pending = read_journal(target)
    if pending is None:
        return []
    snap = pending.get("snapshot") or GOLDEN
    chosen = [target.stack.sites[n] for n in pending["sites"] if n in target.stack.sites]
    chosen = [s for s in stateful(target, chosen) if engine.container(target.container(s)) is not None]
    why = (f"recovered an interrupted reset (pid {pending.get('pid', '?')}, started {pending.get('started', '?')}"
           + (", unreadable journal" if pending.get("unreadable") else "") + "): full restore")
    reporter.step("recover", f"{why} of {', '.join(s.name for s in chosen) or 'nothing'}")
    waited = wait_for_leftover_execs(target, chosen, engine, reporter)
    if waited:
        why += f"; first waited {waited}"
    try:
        listed = read_manifest(target, snap).get("sites", {})
        if any(s.name not in listed for s in chosen):
            snap = GOLDEN  # the named snapshot no longer covers them; golden is what a reset means
    except UsageError:
        snap = GOLDEN  # the named snapshot is gone; golden is what a reset means
    except DamagedRecord:
        if snap == GOLDEN:
            raise
        snap = GOLDEN  # the named snapshot's manifest is damaged; golden is what a reset means
    rows = _reset_sites(target, chosen, engine, snap, True, reporter)
    for r in rows:
        r.escalations.insert(0, why)
    return rows

def recover_pending(target: Target, engine: Engine, reporter: Reporter = QUIET) -> list[SiteReset]:
    """:func:`recover` under the instance lock, when a journal is pending (else no lock taken)."""
    if read_journal(target) is None:
        return []
    with instance_lock(target, "recover"):
        return recover(target, engine, reporter)

def reset(target: Target, sites: list[Site], engine: Engine, name: str = GOLDEN, full: bool = False,
          reporter: Reporter = QUIET, wait: bool | float = True) -> list[SiteReset]:
    """Reset ``sites`` (those with stores) concurrently; see :func:`reset_site`.

    Holds the instance's lock (``wait``: see :func:`sitectl.snapshots.journal.instance_lock`) and
    first rolls forward a reset that was interrupted (:func:`recover`); its rows are merged in.

    Raises:
        InstanceBusy: ``wait`` is False and another process holds the lock.
    """
    engine.ping()
    chosen = stateful(target, sites)
    if chosen and name != GOLDEN:
        m = read_manifest(target, name)
        lacking = [s.name for s in chosen if s.name not in m.get("sites", {})]
        if lacking:  # refused before the journal: a named snapshot is never half applied
            why = "; ".join(f"{n}: {(m.get('incomplete') or {}).get(n, 'not in it')}" for n in lacking)
            raise UsageError(f"snapshot {name!r} has no complete copy of {', '.join(lacking)} ({why}); nothing "
                             f"was restored: take it with `sitectl snapshot create {name} {' '.join(lacking)}`, "
                             "or name only the sites it covers")
    elif chosen and not manifest_path(target, GOLDEN).is_file():
        raise UsageError(
            f"instance {target.instance} has no golden snapshot manifest in {state_dir()}. If the "
            "snapshots live elsewhere, set SITECTL_SNAPSHOTS_DIR to that folder; else `sitectl reset "
            "--recreate` brings the sites back to their images and takes golden again")
    elif chosen:
        read_manifest(target, GOLDEN)  # damaged: refused here, before the journal (DamagedRecord)
    with instance_lock(target, "reset " + ",".join(s.name for s in chosen), wait):
        recovered = {r.site: r for r in recover(target, engine, reporter)}
        rows = _reset_sites(target, chosen, engine, name, full, reporter)
    for r in rows:
        if r.site in recovered:
            r.escalations = recovered.pop(r.site).escalations + r.escalations
    return rows + list(recovered.values())
