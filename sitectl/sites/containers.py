"""A site's container: its run spec, its image (built or loaded), and bringing it up ready
(``docker run`` or start, post-start steps, health probes until they settle).

The operations above (``up``, a reset's re-create) reach :func:`make_ready` through
:func:`sitectl.snapshots.bring_up`, which keeps the snapshot manifests true when a container
is removed.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay

from sitectl.engine.base import Engine, RunSpec
from sitectl.errors import ImageMissing, ProbeTimeout, SitectlError, StackError, UsageError
from sitectl.progress import QUIET, Reporter
from sitectl.sites.probes import ProbeOutcome, probes_of, run_probe
from sitectl.stack.model import Site
from sitectl.stack.target import Target


def run_spec(target: Target, site: Site) -> RunSpec:
    """The container ``target`` runs for ``site`` (used by ``up``, ``reset`` and ``plan``)."""
    publish = tuple(
        (target.publish_address, target.host_port(site, i), target.container_port(site, i))
        for i in range(len(site.container_ports))
    )
    return RunSpec(
        name=target.container(site),
        image=target.image(site),
        publish=publish,
        command=tuple(site.command) if site.command else None,
        env={k: target.fill(v, site) for k, v in site.environment.items()},
        volumes=tuple(target.fill(v, site) for v in site.volumes),
        labels=target.labels(site),
        network=target.network,
    )


def service_spec(target: Target, site: Site, key: str) -> RunSpec:
    """The container ``target`` runs for service ``key`` of ``site`` (:class:`~sitectl.stack.model.Service`):
    on the instance's network under its aliases, no port published, labelled as the site's with
    ``sitectl.service``."""
    v = site.services[key]
    return RunSpec(
        name=target.service_container(site, key),
        image=target.image_ref(v.image),
        publish=(),
        command=tuple(v.command) if v.command else None,
        env={k: target.fill(x, site) for k, x in v.environment.items()},
        volumes=tuple(target.fill(x, site) for x in v.volumes),
        labels={**target.labels(site), SERVICE_LABEL: key},
        network=target.network,
        aliases=tuple(v.aliases),
        restart=v.restart,
    )


#: The label naming which service of its site a container is (absent on the site's own).
SERVICE_LABEL = "sitectl.service"


def post_start_argvs(target: Target, site: Site) -> list[tuple[str, list[str], float]]:
    """``(step name, argv, timeout)`` of each post-start step, placeholders filled."""
    return [(s.name, [target.fill(a, site) for a in s.exec], s.timeout) for s in site.post_start]


def step_container(target: Target, site: Site, step_name: str) -> str:
    """The container post-start step ``step_name`` of ``site`` runs in: its service's, or the site's."""
    step = next(s for s in site.post_start if s.name == step_name)
    return target.service_container(site, step.service) if step.service else target.container(site)


# -- images ------------------------------------------------------------------------------
SOURCE_LABEL = "sitectl.source"


def source_hash(target: Target, tag: str, _memo: dict | None = None) -> str:
    """SHA-256 of what image ``tag`` is built from: its ``inputs`` files (paths and contents,
    ``__pycache__`` skipped), its ``files`` from outside the context, its build args, and the
    source hashes of the images it requires.

    Raises:
        StackError: a ``files`` entry names a file that is not there.
    """

    memo = {} if _memo is None else _memo
    if tag in memo:
        return memo[tag]
    b = target.image_build(tag)
    base = Path(b.base_dir or Path(target.stack.path).parent)
    h = hashlib.sha256()
    h.update(json.dumps({k: target.image_ref(v) for k, v in b.args.items()}, sort_keys=True).encode())
    for inp in b.inputs or [str(Path(b.dockerfile).parent)]:
        root = base / inp
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for f in files:
            h.update(str(f.relative_to(base)).encode() + b"\0" + f.read_bytes() + b"\0")
    for name, path in sorted(_outside_files(target, b).items()):
        h.update(b"files\0" + name.encode() + b"\0" + path.read_bytes() + b"\0")
    for req in b.requires:
        h.update(source_hash(target, target.image_ref(req), memo).encode())
    memo[tag] = h.hexdigest()[:16]
    return memo[tag]


def _outside_files(target: Target, b) -> dict[str, Path]:
    """``b.files`` as context name -> existing file, paths resolved from the stack file's folder.

    Raises:
        StackError: a file is missing or not a regular file (named with the stack file and image).
    """
    base = Path(b.base_dir or Path(target.stack.path).parent)
    out = {}
    for name, rel in b.files.items():
        path = (base / rel).resolve()
        if not path.is_file():
            raise StackError(f"{target.stack.path}: image {b.tag}: files[{name!r}] = {rel!r} is not a file "
                             f"({path}); docs/stack-files.md ('files'; the mini replicas read the applications' "
                             "schemas from ../shared/data/schemas/ beside the checkout: docs/contracts.md, 'Real structure')")
        out[name] = path
    return out


def _build(target: Target, engine: Engine, b, tag: str, args: dict[str, str], labels: dict[str, str]) -> None:
    """``docker build`` one image; with ``files``, from a copy of the context that holds them."""
    base_dir = Path(b.base_dir or Path(target.stack.path).parent)
    context, dockerfile = base_dir / b.context, base_dir / b.dockerfile
    extra = _outside_files(target, b)
    if not extra:
        engine.build(tag, context, dockerfile, args, labels=labels)
        return
    with tempfile.TemporaryDirectory(prefix="sitectl-build-") as tmp:
        staged = Path(tmp) / "context"
        shutil.copytree(context, staged, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        for name, path in extra.items():
            dest = staged / name
            # The name must land in the copy as a new file: not through a link of the context,
            # not over one of its files or folders.
            if any(p.is_symlink() for p in [dest, *dest.parents] if p != staged and staged in p.parents) \
                    or dest.exists():
                raise StackError(f"{target.stack.path}: image {b.tag}: files[{name!r}] would replace or write through "
                                 f"{dest.relative_to(staged)} of the context {context}; name a new path")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        try:
            staged_file = staged / dockerfile.resolve().relative_to(context.resolve())
        except ValueError:
            staged_file = dockerfile
        engine.build(tag, staged, staged_file, args, labels=labels)


def _current(target: Target, engine: Engine, tag: str, memo: dict) -> bool:
    """True when ``tag`` exists and, if the stack builds it, was built from today's sources.

    An image whose ``files`` are not here (a machine without ``../shared/data/schemas/``) is
    used as it is: its sources cannot be compared, and it is the only copy there is.
    """
    if not engine.image_exists(tag):
        return False
    b = target.image_build(tag)
    if b is None:
        return True
    try:
        return engine.image_label(tag, SOURCE_LABEL) == source_hash(target, tag, memo)
    except StackError:
        return True


def ensure_images(target: Target, sites: list[Site], engine: Engine, reporter: Reporter = QUIET,
                  build: bool = True, force: bool = False) -> list[str]:
    """Make sure every image ``sites`` need is present; build the ones the stack can build.

    Builds run in the stack's ``images`` order (a replica builds on the runtime image). An
    image built from other sources than today's (label ``sitectl.source``) counts as missing.

    Returns:
        The tags built.

    Raises:
        ImageMissing: an image is absent and the stack cannot build it (it names the
            archive to load with ``sitectl images load DIR``), or ``build`` is False.
        StackError: an image to build names a ``files`` entry that is missing, or one that
            would replace or write through a file or link of its context.
        EngineError: a build failed (with its last output).
    """
    st = target.stack
    memo: dict = {}
    # (who, image tag, archive file) of each site and each of its services.
    wanted = [(f"site {s.name!r}", target.image(s), s.image_archive) for s in sites]
    wanted += [(f"site {s.name!r} (service {k!r})", target.image_ref(v.image), v.image_archive)
               for s in sites for k, v in s.services.items()]
    missing = [w for w in wanted if force or not _current(target, engine, w[1], memo)]
    for who, tag, archive in missing:
        if target.image_build(tag) is None:
            how = (f"load it with `sitectl images load DIR --stack {st.name}` (DIR holding {archive})"
                   if archive else f"pull or load it first (`docker pull {tag}` where a registry is reachable)")
            raise ImageMissing(f"{who}: image {tag} is missing; {how}")
        if not build:
            raise ImageMissing(f"{who}: image {tag} is missing; build it with `sitectl build`")
    # What to build: the missing images, plus what they require that is absent (or all, forced).
    todo: set[str] = set()

    def want(tag: str) -> None:
        b = target.image_build(tag)
        if b is None or tag in todo:
            return
        todo.add(tag)
        for req in map(target.image_ref, b.requires):
            if force or not _current(target, engine, req, memo):
                want(req)

    for _, tag, _ in missing:
        want(tag)
    built = []
    for b in st.images:  # stack order: requirements come first
        tag = target.image_ref(b.tag)
        if tag not in todo:
            continue
        reporter.step("build", f"building {tag} (docker build, legacy builder)")
        args = {k: target.image_ref(v) for k, v in b.args.items()}
        _build(target, engine, b, tag, args, labels={SOURCE_LABEL: source_hash(target, tag, memo)})
        built.append(tag)
        reporter.step("build", f"built {tag}")
    return built


def load_archives(target: Target, directory: Path, engine: Engine, reporter: Reporter = QUIET) -> list[dict]:
    """``docker load`` each site's official archive found in ``directory``.

    Returns:
        One entry per site with an ``image_archive``: ``{"site", "archive", "status"}`` where
        status is ``loaded``, ``present`` (image already there) or ``missing`` (no file).

    Raises:
        UsageError: ``directory`` is not a folder. EngineError: an archive failed to load.
    """
    if not directory.is_dir():
        raise UsageError(f"{directory}: not a directory")
    out = []
    for s in target.stack.sites.values():
        if not s.image_archive:
            continue
        f = directory / s.image_archive
        if engine.image_exists(target.image(s)):
            out.append({"site": s.name, "archive": str(f), "status": "present"})
        elif not f.is_file():
            out.append({"site": s.name, "archive": str(f), "status": "missing"})
        else:
            with reporter.bytes_bar(s.name, f"docker load {f.name}", f.stat().st_size) as update:
                engine.load_archive(f, on_bytes=update)
            reporter.step(s.name, f"loaded {target.image(s)}")
            out.append({"site": s.name, "archive": str(f), "status": "loaded"})
    return out


# -- bringing sites up -------------------------------------------------------------------
@dataclass
class SiteUp:
    """What ``up``/``reset`` did for one site."""

    site: str
    container: str
    url: str
    action: str  # created, started, kept, recreated
    seconds: float

    def as_dict(self) -> dict:
        return self.__dict__.copy()


#: A ready probe counts as passed after this many passes in a row, :data:`SETTLE_GAP` seconds
#: apart: a site whose probe flaps (GitLab's 502s while its workers restart) is not ready.
SETTLE_PASSES = 3
SETTLE_GAP = 0.2


def _wait(target: Target, site: Site, engine: Engine, level_types: tuple[str, ...]) -> None:
    """Retry the ready probes of the given types until each passes :data:`SETTLE_PASSES` times
    in a row, or ``start_timeout`` ends.

    Raises:
        ContainerExited: the container stopped (with its last log lines); not retried.
        ProbeTimeout: a probe never settled; the message names it, its last response, and
            whether it flapped (passed sometimes, never enough times in a row).
    """
    name = target.container(site)
    for probe in [p for p in probes_of(target, site, "ready") if p.type in level_types]:
        last: list[ProbeOutcome] = []
        # Failures before the first pass are a slow start; only those after it are flapping.
        tally = {"streak": 0, "passed": 0, "tries": 0, "failure": ""}

        def attempt() -> bool:
            engine.assert_running(name, site.name)
            for k, v in site.services.items():
                if v.restart == "no":  # one that restarts itself may be between two runs
                    engine.assert_running(target.service_container(site, k), f"{site.name} (service {k})")
            o = run_probe(target, site, probe, engine)
            last[:] = [o]
            tally["tries"] += 1
            if not o.ok and tally["passed"]:
                tally["failure"] = o.detail
            tally["passed"] += o.ok
            tally["streak"] = tally["streak"] + 1 if o.ok else 0
            return tally["streak"] >= SETTLE_PASSES

        def gap(state) -> float:  # quick re-checks while it passes, backing off while it fails
            return SETTLE_GAP if tally["streak"] else min(2.0, 0.1 * 2 ** min(state.attempt_number, 5))

        try:
            Retrying(
                stop=stop_after_delay(site.start_timeout),
                wait=gap,
                retry=retry_if_result(lambda ok: not ok),
                reraise=True,  # ContainerExited is raised at once, not retried
            )(attempt)
        except RetryError:
            detail = last[0].detail if last else "no response"
            if tally["passed"] and tally["failure"]:
                why = (f"probe {probe.name!r} flaps: passed {tally['passed']} of {tally['tries']} tries in "
                       f"{site.start_timeout:g} s, never {SETTLE_PASSES} in a row; last failure: {tally['failure']}")
            elif tally["passed"]:
                why = (f"probe {probe.name!r} started passing only at the end of the {site.start_timeout:g} s "
                       f"({tally['streak']} pass(es) in a row, {SETTLE_PASSES} needed): raise the site's start_timeout")
            else:
                why = f"probe {probe.name!r} did not pass within {site.start_timeout:g} s; last response: {detail}"
            raise ProbeTimeout(site.name, why) from None


def _remove_services(target: Target, site: Site, engine: Engine, reporter: Reporter, strays: list[str] = ()) -> None:
    """Remove ``site``'s service containers (and ``strays``: service containers of the site the
    stack no longer names) with their anonymous volumes (a database image's ``VOLUME``: the next
    start is a fresh server, as the site's re-creation needs)."""
    for k, c in [*((k, target.service_container(site, k)) for k in site.services), *(("stray", c) for c in strays)]:
        if engine.container(c) is not None:
            reporter.step(site.name, f"removing container {c} (service {k})")
            engine.remove(c, volumes=True)
        elif engine.keeps_data_when_absent(c):
            # Not running now (a Swarm task between two restarts, a pod's container the
            # kubelet is starting again), but its data outlives it in volumes: the engine
            # waits for it and empties them, or fails.
            reporter.step(site.name, f"emptying what container {c} keeps (service {k})")
            engine.remove(c, volumes=True)


def make_ready(target: Target, site: Site, engine: Engine, reporter: Reporter = QUIET,
               recreate: bool = False, *, on_remove: Callable[[Site], None]) -> SiteUp:
    """Start one site and make it ready: run its container, post-start steps, wait on probes.

    Idempotent: a running container of this instance made for the same host is kept
    (its probes are still waited on); a stopped one is started again; ``recreate`` removes
    it first (WebArena's own reset). The site's services (``services`` in the stack file) are
    started before it and share its fate: re-created with it, and a service that is gone or
    changed re-creates the site too. ``on_remove(site)`` is called right after an old
    container is removed (its in-container snapshot copies went with it): callers use
    :func:`sitectl.snapshots.bring_up`, which records that in the manifests.

    Raises:
        UsageError: the running container was made for another host.
        PortInUse, ImageMissing, ContainerExited, StepFailed, ProbeTimeout, EngineError.
    """

    t0 = time.monotonic()
    name = target.container(site)
    info = engine.container(name)
    if info is not None and not recreate:
        if info.labels.get("sitectl.site") != site.name or info.labels.get("sitectl.instance") != str(target.instance):
            raise UsageError(
                f"site {site.name!r}: a container named {name!r} exists and is not this instance's "
                "(no sitectl labels); remove it or use another --instance"
            )
        if info.labels.get("sitectl.host") != target.host:
            raise UsageError(
                f"site {site.name!r} runs for host {info.labels.get('sitectl.host')!r}, not {target.host!r}; "
                f"use --host {info.labels.get('sitectl.host')}, or `sitectl down` then `sitectl up --host {target.host}`"
            )
        running = info.labels.get("sitectl.site_hosts") == "1"
        if running != target.site_hosts:
            flag = "--site-hosts" if running else "--no-site-hosts"
            raise UsageError(
                f"site {site.name!r} runs with site host names {'on' if running else 'off'}, not "
                f"{'on' if target.site_hosts else 'off'}; use {flag}, or `sitectl down` then `sitectl up` with the other"
            )
    rebuilt = info is not None and info.image_id and info.image_id != engine.image_id(target.image(site))
    # The site and its services are one unit (their state is one golden state: the classifieds
    # database is in its service): a service that is gone, or runs another image than the stack
    # names, re-creates the whole site, and services left without their site are removed.
    services = {k: (target.service_container(site, k), target.image_ref(v.image)) for k, v in site.services.items()}
    svc_info = {k: engine.container(c) for k, (c, _) in services.items()}
    if info is not None and not recreate:
        for k, (c, _) in services.items():
            if svc_info[k] is None and engine.keeps_data_when_absent(c):
                # On a cluster a service between two restarts is not gone: its data is in its
                # volumes. Wait for it (the engine's start) rather than re-create the site.
                reporter.step(site.name, f"waiting for container {c} (service {k}) to run again")
                try:
                    engine.start(c)
                except SitectlError as e:
                    reporter.step(site.name, f"container {c} did not run again ({e}): re-creating the site")
                svc_info[k] = engine.container(c)
    for k, i in svc_info.items():
        if i is not None and (i.labels.get("sitectl.site") != site.name or i.labels.get(SERVICE_LABEL) != k
                              or i.labels.get("sitectl.instance") != str(target.instance)):
            raise UsageError(f"site {site.name!r}: a container named {services[k][0]!r} exists and is not this "
                             f"instance's service {k!r} (no sitectl labels); remove it or use another --instance")
    # Service containers of this site that the stack no longer names (a renamed service): they
    # would still answer to the site's aliases.
    strays = [c.name for c in engine.containers({"sitectl.instance": str(target.instance), "sitectl.site": site.name,
                                                 SERVICE_LABEL: None})
              if c.name not in {n for n, _ in services.values()}]
    svc_stale = [k for k, i in svc_info.items() if i is None or i.image != services[k][1]
                 or (i.image_id and i.image_id != engine.image_id(services[k][1]))]
    if info is not None and (recreate or info.image != target.image(site) or rebuilt or svc_stale or strays):
        why = (" (its image was rebuilt)" if rebuilt and not recreate else
               f" (service {svc_stale[0]!r} is gone or changed)" if svc_stale and not recreate else
               f" (its services changed: {', '.join(strays)} is no longer one)" if strays and not recreate else "")
        reporter.step(site.name, f"removing container {name}" + why)
        engine.remove(name)
        on_remove(site)  # before the services: if emptying one fails, golden no longer lists the site
        _remove_services(target, site, engine, reporter, strays)
        info, svc_info = None, dict.fromkeys(services)
    elif info is None and (any(svc_info.values()) or strays
                           or any(engine.keeps_data_when_absent(c) for c, _ in services.values())):
        # The site is gone: its services' state goes too (on a cluster also that of a service
        # not running now: Swarm between two tasks, the kubelet restarting it).
        on_remove(site)
        _remove_services(target, site, engine, reporter, strays)
        svc_info = dict.fromkeys(services)
    action = "kept"
    spec = run_spec(target, site)
    if info is None:
        engine.check_ports_free(spec, site.name)
        for k in site.services:
            reporter.step(site.name, f"docker run {services[k][1]} as {services[k][0]} (service {k})")
            engine.run(service_spec(target, site, k))
        reporter.step(site.name, f"docker run {target.image(site)} as {name}")
        engine.run(spec)
        action = "recreated" if recreate else "created"
    else:
        for k, i in svc_info.items():
            if i is not None and not i.running:
                reporter.step(site.name, f"docker start {services[k][0]} (service {k})")
                engine.start(services[k][0])
                action = "started"
        if not info.running:
            reporter.step(site.name, f"docker start {name}")
            engine.start(name)
            action = "started"
    if action != "kept":
        # Services inside answer (exec probes), then post-start steps, then HTTP readiness.
        _wait(target, site, engine, ("exec",))
        for step_name, argv, timeout in post_start_argvs(target, site):
            reporter.step(site.name, f"post-start: {step_name}")
            engine.exec_checked(step_container(target, site, step_name), argv,
                                f"site {site.name!r} post-start step {step_name!r}", timeout)
    reporter.step(site.name, "waiting for health probes")
    _wait(target, site, engine, ("exec", "http"))
    reporter.step(site.name, f"ready at {target.url(site)}")
    return SiteUp(site.name, name, target.url(site), action, round(time.monotonic() - t0, 2))
