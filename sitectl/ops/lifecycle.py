"""Operations that change an instance's containers: ``up`` (with its golden snapshot), ``down``
and WebArena's own reset by re-creating them. One site's container mechanics (run spec, images,
readiness) live in :mod:`sitectl.sites.containers`."""
from __future__ import annotations

import concurrent.futures

from sitectl import snapshots
from sitectl.engine.base import Engine
from sitectl.errors import SitectlError, UsageError
from sitectl.ops import doctor
from sitectl.paths import state_dir
from sitectl.progress import QUIET, Reporter
from sitectl.sites.containers import SERVICE_LABEL, SiteUp, ensure_images
from sitectl.snapshots.journal import clear_journal, instance_lock
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores import stores_for


def up(target: Target, sites: list[Site], engine: Engine, reporter: Reporter = QUIET,
       build: bool = True, recreate: bool = False, check_images: bool = True) -> list[SiteUp]:
    """Bring ``sites`` up (all concurrently after their containers start).

    ``check_images``: make sure the images are present and current first (off for a sidecar
    agent in a Kubernetes pod, whose images the kubelet pulled and no engine can inspect).

    Returns:
        One :class:`SiteUp` per site, in stack order.

    Raises:
        The first error of any site, after the other sites finished their own bring-up
        (a failed site's container is left for ``sitectl status`` and its logs).
    """
    engine.ping()
    with instance_lock(target, "up"):
        return _up(target, sites, engine, reporter, build, recreate, check_images)


def _up(target: Target, sites: list[Site], engine: Engine, reporter: Reporter, build: bool,
        recreate: bool, check_images: bool = True) -> list[SiteUp]:
    if snapshots.manifest_path(target, snapshots.GOLDEN).is_file():
        snapshots.read_manifest(target, snapshots.GOLDEN)  # damaged: refused before any container changes
    if check_images:
        ensure_images(target, sites, engine, reporter, build=build)
    engine.ensure_network(target.network, target.labels())
    results: dict[str, SiteUp] = {}
    errors: list[BaseException] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(sites))) as pool:
        futs = {pool.submit(snapshots.bring_up, target, s, engine, reporter, recreate): s for s in sites}
        for f in concurrent.futures.as_completed(futs):
            try:
                results[futs[f].name] = f.result()
            except BaseException as e:  # noqa: BLE001 - re-raised below
                errors.append(e)
    if not errors:
        # The golden snapshot: taken right after the post-start steps of a new container, or
        # when a kept container has none yet.
        fresh = [s for s in sites if results[s.name].action in ("created", "recreated")]
        try:
            golden = snapshots.read_manifest(target, snapshots.GOLDEN)
            have, incomplete = set(golden["sites"]), dict(golden.get("incomplete") or {})
        except UsageError:
            have, incomplete = set(), {}
        # A kept container whose golden copy failed or was interrupted may hold any state: its
        # golden is not re-taken from it (`reset` re-creates it from its image).
        for s in sites:
            if s.stores and s not in fresh and s.name in incomplete:
                reporter.step(s.name, f"golden snapshot is incomplete ({incomplete[s.name]}); "
                              f"`sitectl reset {s.name}` re-creates it from its image")
        missing = [s for s in sites if s.stores and s not in fresh and s.name not in have and s.name not in incomplete]
        missing = [s for s in missing if not _holds_unlisted_golden(target, s, engine, reporter)]
        todo = [s for s in fresh + missing if s.stores]
        if todo:
            # Golden only from containers that offer what the stores assume (sitectl.ops.doctor):
            # refused with the report, the containers left as the images and post-start steps
            # made them; after the fix, `up` again takes golden from them.
            reporter.step("doctor", f"checking {', '.join(s.name for s in todo)} before golden")
            doctor.require(target, todo, engine)
            reporter.step("snapshot", f"golden snapshot of {', '.join(s.name for s in todo)}")
            snapshots.create(target, snapshots.GOLDEN, todo, engine)
    if errors:
        if len(errors) > 1 and all(isinstance(e, SitectlError) for e in errors):
            # One error naming every site that failed, with the first one's exit code.
            errors[0].args = ("\n".join(str(e) for e in errors),)
        raise errors[0]
    return [results[s.name] for s in sites]


def _holds_unlisted_golden(target: Target, site: Site, engine: Engine, reporter: Reporter) -> bool:
    """True (and says so) when a kept container already holds golden copies that no manifest
    lists: the manifests are elsewhere (``SITECTL_SNAPSHOTS_DIR``) or an ``up`` was interrupted.
    Its live state may be anything since, so golden is not re-taken from it."""
    if not any(st.exists(snapshots.GOLDEN) for st in stores_for(site, target.container(site), engine) if st.kind != "cache"):
        return False
    reporter.step(site.name, f"holds a golden snapshot that no manifest in {state_dir()} lists: not re-taken. "
                  "If the snapshots live elsewhere, set SITECTL_SNAPSHOTS_DIR; else `sitectl reset --recreate "
                  f"{site.name}` (a copy left by an interrupted `up`)")
    return True


def reset_recreate(target: Target, sites: list[Site], engine: Engine, reporter: Reporter = QUIET,
                   wait: bool | float = True) -> list[SiteUp]:
    """WebArena's reset: re-create each site's container from its image and re-run its
    post-start steps (research/webarena-official.md §5.1). Slow, always correct. Holds the
    instance lock (``wait``: see :func:`sitectl.snapshots.journal.instance_lock`)."""
    with instance_lock(target, "reset --recreate", wait):
        return up(target, sites, engine, reporter, build=False, recreate=True)


def down(target: Target, engine: Engine, volumes: bool = False, reporter: Reporter = QUIET) -> list[str]:
    """Remove every container of the instance (by label) and its network.

    Returns:
        The names of the containers removed.
    """
    engine.ping()
    with instance_lock(target, "down"):
        removed = _down(target, engine, volumes, reporter)
        clear_journal(target)  # nothing is left to roll forward
    return removed


def _down(target: Target, engine: Engine, volumes: bool, reporter: Reporter) -> list[str]:
    removed = []
    for c in engine.containers({"sitectl.instance": str(target.instance)}):
        reporter.step(c.labels.get("sitectl.site", c.name), f"removing {c.name}")
        # A service's anonymous volumes (a database image's VOLUME) go with it: the next `up`
        # starts that server empty from its image, and nothing is left behind per down.
        engine.remove(c.name, volumes=volumes or SERVICE_LABEL in c.labels)
        removed.append(c.name)
    engine.remove_network(target.network)
    snapshots.forget_sites(target, list(target.stack.sites))  # the snapshots went with the containers
    return removed
