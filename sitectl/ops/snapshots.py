"""Snapshots and resets of sites' state stores.

A snapshot ``NAME`` of an instance has two halves: the copies inside each site's container
(made by the stores, so restores are server-side copies) and a manifest on the host,
``<snapshots dir>/i<instance>/<NAME>/manifest.json`` (sitectl version, stack, host, sites,
per-store fingerprints and sizes, creation time). The snapshots dir is ``$SITECTL_SNAPSHOTS_DIR``
or ``~/.local/share/sitectl/snapshots`` (layout: ``snapshots/README.md``).

``up`` takes the golden snapshot (:data:`GOLDEN`) right after the post-start steps.
"""
from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sitectl import __version__
from sitectl.engine import Engine
from sitectl.errors import EngineGone, SitectlError, UsageError
from sitectl.ops.journal import clear_journal, instance_lock, read_journal, write_journal
from sitectl.progress import QUIET, Reporter
from sitectl.stack import Site
from sitectl.stores import StoreError, check_snapshot_name, stores_for
from sitectl.stores.sql import SqlResult
from sitectl.stores.transport import fits, run_batch
from sitectl.target import Target

GOLDEN = "golden"


def snapshots_dir() -> Path:
    """Host folder of snapshot manifests."""
    return Path(os.environ.get("SITECTL_SNAPSHOTS_DIR", Path.home() / ".local/share/sitectl/snapshots"))


def manifest_path(target: Target, name: str) -> Path:
    return snapshots_dir() / f"i{target.instance}" / name / "manifest.json"


def read_manifest(target: Target, name: str) -> dict:
    """The manifest of snapshot ``name``.

    Raises:
        UsageError: no such snapshot (the known ones are listed), or an unreadable manifest.
    """
    check_snapshot_name(name)
    p = manifest_path(target, name)
    if not p.is_file():
        known = ", ".join(sorted(m["name"] for m in list_snapshots(target))) or "none"
        raise UsageError(f"no snapshot {name!r} for instance {target.instance} (snapshots: {known})")
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"{p}: unreadable manifest: {e}") from None


#: Manifests are read, changed and written back by concurrent threads of one process (a reset or
#: re-create of several sites); other processes are kept out by the instance lock.
_MANIFESTS = threading.RLock()


def _write_manifest(target: Target, name: str, data: dict) -> None:
    p = manifest_path(target, name)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".manifest.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps(data, indent=1, sort_keys=True))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)  # atomic: a reader sees the old or the new manifest, never half


def list_snapshots(target: Target) -> list[dict]:
    """``[{"name", "created", "sites", "size"}]`` of the instance's snapshots, by name."""
    out = []
    base = snapshots_dir() / f"i{target.instance}"
    for p in sorted(base.glob("*/manifest.json")) if base.is_dir() else []:
        try:
            m = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        try:
            out.append({"name": m.get("name", p.parent.name), "created": m.get("created"),
                        "sites": sorted(m.get("sites", {})), "incomplete": sorted(m.get("incomplete") or {}),
                        "size": sum(s.get("size", 0) for site in m["sites"].values() for s in site["stores"].values())})
        except (AttributeError, KeyError, TypeError):
            out.append({"name": p.parent.name, "created": None, "sites": [], "size": 0, "damaged": True})
    return out


def forget_sites(target: Target, site_names: list[str], only: str | None = None, why: str = "",
                 keep: str | None = None) -> None:
    """Remove ``site_names`` from every manifest of the instance (their containers, and with
    them the in-container copies, are gone), or from snapshot ``only``'s (its copies are about
    to be replaced; the manifest then records ``why`` under ``incomplete``, or that the
    snapshot did not finish); ``keep`` names a snapshot to leave alone; a manifest left with no
    site is removed. The caller holds the instance lock (``up``, ``down``, a reset's re-create, a
    snapshot)."""
    with _MANIFESTS:
        _forget_sites(target, site_names, only, why, keep)


