"""``verify --deep``: the live state's full fingerprints against a snapshot's manifest."""
from __future__ import annotations

from sitectl.engine.base import Engine
from sitectl.snapshots.manifest import GOLDEN, read_manifest, stateful
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores import stores_for


def verify_deep(target: Target, sites: list[Site], engine: Engine, name: str = GOLDEN) -> list[dict]:
    """Compare full fingerprints of the live state with snapshot ``name``'s manifest.

    Returns:
        ``[{"site", "store", "ok", "differs": [item, ...]}]``; ``differs`` names each table,
        sequence, file, repository or keyspace whose digest differs (or exists on one side only).
    """
    m = read_manifest(target, name)
    out = []
    for site in stateful(target, sites):
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
