"""One lock per instance, the journal that makes an interrupted reset recoverable, and the
wait for commands a killed sitectl left running in a container.

**Lock.** Every operation that changes an instance's state (reset, snapshot create, restore,
delete, import, re-create) holds ``<snapshots dir>/i<N>/instance.lock`` (``filelock``: an
``flock`` the kernel drops when the process dies, SIGKILL included). A second process waits for
it, or with ``wait=False`` fails at once with :class:`InstanceBusy` naming the holder. Threads
exclude each other the same way (each holds the lock through its own open file); the thread
holding it may take it again (re-entrant). Only top-level operations take it; the helpers
they run in worker threads (a site's re-create, the manifest bookkeeping) do not. The holder
also binds an abstract Unix socket name made from the folder's real path (no file: nothing can
delete it; the kernel drops it with its process), so a lock file deleted or replaced while
held lets no second process in.

**Journal.** Before a reset touches anything it writes ``<snapshots dir>/i<N>/journal.json``
(``{"op": "reset", "sites", "snapshot", "pid", "started"}``, atomically) and removes it only
when every site ended golden and checked. A journal found by the next reset or verify (under
the lock, so its writer is gone) means that reset was interrupted: the sites it names are
rolled forward with a full restore from the snapshot, and the command says so.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path

from filelock import FileLock, Timeout

from sitectl.engine.base import Engine
from sitectl.errors import InstanceBusy, StoreError
from sitectl.paths import instance_dir
from sitectl.progress import Reporter
from sitectl.stack.model import Site
from sitectl.stack.target import Target

_locks: dict[str, FileLock] = {}
_guard = threading.Lock()


def _dir(target: Target) -> Path:
    return instance_dir(target.instance)


def _lock_for(path: Path) -> FileLock:
    with _guard:
        lock = _locks.get(str(path))
        if lock is None:
            # thread_local (the default): re-entrant in its thread, exclusive against other threads.
            lock = _locks[str(path)] = FileLock(str(path))
        return lock


@contextlib.contextmanager
def instance_lock(target: Target, what: str, wait: bool | float = True):
    """Hold instance ``target.instance``'s lock for ``what`` (e.g. ``"reset"``).

    Args:
        wait: True waits as long as it takes; False fails at once; a number waits that many
            seconds.

    Raises:
        InstanceBusy: not acquired in time; the message names the holder's pid and operation.
    """
    d = _dir(target)
    d.mkdir(parents=True, exist_ok=True)
    lock = _lock_for(d / "instance.lock")
    owner = d / "instance.lock.owner"
    timeout = -1 if wait is True else (0 if wait is False else float(wait))
    first = not lock.is_locked
    start = time.monotonic()

    def busy() -> InstanceBusy:
        who = _owner(d)
        holder = f"pid {who.get('pid')} ({who.get('what')}, since {who.get('since')})" if who else "another process"
        return InstanceBusy(f"instance {target.instance} is busy: {holder} holds its lock; "
                            "wait for it, or run without --no-wait to queue behind it")
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise busy() from None
    guard = None
    try:
        if first:
            # The file's flock holds only while the file stays: a second lock that no file
            # operation can remove (an abstract socket name, dropped by the kernel with its
            # process) makes a deleted or replaced lock file change nothing.
            left = None if timeout < 0 else max(0.0, timeout - (time.monotonic() - start))
            guard = _hold_name(d, left)
            if guard is None:
                raise busy()
            owner.write_text(json.dumps({"pid": os.getpid(), "what": what,
                                         "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}))
        yield
    finally:
        if guard is not None:
            guard.close()
        lock.release()


def _hold_name(d: Path, wait: float | None) -> socket.socket | None:
    """Bind the abstract Unix socket name of the state folder ``d`` (Linux: a name in the
    network namespace, no file; at most one process holds it, and the kernel drops it when that
    process ends, SIGKILL included). Waits up to ``wait`` seconds (None: as long as it takes)
    while another process holds it; None when it stayed held. Source: unix(7), "Abstract
    sockets"."""
    name = b"\0sitectl-lock-" + hashlib.sha256(os.fsencode(os.path.realpath(d))).hexdigest()[:40].encode()
    deadline = None if wait is None else time.monotonic() + wait
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(name)
            return s
        except OSError as e:
            s.close()
            if e.errno != errno.EADDRINUSE:
                raise
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def journal_path(target: Target) -> Path:
    """The journal file of ``target``'s instance."""
    return _dir(target) / "journal.json"