def _forget_sites(target: Target, site_names: list[str], only: str | None, why: str = "",
                  keep: str | None = None) -> None:
    base = snapshots_dir() / f"i{target.instance}"
    for p in sorted(base.glob("*/manifest.json")) if base.is_dir() else []:
        if (only is not None and p.parent.name != only) or p.parent.name == keep:
            continue
        try:
            m = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(m, dict) or not isinstance(m.get("sites"), dict):
            continue
        m["sites"] = {k: v for k, v in m["sites"].items() if k not in site_names}
        incomplete = m.get("incomplete") if isinstance(m.get("incomplete"), dict) else {}
        if only is not None:
            # Being replaced: until the new copy is complete the manifest says why it is missing.
            now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            incomplete.update({n: why or f"snapshot started {now} did not finish (interrupted)" for n in site_names})
        else:
            incomplete = {k: v for k, v in incomplete.items() if k not in site_names}
        m["incomplete"] = incomplete
        if m["sites"] or m["incomplete"]:
            _write_manifest(target, p.parent.name, m)
        else:
            p.unlink(missing_ok=True)
            try:
                p.parent.rmdir()
            except OSError:
                pass


def _stateful(target: Target, sites: list[Site]) -> list[Site]:
    return [s for s in sites if s.stores]


def snapshot_site(target: Target, site: Site, name: str, engine: Engine) -> dict:
    """Snapshot every store of one site; returns the site's manifest entry."""
    stores = stores_for(site, target.container(site), engine)
    t0 = time.monotonic()
    entry = {"stores": {}, "container": target.container(site)}
    for st in stores:
        entry["stores"][st.label] = st.snapshot(name)
    entry["seconds"] = round(time.monotonic() - t0, 3)
    return entry


def create(target: Target, name: str, sites: list[Site], engine: Engine, reporter: Reporter = QUIET) -> dict:
    """Snapshot ``sites`` (those with stores) as ``name``; the manifest is written last.

    Raises:
        UsageError: a bad name; StoreError: a store failed (no manifest is written).
    """
    check_snapshot_name(name)
    engine.ping()
    with instance_lock(target, f"snapshot create {name}"):
        return _create(target, name, sites, engine, reporter)


