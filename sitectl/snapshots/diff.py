"""``sitectl diff``: what changed since a snapshot, row by row, file by file, key by key.

Read from the same change log a reset reads (each store's detection, one round trip per site),
then, per store, the changed rows from the live tables and from the snapshot's copies by their
logged keys, the changed files' sizes and hashes on both sides, and the changed Redis keys
(:meth:`sitectl.stores.base.Store.diff`). Nothing is written. The JSON it returns is documented
in docs/diff.md (``format`` 1).
"""
from __future__ import annotations

from sitectl.engine.base import Engine
from sitectl.errors import CheckpointUnavailable, DiffUnavailable, UsageError
from sitectl.snapshots import checkpoint as checkpoints
from sitectl.snapshots.manifest import GOLDEN, check_covered, list_snapshots, manifest_path, read_manifest, stateful
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores.base import DiffLimits
from sitectl.stores.site import SiteStores

#: Version of the JSON :func:`diff` returns (docs/diff.md).
FORMAT = 1


def diff(target: Target, sites: list[Site], engine: Engine, since: str = GOLDEN,
         limits: DiffLimits | None = None, named: bool = True) -> dict:
    """What changed in ``sites`` (those with stores) since snapshot ``since``.

    Args:
        target: the running instance.
        sites: the sites to read (sites without stores are left out).
        engine: the engine that reaches their containers.
        since: a snapshot of this instance whose manifest lists the sites (``golden``), or a
            checkpoint (``checkpoint:NAME``, or a bare name no snapshot has).
        limits: how many rows, characters, files and keys are listed (:class:`DiffLimits`).
        named: the caller named ``sites``: each must be covered by ``since``. False (a command
            given no site): the sites ``since`` does not cover (never brought up) are left out.

    Returns:
        ``{"format": 1, "since": name, "instance": n, "sites": [{"site", "changed": bool,
        "stores": [{"store", "kind", "items", ...}]}]}`` (docs/diff.md).

    Raises:
        UsageError: no snapshot or checkpoint ``since``, or a bare name both have.
        CheckpointUnavailable: golden was taken again after checkpoint ``since`` was saved.
        NotCovered: snapshot ``since`` does not cover one of the sites.
        DiffUnavailable: a site's change log is relative to another snapshot (the message says
            what to do); nothing was read from the other sites either.
        StoreError: a query or command failed.
    """
    kind, since = _since(target, since)
    limits = limits or DiffLimits()
    if kind == "checkpoint":
        return _since_checkpoint(target, sites, engine, since, limits, named)
    covered = read_manifest(target, since)["sites"]
    found = []
    flag = f" --instance {target.instance}" if target.instance else ""
    for site in stateful(target, sites):
        if site.name not in covered:
            if not named:
                continue
            check_covered(target, site, since)  # raises NotCovered, with the reason the manifest gives
        stores = SiteStores(site, target.container(site), engine)
        changes = stores.changes(since)
        why = _unlogged(changes)
        if why:
            raise DiffUnavailable(
                f"{site.name}: no exact diff against snapshot {since!r}: {why}. The change log follows the last "
                f"snapshot taken or restored in full; `sitectl snapshot restore {since} {site.name}{flag}` (or "
                f"`sitectl reset {site.name}{flag}` for golden; a leased instance: its lease's reset URL) starts it "
                f"again from {since!r}, discarding what changed, and `sitectl verify --deep --snapshot {since} "
                f"{site.name}{flag}` names what differs now without resetting")
        found.append((site, changes))
    out = []
    for site, changes in found:
        stores = [{"store": st.label, "kind": st.kind, **st.diff(since, c, limits)} for st, c in changes.per_store]
        out.append({"site": site.name, "changed": bool(changes), "stores": stores})
    return {"format": FORMAT, "since": since, "since_kind": "snapshot", "instance": target.instance, "sites": out}


