"""``sitectl snapshot create|list|restore|export|import|delete|prune``: named snapshots of the sites'
state stores."""
from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from sitectl import snapshots
from sitectl.cli.common import _reporter, out, target_options
from sitectl.engine import DockerEngine
from sitectl.stack.target import Target


@click.group()
def snapshot():
    """Named snapshots of the sites' state stores."""


@snapshot.command("create")
@click.argument("name")
@click.argument("sites", nargs=-1)
@target_options
def snapshot_create(target: Target, as_json: bool, name, sites):
    """Snapshot SITES (default: all with state stores) as NAME (replacing one of that name)."""
    m = snapshots.create(target, name, target.stack.select(sites), DockerEngine(), _reporter(as_json))
    if as_json:
        return m
    out.print(f"snapshot {name}: {', '.join(m['sites'])}")


@snapshot.command("list")
@click.option("--all", "show_all", is_flag=True,
              help="Also list the copies the containers hold that no manifest lists (of a snapshot that failed or "
                   "was killed); `sitectl snapshot prune` removes them.")
@target_options
def snapshot_list(target: Target, as_json: bool, show_all):
    """List the instance's snapshots."""
    rows = snapshots.list_snapshots(target)
    left = snapshots.leftovers(target, DockerEngine()) if show_all else None
    if as_json:
        return {"snapshots": rows, **({"leftovers": left} if show_all else {})}
    t = Table("name", "created", "sites", "bytes")
    for r in rows:
        sites = ", ".join(r["sites"] + [f"{n} (incomplete)" for n in r["incomplete"]])
        t.add_row(r["name"], str(r["created"]), "DAMAGED" if r.get("damaged") else sites, str(r["size"]))
    out.print(t)
    for r in rows:
        if r.get("damaged"):
            out.print(r["damaged"])
    if show_all:
        _print_leftovers(left, "no copy outside the snapshots above",
                         "copies no manifest lists (never used; `sitectl snapshot prune` removes them):")


def _print_leftovers(rows: list[dict], none: str, head: str) -> None:
    if not rows:
        out.print(none)
        return
    out.print(head)
    for r in rows:
        out.print(f"  {r['site']} {r['store']} {r['name']!r}: {r['why']}")


@snapshot.command("prune")
@target_options
def snapshot_prune(target: Target, as_json: bool):
    """Remove the copies that no manifest lists (`snapshot list --all` shows them): those of a
    snapshot that failed or was killed. Listed snapshots are never touched."""
    rows = snapshots.prune(target, DockerEngine(), _reporter(as_json))
    if as_json:
        return {"removed": rows}
    _print_leftovers(rows, "nothing to remove", "removed:")


@snapshot.command("restore")
@click.argument("name")
@click.argument("sites", nargs=-1)
@target_options
def snapshot_restore(target: Target, as_json: bool, name, sites):
    """Restore SITES (default: all in the snapshot) to snapshot NAME; it becomes their baseline."""
    m = snapshots.read_manifest(target, name)
    # Default: every site the snapshot covers or should cover; an incomplete one is refused
    # (nothing is restored) rather than skipped.
    named = list(m["sites"]) + [s for s in (m.get("incomplete") or {}) if s not in m["sites"]]
    chosen = target.stack.select(sites) if sites else [target.stack.sites[s] for s in named if s in target.stack.sites]
    rows = snapshots.reset(target, chosen, DockerEngine(), name=name, reporter=_reporter(as_json))
    if as_json:
        return {"sites": [r.as_dict() for r in rows]}
    for r in rows:
        out.print(f"{r.site}: {r.method} ({len(r.changed)} item(s), {r.seconds:.3f} s)")


@snapshot.command("export")
@click.argument("name")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@target_options
def snapshot_export(target: Target, as_json: bool, name, file: Path):
    """Write snapshot NAME to FILE (.tar.gz with a manifest and SHA-256 of every file)."""
    res = snapshots.export(target, name, file, DockerEngine(), _reporter(as_json))
    if as_json:
        return res
    out.print(f"exported {name} to {res['archive']} ({res['bytes']} bytes, {res['files']} files)")


@snapshot.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", "new_name", help="Snapshot name to load it as (default: the archive's).")
@target_options
def snapshot_import(target: Target, as_json: bool, file: Path, new_name):
    """Load an archive written by `snapshot export` (checked in full before anything changes)."""
    res = snapshots.import_(target, file, DockerEngine(), new_name, _reporter(as_json))
    if as_json:
        return res
    out.print(f"imported {res['name']}: {', '.join(res['sites'])}")


@snapshot.command("delete")
@click.argument("name")
@target_options
def snapshot_delete(target: Target, as_json: bool, name):
    """Delete snapshot NAME (its copies in the containers and its manifest)."""
    done = snapshots.delete(target, name, DockerEngine())
    if as_json:
        return {"deleted": name, "sites": done}
    out.print(f"deleted snapshot {name}")
