"""Snapshot manifests: the host half of a snapshot.

A snapshot ``NAME`` of an instance has two halves: the copies inside each site's container
(made by the stores, so restores are server-side copies) and a manifest on the host,
``<state dir>/i<instance>/<NAME>/manifest.json`` (sitectl version, stack, host, sites,
per-store fingerprints and sizes, creation time; :func:`sitectl.paths.state_dir`; layout:
``snapshots/README.md``). A site's copy counts only while the manifest lists it.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import threading
from pathlib import Path

from sitectl.errors import DamagedRecord, NotCovered, UsageError
from sitectl.paths import instance_dir
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores import check_snapshot_name

#: The snapshot ``up`` takes right after the post-start steps: what a reset means.
GOLDEN = "golden"


def manifest_path(target: Target, name: str) -> Path:
    """The manifest file of snapshot ``name`` of ``target``'s instance."""
    return instance_dir(target.instance) / name / "manifest.json"


def read_manifest(target: Target, name: str) -> dict:
    """The manifest of snapshot ``name``, checked in shape (:func:`load_manifest`).

    Raises:
        UsageError: no such snapshot (the known ones are listed).
        DamagedRecord: the manifest is unreadable or of the wrong shape.
    """
    check_snapshot_name(name)
    p = manifest_path(target, name)
    if not p.is_file():
        known = ", ".join(sorted(m["name"] for m in list_snapshots(target))) or "none"
        raise UsageError(f"no snapshot {name!r} for instance {target.instance} (snapshots: {known})")
    return load_manifest(p)


def manifest_fault(m: object) -> str:
    """What is wrong with the shape of manifest ``m`` (``""``: nothing). The shape is the one
    :func:`sitectl.snapshots.take.take_unlocked` writes: an object with ``sites`` (site ->
    ``{"stores": {store: {"fingerprint": {item: digest}, ...}}}``) and optionally
    ``incomplete`` (site -> why)."""
    if not isinstance(m, dict):
        return f"a JSON {type(m).__name__}, not an object"
    sites = m.get("sites")
    if not isinstance(sites, dict):
        return "no 'sites' object" if sites is None else "'sites' is not an object"
    for site, entry in sites.items():
        stores = entry.get("stores") if isinstance(entry, dict) else None
        if not isinstance(stores, dict):
            return f"site {site!r} has no 'stores' object"
        for label, store in stores.items():
            if not isinstance(store, dict) or not isinstance(store.get("fingerprint"), dict):
                return f"store {label!r} of site {site!r} has no 'fingerprint' object"
            if not isinstance(store.get("size", 0), int):
                return f"store {label!r} of site {site!r} has a 'size' that is not a number"
    inc = m.get("incomplete", {})
    if not isinstance(inc, dict) or not all(isinstance(v, str) for v in inc.values()):
        return "'incomplete' is not an object of site -> reason"
    return ""


