"""A reset as every face runs it (CLI, Python API, reset server, task prepare): the sites back
to golden, and nothing written after that. The storage states ``sitectl login`` recorded whose
server-side sessions the reset discarded are named (stale); with ``login`` they are rebuilt,
which writes sessions again (docs/snapshots.md, "Logins and golden")."""
from __future__ import annotations

from sitectl import snapshots
from sitectl.engine import Engine
from sitectl.errors import UsageError
from sitectl.ops import lease_record, lifecycle
from sitectl.ops import login as loginmod
from sitectl.progress import QUIET, Reporter
from sitectl.stack import Site
from sitectl.stack.target import Target


def reset(target: Target, sites: list[Site], engine: Engine, full: bool = False, recreate: bool = False,
          reporter: Reporter = QUIET, wait: bool | float = True, login: bool = False, force: bool = False,
          by_pool: bool = False) -> dict:
    """Reset ``sites`` to the golden snapshot.

    Args:
        full: restore every store (:func:`sitectl.snapshots.reset`); ``recreate``: re-create
            the containers instead (:func:`sitectl.ops.lifecycle.reset_recreate`, WebArena's own
            reset). Not both.
        wait: the instance lock's wait (see :func:`sitectl.snapshots.journal.instance_lock`).
        login: afterwards, log in again for the recorded storage states the reset made stale
            (:func:`sitectl.ops.login.refresh_after_reset`). Off by default: a login writes
            sessions and last-login columns, so the sites are then golden plus sitectl's logins,
            and ``verify --deep`` says so.
        force: reset an instance a reset server has leased all the same (its status says so;
            :mod:`sitectl.ops.lease_record`). ``by_pool``: the reset server's own reset (it
            enforces its leases itself).

    Returns:
        ``{"sites": [row], "logins": [...], "logins_ok": bool}``; a row is a
        :class:`~sitectl.snapshots.SiteReset` (``site``, ``method``, ``changed``, ``seconds``,
        ``escalations``) or, with ``recreate``, a :class:`~sitectl.sites.containers.SiteUp`.
        ``logins``: without ``login``, ``[{"folder", "stale": [site], "refresh"}]`` (the
        command that logs in again); with it, ``[{"folder", "rebuilt", "ok", "error"?}]``. A
        failed login never undoes the reset's result: ``logins_ok`` is False and the rows stand.

    Raises:
        UsageError: ``full`` and ``recreate`` together; InstanceBusy: a reset server has leased
        the instance (without ``force``), or see the functions named above; StoreError,
        EngineError: see the functions named above (never for a login after the reset).
    """

    if full and recreate:
        raise UsageError("give --full or --recreate, not both")
    if not by_pool:
        lease_record.check(target.instance, force, "--recreate reset" if recreate else "reset")
    if recreate:
        rows = lifecycle.reset_recreate(target, sites, engine, reporter, wait=wait)
        touched = sites  # the new containers hold golden's sessions only
    else:
        rows = snapshots.reset(target, sites, engine, full=full, reporter=reporter, wait=wait)
        touched = [target.stack.sites[r.site] for r in rows if r.method != "none"]
    if not touched:
        return {"sites": rows, "logins": [], "logins_ok": True}
    if login:
        logins = loginmod.refresh_after_reset(target, touched, reporter)
    else:
        logins = loginmod.stale_after_reset(target, touched)
    return {"sites": rows, "logins": logins, "logins_ok": all(r.get("ok", True) for r in logins)}
