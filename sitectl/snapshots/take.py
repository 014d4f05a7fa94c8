"""Taking and deleting snapshots: every store of each site copies its state inside the site's
container, then the manifest lists the site (:mod:`sitectl.snapshots.manifest`)."""
from __future__ import annotations

import concurrent.futures
import datetime as dt
import time

from sitectl.engine.base import Engine
from sitectl.errors import DamagedRecord, SitectlError, StoreError, UsageError
from sitectl.paths import state_dir
from sitectl.progress import QUIET, Reporter
from sitectl.sites.jobs import jobs_paused
from sitectl.snapshots.journal import instance_lock, lock_holder, wait_for_leftover_execs
from sitectl.snapshots.manifest import (
    GOLDEN,
    MANIFESTS,
    forget_sites,
    list_snapshots,
    load_manifest,
    manifest_path,
    read_manifest,
    stateful,
    write_manifest,
)
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores import check_snapshot_name
from sitectl.stores.site import SiteStores
from sitectl.version import __version__


def snapshot_site(target: Target, site: Site, name: str, engine: Engine) -> dict:
    """Snapshot every store of one site, its background jobs paused (``jobs`` in the stack
    file); returns the site's manifest entry (``notes``: a failed resume of the jobs).

    Raises:
        JobsPauseFailed: the jobs would not pause (nothing copied); StoreError: a copy failed.
    """
    stores = SiteStores(site, target.container(site), engine)
    t0 = time.monotonic()
    with jobs_paused(engine, target.container(site), site) as notes:
        entry = {"stores": stores.snapshot(name), "container": target.container(site)}
    entry["seconds"] = round(time.monotonic() - t0, 3)
    if notes:
        entry["notes"] = notes
    return entry


def create(target: Target, name: str, sites: list[Site], engine: Engine, reporter: Reporter = QUIET) -> dict:
    """Snapshot ``sites`` (those with stores) as ``name``; the manifest is written last.

    Raises:
        UsageError: a bad name; StoreError: a store failed (no manifest is written).
    """
    check_snapshot_name(name)
    engine.ping()
    with instance_lock(target, f"snapshot create {name}"):
        return take_unlocked(target, name, sites, engine, reporter)