def _create(target: Target, name: str, sites: list[Site], engine: Engine, reporter: Reporter) -> dict:
    chosen = _stateful(target, sites)
    manifest = {"name": name, "sitectl": __version__, "stack": target.stack.name, "host": target.host,
                "instance": target.instance, "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "sites": {}}
    # A site's copy counts only while the manifest lists it: the sites about to be copied leave
    # the manifest before their old copies are touched, and come back when their copy is
    # complete. A crash or a failure in between leaves them unlisted, never half-copied and listed.
    # A killed snapshot's copy commands may still run in the containers: never copy beside them.
    _wait_for_leftover_execs(target, chosen, engine, reporter)
    existed = manifest_path(target, name).is_file()
    forget_sites(target, [s.name for s in chosen], only=name)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
        futs = {}
        for s in chosen:
            reporter.step(s.name, f"snapshot {name}")
            futs[s.name] = pool.submit(snapshot_site, target, s, name, engine)
        concurrent.futures.wait(list(futs.values()))
    failed = {n: f.exception() for n, f in futs.items() if f.exception() is not None}
    manifest["sites"] = {n: f.result() for n, f in futs.items() if n not in failed}
    with _MANIFESTS:
        old = manifest_path(target, name)
        if old.is_file():
            # A snapshot of some sites keeps the other sites' entries of the same name (an
            # unreadable old manifest keeps none).
            try:
                prev_m = json.loads(old.read_text())
                prev = prev_m.get("sites", {})
                prev = prev if isinstance(prev, dict) else {}
                gone = prev_m.get("incomplete") if isinstance(prev_m.get("incomplete"), dict) else {}
            except (OSError, ValueError, AttributeError):
                prev, gone = {}, {}
            manifest["sites"] = {**{k: v for k, v in prev.items() if k not in manifest["sites"]}, **manifest["sites"]}
            manifest["incomplete"] = {k: v for k, v in gone.items() if k not in manifest["sites"]}
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        manifest.setdefault("incomplete", {}).update(
            {n: f"snapshot at {now} failed: {str(e).splitlines()[0][:300]}" for n, e in failed.items()})
        if manifest["sites"] or existed:  # a new name that failed everywhere leaves no manifest
            _write_manifest(target, name, manifest)
    if failed:
        raise _snapshot_failed(target, name, failed, engine)
    return manifest


def _snapshot_failed(target: Target, name: str, failed: dict[str, BaseException], engine: Engine) -> SitectlError:
    """Drop the partial copies of the sites whose snapshot failed (best effort) and build the
    error: what failed, that ``name`` no longer covers those sites, and the next step."""
    for site_name in failed:
        site = target.stack.sites[site_name]
        for st in stores_for(site, target.container(site), engine):
            try:
                st.drop(name)
            except SitectlError:
                pass  # e.g. the container is gone; an unlisted copy is never used
    lines = []
    for site_name, e in failed.items():
        full = "No space left on device" in str(e) or "Errcode: 28" in str(e) or "could not extend file" in str(e)
        hint = (f"the container's disk is full (see `docker exec {target.container(target.stack.sites[site_name])} df -h`); "
                "free space, then " if full else "then ")
        nxt = (f"`sitectl reset --recreate {site_name}` takes golden again from the image" if name == GOLDEN
               else f"`sitectl snapshot create {name} {site_name}`")
        lines.append(f"  {site_name}: {e}\n    snapshot {name!r} no longer covers {site_name}; {hint}{nxt}")
    return StoreError(f"snapshot {name!r} failed for {', '.join(failed)}:\n" + "\n".join(lines))


def delete(target: Target, name: str, engine: Engine) -> list[str]:
    """Drop snapshot ``name`` in every site's stores and remove its manifest."""
    with instance_lock(target, f"snapshot delete {name}"):
        return _delete(target, name, engine)


def _delete(target: Target, name: str, engine: Engine) -> list[str]:
    m = read_manifest(target, name)
    engine.ping()
    done = []
    for site_name in m["sites"]:
        site = target.stack.sites.get(site_name)
        if site is None or engine.container(target.container(site)) is None:
            continue
        for st in stores_for(site, target.container(site), engine):
            st.drop(name)
        done.append(site_name)
    p = manifest_path(target, name)
    p.unlink(missing_ok=True)
    try:
        p.parent.rmdir()
    except OSError:
        pass
    return done


@dataclass
class SiteReset:
    """What a reset did for one site."""

    site: str
    method: str  # none, delta, full, recreate
    changed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    escalations: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def _transport(stores):
    """The site's ``docker exec`` transport (all its stores share one), or None."""
    return next((st.t for st in stores if st.t is not None), None)


def _slices(results: list, groups: list[list]):
    """``results`` cut into consecutive slices as long as each of ``groups``."""
    i = 0
    for g in groups:
        yield results[i:i + len(g)]
        i += len(g)


def _changes(stores, name, after_restore: bool = False) -> list[tuple]:
    """Each store's changes, all asked in one round trip into the site's container (queries of
    network sessions run on their own connections); with ``after_restore``, the stores'
    after-restore commands (cache flushes) run first in the same round trip."""
    if not stores:
        return []
    pre = [a for st in stores for a in st.after_restore_requests()] if after_restore else []
    groups = [st.detect_requests(name) for st in stores]
    flat = [r for group in groups for r in group]
    results = run_batch(_transport(stores), pre + flat, f"{stores[0].site} changes") if pre + flat else []
    for a, res in zip(pre, results):
        err = _failure(res)
        if err is not None:
            raise StoreError(f"{stores[0].site}: {a.argv[0]} failed after the restore: {err}")
    return [(st, st.parse_changes(name, part)) for st, part in zip(stores, _slices(results[len(pre):], groups))]


def _failure(result) -> str | None:
    """The error text of a failed request's result (SQL error, non-zero exit, Redis error)."""
    if isinstance(result, SqlResult):
        return None if result.ok else result.error
    rc, out = result
    return out.strip()[-500:] or f"exit code {rc}" if rc != 0 or out.lstrip().startswith(("(error)", "ERR")) else None


def _restore_in_one_trip(stores, name: str, found: list[tuple]) -> list[str] | None:
    """Delta restore of every store, cache flushes and the closing check, in this order, in one
    ``docker exec``. Returns what is still changed afterwards, or None when it cannot be done in
    one trip (a store needs dependent steps, a query goes over the network, whose order with
    the exec batch could not be kept, or the commands are too large for one exec); the caller
    then takes the step-by-step path.

    Raises:
        StoreError: a restore or flush command failed (the message names it).
    """
    per_store = [st.restore_requests(name, c) if c else [] for st, c in found]
    if any(r is None for r in per_store):
        return None
    restore = [r for rs in per_store for r in rs]
    flush = [a for st in stores for a in st.after_restore_requests()]
    # The closing check looks at the changed sets (the whole detection for SQL and Redis; for
    # folders, every entry the restore touched).
    groups = [st.check_requests(name, c) for st, c in found]
    reqs = restore + flush + [r for g in groups for r in g]
    argvs = [r.argv for r in reqs]
    if any(a is None for a in argvs) or not fits(argvs):
        return None  # a network query, or more than one exec can carry: step by step
    results = run_batch(_transport(stores), reqs, f"{stores[0].site} restore")
    for what, res in zip(["restore"] * len(restore) + ["flush after the restore"] * len(flush), results):
        err = _failure(res)
        if err is not None:
            raise StoreError(f"{stores[0].site}: {what} failed: {err}")
    parts = _slices(results[len(restore) + len(flush):], groups)
    return [item for (st, c), part in zip(found, parts) for item in st.parse_check(name, c, part)]


class NotCovered(StoreError):
    """Snapshot ``name`` has no complete copy of a site: its manifest does not list the site
    (a snapshot of it failed or was interrupted, and its copies were dropped from the manifest
    before they were touched)."""


def _start_if_stopped(target: Target, site: Site, engine: Engine, res: SiteReset, reporter: Reporter) -> bool:
    """Start the site's container when it exists and is stopped (its state is kept; post-start
    steps and readiness as ``up`` runs them). Returns whether it did.

    Raises:
        EngineError, ContainerExited, ProbeTimeout, StepFailed: it would not start.
    """
    from sitectl.ops.lifecycle import bring_up

    cname = target.container(site)
    info = engine.container(cname)
    if info is None or info.running:
        return False
    reporter.step(site.name, f"container {cname} is {info.status}: starting it (its state is kept)")
    res.escalations.append(f"container {cname} was {info.status} (exit code {info.exit_code}): started it again")
    bring_up(target, site, engine, reporter)
    return True


def _check_covered(target: Target, site: Site, name: str) -> None:
    """Raise :class:`NotCovered` unless snapshot ``name``'s manifest lists ``site``."""
    with _MANIFESTS:
        p = manifest_path(target, name)
        try:
            m = json.loads(p.read_text())
            listed = site.name in m.get("sites", {})
            why = (m.get("incomplete") or {}).get(site.name, "")
        except (OSError, ValueError, AttributeError):
            listed, why = False, ""
    if not listed:
        raise NotCovered(
            f"{site.name}: snapshot {name!r} has no complete copy of this site ({why or 'not taken'})"
            + ("" if name == GOLDEN else f"; take it again with `sitectl snapshot create {name} {site.name}`"))


def _restore_stores(site: Site, stores: list, name: str, full: bool, res: SiteReset, reporter: Reporter) -> None:
    """The delta (or ``full``) restore of one site's stores with its closing check, escalating
    delta → full on a mismatch; fills ``res``.

    Raises:
        StoreError: still changed after a full restore, or a store command failed.
    """
    # A snapshot missing in the container makes changes() or restore() fail: that escalates.
    found = [] if full else _changes(stores, name)
    res.changed = sorted(i for _, c in found for i in c.items)
    if not (full or any(c for _, c in found)):
        return
    res.method = "full" if full or any(c.detail.get("full") for _, c in found) else "delta"
    reporter.step(site.name, f"{res.method} restore from {name}" + (f": {len(res.changed)} item(s)" if res.changed else ""))
    # A delta restores, flushes and checks in one round trip when every store can.
    left = _restore_in_one_trip(stores, name, found) if res.method == "delta" else None
    if left is None:
        todo = [(st, c) for st, c in (found if not full else [(st, None) for st in stores]) if c is None or c]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
            list(pool.map(lambda sc: sc[0].restore(name, sc[1]), todo))
        # Cache flushes and the closing check share one round trip.
        left = [i for _, c in _changes(stores, name, after_restore=True) for i in c.items]
    if left:
        res.escalations.append(f"after {res.method}: still changed: {', '.join(left[:5])}")
        reporter.step(site.name, f"check failed after {res.method}; escalating to full")
        res.method = "full"
        for st in stores:
            st.restore(name, None)
        left = [i for _, c in _changes(stores, name, after_restore=True) for i in c.items]
        if left:
            raise StoreError(f"{site.name}: still changed after a full restore: {', '.join(left[:5])}")


def reset_site(target: Target, site: Site, engine: Engine, name: str = GOLDEN, full: bool = False,
               reporter: Reporter = QUIET) -> SiteReset:
    """Reset one site's stores to snapshot ``name``: delta (only what changed) by default,
    every store with ``full``. Ends with a cheap check (nothing left in any changed set); on a
    mismatch it escalates delta → full → re-create (and says so in ``escalations``).

    Raises:
        StoreError, EngineError: the re-create path failed too.
    """
    from sitectl.ops.lifecycle import bring_up

    t0 = time.monotonic()
    stores = stores_for(site, target.container(site), engine)
    res = SiteReset(site.name, "none")
    try:
        _check_covered(target, site, name)
        try:
            _restore_stores(site, stores, name, full, res, reporter)
        except SitectlError:
            # Not looked at on the fast path (an inspect costs a round trip): a stopped
            # container (killed, or the engine restarted) is started with its state and reset again.
            if not _start_if_stopped(target, site, engine, res, reporter):
                raise
            _restore_stores(site, stores, name, full, res, reporter)
    except SitectlError as e:
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
        _create(target, GOLDEN, [site], engine, reporter)  # under the reset's lock (a worker thread)
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
    chosen = [s for s in _stateful(target, chosen) if engine.container(target.container(s)) is not None]
    why = (f"recovered an interrupted reset (pid {pending.get('pid', '?')}, started {pending.get('started', '?')}"
           + (", unreadable journal" if pending.get("unreadable") else "") + "): full restore")
    reporter.step("recover", f"{why} of {', '.join(s.name for s in chosen) or 'nothing'}")
    waited = _wait_for_leftover_execs(target, chosen, engine, reporter)
    if waited:
        why += f"; first waited {waited}"
    try:
        listed = read_manifest(target, snap).get("sites", {})
        if any(s.name not in listed for s in chosen):
            snap = GOLDEN  # the named snapshot no longer covers them; golden is what a reset means
    except UsageError:
        snap = GOLDEN  # the named snapshot is gone; golden is what a reset means
    rows = _reset_sites(target, chosen, engine, snap, True, reporter)
    for r in rows:
        r.escalations.insert(0, why)
    return rows


#: How long recovery waits for commands of the interrupted reset still running in a container.
LEFTOVER_EXEC_WAIT = 60.0


def _wait_for_leftover_execs(target: Target, sites: list[Site], engine: Engine, reporter: Reporter,
                             limit: float | None = None) -> str:
    """Wait until no ``docker exec`` runs in the sites' containers, at most ``limit`` seconds
    (default :data:`LEFTOVER_EXEC_WAIT`).

    A killed sitectl leaves its in-flight ``docker exec`` (a restore batch, a snapshot copy)
    running inside the container; restoring or copying beside it would interleave the two. The
    lock is held, so no other reset or snapshot runs; an exec found here is the dead process's,
    or a read-only probe of another command. Returns what was waited for (``""`` when nothing
    ran), for the recovery's row.

    Raises:
        StoreError: commands still run after ``limit`` seconds (the message names the
            containers and the next step)."""
    limit = LEFTOVER_EXEC_WAIT if limit is None else limit
    t0 = time.monotonic()
    busy = {s.name: n for s in sites if (n := engine.running_execs(target.container(s)))}
    if not busy:
        return ""
    reporter.step("wait", "waiting for commands of an interrupted sitectl still running in "
                  + ", ".join(f"{k} ({v})" for k, v in busy.items()))
    left = dict(busy)
    while left and time.monotonic() - t0 < limit:
        time.sleep(0.2)
        left = {k: n for k in left if (n := engine.running_execs(target.container(target.stack.sites[k])))}
    if left:
        raise StoreError(
            f"commands of an interrupted sitectl still run in {', '.join(target.container(target.stack.sites[k]) for k in left)} "
            f"after {limit:g} s (`docker top CONTAINER`); changing the state under them is not safe: wait and run "
            "the command again, or `sitectl reset --recreate " + " ".join(left) + "`")
    return f"{time.monotonic() - t0:.1f} s for {sum(busy.values())} leftover command(s) in {', '.join(busy)}"


def recover_pending(target: Target, engine: Engine, reporter: Reporter = QUIET) -> list[SiteReset]:
    """:func:`recover` under the instance lock, when a journal is pending (else no lock taken)."""
    if read_journal(target) is None:
        return []
    with instance_lock(target, "recover"):
        return recover(target, engine, reporter)


def reset(target: Target, sites: list[Site], engine: Engine, name: str = GOLDEN, full: bool = False,
          reporter: Reporter = QUIET, wait: bool | float = True) -> list[SiteReset]:
    """Reset ``sites`` (those with stores) concurrently; see :func:`reset_site`.

    Holds the instance's lock (``wait``: see :func:`sitectl.ops.journal.instance_lock`) and
    first rolls forward a reset that was interrupted (:func:`recover`); its rows are merged in.

    Raises:
        InstanceBusy: ``wait`` is False and another process holds the lock.
    """
    engine.ping()
    chosen = _stateful(target, sites)
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
            f"instance {target.instance} has no golden snapshot manifest in {snapshots_dir()}. If the "
            "snapshots live elsewhere, set SITECTL_SNAPSHOTS_DIR to that folder; else `sitectl reset "
            "--recreate` brings the sites back to their images and takes golden again")
    with instance_lock(target, "reset " + ",".join(s.name for s in chosen), wait):
        recovered = {r.site: r for r in recover(target, engine, reporter)}
        rows = _reset_sites(target, chosen, engine, name, full, reporter)
    for r in rows:
        if r.site in recovered:
            r.escalations = recovered.pop(r.site).escalations + r.escalations
    return rows + list(recovered.values())


