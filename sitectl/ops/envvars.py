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
import stat
from pathlib import Path

from sitectl.engine.base import Engine
from sitectl.engine.recorded import TargetInputs, target_inputs
from sitectl.hostnames import is_localhost_name, system_resolves
from sitectl.ops import task_formats
from sitectl.paths import cache_dir
from sitectl.stack.target import Target
from sitectl.version import __version__

#: BrowserGym's names (browsergym-webarena ``instance.py``; research/peers.md §1.3).
BROWSERGYM_PREFIX = "WA_"
#: BrowserGym's VisualWebArena names (browsergym-visualwebarena ``instance.py``: each copied to
#: the unprefixed name; research/family-formats.md §1.8).
BROWSERGYM_VWA_PREFIX = "VWA_"
#: The variables VisualWebArena's ``env_config.py`` reads (family-formats.md §1.3, §1.8).
VWA_NAMES = ("SHOPPING", "REDDIT", "WIKIPEDIA", "HOMEPAGE", "CLASSIFIEDS", "CLASSIFIEDS_RESET_TOKEN")
FORMATS = ("webarena", "browsergym", "dotenv", "visualwebarena", "browsergym-visualwebarena")


def env_vars(target: Target, fmt: str = "webarena") -> dict[str, str]:
    """Variables for ``fmt``.

    ``webarena``: SHOPPING, SHOPPING_ADMIN (with ``/admin``), REDDIT, GITLAB, MAP, WIKIPEDIA
    (the landing page's full path), HOMEPAGE, and CLASSIFIEDS where the stack has it, as
    WebArena's ``browser_env/env_config.py`` reads them (research/webarena-official.md §2).
    ``browsergym``: the same with the ``WA_`` prefix. ``dotenv``: both sets.
    ``visualwebarena``: VisualWebArena's own: SHOPPING, REDDIT, WIKIPEDIA (the bare Kiwix
    origin: VWA's tasks carry the path), HOMEPAGE, CLASSIFIEDS and CLASSIFIEDS_RESET_TOKEN (the
    classifieds container's ``RESET_TOKEN``), those of them the stack has.
    ``browsergym-visualwebarena``: the same with the ``VWA_`` prefix. Scheme included, no
    trailing slash.
    """
    base = {s.env_var: target.url(s) for s in target.stack.sites.values()}
    if fmt in ("visualwebarena", "browsergym-visualwebarena"):
        vwa = task_formats.variables(task_formats.VISUALWEBARENA, base)  # the bare Kiwix origin
        for s in target.stack.sites.values():
            if s.kind.value == "osclass" and "RESET_TOKEN" in s.environment:
                vwa[f"{s.env_var}_RESET_TOKEN"] = target.fill(s.environment["RESET_TOKEN"], s)
        vwa = {k: vwa[k] for k in VWA_NAMES if k in vwa}
        return vwa if fmt == "visualwebarena" else {BROWSERGYM_VWA_PREFIX + k: v for k, v in vwa.items()}
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
#: Entries kept; writing one more removes the oldest (by modification time).
MEMO_ENTRIES = 256
#: Bytes an entry may have (a real one has a few hundred); a bigger file is no entry.
MEMO_MAX_BYTES = 1 << 20


