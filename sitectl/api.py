"""The Python API: one :class:`Environment` per stack instance, for evaluation harnesses.

::

    from sitectl import Environment

    env = Environment()                       # the mini stack, instance 0 (as `sitectl` resolves it)
    env.up()                                  # idempotent; builds and starts what is missing
    env.reset(["shopping"])                   # back to the golden snapshot (delta path)
    state = env.storage_state("shopping")     # Playwright storage state, logged in
    url = env.locators.shopping_get_latest_order_url()
    env.prepare(task, out="config_files")     # one WebArena task: reset, log in, write config

Every method raises the same :class:`sitectl.errors.SitectlError` subclasses as the command
line (each carries the CLI's exit code in ``exit_code``).
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from sitectl import snapshots
from sitectl.engine import DockerEngine
from sitectl.engine.recorded import running_target
from sitectl.errors import LoginsFailed, UsageError
from sitectl.locators import Locators
from sitectl.ops import checks, lease_record, lifecycle
from sitectl.ops import login as loginmod
from sitectl.ops.envvars import env_vars
from sitectl.ops.prepare import prepare
from sitectl.ops.reset import reset
from sitectl.progress import QUIET, Reporter
from sitectl.stack.target import Target
from sitectl.stores.base import DiffLimits


class Environment:
    """A stack instance: its sites, URLs, snapshots, logins and locators.

    Args:
        stack: ``"mini"`` (default), ``"webarena"`` or a stack file path.
        host, instance, site_hosts, seed, scale, data_dir, config: as the command-line
            options of the same names (``docs/cli.md``); unset ones come from the config file
            (``sitectl.yaml``), the running containers and the stack's defaults.
        reporter: progress sink (default: silent); ``Reporter()`` prints to stderr.

    Raises:
        sitectl.errors.UsageError, sitectl.errors.StackError: bad options or stack file.
    """

    def __init__(self, stack: str | None = None, host: str | None = None, instance: int | None = None,
                 site_hosts: bool | None = None, seed: int | None = None, scale: str | None = None,
                 data_dir: str | None = None, config: str | None = None, reporter: Reporter = QUIET):

        self.engine = DockerEngine()
        self.target: Target = running_target(self.engine, stack, host, instance, data_dir, config, seed=seed,
                                             scale=scale, site_hosts=site_hosts)
        self.reporter = reporter

    def _sites(self, sites: list[str] | None, default_mutable: bool = False):
        st = self.target.stack
        return st.reset_sites(sites) if default_mutable else st.select(sites)

    # -- lifecycle --------------------------------------------------------------------------
    def up(self, sites: list[str] | None = None, build: bool = True) -> list[dict]:
        """Bring ``sites`` (default all) up, health-checked, taking the golden snapshot of new
        containers. Returns one ``{"site", "container", "action", "url", "seconds"}`` per site."""

        rows = lifecycle.up(self.target, self._sites(sites), self.engine, self.reporter, build=build)
        return [r.as_dict() for r in rows]

    def down(self) -> list[str]:
        """Remove the instance's containers and network; returns the removed container names."""

        return lifecycle.down(self.target, self.engine)

    def reset(self, sites: list[str] | None = None, full: bool = False, wait: bool | float = True,
              login: bool = False, force: bool = False) -> list[dict]:
        """Reset ``sites`` (default: the mutable ones) to the golden snapshot. Returns one
        ``{"site", "method", "changed", "seconds", "escalations"}`` per site (``method``: none,
        delta, full). Nothing is written after the restore; ``login``: then log in again for
        the storage states ``sitectl login`` recorded (which writes sessions; a failed login is
        not raised: :meth:`storage_state` logs in on demand).

        Raises:
            sitectl.stores.StoreError: a store could not be restored even by the full path.
            sitectl.errors.InstanceBusy: ``wait`` False (or a number of seconds passed)
                while another process changes this instance; or a reset server has leased it
                to a client (``force=True`` resets it anyway, and the server's status says so).
        """

        res = reset(self.target, self._sites(sites, default_mutable=True), self.engine, full=full,
                    reporter=self.reporter, wait=wait, login=login, force=force)
        return [r.as_dict() for r in res["sites"]]

    def verify(self, sites: list[str] | None = None, deep: bool = False) -> dict:
        """Probe ``sites`` (default all): database, login page, logged-in page; with ``deep``
        also compare every store's fingerprints with the golden snapshot. Returns ``{"ok",
        "results": [...], "state": [...] (deep)}``; never raises on a failed probe."""

        return checks.verify_report(self.target, self._sites(sites), self.engine, deep, reporter=self.reporter)

    def diff(self, sites: list[str] | None = None, since: str = snapshots.GOLDEN,
             limits: DiffLimits | None = None) -> dict:
        """What changed in ``sites`` (a name or names; default: every site with state stores that
        snapshot ``since`` covers) since snapshot ``since`` (or checkpoint ``checkpoint:NAME``,
        docs/diff.md#since-a-checkpoint):
        per store, rows inserted, updated (changed columns' old and new values) and deleted by
        key, schema changes, files added, removed or changed (type, size, SHA-256) and Redis keys.
        Reads only. Returns the JSON of docs/diff.md (``format`` 1); ``limits`` caps what is
        listed (:class:`sitectl.stores.base.DiffLimits`: 100 rows a table, 256-character values).

        Raises:
            sitectl.errors.UsageError: no snapshot ``since`` or an unknown site.
            sitectl.errors.DiffUnavailable: a site's change log follows another snapshot (the
                message says how to start it from ``since`` again).
            sitectl.errors.StoreError: a query or command failed.
        """

        if isinstance(sites, str):
            sites = [sites]
        return snapshots.diff(self.target, self._sites(sites), self.engine, since, limits, named=bool(sites))

    # -- checkpoints (docs/checkpoints.md) ---------------------------------------------------
    def checkpoint_save(self, name: str, sites: list[str] | str | None = None) -> dict:
        """Save what changed since golden in ``sites`` (default: every site with state stores
        that golden covers) as checkpoint ``name``, replacing one of that name. Only the delta
        is kept: the changed rows, files and keys, in the sites' containers.

        Returns:
            ``{"name", "created", "sites": [{"site", "changed", "seconds", "size"}]}``
            (``seconds``: this site's save; ``size``: bytes its SQL copies take).

        Raises:
            sitectl.errors.UsageError: a bad name or site, no golden snapshot.
            sitectl.errors.CheckpointUnavailable: a site's change log does not follow golden, or
                its schema changed since (the message says what to do).
            sitectl.errors.StoreError: a copy failed, or the site kept being written.
        """
        if isinstance(sites, str):
            sites = [sites]
        rec = snapshots.save_checkpoint(self.target, name, self._sites(sites), self.engine, named=bool(sites),
                                        reporter=self.reporter)
        return {"name": name, "created": rec["created"],
                "sites": [{"site": s, "changed": e["changed"], "seconds": e["seconds"],
                           "size": sum(int(v.get("size", 0)) for v in e["stores"].values())}
                          for s, e in sorted(rec["sites"].items())]}

    def checkpoint_restore(self, name: str, sites: list[str] | str | None = None, wait: bool | float = True,
                           force: bool = False) -> list[dict]:
        """Bring ``sites`` (default: every site checkpoint ``name`` holds) to the checkpoint, from
        any state: back to golden by the reset's delta, the checkpoint applied, the result
        checked against what was saved. Returns one ``{"site", "method": "checkpoint",
        "changed", "seconds", "escalations"}`` per site (``escalations`` starts with how the way
        to golden went: ``golden: none|delta|full``).

        Raises:
            sitectl.errors.UsageError: no such checkpoint, or a site it does not hold.
            sitectl.errors.CheckpointUnavailable: golden was taken again since the save, or the
                result was not the checkpoint (that site is back at golden).
            sitectl.errors.InstanceBusy: as :meth:`reset`.
            sitectl.errors.StoreError: a restore failed (the next ``reset`` finishes it: golden).
        """
        if isinstance(sites, str):
            sites = [sites]
        lease_record.check(self.target.instance, force, "checkpoint restore")
        chosen = self._sites(sites) if sites else None
        rows = snapshots.restore_checkpoint(self.target, name, chosen, self.engine, self.reporter, wait=wait)
        return [r.as_dict() for r in rows]

    def checkpoints(self) -> list[dict]:
        """The instance's checkpoints: ``[{"name", "created", "sites", "changed", "size"}]``."""
        return snapshots.list_checkpoints(self.target)

    def checkpoint_delete(self, name: str) -> list[str]:
        """Delete checkpoint ``name`` (its copies and record); returns the sites it was dropped in.

        Raises:
            sitectl.errors.UsageError: no such checkpoint.
        """
        return snapshots.delete_checkpoint(self.target, name, self.engine)

    # -- what a harness reads ------------------------------------------------------------------
    @property
    def urls(self) -> dict[str, str]:
        """Base URL per site key (``{"shopping": "http://127.0.0.1:7770", ...}``)."""
        return self.target.urls()

    def env(self, fmt: str = "webarena") -> dict[str, str]:
        """WebArena's (``webarena``) or BrowserGym's (``browsergym``, ``WA_*``) variables."""

        return env_vars(self.target, fmt)

    def storage_state(self, site: str | list[str], role: str = "default", out: str | Path | None = None) -> dict:
        """Log ``site`` (or a combination, e.g. ``["gitlab", "reddit"]``) in by HTTP form and
        return the Playwright storage state (``{"cookies": [...], "origins": []}``). With
        ``out``, also write WebArena's files there (``sitectl login`` does the same).

        Raises:
            sitectl.errors.LoginsFailed: a site did not log in (its state names why).
            sitectl.errors.UsageError: no login or no account of ``role`` for a site, or a
                combination whose cookies collide (the forum with a shop on one host name).
        """

        names = [site] if isinstance(site, str) else list(site)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(out) if out is not None else Path(tmp)
            res = loginmod.login(self.target, self.target.stack.select(names), role, folder, explicit=True,
                                 reporter=self.reporter, remember=out is not None)
            if not res["ok"]:
                raise LoginsFailed.from_result(res)
            name = loginmod.state_file_name(sorted(names) if len(names) > 1 else names)
            made = {Path(f["file"]).name: f["file"] for f in res["files"]}
            path = made.get(name) or made.get(loginmod.state_file_name(names))
            if path is None:
                reasons = [p["reason"] for p in res["skipped_pairs"]]
                raise UsageError(f"no storage state for {'+'.join(names)}" + (f": {reasons[0]}" if reasons else
                                 " (WebArena makes single sites and pairs only)"))

            return json.loads(Path(path).read_text())

    @property
    def locators(self) -> Locators:
        """WebArena's evaluator helpers and the direct-state reads, bound to this instance."""
        return Locators.for_target(self.target)

    def prepare(self, task: dict | list[dict], out: str | Path = "config_files", dry_run: bool = False,
                reset: bool = True, images_root: str | Path | None = None) -> dict:
        """:func:`sitectl.ops.prepare.prepare` for one task (a dict of a task file of the WebArena
        family) or a list of them; returns its result (configs written under ``out``).
        ``images_root``: the folder VisualWebArena's relative image paths are read from
        (default: the working folder)."""

        tasks = [task] if isinstance(task, dict) else list(task)
        return prepare(self.target, tasks, Path(out), dry_run=dry_run, reset=reset, engine=self.engine,
                       reporter=self.reporter, images_root=Path(images_root) if images_root else None)