def load_manifest(path: Path) -> dict:
    """The manifest file ``path``, checked in shape (:func:`manifest_fault`).

    Raises:
        DamagedRecord: unreadable, empty, not JSON, or of the wrong shape; the message names
            the file, the fault and the repair (docs/snapshots.md, "Damaged records").
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise _damaged(path, f"unreadable: {getattr(e, 'strerror', None) or e}") from None
    if not text.strip():
        raise _damaged(path, "empty")
    try:
        m = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise _damaged(path, f"not JSON ({str(e)[:120]})") from None
    fault = manifest_fault(m)
    if not fault and m.get("name", path.parent.name) != path.parent.name:
        # The folder is the snapshot's name everywhere (copies, restores, prune): a manifest that
        # names another snapshot would make its copies look unlisted, or another's look listed.
        fault = f"it names snapshot {str(m.get('name'))[:40]!r} but lies in the folder of {path.parent.name!r}"
    if fault:
        raise _damaged(path, fault)
    return m


def _damaged(path: Path, fault: str) -> DamagedRecord:
    name = path.parent.name
    again = ("`sitectl reset --recreate` (re-creates the sites from their images and takes golden again)"
             if name == GOLDEN else f"`sitectl snapshot create {name}`")
    return DamagedRecord(f"{path}: damaged snapshot manifest ({fault}); it was left as it is. Move it aside "
                         f"(`mv {path} {path}.damaged`), then take the snapshot again: {again}")


#: Manifests are read, changed and written back by concurrent threads of one process (a reset or
#: re-create of several sites); other processes are kept out by the instance lock.
MANIFESTS = threading.RLock()


def write_manifest(target: Target, name: str, data: dict) -> None:
    p = manifest_path(target, name)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, sort_keys=True)  # data that cannot be written fails before any file
    tmp = p.with_name(f".manifest.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)  # atomic: a reader sees the old or the new manifest, never half


def list_snapshots(target: Target) -> list[dict]:
    """``[{"name", "created", "sites", "incomplete", "size"}]`` of the instance's snapshots, by
    name; a damaged manifest is listed with ``"damaged"``: the fault and the repair."""
    out = []
    base = instance_dir(target.instance)
    for p in sorted(base.glob("*/manifest.json")) if base.is_dir() else []:
        try:
            m = load_manifest(p)
        except DamagedRecord as e:
            out.append({"name": p.parent.name, "created": None, "sites": [], "incomplete": [], "size": 0,
                        "damaged": str(e)})
            continue
        out.append({"name": m.get("name", p.parent.name), "created": m.get("created"), "sites": sorted(m["sites"]),
                    "incomplete": sorted(m.get("incomplete") or {}),
                    "size": sum(s.get("size", 0) for site in m["sites"].values() for s in site["stores"].values())})
    return out


def forget_sites(target: Target, site_names: list[str], only: str | None = None, why: str = "",
                 keep: str | None = None) -> None:
    """Remove ``site_names`` from every manifest of the instance (their containers, and with
    them the in-container copies, are gone), or from snapshot ``only``'s (its copies are about
    to be replaced; the manifest then records ``why`` under ``incomplete``, or that the
    snapshot did not finish); ``keep`` names a snapshot to leave alone; a manifest left with no
    site is removed. The caller holds the instance lock (``up``, ``down``, a reset's re-create, a
    snapshot)."""
    with MANIFESTS:
        _forget_sites(target, site_names, only, why, keep)


def _forget_sites(target: Target, site_names: list[str], only: str | None, why: str = "",
                  keep: str | None = None) -> None:
    base = instance_dir(target.instance)
    for p in sorted(base.glob("*/manifest.json")) if base.is_dir() else []:
        if (only is not None and p.parent.name != only) or p.parent.name == keep:
            continue
        try:
            m = load_manifest(p)
        except DamagedRecord:
            continue  # never rewritten: whatever reads it next refuses it, naming the repair
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
            write_manifest(target, p.parent.name, m)
        else:
            p.unlink(missing_ok=True)
            try:
                p.parent.rmdir()
            except OSError:
                pass


def stateful(target: Target, sites: list[Site]) -> list[Site]:
    """The sites of ``sites`` that have stores (the others have nothing to snapshot)."""
    return [s for s in sites if s.stores]


def check_covered(target: Target, site: Site, name: str) -> None:
    """Raise :class:`NotCovered` unless snapshot ``name``'s manifest lists ``site``
    (:class:`DamagedRecord` when the manifest is damaged)."""
    with MANIFESTS:
        p = manifest_path(target, name)
        if p.is_file():
            m = load_manifest(p)  # damaged: refused (DamagedRecord), not read as "not covered"
            listed = site.name in m["sites"]
            why = (m.get("incomplete") or {}).get(site.name, "")
        else:
            listed, why = False, ""
    if not listed:
        raise NotCovered(
            f"{site.name}: snapshot {name!r} has no complete copy of this site ({why or 'not taken'})"
            + ("" if name == GOLDEN else f"; take it again with `sitectl snapshot create {name} {site.name}`"))