def verify_deep(target: Target, sites: list[Site], engine: Engine, name: str = GOLDEN) -> list[dict]:
    """Compare full fingerprints of the live state with snapshot ``name``'s manifest.

    Returns:
        ``[{"site", "store", "ok", "differs": [item, ...]}]``; ``differs`` names each table,
        sequence, file, repository or keyspace whose digest differs (or exists on one side only).
    """
    m = read_manifest(target, name)
    out = []
    for site in _stateful(target, sites):
        entry = m["sites"].get(site.name)
        for st in stores_for(site, target.container(site), engine):
            if st.kind == "cache":
                continue
            if entry is None or st.label not in entry["stores"]:
                why = (m.get("incomplete") or {}).get(site.name)
                out.append({"site": site.name, "store": st.label, "ok": False,
                            "differs": [f"snapshot {name!r} has no {st.label}" + (f" ({why})" if why else "")]})
                continue
            want = entry["stores"][st.label]["fingerprint"]
            have = st.fingerprint(None)
            differs = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
            out.append({"site": site.name, "store": st.label, "ok": not differs, "differs": differs})
    return out


# -- portable archives ---------------------------------------------------------------------
ARCHIVE_FORMAT = 2  # 2: a PostgreSQL payload is one pg_dump archive (its schema text inside)
_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
_PAYLOAD_FILE = re.compile(r"^\d+-[A-Za-z0-9_.-]+$")


