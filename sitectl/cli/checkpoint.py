"""``sitectl checkpoint save|restore|list|delete``: mid-episode states kept as their delta from
golden (docs/checkpoints.md)."""
from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from sitectl.cli.common import _reporter, out, target_options
from sitectl.engine import DockerEngine
from sitectl.ops import lease_record
from sitectl.snapshots import checkpoint as checkpoints
from sitectl.stack.target import Target


@click.group()
def checkpoint():
    """Checkpoints: a mid-episode state kept as its delta from golden, restored in milliseconds."""


@checkpoint.command("save")
@click.argument("name")
@click.argument("sites", nargs=-1)
@target_options
def checkpoint_save(target: Target, as_json: bool, name, sites):
    """Save what changed since golden in SITES (default: every site golden covers) as checkpoint
    NAME (replacing one of that name)."""
    rec = checkpoints.save(target, name, target.stack.select(sites), DockerEngine(), named=bool(sites),
                           reporter=_reporter(as_json))
    rows = [{"site": s, "changed": e["changed"], "seconds": e["seconds"],
             "size": sum(int(v.get("size", 0)) for v in e["stores"].values())} for s, e in sorted(rec["sites"].items())]
    if as_json:
        return {"name": name, "created": rec["created"], "sites": rows}
    t = Table("site", "changed", "seconds", "bytes")
    for r in rows:
        t.add_row(r["site"], str(r["changed"]), f"{r['seconds']:.3f}", str(r["size"]))
    out.print(t)
    out.print(f"checkpoint {escape(name)} saved")
    return None


@checkpoint.command("restore")
@click.argument("name")
@click.argument("sites", nargs=-1)
@click.option("--no-wait", is_flag=True, help="Fail at once (exit 10) if another sitectl holds the instance.")
@click.option("--force", is_flag=True, help="Restore an instance that a reset server has leased all the same.")
@target_options
def checkpoint_restore(target: Target, as_json: bool, name, sites, no_wait, force):
    """Bring SITES (default: every site the checkpoint holds) to checkpoint NAME, from any state:
    back to golden (the reset's delta), the checkpoint applied, checked against what was saved."""
    lease_record.check(target.instance, force, "checkpoint restore")
    chosen = target.stack.select(sites) if sites else None
    rows = checkpoints.restore(target, name, chosen, DockerEngine(), _reporter(as_json), wait=not no_wait)
    if as_json:
        return {"name": name, "sites": [r.as_dict() for r in rows]}
    t = Table("site", "changed", "seconds", "way to golden")
    for r in rows:
        t.add_row(r.site, str(len(r.changed)), f"{r.seconds:.3f}", "; ".join(r.escalations))
    out.print(t)
    for r in rows:
        for n in r.notes:
            out.print(f"[yellow]note[/yellow]: {escape(n)}")
    return None


@checkpoint.command("list")
@target_options
def checkpoint_list(target: Target, as_json: bool):
    """List the instance's checkpoints."""
    rows = checkpoints.list_checkpoints(target)
    if as_json:
        return {"checkpoints": rows}
    t = Table("name", "created", "sites", "changed", "bytes")
    for r in rows:
        t.add_row(r["name"], str(r["created"]), "DAMAGED" if r.get("damaged") else ", ".join(r["sites"]),
                  str(r["changed"]), str(r["size"]))
    out.print(t)
    for r in rows:
        if r.get("damaged"):
            out.print(escape(r["damaged"]))
    return None


@checkpoint.command("delete")
@click.argument("name")
@target_options
def checkpoint_delete(target: Target, as_json: bool, name):
    """Delete checkpoint NAME: its copies in the containers and its record."""
    done = checkpoints.delete(target, name, DockerEngine())
    if as_json:
        return {"name": name, "dropped": done}
    out.print(f"checkpoint {escape(name)} deleted ({', '.join(done) or 'no container held copies'})")
    return None
