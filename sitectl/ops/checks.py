"""Status (container state and readiness) and verify (deep health; it first finishes an
interrupted reset, the only change it makes)."""
from __future__ import annotations

import concurrent.futures

from sitectl import snapshots
from sitectl.engine import Engine
from sitectl.errors import VerifyFailed
from sitectl.progress import QUIET, Reporter
from sitectl.sites.probes import ProbeOutcome, probes_of, run_probe, run_probe_checked
from sitectl.stack import Site
from sitectl.stack.target import Target


def status(target: Target, sites: list[Site], engine: Engine) -> list[dict]:
    """Per site: container state, readiness (each ready probe once, no retry) and URL.

    Returns:
        ``[{"site", "container", "state", "healthy", "url", "detail", "failed"}]`` in stack
        order; ``state`` is ``missing`` when the container does not exist; ``failed`` names what
        failed: the probes, ``service <name>`` for a service container down, ``container``
        when the site's own container is missing or stopped.
    """
    engine.ping()

    def one(site: Site) -> dict:
        name = target.container(site)
        info = engine.container(name)
        row = {"site": site.name, "container": name, "state": info.status if info else "missing",
               "healthy": False, "url": target.url(site), "detail": ""}
        if info and info.running:
            outs = [run_probe(target, site, p, engine) for p in probes_of(target, site, "ready")]
            bad = [o for o in outs if not o.ok]
            # A service that is not running (the classifieds database) is named first.
            down = [(k, f"service {k}: container {c} is {si.status if si else 'missing'}")
                    for k in site.services for c in [target.service_container(site, k)]
                    for si in [engine.container(c)] if si is None or not si.running]
            row["healthy"] = not bad and not down
            row["detail"] = "; ".join([*(d for _, d in down), *(f"{o.probe}: {o.detail}" for o in bad)])
            row["failed"] = [f"service {k}" for k, _ in down] + [o.probe for o in bad]
        else:
            row["failed"], row["detail"] = ["container"], f"container {name} is {row['state']}"
        return row

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(sites))) as pool:
        return list(pool.map(one, sites))


def verify(target: Target, sites: list[Site], engine: Engine, raise_on_failure: bool = True) -> list[ProbeOutcome]:
    """Deep health of each site: every probe of its health-check file, once; a probe that
    fails is tried again (:func:`sitectl.sites.probes.run_probe_checked`), so the report tells a site
    that is down from one whose probe flaps (both fail).

    For WebArena's sites that is: the database answers inside the container, the login page
    renders, and a login by HTTP form passes WebArena's logged-in probe (``auto_login.py``).

    Returns:
        Every probe's outcome, site by site in stack order.

    Raises:
        VerifyFailed: at least one probe failed (when ``raise_on_failure``); the message
            lists each failing ``site/probe`` and its last response.
    """
    engine.ping()

    def one(site: Site) -> list[ProbeOutcome]:
        cname = target.container(site)
        info = engine.container(cname)
        if info is None:
            return [ProbeOutcome(site.name, "container", False,
                                 f"container {cname} is missing; next step: `sitectl up {site.name}`")]
        if not info.running:
            return [ProbeOutcome(site.name, "container", False,
                                 f"container {cname} is {info.status} (exit code {info.exit_code}; after an engine "
                                 f"restart, containers stay stopped); next step: `sitectl up {site.name}` starts it "
                                 "with its state, then `sitectl reset`")]
        return [run_probe_checked(target, site, p, engine) for p in probes_of(target, site)]

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(sites))) as pool:
        outcomes = [o for outs in pool.map(one, sites) for o in outs]
    bad = [o for o in outcomes if not o.ok]
    if bad and raise_on_failure:
        err = VerifyFailed("verify failed:\n" + "\n".join(f"  {o.site}/{o.probe}: {o.detail}" for o in bad))
        err.outcomes = outcomes  # type: ignore[attr-defined]
        raise err
    return outcomes


def verify_report(target: Target, sites: list[Site], engine: Engine, deep: bool = False, snapshot: str | None = None,
                  reporter: Reporter = QUIET) -> dict:
    """What ``sitectl verify`` reports (the CLI and :meth:`sitectl.Environment.verify`).

    First an interrupted reset is rolled forward (:func:`sitectl.snapshots.recover_pending`);
    with ``deep``, every store's fingerprints are compared with ``snapshot``'s (default golden) manifest before
    the probes run (their logins write sessions); then every probe (:func:`verify`).

    Returns:
        ``{"ok", "results": [probe outcome], "recovered": [reset row], "state": [store]
        (deep only)}``; never raises for a failed probe or store.

    Raises:
        UsageError: ``snapshot`` does not exist (deep); EngineError: no engine.
    """

    recovered = snapshots.recover_pending(target, engine, reporter)
    states = snapshots.verify_deep(target, sites, engine, snapshot or snapshots.GOLDEN) if deep else []
    outcomes = verify(target, sites, engine, raise_on_failure=False)
    res = {"ok": all(o.ok for o in outcomes) and all(s["ok"] for s in states),
           "results": [o.as_dict() for o in outcomes], "recovered": [r.as_dict() for r in recovered]}
    if deep:
        res["state"] = states
    return res
