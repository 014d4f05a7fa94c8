"""One lock per instance, and the journal that makes an interrupted reset recoverable.

**Lock.** Every operation that changes an instance's state (reset, snapshot create, restore,
delete, import, re-create) holds ``<snapshots dir>/i<N>/instance.lock`` (``filelock``: an
``flock`` the kernel drops when the process dies, SIGKILL included). A second process waits for
it, or with ``wait=False`` fails at once with :class:`InstanceBusy` naming the holder. Threads
exclude each other the same way (each holds the lock through its own open file); the thread
holding it may take it again (re-entrant). Only top-level operations take it; the helpers
they run in worker threads (a site's re-create, the manifest bookkeeping) do not.

**Journal.** Before a reset touches anything it writes ``<snapshots dir>/i<N>/journal.json``
(``{"op": "reset", "sites", "snapshot", "pid", "started"}``, atomically) and removes it only
when every site ended golden and checked. A journal found by the next reset or verify (under
the lock, so its writer is gone) means that reset was interrupted: the sites it names are
rolled forward with a full restore from the snapshot, and the command says so.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import threading
from pathlib import Path

from filelock import FileLock, Timeout

from sitectl.errors import SitectlError
from sitectl.target import Target


class InstanceBusy(SitectlError):
    """Another process holds the instance's lock (``--no-wait``)."""

    exit_code = 10


_locks: dict[str, FileLock] = {}
_guard = threading.Lock()


def _dir(target: Target) -> Path:
    from sitectl.ops.snapshots import snapshots_dir

    return snapshots_dir() / f"i{target.instance}"


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
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        try:
            who = json.loads(owner.read_text())
            holder = f"pid {who.get('pid')} ({who.get('what')}, since {who.get('since')})"
        except (OSError, ValueError):
            holder = "another process"
        raise InstanceBusy(f"instance {target.instance} is busy: {holder} holds its lock; "
                           "wait for it, or run without --no-wait to queue behind it") from None
    try:
        if first:
            owner.write_text(json.dumps({"pid": os.getpid(), "what": what,
                                         "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}))
        yield
    finally:
        lock.release()


def journal_path(target: Target) -> Path:
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
    return {"op": "reset", "sites": [s.name for s in target.stack.sites.values() if s.mutable],
            "snapshot": "golden", "unreadable": True}  # recover() keeps only the sites that run


def clear_journal(target: Target) -> None:
    journal_path(target).unlink(missing_ok=True)