def running_env_vars(engine: Engine, fmt: str = "webarena", **options) -> dict[str, str]:
    """:func:`env_vars` of the running target (:func:`~sitectl.engine.recorded.running_target`
    with ``options``), from the memo in ``<cache dir>/env/`` when an entry matches.

    An entry's key is a SHA-256 of: sitectl's version, where its package is, and the path,
    size, inode, modification and change times of every module of the package (a changed
    source is a new key, also one copied with its times kept), the working directory and the
    data folder resolved, the variables in :data:`_ENV_INPUTS`, the options, the config
    file's contents and the labels the instance's containers carry now (looked up on every
    call). An entry holds, for every file the stack was made from (``Stack.sources``), the
    path it resolved to and the SHA-256 of the bytes read; a file that now resolves elsewhere
    (a symbolic link turned), differs, is missing or is not a regular file makes the entry a
    miss. Only answers are remembered, never errors. The memo is used only in a folder of the
    user's own that no one else may write (mode 0700 when made here); a folder that is not, or
    cannot be made or written, and a damaged entry (a FIFO, a link, more than
    :data:`MEMO_MAX_BYTES`, not JSON of the entry's shape) are no error: the answer is
    computed.

    Raises:
        UsageError, sitectl.errors.StackError: as
            :func:`~sitectl.engine.recorded.running_target`.
    """
    inputs = target_inputs(engine, **options)
    folder = _memo_folder()
    key = _memo_key(inputs, fmt) if folder is not None else None
    path = folder / f"{key}.json" if key is not None else None
    values = _memo_read(path) if path is not None else None
    if values is None:
        target = inputs.resolve()
        values = env_vars(target, fmt)
        if path is not None:
            _memo_write(path, target.stack.sources, values)
    return values


def _memo_folder() -> Path | None:
    """``<cache dir>/env``, made (0700) when missing; None when there is no usable one: no home
    folder, not a folder, not the user's own, or writable by others."""
    try:
        folder = cache_dir() / "env"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(folder, follow_symlinks=False)
    except (OSError, RuntimeError, KeyError):  # RuntimeError: Path.home() without a home
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return folder


def _memo_key(inputs: TargetInputs, fmt: str) -> str | None:
    """The entry's name (see :func:`running_env_vars`), or None without a working folder."""
    try:
        cwd = os.getcwd()
    except OSError:  # the working folder was deleted
        return None
    package = Path(__file__).resolve().parents[1]
    code = []
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            st = os.stat(os.path.join(folder, name))
            code.append([os.path.relpath(os.path.join(folder, name), package), st.st_size, st.st_ino,
                         st.st_mtime_ns, st.st_ctime_ns])
    data = inputs.options.get("data_dir") or inputs.config.get("data_dir") or "data"
    key = {"version": __version__, "package": str(package), "code": code, "cwd": cwd, "fmt": fmt,
           "data": os.path.realpath(str(data)),
           "env": {k: os.environ.get(k) for k in _ENV_INPUTS}, "options": inputs.options, "config": inputs.config,
           "recorded": [inputs.recorded_host, inputs.recorded_site_hosts]}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()


def _read_regular(path: str | Path, limit: int | None = None) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (opened without blocking, so a FIFO
    never hangs; with ``limit``, not followed if a link, and None above ``limit`` bytes)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (os.O_NOFOLLOW if limit is not None else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read() if limit is None else f.read(limit + 1)
    return None if limit is not None and len(data) > limit else data


def _memo_read(path: Path) -> dict[str, str] | None:
    """The values of the entry at ``path`` when it is whole and every source file it names still
    resolves where it did and has the recorded SHA-256; else None."""
    raw = _read_regular(path, MEMO_MAX_BYTES)
    if raw is None:
        return None
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    sources, values = entry.get("sources"), entry.get("values")
    if not (isinstance(sources, dict) and sources and isinstance(values, dict)
            and all(isinstance(v, str) for v in (*values.keys(), *values.values()))
            and all(isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
                    for v in sources.values())):
        return None
    for named, (real, digest) in sources.items():
        if os.path.realpath(named) != real:
            return None
        data = _read_regular(named)
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            return None
    return values


def _memo_write(path: Path, sources: dict[str, tuple[str, str]], values: dict[str, str]) -> None:
    """Write the entry atomically (a temporary file renamed over it, so a concurrent reader sees
    the old entry or the new one), then keep the newest :data:`MEMO_ENTRIES`; a folder that
    cannot be written is left alone."""
    if not sources:
        return
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"sources": {k: list(v) for k, v in sources.items()}, "values": values}, f)
        os.replace(tmp, path)
        entries = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for old in entries[:-MEMO_ENTRIES]:
            old.unlink(missing_ok=True)
    except OSError:
        tmp.unlink(missing_ok=True)