def export(target: Target, name: str, path: Path, engine: Engine, reporter: Reporter = QUIET) -> dict:
    """Write snapshot ``name`` to a portable ``.tar.gz``: ``manifest.json`` (the snapshot's
    manifest plus a ``payload`` table of every file's SHA-256 and size) and ``payload/<site>/``
    files (a ``mysqldump``, a ``pg_dump`` archive, a tar of snapshot folders, Redis keys).

    Raises:
        UsageError: unknown snapshot; EngineError/StoreError: a dump or copy failed (no archive
        is left behind: it is written to a temporary name and renamed at the end).
    """
    import hashlib
    import shutil
    import tarfile
    import tempfile
    import uuid

    m = read_manifest(target, name)
    if not path.parent.is_dir():
        raise UsageError(f"{path}: folder {path.parent} does not exist")
    if path.exists() and not path.is_file():
        raise UsageError(f"{path}: exists and is not a file")
    engine.ping()
    work = Path(tempfile.mkdtemp(prefix="sitectl-export-"))
    payload: dict[str, dict] = {}
    try:
        for site_name in sorted(m["sites"]):
            site = target.stack.sites[site_name]
            container = target.container(site)
            stage = f"{stores_for(site, container, engine)[0].STAGE}/{uuid.uuid4().hex}"
            engine.exec_checked(container, ["mkdir", "-p", stage], f"{site_name}: make {stage}")
            try:
                for i, st in enumerate(stores_for(site, container, engine)):
                    # Network sessions write their dump here, beside this process.
                    local_stage = work / "stage" / f"{site_name}-{i}"
                    if st.payload_local:
                        local_stage.mkdir(parents=True)
                    p = st.export_payload(name, str(local_stage) if st.payload_local else stage)
                    if p is None:
                        continue
                    rel = f"payload/{site_name}/{i}-{p.rsplit('/', 1)[1]}"
                    local = work / rel
                    local.parent.mkdir(parents=True, exist_ok=True)
                    reporter.step(site_name, f"export {st.label}")
                    if st.payload_local:
                        shutil.move(p, local)
                    else:
                        engine.copy_from(container, p, local)
                    payload[rel] = {"site": site_name, "store": st.label, "size": local.stat().st_size,
                                    "sha256": hashlib.sha256(local.read_bytes()).hexdigest()}
            finally:
                engine.exec(container, ["rm", "-rf", stage])
        manifest = {**m, "format": ARCHIVE_FORMAT, "payload": payload}
        (work / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
        tmp = path.with_name(path.name + ".part")
        with tarfile.open(tmp, "w:gz") as tar:
            tar.add(work / "manifest.json", arcname="manifest.json")
            for rel in sorted(payload):
                tar.add(work / rel, arcname=rel)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"name": name, "archive": str(path), "files": len(payload), "bytes": path.stat().st_size}


