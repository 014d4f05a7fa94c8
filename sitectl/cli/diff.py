"""``sitectl diff``: what changed since golden (or another snapshot, or a checkpoint), row by row, file by
file, key by key (docs/diff.md)."""
from __future__ import annotations

import json

import click
from rich.markup import escape

from sitectl import snapshots
from sitectl.cli.common import out, target_options
from sitectl.engine import DockerEngine
from sitectl.stack.target import Target
from sitectl.stores.base import DiffLimits

#: Rows, files or keys the table output shows per table or store (``--json`` has them all).
SHOWN = 10


@click.command()
@click.argument("sites", nargs=-1)
@click.option("--since", default=snapshots.GOLDEN, show_default=True,
              help="Snapshot or checkpoint to compare with (golden: the one a reset goes back to; checkpoint:NAME "
                   "or snapshot:NAME when a name is both).")
@click.option("--rows", type=click.IntRange(0, 10_000), default=DiffLimits.rows, show_default=True,
              help="Rows listed per table (every table's count of changed rows is always given).")
@click.option("--value-chars", type=click.IntRange(16, 1_000_000), default=DiffLimits.value_chars, show_default=True,
              help="Characters of one value shown; a longer one is cut and given with its length and SHA-256.")
@target_options
def diff(target: Target, as_json: bool, sites, since, rows, value_chars):
    """What changed since a snapshot or a checkpoint: rows (with their changed values), files, Redis keys."""
    limits = DiffLimits(rows=rows, value_chars=value_chars)
    result = snapshots.diff(target, target.stack.select(sites), DockerEngine(), since, limits, named=bool(sites))
    if as_json:
        return result
    for s in result["sites"]:
        if not s["changed"]:
            out.print(f"[bold]{s['site']}[/bold]: [green]nothing changed since {escape(since)}[/green]")
            continue
        out.print(f"[bold]{s['site']}[/bold]: changed since {escape(since)}")
        for st in s["stores"]:
            if st["items"] or any(st.get(k) for k in ("tables", "files", "keys", "indices", "auto_increment")):
                _print_store(st)


def _short(v) -> str:
    if isinstance(v, dict) and set(v) == {"cut", "length", "sha256"}:
        return json.dumps(v["cut"][:40]) + f"… ({v['length']} chars)"
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"


def _key(k: dict) -> str:
    return ", ".join(f"{c}={_short(v)}" for c, v in k.items())


def _print_store(st: dict) -> None:
    out.print(f"  {escape(st['store'])}")
    for sc in st.get("schema", []):
        out.print("    schema: " + escape(", ".join(f"{v}" for v in sc.values())))
    for t in st.get("tables", []):
        counts = ", ".join(f"{len(t.get(k, []))} {k}" for k in ("inserted", "updated", "deleted"))
        note = t.get("rows") or counts + (" (first listed)" if t.get("truncated") else "")
        out.print(f"    table {escape(t['table'])}: {t['rows_logged']} logged, {escape(note)}")
        shown = [("+", r) for r in t.get("inserted", [])] + [("~", r) for r in t.get("updated", [])] + \
                [("-", r) for r in t.get("deleted", [])]
        for mark, r in shown[:SHOWN]:
            detail = (", ".join(f"{c}: {_short(v['old'])} → {_short(v['new'])}" for c, v in r["columns"].items())
                      if mark == "~" else "")
            out.print(f"      {mark} {escape(_key(r['key']))}" + (f"  {escape(detail)}" if detail else ""))
        if len(shown) > SHOWN:
            out.print(f"      … {len(shown) - SHOWN} more (--json)")
    entries = [(f["change"], f["path"], f.get("now") or f.get("was") or {}) for f in st.get("files", [])]
    entries += [(k["change"], k["key"], {}) for k in st.get("keys", [])]
    entries += [(x["change"], f"index {x['index']}", {}) for x in st.get("indices", [])]
    for change, what, info in entries[:SHOWN]:
        size = f" ({info['type']}, {info['size']} bytes)" if "size" in info else ""
        out.print(f"    {change:<8} {escape(what)}{size}")
    if len(entries) > SHOWN:
        out.print(f"    … {len(entries) - SHOWN} more (--json)")
    if not any(st.get(k) for k in ("schema", "tables", "files", "keys", "indices")):
        for item in st["items"]:
            out.print(f"    {escape(item)}")