def write_journal(target: Target, entry: dict) -> None:
    """Record an operation about to change the instance (atomic replace, fsync'd)."""
    p = journal_path(target)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".journal.{os.getpid()}.{threading.get_ident()}.tmp")
    data = {**entry, "pid": os.getpid(), "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    with open(tmp, "w") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)


def read_journal(target: Target) -> dict | None:
    """The journal of an interrupted operation, or None. A journal that cannot be read counts
    as an interrupted reset of every mutable site (the safe reading)."""
    p = journal_path(target)
    if not p.exists():
        return None
    try:
        data = json.loads(p.read_text())
        if isinstance(data, dict) and isinstance(data.get("sites"), list):
            return data
    except (OSError, ValueError):
        pass
    return {"op": "reset", "sites": [s.name for s in target.stack.reset_sites()],
            "snapshot": "golden", "unreadable": True}  # recover() keeps only the sites that run


def clear_journal(target: Target) -> None:
    """Remove the journal: the operation it records ended golden and checked."""
    journal_path(target).unlink(missing_ok=True)


def lock_holder(target: Target) -> dict | None:
    """Who holds instance ``target.instance``'s lock right now (``{"pid", "what", "since"}``, as
    the holder recorded it), or None when nobody does. Takes the lock for an instant when it is
    free (never waits)."""
    try:
        with instance_lock(target, "a look at the lock", wait=False):
            return None
    except InstanceBusy:
        return _owner(_dir(target)) or {"what": "unknown"}


def _owner(d: Path) -> dict | None:
    """What the holder of the lock of state folder ``d`` recorded (``{"pid", "what", "since"}``),
    or None when it cannot be read."""
    try:
        who = json.loads((d / "instance.lock.owner").read_text())
    except (OSError, ValueError):
        return None
    return who if isinstance(who, dict) else None


#: How long recovery waits for commands of the interrupted reset still running in a container.
LEFTOVER_EXEC_WAIT = 60.0


def wait_for_leftover_execs(target: Target, sites: list[Site], engine: Engine, reporter: Reporter,
                             limit: float | None = None) -> str:
    """Wait until no ``docker exec`` runs in the sites' containers, at most ``limit`` seconds
    (default :data:`LEFTOVER_EXEC_WAIT`).

    A killed sitectl leaves its in-flight ``docker exec`` (a restore batch, a snapshot copy)
    running inside the container; restoring or copying beside it would interleave the two. The
    lock is held, so no other reset or snapshot runs; an exec found here is the dead process's,
    or a read-only probe of another command. Returns what was waited for (``""`` when nothing
    ran), for the recovery's row.

    Raises:
        StoreError: commands still run after ``limit`` seconds (the message names the
            containers and the next step)."""
    limit = LEFTOVER_EXEC_WAIT if limit is None else limit
    t0 = time.monotonic()
    busy = {s.name: n for s in sites if (n := engine.running_execs(target.container(s)))}
    if not busy:
        return ""
    reporter.step("wait", "waiting for commands of an interrupted sitectl still running in "
                  + ", ".join(f"{k} ({v})" for k, v in busy.items()))
    left = dict(busy)
    while left and time.monotonic() - t0 < limit:
        time.sleep(0.2)
        left = {k: n for k in left if (n := engine.running_execs(target.container(target.stack.sites[k])))}
    if left:
        raise StoreError(
            f"commands of an interrupted sitectl still run in {', '.join(target.container(target.stack.sites[k]) for k in left)} "
            f"after {limit:g} s (`docker top CONTAINER`); changing the state under them is not safe: wait and run "
            "the command again, or `sitectl reset --recreate " + " ".join(left) + "`")
    return f"{time.monotonic() - t0:.1f} s for {sum(busy.values())} leftover command(s) in {', '.join(busy)}"