def _check_archive(tar, target: Target) -> dict:
    """Validate an archive before anything is changed; return its manifest.

    Rejected: members that are not regular files, absolute paths, ``..``, unexpected names,
    a missing or malformed manifest, another format or stack, unknown sites, a payload file
    missing, extra or not matching its recorded SHA-256 or size.
    """
    import hashlib

    members = tar.getmembers()
    names = set()
    for mem in members:
        parts = mem.name.split("/")
        if not mem.isfile() or mem.name.startswith("/") or any(p in ("", ".", "..") for p in parts) \
                or not all(_SAFE_PART.match(p) for p in parts):
            raise UsageError(f"archive member {mem.name!r} is not allowed (only regular files under payload/)")
        if not (mem.name == "manifest.json" or (len(parts) == 3 and parts[0] == "payload")):
            raise UsageError(f"archive member {mem.name!r} is not allowed")
        names.add(mem.name)
    if "manifest.json" not in names:
        raise UsageError("archive has no manifest.json")
    if next(mem for mem in members if mem.name == "manifest.json").size > 64 << 20:
        raise UsageError("archive manifest.json is larger than 64 MiB")
    try:
        m = json.loads(tar.extractfile("manifest.json").read())
    except ValueError as e:
        raise UsageError(f"archive manifest.json is not valid JSON: {e}") from None
    if not isinstance(m, dict) or m.get("format") != ARCHIVE_FORMAT:
        raise UsageError(f"archive format {m.get('format') if isinstance(m, dict) else '?'!r} is not {ARCHIVE_FORMAT}")
    for key, typ in (("name", str), ("stack", str), ("sites", dict), ("payload", dict)):
        if not isinstance(m.get(key), typ):
            raise UsageError(f"archive manifest field {key!r} is missing or not a {typ.__name__}")
    if not m["sites"] or not m["payload"]:
        raise UsageError("archive manifest names no sites or no payload")
    check_snapshot_name(m["name"])
    for site, entry in m["sites"].items():
        stores = entry.get("stores") if isinstance(entry, dict) else None
        if not isinstance(stores, dict) or not all(
                isinstance(s, dict) and isinstance(s.get("fingerprint"), dict) for s in stores.values()):
            raise UsageError(f"archive manifest: site {site!r} has no valid store entries")
    if m["stack"] != target.stack.name:
        raise UsageError(f"archive is of stack {m['stack']!r}, not {target.stack.name!r}")
    unknown = [s for s in m["sites"] if s not in target.stack.sites]
    if unknown:
        raise UsageError(f"archive names sites this stack lacks: {', '.join(unknown)}")
    payload = m["payload"]
    for rel, meta in payload.items():
        parts = rel.split("/")
        if not (isinstance(meta, dict) and len(parts) == 3 and parts[0] == "payload" and parts[1] in m["sites"]
                and _PAYLOAD_FILE.match(parts[2])
                and isinstance(meta.get("size"), int) and isinstance(meta.get("sha256"), str)
                and isinstance(meta.get("store"), str) and meta.get("store") in m["sites"][parts[1]]["stores"]):
            raise UsageError(f"archive manifest: payload entry {rel!r} is malformed")
    if set(payload) != names - {"manifest.json"}:
        raise UsageError("archive payload files do not match its manifest "
                         f"(missing: {sorted(set(payload) - names)}, extra: {sorted(names - set(payload) - {'manifest.json'})})")
    sizes = {mem.name: mem.size for mem in members}
    for rel, meta in payload.items():
        if sizes[rel] != meta["size"]:  # checked before reading: no unbounded reads
            raise UsageError(f"archive file {rel} does not match its manifest (tampered or damaged)")
        h = hashlib.sha256()
        f = tar.extractfile(rel)
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
        if h.hexdigest() != meta["sha256"]:
            raise UsageError(f"archive file {rel} does not match its manifest (tampered or damaged)")
        if meta.get("site") != rel.split("/")[1]:
            raise UsageError(f"archive file {rel} is filed under the wrong site")
    return m


