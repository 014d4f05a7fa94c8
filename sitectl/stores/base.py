"""State stores: the places a site keeps mutable state, each able to snapshot, list what
changed since the snapshot, restore, and fingerprint.

A store reaches its files through ``docker exec`` into the site's container
(``sitectl.stores.transport``) and its database through a SQL session (``sitectl.stores.sql``):
the server's client inside the container, or a network connection from a process beside the
site. The store's logic builds SQL text and never depends on which session runs it.

Snapshots live inside the site's own container (a database, schema or folder per snapshot
name), so a restore is a server-side copy and the application keeps running.
"""
from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from sitectl.errors import CheckpointUnavailable, DiffUnavailable, UsageError
from sitectl.stores.transport import run_batch

_SNAP_RE = re.compile(r"^[a-z][a-z0-9_]{0,30}\Z")


def check_snapshot_name(name: str, what: str = "snapshot") -> str:
    """Snapshot (and checkpoint, ``what``) names are lower-case letters, digits and ``_`` (max
    31), starting with a letter.

    Raises:
        sitectl.errors.UsageError: anything else (they become database and folder names).
    """
    if not isinstance(name, str) or not _SNAP_RE.match(name):
        raise UsageError(
            f"invalid {what} name {name!r}: use lower-case letters, digits and _ (max 31), "
            "starting with a letter"
        )
    return name


def valid_names(names) -> set[str]:
    """The snapshot names among ``names`` (strings read from a container: untrusted); the rest
    are dropped."""
    return {n for n in names if isinstance(n, str) and _SNAP_RE.match(n)}


def hex_names(out: str, prefix: str = "") -> set[str]:
    """:func:`valid_names` of the hex-encoded lines of ``out`` (a database's listing, one name
    per line in hex, so that a name holding a newline reads as one name), less ``prefix``."""
    names = []
    for line in out.split():
        try:
            n = bytes.fromhex(line).decode("utf-8")
        except ValueError:
            continue
        if n.startswith(prefix):
            names.append(n[len(prefix):])
    return valid_names(names)


#: A shell listing of the folder "$1": the entries whose names are snapshot names (and end with
#: "$2"), one per line; any other name (a newline in it, upper case, a dot) is never printed.
LIST_NAMES_SH = ('cd "$1" 2>/dev/null || exit 0; for e in * .[!.]* ..?*; do [ -e "$e" ] || [ -h "$e" ] || continue; '
                 'n=${e%"$2"}; [ "$n$2" = "$e" ] || continue; case $n in [a-z]*) case $n in *[!a-z0-9_]*) ;; '
                 '*) printf "%s\\n" "$n" ;; esac ;; esac; done')


@dataclass
class Changes:
    """What changed in one store since its baseline snapshot.

    Attributes:
        items: human-readable names of what changed (tables, files, keys), sorted.
        detail: store-specific data the store's ``restore`` uses (e.g. primary keys per table).
    """

    items: list[str] = field(default_factory=list)
    detail: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.items)


@dataclass(frozen=True)
class DiffLimits:
    """How much of a change a diff lists (``sitectl diff``; the JSON schema is in docs/diff.md).

    Attributes:
        rows: rows listed per table (the count is always given; the keys listed are the first
            in key order).
        value_chars: characters of one value shown; a longer value is replaced by
            ``{"cut": first value_chars characters, "length": characters, "sha256": of its
            UTF-8}``.
        entries: files or keys listed per store.
    """

    rows: int = 100
    value_chars: int = 256
    entries: int = 1000


def capped(value, limits: DiffLimits):
    """``value`` (a JSON scalar read from a store) as a diff shows it: unchanged, or, a string
    longer than ``limits.value_chars``, ``{"cut", "length", "sha256"}``."""
    if isinstance(value, str) and len(value) > limits.value_chars:
        return {"cut": value[:limits.value_chars], "length": len(value),
                "sha256": hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()}
    return value


def row_changes(key_columns: list[str], pairs: list[tuple[list, dict | None, dict | None]],
                limits: DiffLimits) -> dict[str, list]:
    """Rows of one table as a diff lists them, from ``(key values, row then, row now)`` (a row
    as ``{column: value}``, None where absent): ``inserted`` and ``deleted`` with every value,
    ``updated`` with the columns whose values differ (``{"old", "new"}``). A key whose row is
    the same then and now (written and written back), or absent both times (inserted and
    deleted again), is left out."""
    out: dict[str, list] = {"inserted": [], "updated": [], "deleted": []}
    for key, then, now in pairs:
        k = dict(zip(key_columns, key))
        if then is None and now is None:
            continue
        if then is None:
            out["inserted"].append({"key": k, "values": {c: capped(v, limits) for c, v in now.items()}})
        elif now is None:
            out["deleted"].append({"key": k, "values": {c: capped(v, limits) for c, v in then.items()}})
        else:
            cols = {c: {"old": capped(then.get(c), limits), "new": capped(now.get(c), limits)}
                    for c in sorted(set(then) | set(now)) if then.get(c) != now.get(c)}
            if cols:
                out["updated"].append({"key": k, "columns": cols})
    return out


