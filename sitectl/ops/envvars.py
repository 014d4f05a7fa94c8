"""``sitectl env``: the environment variables WebArena and BrowserGym read; ``sitectl hosts``:
whether this machine resolves the sites' host names, and the ``/etc/hosts`` lines if not.

Harnesses run ``sitectl env`` in loops, so its answer is remembered (:func:`running_env_vars`):
a memo entry is keyed by everything the answer is computed from and checked against the
stack's files on every use, so it is never stale; the stack model (pydantic) is imported only
on a miss.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path

from sitectl.engine.base import Engine
from sitectl.engine.recorded import TargetInputs, target_inputs
from sitectl.hostnames import is_localhost_name, system_resolves
from sitectl.paths import cache_dir
from sitectl.stack.target import Target
from sitectl.version import __version__

#: BrowserGym's names (browsergym-webarena ``instance.py``; research/peers.md §1.3).
BROWSERGYM_PREFIX = "WA_"
FORMATS = ("webarena", "browsergym", "dotenv")


def env_vars(target: Target, fmt: str = "webarena") -> dict[str, str]:
    """Variables for ``fmt``.

    ``webarena``: SHOPPING, SHOPPING_ADMIN (with ``/admin``), REDDIT, GITLAB, MAP, WIKIPEDIA
    (the landing page's full path), HOMEPAGE, as WebArena's ``browser_env/env_config.py``
    reads them (research/webarena-official.md §2). ``browsergym``: the same with the ``WA_``
    prefix. ``dotenv``: both sets. Scheme included, no trailing slash.
    """
    base = {s.env_var: target.url(s) for s in target.stack.sites.values()}
    if fmt == "webarena":
        return base
    bg = {BROWSERGYM_PREFIX + k: v for k, v in base.items()}
    if fmt == "browsergym":
        return bg
    return {**base, **bg}


def env_text(values: dict[str, str], fmt: str) -> str:
    """Render variables: ``export K=V`` lines for webarena/browsergym, ``K=V`` for dotenv."""
    prefix = "" if fmt == "dotenv" else "export "
    return "\n".join(f"{prefix}{k}={shlex.quote(v)}" for k, v in values.items())


def host_names(target: Target) -> dict:
    """The sites' host names and whether this machine's resolver knows each.

    Browsers resolve ``localhost`` and every name under it to loopback themselves (RFC 6761
    §6.3), and so does sitectl (:mod:`sitectl.http`); other clients, such as the
    ``requests`` calls of WebArena's evaluators, ask the system, which on Debian knows them only
    with ``libnss-myhostname`` installed or with ``/etc/hosts`` lines.

    Returns:
        ``{"hosts": {site: name}, "unresolved": [name], "lines": ["127.0.0.1 name ..."]}``;
        ``lines`` are the ``/etc/hosts`` lines for the unresolved ``*.localhost`` names (other
        names belong in DNS and get no line).
    """
    names = {n: target.site_host(s) for n, s in target.stack.sites.items()}
    unresolved = sorted({h for h in names.values() if not system_resolves(h)})
    local = [h for h in unresolved if is_localhost_name(h)]
    return {"hosts": names, "unresolved": unresolved, "lines": [f"127.0.0.1 {' '.join(local)}"] if local else []}


#: Environment variables the answer depends on besides the command's options: where the
#: config file and the shipped stack and health-check files are.
_ENV_INPUTS = ("SITECTL_CONFIG", "SITECTL_STACKS_DIR", "SITECTL_HEALTHCHECKS_DIR")


def running_env_vars(engine: Engine, fmt: str = "webarena", **options) -> dict[str, str]:
    """:func:`env_vars` of the running target (:func:`~sitectl.engine.recorded.running_target`
    with ``options``), from the memo in ``<cache dir>/env/`` when an entry matches.

    An entry's key is a SHA-256 of: sitectl's version and the path, size and modification
    time of every module of the ``sitectl`` package (a changed source is a new key), the
    working directory (relative paths), the variables in :data:`_ENV_INPUTS`, the options,
    the config file's contents and the labels the instance's containers carry now (looked up on
    every call). An entry holds the SHA-256 of every file the stack was made from, of the
    bytes the loader read (``Stack.sources``); one that differs now, is missing or is unreadable makes the entry a miss.
    Only answers are remembered, never errors; a cache folder that cannot be written is
    no error (every call is then a miss).

    Raises:
        UsageError, sitectl.errors.StackError: as
            :func:`~sitectl.engine.recorded.running_target`.
    """
    inputs = target_inputs(engine, **options)
    path = cache_dir() / "env" / f"{_memo_key(inputs, fmt)}.json"
    values = _memo_read(path)
    if values is None:
        target = inputs.resolve()
        values = env_vars(target, fmt)
        _memo_write(path, target.stack.sources, values)
    return values


def _memo_key(inputs: TargetInputs, fmt: str) -> str:
    code = []
    package = Path(__file__).resolve().parents[1]
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            st = os.stat(os.path.join(folder, name))
            code.append([os.path.relpath(os.path.join(folder, name), package), st.st_size, st.st_mtime_ns])
    key = {"version": __version__, "code": code, "cwd": os.getcwd(), "fmt": fmt,
           "env": {k: os.environ.get(k) for k in _ENV_INPUTS}, "options": inputs.options, "config": inputs.config,
           "recorded": [inputs.recorded_host, inputs.recorded_site_hosts]}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()


def _file_sha256(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _memo_read(path: Path) -> dict[str, str] | None:
    """The values of the entry at ``path`` when it is whole and every source file it names
    still has the recorded SHA-256; else None."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict):
        return None
    sources, values = entry.get("sources"), entry.get("values")
    if not (isinstance(sources, dict) and sources and isinstance(values, dict)
            and all(isinstance(v, str) for v in (*sources.values(), *values.keys(), *values.values()))):
        return None
    if any(_file_sha256(f) != digest for f, digest in sources.items()):
        return None
    return values


def _memo_write(path: Path, sources: dict[str, str], values: dict[str, str]) -> None:
    """Write the entry atomically (a temporary file renamed over it, so a concurrent reader sees
    the old entry or the new one); a folder that cannot be written is left alone."""
    if not sources:
        return
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"sources": sources, "values": values}, f)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