def import_(target: Target, path: Path, engine: Engine, name: str | None = None,
            reporter: Reporter = QUIET) -> dict:
    """Load an archive written by :func:`export` as snapshot ``name`` (default: its own name).

    Everything is checked first (see :func:`_check_archive`, and that every site's container
    runs); then each store loads its file; then the loaded snapshot's fingerprints are compared
    with the archive's and the manifest is written. On a failure after loading started, the
    partly loaded snapshot is dropped again.

    Raises:
        UsageError: a rejected archive; StoreError/EngineError: a load failed.
    """
    with instance_lock(target, f"snapshot import {path.name}"):
        return _import(target, path, engine, name, reporter)


def _import(target: Target, path: Path, engine: Engine, name: str | None, reporter: Reporter) -> dict:
    import tarfile
    import tempfile
    import uuid

    if not path.is_file():
        raise UsageError(f"{path}: no such archive")
    try:
        tar = tarfile.open(path, "r:gz")
    except (tarfile.TarError, OSError) as e:
        raise UsageError(f"{path}: not a sitectl snapshot archive ({e})") from None
    with tar:
        try:
            m = _check_archive(tar, target)
        except (tarfile.TarError, OSError, EOFError) as e:
            raise UsageError(f"{path}: damaged archive ({e})") from None
        name = check_snapshot_name(name or m["name"])
        if manifest_path(target, name).is_file():
            raise UsageError(f"snapshot {name!r} exists; delete it first or import with --name NEW")
        engine.ping()
        for site_name in m["sites"]:
            site = target.stack.sites[site_name]
            info = engine.container(target.container(site))
            if info is None or not info.running:
                raise UsageError(f"site {site_name!r}: container {target.container(site)} is not running; `sitectl up` first")
        loaded: list[tuple] = []
        work = Path(tempfile.mkdtemp(prefix="sitectl-import-"))
        try:
            for rel, meta in sorted(m["payload"].items()):
                site = target.stack.sites[meta["site"]]
                container = target.container(site)
                stores = {st.label: st for st in stores_for(site, container, engine)}
                st = stores.get(meta["store"])
                if st is None:
                    raise UsageError(f"archive file {rel} is for store {meta['store']!r}, which site {site.name!r} lacks")
                local = work / rel.replace("/", "_")
                local.write_bytes(tar.extractfile(rel).read())
                if st.payload_local:  # a network session loads it from here
                    reporter.step(site.name, f"import {st.label}")
                    loaded.append((st, name))
                    st.import_payload(name, str(local), m["name"])
                    continue
                stage = f"{st.STAGE}/{uuid.uuid4().hex}"
                engine.exec_checked(container, ["mkdir", "-p", stage], f"{site.name}: make {stage}")
                try:
                    dest = f"{stage}/{rel.rsplit('/', 1)[1].split('-', 1)[1]}"
                    engine.copy_to(local, container, dest)
                    reporter.step(site.name, f"import {st.label}")
                    loaded.append((st, name))
                    st.import_payload(name, dest, m["name"])
                finally:
                    engine.exec(container, ["rm", "-rf", stage])
            # The loaded state must be what the archive's manifest says it is.
            for st, _ in loaded:
                want = m["sites"][st.site]["stores"][st.label]["fingerprint"]
                have = st.fingerprint(name)
                bad = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
                if bad:
                    raise StoreError(f"{st.site}: imported {st.label} differs from the archive's fingerprints: {', '.join(bad[:5])}")
        except BaseException:
            for st, n in loaded:
                try:
                    st.drop(n)
                except SitectlError:
                    pass
            raise
        finally:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    manifest = {k: v for k, v in m.items() if k not in ("payload", "format")}
    manifest.update({"name": name, "instance": target.instance, "imported_from": str(path)})
    _write_manifest(target, name, manifest)
    return {"name": name, "sites": sorted(m["sites"]), "files": len(m["payload"])}
