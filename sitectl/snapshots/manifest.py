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

from sitectl.errors import NotCovered, UsageError
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
MANIFESTS = threading.RLock()


def write_manifest(target: Target, name: str, data: dict) -> None:
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
    base = instance_dir(target.instance)
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
    with MANIFESTS:
        _forget_sites(target, site_names, only, why, keep)


def _forget_sites(target: Target, site_names: list[str], only: str | None, why: str = "",
                  keep: str | None = None) -> None:
    base = instance_dir(target.instance)
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
    """Raise :class:`NotCovered` unless snapshot ``name``'s manifest lists ``site``."""
    with MANIFESTS:
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
