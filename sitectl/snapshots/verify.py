"""``verify --deep``: the live state's full fingerprints against a snapshot's manifest."""
from __future__ import annotations

from sitectl.engine.base import Engine
from sitectl.sites.jobs import jobs_paused, written_by_jobs
from sitectl.snapshots.manifest import GOLDEN, read_manifest, stateful
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores import stores_for


def verify_deep(target: Target, sites: list[Site], engine: Engine, name: str = GOLDEN) -> list[dict]:
    """Compare full fingerprints of the live state with snapshot ``name``'s manifest.

    Each site's background jobs are paused while its fingerprints are read (``jobs`` in the
    stack file).

    Returns:
        ``[{"site", "store", "ok", "differs": [item, ...], "jobs": [item, ...]}]``; ``differs``
        names each table, sequence, file, repository or keyspace whose digest differs (or exists
        on one side only); ``jobs`` those of them the site's jobs write on their own
        (``jobs.writes``), which do not make ``ok`` false (a reset restores them too).

    Raises:
        JobsPauseFailed: a site's jobs would not pause.
    """
    m = read_manifest(target, name)
    out = []
    for site in stateful(target, sites):
        with jobs_paused(engine, target.container(site), site):
            out += _verify_site(target, site, engine, name, m)
    return out


def _verify_site(target: Target, site: Site, engine: Engine, name: str, m: dict) -> list[dict]:
    """One site's rows of :func:`verify_deep` (its jobs paused by the caller)."""
    out = []
    entry = m["sites"].get(site.name)
    for st in stores_for(site, target.container(site), engine):
        if st.kind == "cache":
            continue
        if entry is None or st.label not in entry["stores"]:
            why = (m.get("incomplete") or {}).get(site.name)
            out.append({"site": site.name, "store": st.label, "ok": False, "jobs": [],
                        "differs": [f"snapshot {name!r} has no {st.label}" + (f" ({why})" if why else "")]})
            continue
        want = entry["stores"][st.label]["fingerprint"]
        have = st.fingerprint(None)
        if want.get("fingerprint format") != have.get("fingerprint format"):
            # A manifest of an older sitectl digests otherwise: the snapshot's copy in the
            # container is digested again, this version's way.
            want = st.fingerprint(name)
        differs = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
        jobs = [k for k in differs if written_by_jobs(site, k)]
        out.append({"site": site.name, "store": st.label, "ok": len(jobs) == len(differs),
                    "differs": [k for k in differs if k not in jobs], "jobs": jobs})
    return out
