"""A reset as every face runs it (CLI, Python API, reset server, task prepare): the sites back
to golden, then the storage states ``sitectl login`` recorded rebuilt where the reset discarded
their server-side sessions."""
from __future__ import annotations

from sitectl import snapshots
from sitectl.engine import Engine
from sitectl.errors import UsageError
from sitectl.ops import lifecycle
from sitectl.ops import login as loginmod
from sitectl.progress import QUIET, Reporter
from sitectl.stack import Site
from sitectl.stack.target import Target


def reset(target: Target, sites: list[Site], engine: Engine, full: bool = False, recreate: bool = False,
          reporter: Reporter = QUIET, wait: bool | float = True) -> dict:
    """Reset ``sites`` to the golden snapshot and refresh the recorded storage states.

    Args:
        full: restore every store (:func:`sitectl.snapshots.reset`); ``recreate``: re-create
            the containers instead (:func:`sitectl.ops.lifecycle.reset_recreate`, WebArena's own
            reset). Not both.
        wait: the instance lock's wait (see :func:`sitectl.snapshots.journal.instance_lock`).

    Returns:
        ``{"sites": [row], "logins": [{"folder", "rebuilt", "ok"}]}``; a row is a
        :class:`~sitectl.snapshots.SiteReset` (``site``, ``method``, ``changed``, ``seconds``,
        ``escalations``) or, with ``recreate``, a :class:`~sitectl.sites.containers.SiteUp`.

    Raises:
        UsageError: ``full`` and ``recreate`` together; InstanceBusy, StoreError, EngineError:
        see the functions named above.
    """

    if full and recreate:
        raise UsageError("give --full or --recreate, not both")
    if recreate:
        rows = lifecycle.reset_recreate(target, sites, engine, reporter, wait=wait)
        touched = sites  # the new containers hold golden's sessions only
    else:
        rows = snapshots.reset(target, sites, engine, full=full, reporter=reporter, wait=wait)
        touched = [target.stack.sites[r.site] for r in rows if r.method != "none"]
    logins = loginmod.refresh_after_reset(target, touched, reporter) if touched else []
    return {"sites": rows, "logins": logins}
