"""A reset server's leases, as the rest of sitectl sees them: ``<snapshots dir>/i<N>/lease.json``.

The pool (:mod:`sitectl.ops.pool`) keeps its leases in memory and writes this record when it
leases an instance, rewrites it on each heartbeat and removes it when the lease ends, so that a
reset from elsewhere (``sitectl reset``, ``Environment.reset``) finds the instance leased and
is refused with the lease named; ``--force`` (``force=True``) resets it anyway, and the record
keeps a line saying so, which the server's status shows. The record names the lease by its first
6 characters only (the id is its holder's credential). A record whose server process is gone,
or whose lease is past its heartbeat, is not a lease.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

from sitectl.errors import InstanceBusy
from sitectl.paths import instance_dir

#: The record's file name in the instance's state folder.
NAME = "lease.json"


def _path(instance: int) -> Path:
    return instance_dir(instance) / NAME


def _write(instance: int, data: dict) -> None:
    p = _path(instance)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{NAME}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, p)


def record(instance: int, lease_id: str, client: str, ttl: float) -> None:
    """Write (or, on a heartbeat, rewrite) the record of a lease of ``instance`` that expires
    ``ttl`` seconds from now, keeping the forced resets already noted."""
    old = read(instance, live_only=False) or {}
    forced = old.get("forced", []) if old.get("lease") == lease_id[:6] else []
    _write(instance, {"lease": lease_id[:6], "client": client, "pid": os.getpid(),
                      "expires_at": time.time() + ttl, "forced": forced})


def drop(instance: int, lease_id: str) -> None:
    """Remove the record of ``lease_id`` (another lease's record stays)."""
    old = read(instance, live_only=False)
    if old is not None and old.get("lease") == lease_id[:6] and old.get("pid") == os.getpid():
        _path(instance).unlink(missing_ok=True)


def forced(instance: int, lease_id: str) -> list[str]:
    """The forced resets noted in ``lease_id``'s record (``[]`` when there is none)."""
    old = read(instance, live_only=False)
    return list(old.get("forced", [])) if old and old.get("lease") == lease_id[:6] else []


def _alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read(instance: int, live_only: bool = True) -> dict | None:
    """The lease record of ``instance``, or None (none; or, with ``live_only``, its server is
    gone or its heartbeat is overdue; or unreadable)."""
    try:
        data = json.loads(_path(instance).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if live_only and not (_alive(data.get("pid")) and isinstance(data.get("expires_at"), (int, float))
                          and data["expires_at"] > time.time()):
        return None
    return data


def check(instance: int, force: bool, what: str) -> None:
    """Refuse ``what`` (e.g. "reset") of a leased ``instance`` unless ``force``; with it, note
    the forced reset in the record, for the server's status.

    Raises:
        InstanceBusy: the instance is leased (the message names the lease and ``--force``).
    """
    held = read(instance)
    if held is None:
        return
    until = dt.datetime.fromtimestamp(held["expires_at"], dt.timezone.utc).isoformat(timespec="seconds")
    if not force:
        raise InstanceBusy(f"instance {instance} is leased to {held.get('client')!r} by the reset server (pid "
                           f"{held.get('pid')}, lease {held.get('lease')}..., until {until} unless renewed): its "
                           f"holder resets it through its lease; --force does the {what} anyway (the server's "
                           "status will say so)")
    note = f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}: {what} forced by pid {os.getpid()}"
    _write(instance, {**held, "forced": [*held.get("forced", []), note][-20:]})