def take_unlocked(target: Target, name: str, sites: list[Site], engine: Engine, reporter: Reporter) -> dict:
    """:func:`create` for a caller that holds the instance lock (a reset's re-create, in a
    worker thread)."""
    chosen = stateful(target, sites)
    manifest = {"name": name, "sitectl": __version__, "stack": target.stack.name, "host": target.host,
                "instance": target.instance, "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "sites": {}}
    # A site's copy counts only while the manifest lists it: the sites about to be copied leave
    # the manifest before their old copies are touched, and come back when their copy is
    # complete. A crash or a failure in between leaves them unlisted, never half-copied and listed.
    # A killed snapshot's copy commands may still run in the containers: never copy beside them.
    wait_for_leftover_execs(target, chosen, engine, reporter)
    existed = manifest_path(target, name).is_file()
    if existed:
        load_manifest(manifest_path(target, name))  # damaged: refused before anything changes
    forget_sites(target, [s.name for s in chosen], only=name)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
        futs = {}
        for s in chosen:
            reporter.step(s.name, f"snapshot {name}")
            futs[s.name] = pool.submit(snapshot_site, target, s, name, engine)
        concurrent.futures.wait(list(futs.values()))
    failed = {n: f.exception() for n, f in futs.items() if f.exception() is not None}
    manifest["sites"] = {n: f.result() for n, f in futs.items() if n not in failed}
    with MANIFESTS:
        old = manifest_path(target, name)
        if old.is_file():
            # A snapshot of some sites keeps the other sites' entries of the same name (read
            # under the lock; checked in shape above, and again here).
            prev_m = load_manifest(old)
            prev, gone = prev_m["sites"], prev_m.get("incomplete") or {}
            manifest["sites"] = {**{k: v for k, v in prev.items() if k not in manifest["sites"]}, **manifest["sites"]}
            manifest["incomplete"] = {k: v for k, v in gone.items() if k not in manifest["sites"]}
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        manifest.setdefault("incomplete", {}).update(
            {n: f"snapshot at {now} failed: {str(e).splitlines()[0][:300]}" for n, e in failed.items()})
        if manifest["sites"] or existed:  # a new name that failed everywhere leaves no manifest
            write_manifest(target, name, manifest)
    if failed:
        raise _snapshot_failed(target, name, failed, engine)
    return manifest


def _snapshot_failed(target: Target, name: str, failed: dict[str, BaseException], engine: Engine) -> SitectlError:
    """Drop the partial copies of the sites whose snapshot failed (best effort) and build the
    error: what failed, that ``name`` no longer covers those sites, and the next step."""
    for site_name in failed:
        site = target.stack.sites[site_name]
        for st in SiteStores(site, target.container(site), engine):
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
    try:
        listed = list(read_manifest(target, name)["sites"])
    except DamagedRecord:
        # Asked to delete it: its copies may be in any site that has stores.
        listed = [s.name for s in stateful(target, list(target.stack.sites.values()))]
    engine.ping()
    done = []
    for site_name in listed:
        site = target.stack.sites.get(site_name)
        if site is None or engine.container(target.container(site)) is None:
            continue
        SiteStores(site, target.container(site), engine).drop(name)
        done.append(site_name)
    p = manifest_path(target, name)
    p.unlink(missing_ok=True)
    try:
        p.parent.rmdir()
    except OSError:
        pass
    return done


def leftovers(target: Target, engine: Engine) -> list[dict]:
    """The snapshot copies the instance's containers hold that no manifest lists as complete for
    their site: those of a ``snapshot create`` that failed or was killed (a new name killed
    before its manifest is written leaves no manifest at all), and a site's copies that its
    snapshot calls incomplete. Such copies are never used; :func:`prune` removes them.

    Returns:
        ``[{"site", "store", "name", "why"}]``, by site, store and name. A damaged manifest's
        name counts as listed (what it lists is unknown, so nothing of that name is offered).

    Raises:
        EngineError: no engine; StoreError: a store could not list its copies.
    """
    holder = lock_holder(target)
    running = str(holder.get("what", "")) if holder else ""
    listed: dict[str, set[str]] = {}
    incomplete: dict[tuple[str, str], str] = {}
    damaged: set[str] = set()
    for row in list_snapshots(target):
        if row.get("damaged"):
            damaged.add(row["name"])
            continue
        for s in row["sites"]:
            listed.setdefault(s, set()).add(row["name"])
        for s in row["incomplete"]:
            incomplete[(s, row["name"])] = "its snapshot lists the site as incomplete"
    out = []
    for site in stateful(target, list(target.stack.sites.values())):
        if engine.container(target.container(site)) is None:
            continue
        for st in SiteStores(site, target.container(site), engine):
            if st.kind == "cache":
                continue
            for name in sorted(st.held() - listed.get(site.name, set()) - damaged):
                why = incomplete.get((site.name, name)) or (
                    f"snapshot {name!r} does not list {site.name}" if manifest_path(target, name).is_file()
                    else f"no manifest of snapshot {name!r} (a snapshot that failed or was killed before it was written)")
                if running == f"snapshot create {name}":
                    why = (f"`snapshot create {name}` is running now (pid {holder.get('pid', '?')}, since "
                           f"{holder.get('since', '?')}): its manifest lists these copies when it ends")
                out.append({"site": site.name, "store": st.label, "name": name, "why": why})
    return out


def prune(target: Target, engine: Engine, reporter: Reporter = QUIET) -> list[dict]:
    """Remove every copy :func:`leftovers` names, under the instance lock (no snapshot or reset
    runs meanwhile; commands of a killed one still running in a container are waited for).

    Returns:
        The rows of :func:`leftovers` that were removed.

    Raises:
        UsageError: the instance has no golden manifest in the state folder (every copy would
            look unlisted: the manifests are likely elsewhere, see ``SITECTL_SNAPSHOTS_DIR``);
        StoreError: a store could not list or remove a copy (what was removed before stays removed).
    """
    engine.ping()
    with instance_lock(target, "snapshot prune"):
        if not manifest_path(target, GOLDEN).is_file():
            raise UsageError(
                f"instance {target.instance} has no golden snapshot manifest in {state_dir()}: every copy in its "
                "containers would look unlisted, so nothing is removed. If the manifests live elsewhere, set "
                "SITECTL_SNAPSHOTS_DIR to that folder; `sitectl snapshot list` shows what this folder holds")
        sites = stateful(target, list(target.stack.sites.values()))
        wait_for_leftover_execs(target, [s for s in sites if engine.container(target.container(s)) is not None],
                                engine, reporter)
        rows = leftovers(target, engine)
        for r in rows:
            site = target.stack.sites[r["site"]]
            reporter.step(r["site"], f"removing {r['store']} copy {r['name']!r}: {r['why']}")
            st = next(s for s in SiteStores(site, target.container(site), engine) if s.label == r["store"])
            st.drop(r["name"])
        return rows
