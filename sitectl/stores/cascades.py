"""Foreign-key actions as change tracking sees them: which rows a delete or an update of one row
changes in other tables, when the server's own triggers are not told.

MariaDB (through 11.x) and MySQL fire no trigger for the rows a foreign-key action changes
(``ON DELETE CASCADE``, ``SET NULL``, ``SET DEFAULT`` and their ``ON UPDATE`` forms): "Triggers
are not activated by foreign key actions" (MariaDB Knowledge Base, "Trigger Limitations";
MySQL 8.0 Reference Manual, 25.3.1 "Trigger Syntax and Examples"). So a row trigger on the
child table never logs them, and a reset that trusts the change log leaves the cascaded rows
lost. The tracking therefore asks, *before* a row of the parent is deleted or its referenced
columns change, which rows of the child tables reference it, following the foreign keys table
by table, and logs their keys as changed (:func:`log_selects`).

A path follows what the server does (InnoDB, ``row_ins_foreign_check_on_constraint``):

* a deleted row: every foreign key to it whose ``ON DELETE`` is an action changes the child
  rows that reference it; with ``CASCADE`` those rows are deleted in turn (their own children
  follow), with ``SET NULL``/``SET DEFAULT`` their foreign-key columns change, which is an
  update of those columns;
* an updated row: only when a referenced column changes (``NOT (OLD.c <=> NEW.c)``); every
  foreign key over the changed columns whose ``ON UPDATE`` is an action changes its child rows'
  foreign-key columns, which is an update of those columns in turn.

A path that comes back to a foreign key it has taken (a cycle, e.g. a table referencing
itself), or that grows past :data:`MAX_DEPTH`, logs its last table whole (key ``''``): the
reset then restores that table whole. With ``FOREIGN_KEY_CHECKS=0`` no action runs (InnoDB
skips them with the checks), so nothing is logged then, which is also how sitectl's own restore
writes stay out of the log.
"""
from __future__ import annotations

from dataclasses import dataclass

from sitectl.stores.literals import m_value, q_ident

#: The referential actions that change child rows (``RESTRICT`` and ``NO ACTION`` refuse instead).
ACTIONS = ("CASCADE", "SET NULL", "SET DEFAULT")
#: Foreign keys a path follows before it logs its last table whole.
MAX_DEPTH = 6


@dataclass(frozen=True)
class ForeignKey:
    """One foreign key: ``child.child_cols`` references ``parent.parent_cols``.

    Attributes:
        name: the constraint's name.
        child, parent: table names (one database).
        child_cols, parent_cols: column names, pairwise.
        on_update, on_delete: the rules as ``information_schema.REFERENTIAL_CONSTRAINTS``
            spells them (``CASCADE``, ``SET NULL``, ``SET DEFAULT``, ``RESTRICT``, ``NO ACTION``).
    """

    name: str
    child: str
    parent: str
    child_cols: tuple[str, ...]
    parent_cols: tuple[str, ...]
    on_update: str
    on_delete: str


@dataclass(frozen=True)
class Path:
    """Foreign keys followed from a changed row of ``edges[0].parent`` to the rows of
    ``edges[-1].child`` it changes; ``whole`` when that table is to be logged whole."""

    edges: tuple[ForeignKey, ...]
    whole: bool = False


def paths(fks: list[ForeignKey], table: str, event: str) -> list[Path]:
    """Every path of foreign-key actions a ``delete`` or ``update`` of a row of ``table`` starts.

    Raises:
        ValueError: ``event`` is neither ``delete`` nor ``update``.
    """
    if event not in ("delete", "update"):
        raise ValueError(f"event {event!r}: delete or update")
    by_parent: dict[str, list[ForeignKey]] = {}
    for fk in fks:
        by_parent.setdefault(fk.parent, []).append(fk)
    out: list[Path] = []

    def walk(tbl: str, ev: str, changed: tuple[str, ...] | None, trail: tuple[ForeignKey, ...]) -> None:
        for fk in by_parent.get(tbl, []):
            rule = fk.on_delete if ev == "delete" else fk.on_update
            if rule not in ACTIONS:
                continue
            if ev == "update" and changed is not None and not set(fk.parent_cols) & set(changed):
                continue
            path = (*trail, fk)
            if fk in trail or len(path) > MAX_DEPTH:
                out.append(Path(path, whole=True))
                continue
            out.append(Path(path))
            if ev == "delete" and rule == "CASCADE":
                walk(fk.child, "delete", None, path)
            else:  # the child rows' foreign-key columns change: an update of those columns
                walk(fk.child, "update", fk.child_cols, path)

    walk(table, event, None, ())
    return out


def log_select(db: str, path: Path, pk: dict[str, list[str]], row: str = "OLD") -> str:
    """A ``SELECT`` of ``(tbl, pk)`` rows: the keys of the rows of the path's last table that a
    change of the trigger's ``row`` (``OLD``) in its first table changes, keyed as the row
    triggers key them (``JSON_ARRAY`` of the primary key by ``pk``; ``''`` for a table without
    one or a path logged whole). The tables are joined over their foreign keys (the server
    indexes every foreign key's columns, so each join is an index lookup)."""
    edges = path.edges
    last = edges[-1].child
    keys = pk.get(last) or []
    alias = [f"c{i}" for i in range(1, len(edges) + 1)]
    if path.whole or not keys:
        return f"SELECT {m_value(last)} AS tbl, '' AS pk FROM DUAL WHERE EXISTS (SELECT 1 FROM {_joins(db, edges, alias, row)})"
    cols = ", ".join(f"{alias[-1]}.{q_ident(c)}" for c in keys)
    return f"SELECT {m_value(last)} AS tbl, JSON_ARRAY({cols}) AS pk FROM {_joins(db, edges, alias, row)}"


def update_condition(fk: ForeignKey) -> str:
    """True when an ``UPDATE`` changes a column ``fk`` references (``NEW`` against ``OLD``)."""
    return " OR ".join(f"NOT (OLD.{q_ident(c)} <=> NEW.{q_ident(c)})" for c in fk.parent_cols)


def _joins(db: str, edges: tuple[ForeignKey, ...], alias: list[str], row: str) -> str:
    first = edges[0]
    parts = [f"{q_ident(db)}.{q_ident(first.child)} {alias[0]}"]
    for i, fk in enumerate(edges[1:], start=1):
        on = " AND ".join(f"{alias[i]}.{q_ident(c)} = {alias[i - 1]}.{q_ident(p)}"
                          for c, p in zip(fk.child_cols, fk.parent_cols, strict=True))
        parts.append(f"JOIN {q_ident(db)}.{q_ident(fk.child)} {alias[i]} ON {on}")
    where = " AND ".join(f"{alias[0]}.{q_ident(c)} = {row}.{q_ident(p)}"
                         for c, p in zip(first.child_cols, first.parent_cols, strict=True))
    return " ".join(parts) + f" WHERE {where}"
