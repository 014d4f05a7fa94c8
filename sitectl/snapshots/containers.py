"""Bringing a site's container up, as the snapshots see it: a container that is removed takes
its in-container snapshot copies with it, so the manifests stop listing the site at once."""
from __future__ import annotations

import datetime as dt

from sitectl.engine.base import Engine
from sitectl.progress import QUIET, Reporter
from sitectl.sites.containers import SiteUp, make_ready
from sitectl.snapshots.manifest import GOLDEN, forget_sites
from sitectl.stack.model import Site
from sitectl.stack.target import Target


def bring_up(target: Target, site: Site, engine: Engine, reporter: Reporter = QUIET,
             recreate: bool = False) -> SiteUp:
    """Start one site and make it ready (:func:`sitectl.sites.containers.make_ready`: its
    container, post-start steps, health probes); ``recreate`` removes the container first
    (WebArena's own reset). When a container is removed, every manifest of the instance stops
    listing the site, and golden's says why until golden is taken again (a re-create that fails
    later leaves that reason).

    Raises:
        UsageError: the running container was made for another host.
        PortInUse, ImageMissing, ContainerExited, StepFailed, ProbeTimeout, EngineError.
    """
    def forget(s: Site) -> None:
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        forget_sites(target, [s.name], only=GOLDEN, why=f"container re-created {now}; golden not taken again yet")
        forget_sites(target, [s.name], keep=GOLDEN)

    return make_ready(target, site, engine, reporter, recreate, on_remove=forget)
