"""One site's stores as one object: the whole detect → restore → check round trip.

:class:`SiteStores` builds the site's stores (:func:`sitectl.stores.stores_for`), batches
their requests into as few ``docker exec`` round trips as it can (every store's detection in
one; a delta restore, the cache flushes and the closing check in one more), cuts the results
back per store and hands the snapshots layer typed answers: :class:`SiteChanges` and the list of
items still changed. Nothing above this module sees a raw result list.

A reset also hands it the site's background jobs (:meth:`SiteStores.jobs_inline`): each batch
then pauses them as its first step (a gate: nothing after a failed pause runs) and resumes them
as its last, so a reset that finds nothing changed is one ``docker exec`` and a delta is two,
jobs paused over each; once a closing check finds something left, they stay paused
(:meth:`SiteStores.hold_jobs`) until the reset ends.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from sitectl.engine.base import Engine
from sitectl.errors import StoreError
from sitectl.sites.jobs import pause_argv, pause_failed, resume_argv, resume_note
from sitectl.stack.model import Site
from sitectl.stores import stores_for
from sitectl.stores.base import Changes, Store
from sitectl.stores.sql import retry_deadlocks
from sitectl.stores.transport import Command, failure, fits, run_batch


@dataclass
class SiteChanges:
    """What changed in one site's stores since a snapshot.

    Attributes:
        per_store: ``(store, its Changes)`` for every store of the site, in stack order.
    """

    per_store: list[tuple[Store, Changes]] = field(default_factory=list)

    @property
    def items(self) -> list[str]:
        """Every changed item (tables, files, keys) of every store, sorted."""
        return sorted(i for _, c in self.per_store for i in c.items)

    @property
    def needs_full(self) -> bool:
        """True when a store asks for a full restore of itself (``detail["full"]``: e.g. a
        schema change that a row delta cannot undo)."""
        return any(c.detail.get("full") for _, c in self.per_store)

    def __bool__(self) -> bool:
        return any(c for _, c in self.per_store)

    def new_since(self, before: SiteChanges) -> list[str]:
        """What this detection found that ``before`` (an earlier one, of the same stores) did
        not: changes made after ``before`` was read (:meth:`sitectl.stores.base.Store.change_marks`),
        sorted; [] when everything found now was already found then."""
        then = {id(st): st.change_marks(c) for st, c in before.per_store}
        return sorted(m for st, c in self.per_store for m in st.change_marks(c) - then.get(id(st), set()))


def _slices(results: list, groups: list[list]):
    """``results`` cut into consecutive slices as long as each of ``groups``."""
    i = 0
    for g in groups:
        yield results[i:i + len(g)]
        i += len(g)


class SiteStores:
    """The stores of one site in one container, and their round trips.

    Args:
        site: the site (its ``stores`` entries of the stack file).
        container: the name of the site's container.
        engine: the engine that reaches it.
    """

    def __init__(self, site: Site, container: str, engine: Engine):
        self.site = site
        self.container = container
        self.engine = engine
        self.stores: list[Store] = stores_for(site, container, engine)
        #: The site's jobs: "off" (not handled here), "inline" (each batch pauses and resumes
        #: them) or "held" (paused until :meth:`jobs_inline` ends).
        self._jobs = "off"
        #: Warnings of the jobs' resume (the reset's result stands; each names the command to run).
        self.notes: list[str] = []

    def __iter__(self):
        return iter(self.stores)

    def _transport(self):
        """The site's ``docker exec`` transport (all its stores share one), or None."""
        return next((st.transport for st in self.stores if st.transport is not None), None)

    # -- the site's jobs ------------------------------------------------------------------
    @contextlib.contextmanager
    def jobs_inline(self) -> Iterator[None]:
        """Context manager: for its body, the site's background jobs (``jobs`` in the stack
        file) are paused by the first step of each of this object's batches and resumed by its
        last; after :meth:`hold_jobs`, they stay paused until the body ends, and are resumed
        then. Nothing when the site declares no jobs. A failed resume adds to :attr:`notes`.

        Raises (from the batches inside):
            JobsPauseFailed: ``jobs.pause`` failed or took longer than ``jobs.timeout`` (s);
                nothing of that batch after it ran (its jobs were let run again).
        """
        if self.site.jobs is None:
            yield
            return
        self._jobs = "inline"
        try:
            yield
        finally:
            held, self._jobs = self._jobs == "held", "off"
            if held:
                self._resume(*self.engine.exec(self.container, resume_argv(self.site), timeout=60))

    def hold_jobs(self) -> None:
        """Inside :meth:`jobs_inline`: pause the site's jobs now (one ``docker exec``) and keep
        them paused until its body ends (for work of several round trips: escalations, full
        restores, the watch of a closing check's leftovers). Nothing otherwise.

        Raises:
            JobsPauseFailed: the pause failed (the jobs were let run again).
        """
        if self._jobs != "inline":
            return
        rc, out = self.engine.exec(self.container, pause_argv(self.site), timeout=self.site.jobs.timeout + 5)
        if rc != 0:
            self._let_run()
            raise pause_failed(self.site, self.container, rc, out)
        self._jobs = "held"

    def _let_run(self) -> None:
        """Best effort after a failed pause (one that timed out may still be in force)."""
        self.engine.exec(self.container, resume_argv(self.site), timeout=60)

    def _resume(self, rc: int, out: str) -> None:
        if rc != 0:
            self.notes.append(resume_note(self.site, self.container, rc, out))

    def _run(self, requests: list, what: str) -> list:
        """:func:`run_batch` of ``requests``; inside :meth:`jobs_inline`, with the jobs' pause
        before them and their resume after, in the same exec (or, when a request goes over the
        network, whose order with the exec could not be kept, with the jobs held).

        Raises:
            JobsPauseFailed: the pause failed; none of ``requests`` ran.
            StoreError: the batch itself failed.
        """
        if self._jobs == "inline" and any(r.argv is None for r in requests):
            self.hold_jobs()
        if self._jobs != "inline":
            return run_batch(self._transport(), requests, what)
        results = run_batch(self._transport(), [Command(pause_argv(self.site), gate=True), *requests,
                                                Command(resume_argv(self.site))], what)
        (prc, pout), (rrc, rout) = results[0], results[-1]
        if prc != 0:
            self._let_run()
            raise pause_failed(self.site, self.container, prc, pout)
        self._resume(rrc, rout)
        return results[1:-1]

    # -- snapshots ----------------------------------------------------------------------
    def snapshot(self, name: str) -> dict:
        """Copy every store into snapshot ``name``; returns ``{label: manifest entry}``.

        Raises:
            StoreError, EngineError: a copy failed.
        """
        return {st.label: st.snapshot(name) for st in self.stores}

    def drop(self, name: str) -> None:
        """Drop snapshot ``name`` in every store (no error when absent)."""
        for st in self.stores:
            st.drop(name)

    # -- checkpoints (sitectl.snapshots.checkpoint) -----------------------------------------
    def checkpoint_save(self, ckpt: str, golden: str, found: SiteChanges) -> dict[str, dict]:
        """Each store's :meth:`~sitectl.stores.base.Store.checkpoint_save` of what ``found``
        (a detection against ``golden``) lists, concurrently; returns ``{store label: entry}``.

        Raises:
            CheckpointUnavailable: a store cannot keep its changes as a delta from golden.
            StoreError: a copy failed.
        """
        # The stores copy concurrently (their databases, folders and keys are apart).
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(found.per_store))) as pool:
            futs = [(st.label, pool.submit(st.checkpoint_save, ckpt, golden, c)) for st, c in found.per_store]
        return {label: f.result() for label, f in futs}

    @staticmethod
    def checkpoint_marks(found: SiteChanges) -> dict[str, list[str]]:
        """``{store label: marks}`` of a detection (:meth:`~sitectl.stores.base.Store.checkpoint_marks`):
        what a checkpoint's restore must find again."""
        return {st.label: st.checkpoint_marks(c) for st, c in found.per_store}

    def checkpoint_apply(self, ckpt: str, golden: str, entries: dict[str, dict],
                         before: list | None = None) -> tuple[SiteChanges, list[str]]:
        """Apply checkpoint ``ckpt`` (``entries``: its record's ``{store label: entry}``) to the
        stores, which are at snapshot ``golden`` (or get there by ``before``: a delta restore's
        requests, run first in the same round trip); read back what the save recorded of its
        content (:meth:`~sitectl.stores.base.Store.checkpoint_check_requests`); flush the caches;
        detect against ``golden``: in one round trip when every request can run in one
        ``docker exec`` (again when the server ended it as a deadlock's victim), else the apply
        first and the rest in a second trip.

        Returns:
            The detection, and what differs from the saved content, store by store ([] when
            nothing does).

        Raises:
            StoreError: a request of ``before`` or of the apply failed (the message names it).
        """
        stores = self.stores
        if not stores:
            return SiteChanges(), []
        apply = list(before or []) + [r for st in stores
                                      for r in st.checkpoint_apply_requests(ckpt, golden, entries.get(st.label) or {})]
        checks = [st.checkpoint_check_requests(ckpt, entries.get(st.label) or {}) for st in stores]
        flush = [a for st in stores for a in st.after_restore_requests()]
        groups = [st.detect_requests(golden) for st in stores]
        after = [r for g in checks for r in g] + flush + [r for g in groups for r in g]
        argvs = [r.argv for r in apply + after]

        def checked(results: list, names: list[str]) -> None:
            for what, res in zip(names, results):
                err = failure(res)
                if err is not None:
                    raise StoreError(f"{stores[0].site}: {what} of checkpoint {ckpt} failed: {err}")

        def trip(reqs: list, names: list[str]) -> list:
            results = self._run(reqs, f"{stores[0].site} checkpoint {ckpt}")
            checked(results, names)
            return results

        nc = sum(len(g) for g in checks)
        if any(a is None for a in argvs) or not fits(argvs):
            if apply:
                retry_deadlocks(lambda: trip(apply, ["apply"] * len(apply)))
            results = trip(after, ["check"] * nc + ["flush"] * len(flush))
        else:
            results = retry_deadlocks(lambda: trip(apply + after, ["apply"] * len(apply) + ["check"] * nc
                                                   + ["flush"] * len(flush)))[len(apply):]
        detected = list(_slices(results[nc + len(flush):], groups))
        differ = [f"{st.label}: {d}" for st, part, det in zip(stores, _slices(results[:nc], checks), detected)
                  for d in st.checkpoint_check(entries.get(st.label) or {}, part, det)]
        found = SiteChanges([(st, st.parse_changes(golden, part)) for st, part in zip(stores, detected)])
        return found, differ

    # -- the round trip -----------------------------------------------------------------
    def changes(self, name: str, after_restore: bool = False) -> SiteChanges:
        """What differs from snapshot ``name`` in each store, all asked in one round trip into
        the site's container (queries of network sessions run on their own connections); with
        ``after_restore``, the stores' after-restore commands (cache flushes) run first in the
        same round trip.

        Raises:
            StoreError: a flush or a detection command failed (the message names it).
        """
        stores = self.stores
        if not stores:
            return SiteChanges()
        pre = [a for st in stores for a in st.after_restore_requests()] if after_restore else []
        groups = [st.detect_requests(name) for st in stores]
        flat = [r for group in groups for r in group]
        results = self._run(pre + flat, f"{stores[0].site} changes") if pre + flat else []
        for a, res in zip(pre, results):
            err = failure(res)
            if err is not None:
                raise StoreError(f"{stores[0].site}: {a.argv[0]} failed after the restore: {err}")
        return SiteChanges([(st, st.parse_changes(name, part))
                            for st, part in zip(stores, _slices(results[len(pre):], groups))])

    def check(self, name: str) -> list[str]:
        """The closing check: flush the caches, then what still differs from snapshot ``name``
        (one round trip), store by store in stack order."""
        return [i for _, c in self.changes(name, after_restore=True).per_store for i in c.items]

    #: Delta rounds a restore may take: a round's own writes can make the application's
    #: triggers write elsewhere (Magento's indexer changelogs), which the next round undoes.
    ROUNDS = 3

    def restore(self, name: str, found: SiteChanges | None) -> list[str]:
        """:meth:`restore_rounds` without the last round's detection: what is still changed."""
        return self.restore_rounds(name, found)[0]

    def restore_rounds(self, name: str, found: SiteChanges | None) -> tuple[list[str], SiteChanges | None]:
        """Bring every store back to snapshot ``name`` and check: only what ``found`` lists
        (a delta; in one round trip with the flushes and the check when every store can), or
        everything, concurrently per store, when ``found`` is None (a full restore).

        A delta whose closing check finds rows changed by the restore's own writes (the
        application's triggers firing on them, logged by sitectl's tracking) takes another
        delta round for those, up to :data:`ROUNDS` in all; what a delta cannot undo is left
        for the caller's escalation.

        Returns:
            What is still changed afterwards ([] when the site equals the snapshot), and the
            detection the last delta round restored (None after a full restore): a later
            detection finding more than it (:meth:`SiteChanges.new_since`) found writes that
            came during the restore.

        Raises:
            StoreError: a restore or flush command failed (the message names it).
        """
        if found is None or found.needs_full:
            self.hold_jobs()
            return self._restore_stores(name, found), None
        left = self._restore_delta(name, found)
        if left:
            # From here on, what the jobs would write could not be told from what the restore left.
            self.hold_jobs()
        for _ in range(self.ROUNDS - 1):
            if not left:
                break
            again = self.changes(name)
            if not again:
                return self.check(name), found
            if again.needs_full:
                break
            found, left = again, self._restore_delta(name, again)
        return left, found

    def _restore_delta(self, name: str, found: SiteChanges) -> list[str]:
        left = self._restore_in_one_trip(name, found)
        if left is not None:
            return left
        self.hold_jobs()  # several round trips
        return self._restore_stores(name, found)

    def _restore_stores(self, name: str, found: SiteChanges | None) -> list[str]:
        """Each store's own restore of what ``found`` lists (everything when None),
        concurrently, then the flushes and the closing check in one round trip."""
        todo = ([(st, None) for st in self.stores] if found is None
                else [(st, c) for st, c in found.per_store if c])
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
            list(pool.map(lambda sc: sc[0].restore(name, sc[1]), todo))
        return self.check(name)

    def restore_all(self, name: str) -> list[str]:
        """A full restore of every store, one after the other, and the closing check (the
        escalation after a delta left something changed). Returns what is still changed."""
        self.hold_jobs()
        for st in self.stores:
            st.restore(name, None)
        return self.check(name)

    def _restore_in_one_trip(self, name: str, found: SiteChanges) -> list[str] | None:
        """Delta restore of every store, cache flushes and the closing check, in this order, in
        one ``docker exec``. Returns what is still changed afterwards, or None when it cannot be
        done in one trip (a store needs dependent steps, a query goes over the network, whose
        order with the exec batch could not be kept, or the commands are too large for one
        exec); :meth:`restore` then takes the step-by-step path.

        Raises:
            StoreError: a restore or flush command failed (the message names it).
        """
        stores = self.stores
        per_store = [st.restore_requests(name, c) if c else [] for st, c in found.per_store]
        if any(r is None for r in per_store):
            return None
        restore = [r for rs in per_store for r in rs]
        flush = [a for st in stores for a in st.after_restore_requests()]
        # The closing check looks at the changed sets (the whole detection for SQL and Redis; for
        # folders, every entry the restore touched).
        groups = [st.check_requests(name, c) for st, c in found.per_store]
        reqs = restore + flush + [r for g in groups for r in g]
        argvs = [r.argv for r in reqs]
        if any(a is None for a in argvs) or not fits(argvs):
            return None  # a network query, or more than one exec can carry: step by step

        def trip() -> list:
            results = self._run(reqs, f"{stores[0].site} restore")
            for what, res in zip(["restore"] * len(restore) + ["flush after the restore"] * len(flush), results):
                err = failure(res)
                if err is not None:
                    raise StoreError(f"{stores[0].site}: {what} failed: {err}")
            return results

        # A restore the server ended as a deadlock's victim (the application writing the same
        # tables) was rolled back whole: the trip runs again.
        results = retry_deadlocks(trip)
        parts = _slices(results[len(restore) + len(flush):], groups)
        return [item for (st, c), part in zip(found.per_store, parts) for item in st.parse_check(name, c, part)]
