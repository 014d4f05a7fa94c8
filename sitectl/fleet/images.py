"""The fleet's images: the agent image (stacks/agent/Dockerfile, built here from this checkout)
and the copy of every image a node needs to each node's engine (``docker save | docker load``,
no registry).
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sitectl.engine import Engine
from sitectl.engine.swarm import copy_images, engine_at
from sitectl.errors import ImageMissing, SitectlError, UsageError
from sitectl.fleet.spec import AGENT_BASE, AGENT_IMAGE, ClusterSpec
from sitectl.paths import REPO_ROOT
from sitectl.progress import QUIET, Reporter
from sitectl.sites.containers import SOURCE_LABEL, ensure_images
from sitectl.stack import Site
from sitectl.stack.target import Target


def agent_source_hash() -> str:
    """SHA-256 (16 hex) of what the agent image holds: sitectl's code, pyproject, the stack
    files and health checks."""
    root = REPO_ROOT
    h = hashlib.sha256()
    for sub in ("sitectl", "stacks", "healthchecks", "pyproject.toml", "README.md"):
        p = root / sub
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts
                                              and not f.name.endswith(".pyc"))
        for f in files:
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build_agent_image(engine: Engine, reporter: Reporter = QUIET, tag: str = AGENT_IMAGE) -> bool:
    """Build the agent image (stacks/agent/Dockerfile) unless it is current: sitectl and its
    Python dependencies as wheels (``pip wheel``, built here), Debian's python3 and docker CLI,
    the stack files. True when it was built.

    Raises:
        EngineError: the build failed; SitectlError: ``pip wheel`` failed.
    """
    want = agent_source_hash()
    if engine.image_exists(tag) and engine.image_label(tag, SOURCE_LABEL) == want:
        return False
    if not engine.image_exists(AGENT_BASE):
        raise ImageMissing(f"the agent image builds on {AGENT_BASE}: build it first (`sitectl build`)")
    root = REPO_ROOT
    with tempfile.TemporaryDirectory(prefix="sitectl-agent-") as tmp:
        ctx = Path(tmp)
        reporter.step("build", "pip wheel sitectl and its dependencies (for the agent image)")
        src = ctx / "src"
        src.mkdir()
        for sub in ("sitectl", "pyproject.toml", "README.md"):
            p = root / sub
            (shutil.copytree(p, src / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
             if p.is_dir() else shutil.copy2(p, src / sub))
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(ctx / "wheels"), str(src)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SitectlError(f"pip wheel for the agent image failed: {r.stderr.strip()[-1500:]}")
        shutil.rmtree(src)
        for sub in ("stacks", "healthchecks"):
            shutil.copytree(root / sub, ctx / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copy2(root / "stacks" / "agent" / "Dockerfile", ctx / "Dockerfile")
        reporter.step("build", f"building {tag} (docker build, legacy builder)")
        engine.build(tag, ctx, ctx / "Dockerfile", {}, labels={SOURCE_LABEL: want})
    return True


def check_persist(target: Target, sites: list[Site], engine: Engine,
                  absent: str = "copy it with `sitectl cluster push-images`") -> None:
    """Refuse a service image whose ``VOLUME`` paths are not all in its stack-file ``persist``
    list: on a cluster a restarted service is a new container, which would start those paths
    empty (a restart on one host keeps them). Run by ``push-images`` on the images it copies,
    and by the Swarm agent on its node's.

    Raises:
        ImageMissing: a service image is not on ``engine`` (``absent`` says what to do).
        UsageError: naming the site, the service and the paths.
    """
    for s in sites:
        for k, v in s.services.items():
            tag = target.image_ref(v.image)
            if not engine.image_exists(tag):
                raise ImageMissing(f"site {s.name!r} service {k!r}: image {tag} is not here; {absent}")
            missing = sorted(set(engine.image_volumes(tag)) - set(v.persist))
            if missing:
                raise UsageError(f"site {s.name!r} service {k!r}: its image {tag} keeps {', '.join(missing)} (VOLUME) "
                                 f"but the stack file's services.{k}.persist does not list it: add it there")


def fleet_images(spec: ClusterSpec) -> list[str]:
    """Every image a node of the fleet needs: the sites' images, their service containers'
    and the agent's (which also empties a service's volumes when a site is re-created)."""
    t = spec.target(0, "localhost")
    sites = spec.chosen_sites(t)
    return sorted({t.image(s) for s in sites} | {t.image_ref(v.image) for s in sites for v in s.services.values()}
                  | {spec.agent_image})


def push_images(spec: ClusterSpec, source: Engine, nodes: list[str], reporter: Reporter = QUIET,
                build: bool = True) -> list[dict]:
    """Make the fleet's images present on every node engine in ``nodes`` (URLs such as
    ``tcp://10.0.0.5:2375`` or ``ssh://root@node``): built here when missing (``build``),
    then ``docker save`` streamed into each node's ``docker load``. No registry.

    Returns:
        ``[{"node", "copied": [tag], "seconds"}]``.

    Raises:
        ImageMissing, EngineError.
    """
    t = spec.target(0, "localhost")
    if build:
        ensure_images(t, spec.chosen_sites(t), source, reporter)
        build_agent_image(source, reporter, spec.agent_image)
    check_persist(t, spec.chosen_sites(t), source,
                  absent="build or load it here first (`push-images` without --no-build, `sitectl images load`)")
    tags = fleet_images(spec)
    t0 = time.monotonic()
    engines = []
    for url in nodes:
        dst = engine_at(url)
        dst.ping()
        engines.append(dst)
    reporter.step("images", f"docker save | docker load into {len(nodes)} node(s): {', '.join(tags)}")
    done: dict[int, float] = {}

    def finished(i: int, copied: list[str]) -> None:
        done[i] = round(time.monotonic() - t0, 1)
        reporter.step("images", f"{nodes[i]}: {len(copied)} image(s) copied, {len(tags) - len(copied)} present")

    copied = copy_images(source, engines, tags, on_node=finished)
    return [{"node": url, "copied": copied[i], "seconds": done.get(i)} for i, url in enumerate(nodes)]
