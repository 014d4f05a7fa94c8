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
import time
from dataclasses import dataclass, field
from pathlib import Path

from sitectl import __version__
from sitectl.engine import Engine
from sitectl.errors import SitectlError, UsageError
from sitectl.progress import QUIET, Reporter
from sitectl.stack import Site
from sitectl.stores import StoreError, check_snapshot_name, stores_for
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


def _write_manifest(target: Target, name: str, data: dict) -> None:
    p = manifest_path(target, name)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
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
        out.append({"name": m.get("name", p.parent.name), "created": m.get("created"),
                    "sites": sorted(m.get("sites", {})),
                    "size": sum(s.get("size", 0) for site in m.get("sites", {}).values() for s in site["stores"].values())})
    return out


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
    chosen = _stateful(target, sites)
    manifest = {"name": name, "sitectl": __version__, "stack": target.stack.name, "host": target.host,
                "instance": target.instance, "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "sites": {}}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
        futs = {}
        for s in chosen:
            reporter.step(s.name, f"snapshot {name}")
            futs[s.name] = pool.submit(snapshot_site, target, s, name, engine)
        for n, f in futs.items():
            manifest["sites"][n] = f.result()
    old = manifest_path(target, name)
    if old.is_file():
        # A snapshot of some sites keeps the other sites' entries of the same name.
        prev = json.loads(old.read_text()).get("sites", {})
        manifest["sites"] = {**{k: v for k, v in prev.items() if k not in manifest["sites"]}, **manifest["sites"]}
    _write_manifest(target, name, manifest)
    return manifest


def delete(target: Target, name: str, engine: Engine) -> list[str]:
    """Drop snapshot ``name`` in every site's stores and remove its manifest."""
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


def _changes(stores, name, after_restore: bool = False) -> list[tuple]:
    """Each store's changes, all asked in one round trip into the site's container; with
    ``after_restore``, the stores' after-restore commands (cache flushes) run first in the
    same round trip."""
    if not stores:
        return []
    pre = [a for st in stores for a in st.after_restore_argvs()] if after_restore else []
    argvs = [st.changes_argvs(name) for st in stores]
    flat = [a for group in argvs for a in group]
    results = stores[0].t.run_many(pre + flat, f"{stores[0].site} changes") if pre + flat else []
    for a, (rc, o) in zip(pre, results[:len(pre)]):
        if rc != 0:
            raise StoreError(f"{stores[0].site}: {a[0]} failed after the restore (exit code {rc}): {o.strip()[-500:]}")
    results = results[len(pre):]
    out, i = [], 0
    for st, group in zip(stores, argvs):
        out.append((st, st.parse_changes(name, results[i:i + len(group)])))
        i += len(group)
    return out


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
        # A snapshot missing in the container makes changes() or restore() fail: that escalates.
        found = [] if full else _changes(stores, name)
        res.changed = sorted(i for _, c in found for i in c.items)
        if full or any(c for _, c in found):
            res.method = "full" if full else "delta"
            reporter.step(site.name, f"{res.method} restore from {name}" + (f": {len(res.changed)} item(s)" if res.changed else ""))
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
    except SitectlError as e:
        if name != GOLDEN:
            raise
        res.escalations.append(f"{type(e).__name__}: {e}")
        reporter.step(site.name, f"{e}; escalating to re-create")
        res.method = "recreate"
        bring_up(target, site, engine, reporter, recreate=True)
        create(target, GOLDEN, [site], engine)
    res.seconds = round(time.monotonic() - t0, 3)
    return res


def reset(target: Target, sites: list[Site], engine: Engine, name: str = GOLDEN, full: bool = False,
          reporter: Reporter = QUIET) -> list[SiteReset]:
    """Reset ``sites`` (those with stores) concurrently; see :func:`reset_site`."""
    engine.ping()
    chosen = _stateful(target, sites)
    if name != GOLDEN:
        read_manifest(target, name)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
        futs = [pool.submit(reset_site, target, s, engine, name, full, reporter) for s in chosen]
        return [f.result() for f in futs]


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
                out.append({"site": site.name, "store": st.label, "ok": False,
                            "differs": [f"snapshot {name!r} has no {st.label}"]})
                continue
            want = entry["stores"][st.label]["fingerprint"]
            have = st.fingerprint(None)
            differs = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
            out.append({"site": site.name, "store": st.label, "ok": not differs, "differs": differs})
    return out
