"""``sitectl diff``: what changed since a snapshot, row by row, file by file, key by key.

Read from the same change log a reset reads (each store's detection, one round trip per site),
then, per store, the changed rows from the live tables and from the snapshot's copies by their
logged keys, the changed files' sizes and hashes on both sides, and the changed Redis keys
(:meth:`sitectl.stores.base.Store.diff`). Nothing is written. The JSON it returns is documented
in docs/diff.md (``format`` 1).
"""
from __future__ import annotations

from sitectl.engine.base import Engine
from sitectl.errors import DiffUnavailable
from sitectl.snapshots.manifest import GOLDEN, check_covered, read_manifest, stateful
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
        since: a snapshot of this instance whose manifest lists the sites (``golden``).
        limits: how many rows, characters, files and keys are listed (:class:`DiffLimits`).
        named: the caller named ``sites``: each must be covered by ``since``. False (a command
            given no site): the sites ``since`` does not cover (never brought up) are left out.

    Returns:
        ``{"format": 1, "since": name, "instance": n, "sites": [{"site", "changed": bool,
        "stores": [{"store", "kind", "items", ...}]}]}`` (docs/diff.md).

    Raises:
        UsageError: no snapshot ``since``.
        NotCovered: snapshot ``since`` does not cover one of the sites.
        DiffUnavailable: a site's change log is relative to another snapshot (the message says
            what to do); nothing was read from the other sites either.
        StoreError: a query or command failed.
    """
    covered = read_manifest(target, since)["sites"]
    limits = limits or DiffLimits()
    found = []
    flag = f" --instance {target.instance}" if target.instance else ""
    for site in stateful(target, sites):
        if site.name not in covered:
            if not named:
                continue
            check_covered(target, site, since)  # raises NotCovered, with the reason the manifest gives
        stores = SiteStores(site, target.container(site), engine)
        changes = stores.changes(since)
        # A store with no record of changes relative to ``since`` refuses; one that asks for a
        # full restore over a change it read (a PostgreSQL object dropped or altered) still lists it.
        unlogged = [c for st, c in changes.per_store if not st.diffable(c)]
        if unlogged:
            why = "; ".join(i for c in unlogged for i in c.items)
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
    return {"format": FORMAT, "since": since, "instance": target.instance, "sites": out}