class Store(ABC):
    """One state store of one site.

    Attributes:
        site: the site's name, for messages.
        kind: ``mysql``, ``postgres``, ``files``, ``redis`` or ``cache``.
        label: a short unique name of the store within the site (e.g. ``mysql:magentodb``).
    """

    kind: str = ""

    def __init__(self, site: str, label: str):
        self.site = site
        self.label = label

    @abstractmethod
    def snapshot(self, name: str) -> dict:
        """Copy the current state into snapshot ``name`` (replacing one of that name) and make
        ``name`` the baseline that :meth:`changes` compares against.

        Returns:
            The store's manifest entry: ``{"fingerprint": {...}, "size": bytes, ...}``.
        """

    #: The site's container transport (``docker exec``), or None when the store reaches its
    #: data only over the network.
    transport = None

    def changes(self, name: str) -> Changes:
        """What differs from snapshot ``name`` now (exact: nothing changed is reported empty).

        Runs :meth:`detect_requests` in one round trip and hands the results to
        :meth:`parse_changes`; a site batches all its stores' requests the same way.
        """
        reqs = self.detect_requests(name)
        return self.parse_changes(name, run_batch(self.transport, reqs, f"{self.site}: {self.label} changes") if reqs else [])

    def detect_requests(self, name: str) -> list:
        """The requests (:class:`~sitectl.stores.transport.Command` or a SQL session's
        :class:`~sitectl.stores.sql.Query`) whose results tell what changed."""
        return []

    def parse_changes(self, name: str, results: list) -> Changes:
        """Turn the results of :meth:`detect_requests` (``(exit code, output)`` of a command,
        :class:`~sitectl.stores.sql.SqlResult` of a query) into :class:`Changes`.

        Raises:
            StoreError: a command failed in a way that says nothing about changes.
        """
        return Changes()

    def change_marks(self, changes: Changes) -> set[str]:
        """What ``changes`` found, as identities that stay the same while the same thing stays
        changed (a row's table and key, a file's path), not counts: a later detection holding a
        mark this one lacks found something written after it. This default uses the items."""
        return set(changes.items)

    def diffable(self, changes: Changes) -> bool:
        """Whether ``changes`` came from a record of changes relative to the snapshot (a diff can
        be read from it); False when the store has none (another baseline, no tracking), which
        it says by asking for a full restore and nothing else."""
        return not changes.detail.get("full")

    def diff(self, name: str, changes: Changes, limits: DiffLimits) -> dict:
        """What ``changes`` (this store's detection against snapshot ``name``) found, in the
        terms of docs/diff.md: this default gives the changed items only (``{"items": [...]}``);
        the SQL, files and Redis stores add rows, files and keys with their values.

        Raises:
            StoreError: a query or command failed.
        """
        return {"items": list(changes.items)}

    def diff_checkpoint(self, ckpt: str, entry: dict, golden: str, changes: Changes, limits: DiffLimits) -> dict:
        """What changed since checkpoint ``ckpt`` (``entry``: this store's entry of its record;
        ``changes``: the detection against ``golden``), in :meth:`diff`'s terms. This default: the
        diff against golden when the checkpoint holds nothing of the store (its state then was
        golden's).

        Raises:
            DiffUnavailable: the checkpoint holds something of a store that cannot compare.
        """
        if entry:
            raise DiffUnavailable(f"{self.site}: {self.label} cannot be compared with checkpoint {ckpt!r}")
        return self.diff(golden, changes, limits)

    @abstractmethod
    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        """Bring the state back to snapshot ``name``: only ``changes`` when given (delta),
        everything otherwise (full). Returns what was restored."""

    def check_requests(self, name: str, changes: Changes) -> list:
        """The requests of the closing check after a delta restore of ``changes``: by default
        the whole detection again."""
        return self.detect_requests(name)

    def parse_check(self, name: str, changes: Changes, results: list) -> list[str]:
        """What is left changed after the restore, from the results of :meth:`check_requests`."""
        return self.parse_changes(name, results).items

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        """The delta restore of ``changes`` (from :meth:`changes`) as requests, so the site can
        run every store's restore, the cache flushes and the closing check in one round trip:
        ``[]`` when there is nothing to do, None when this restore needs dependent steps (then
        the site calls :meth:`restore`). A request fails by its exit code or SQL error."""
        return None

    @abstractmethod
    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        """Full content fingerprint: ``{item: digest}`` of the live state (``name`` None) or
        of snapshot ``name``."""

    @abstractmethod
    def drop(self, name: str) -> None:
        """Delete snapshot ``name`` (no error when absent)."""

    def exists(self, name: str) -> bool:
        """True when snapshot ``name`` exists in this store."""
        return True

    def held(self) -> set[str]:
        """The names of the snapshot copies this store holds in its container, complete or not
        (``sitectl snapshot prune`` removes those no manifest lists). Names read from the
        container are untrusted: only those :func:`check_snapshot_name` accepts are returned."""
        return set()

    #: Folder inside the container where exports and imports are staged.
    STAGE = "/var/lib/sitectl/stage"

    @property
    def payload_local(self) -> bool:
        """True when :meth:`export_payload` and :meth:`import_payload` use files beside this
        process (a network session) rather than inside the container."""
        s = getattr(self, "session", None)
        return bool(s is not None and s.files_local)

    def export_payload(self, name: str, stage: str) -> str | None:
        """Write snapshot ``name`` of this store to one file under ``stage`` in the container
        and return its path (None when the store has nothing to export)."""
        return None

    def import_payload(self, name: str, path: str, original: str) -> None:
        """Load a file written by :meth:`export_payload` (of snapshot ``original``) as snapshot
        ``name``."""

    # -- checkpoints (sitectl.snapshots.checkpoint; docs/checkpoints.md) ----------------------
    def checkpoint_refusal(self, changes: Changes) -> str:
        """Why ``changes`` (this store's detection against golden) cannot be kept as a
        checkpoint ("" when it can), read before anything is copied: no change log relative to
        golden, a schema change. This default: any change (a store that keeps no checkpoints)."""
        if not self.diffable(changes):
            return "its change log does not follow golden (" + "; ".join(changes.items[:2]) + ")"
        return f"it keeps no checkpoints and changed since golden ({', '.join(changes.items[:3])})" if changes else ""

    def checkpoint_save(self, ckpt: str, golden: str, changes: Changes) -> dict:
        """Keep what ``changes`` (this store's detection against snapshot ``golden``, read with
        the site's jobs paused) found as checkpoint ``ckpt`` inside the container: the changed
        rows, files or keys as they are now, and what was removed, nothing else. A checkpoint of
        the same name is replaced.

        Returns:
            The store's entry of the checkpoint record (JSON): what :meth:`checkpoint_apply_requests`
            needs besides the copies.

        Raises:
            CheckpointUnavailable: the store cannot keep this state as a delta from golden (this
                default: any change at all; the SQL stores: a schema change or no change log).
            StoreError: a copy failed.
        """
        why = self.checkpoint_refusal(changes)
        if why:
            raise CheckpointUnavailable(f"{self.site}: {self.label}: {why}")
        return {}

    def checkpoint_apply_requests(self, ckpt: str, golden: str, entry: dict) -> list:
        """The requests that turn this store, at snapshot ``golden``, into checkpoint ``ckpt``
        (``entry``: what :meth:`checkpoint_save` returned); their writes are logged as the
        application's would be, so the change log then follows golden again. A request fails by
        its exit code or SQL error. This default: none."""
        return []

    def checkpoint_check_requests(self, ckpt: str, entry: dict) -> list:
        """The requests, run right after :meth:`checkpoint_apply_requests` in the same round trip,
        whose results tell whether the store now holds checkpoint ``ckpt``'s content: digests of
        the rows, listings of the files, read live and compared by :meth:`checkpoint_check` with
        what the save read live (the container's copies are not trusted). This default: none."""
        return []

    def checkpoint_check(self, entry: dict, results: list, detected: list) -> list[str]:
        """What differs from the content the save recorded in ``entry``, from the results of
        :meth:`checkpoint_check_requests` and of :meth:`detect_requests` against golden, read in
        the same round trip ([] when nothing does)."""
        return []

    def checkpoint_marks(self, changes: Changes) -> list[str]:
        """What ``changes`` found, as the identities a checkpoint's restore must find again
        (sorted :meth:`change_marks`)."""
        return sorted(self.change_marks(changes))

    def checkpoint_drop(self, ckpt: str) -> None:
        """Delete checkpoint ``ckpt``'s copies in the container (no error when absent)."""

    def checkpoint_held(self) -> set[str]:
        """The names of the checkpoints whose copies this store holds in its container
        (untrusted names filtered as :meth:`held`'s)."""
        return set()

    def after_restore_requests(self) -> list:
        """Commands run after every store of the site restored (caches flush here)."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.site}/{self.label}>"