def _unlogged(changes) -> str:
    """What the stores with no change log relative to the detection's snapshot say ("" when every
    store has one): such a store refuses a diff; one that asks for a full restore over a change it
    read (a PostgreSQL object dropped or altered) still lists it."""
    return "; ".join(i for st, c in changes.per_store if not st.diffable(c) for i in c.items)


def _since(target: Target, since: str) -> tuple[str, str]:
    """``("snapshot" | "checkpoint", name)`` of a ``--since`` value: ``snapshot:NAME``,
    ``checkpoint:NAME``, or a bare name, which must be one of the two only.

    Raises:
        UsageError: no such snapshot or checkpoint, or a bare name that is both.
    """
    kind, _, name = since.partition(":") if ":" in since else ("", "", since)
    if kind not in ("", "snapshot", "checkpoint"):
        raise UsageError(f"--since {since!r}: give a snapshot or checkpoint name, or snapshot:NAME or checkpoint:NAME")
    if kind:
        return kind, name
    snap = manifest_path(target, name).is_file() if name else False
    ck = checkpoints.record_path(target, name).is_file() if name else False
    if snap and ck:
        raise UsageError(f"--since {name!r} names a snapshot and a checkpoint: say snapshot:{name} or checkpoint:{name}")
    if ck:
        return "checkpoint", name
    if not snap:
        known = sorted(r["name"] for r in list_snapshots(target)) + [
            f"checkpoint:{r['name']}" for r in checkpoints.list_checkpoints(target)]
        raise UsageError(f"no snapshot or checkpoint {name!r} for instance {target.instance} "
                         f"(known: {', '.join(known) or 'none'})")
    return "snapshot", name


def _since_checkpoint(target: Target, sites: list[Site], engine: Engine, name: str, limits: DiffLimits,
                      named: bool) -> dict:
    """:func:`diff` against checkpoint ``name``: each site's detection against golden (its change
    log must follow golden, and golden must be the one the checkpoint was saved against), then
    each store's :meth:`~sitectl.stores.base.Store.diff_checkpoint`."""
    rec = checkpoints.read_record(target, name)
    golden = read_manifest(target, GOLDEN)
    flag = f" --instance {target.instance}" if target.instance else ""
    found = []
    for site in stateful(target, sites):
        if site.name not in rec["sites"]:
            if not named:
                continue
            raise UsageError(f"checkpoint {name!r} does not hold {site.name} (it holds {', '.join(sorted(rec['sites']))})")
        if checkpoints.golden_id(golden, site.name) != (rec.get("golden") or {}).get(site.name):
            raise CheckpointUnavailable(f"{site.name}: golden was taken again after checkpoint {name!r} was saved; "
                                        f"delete it (`sitectl checkpoint delete {name}{flag}`) and save it again")
        stores = SiteStores(site, target.container(site), engine)
        changes = stores.changes(GOLDEN)
        why = _unlogged(changes)
        if why:
            raise DiffUnavailable(
                f"{site.name}: no exact diff against checkpoint {name!r}: {why}. A checkpoint is read against golden's "
                f"change log, which follows the last snapshot taken or restored in full; `sitectl checkpoint restore "
                f"{name} {site.name}{flag}` starts from the checkpoint again, discarding what changed")
        found.append((site, changes))
    out = []
    for site, changes in found:
        entries = rec["sites"][site.name]["stores"]
        stores = [{"store": st.label, "kind": st.kind, **st.diff_checkpoint(name, entries.get(st.label) or {}, GOLDEN, c, limits)}
                  for st, c in changes.per_store]
        changed = any(x.get("schema") or x.get("auto_increment") or x.get("sequences") or x.get("files") or x.get("keys")
                      or x.get("indices") or any(t.get("inserted") or t.get("updated") or t.get("deleted")
                                                 or str(t.get("rows", "")).startswith("not listed")
                                                 for t in x.get("tables", []))
                      for x in stores)
        out.append({"site": site.name, "changed": changed, "stores": stores})
    return {"format": FORMAT, "since": name, "since_kind": "checkpoint", "instance": target.instance, "sites": out}
