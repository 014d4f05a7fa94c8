"""``sitectl images load``: the official image archives."""
from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from sitectl.cli.common import _reporter, out, target_options
from sitectl.engine import DockerEngine
from sitectl.sites import containers
from sitectl.stack.target import Target


@click.group()
def images():
    """Official image archives."""


@images.command("load")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@target_options
def images_load(target: Target, as_json: bool, directory: Path):
    """docker load each site's official .tar found in DIRECTORY (e.g. shopping_final_0712.tar)."""
    eng = DockerEngine()
    eng.ping()
    rows = containers.load_archives(target, directory, eng, _reporter(as_json))
    if as_json:
        return {"archives": rows}
    t = Table("site", "archive", "status")
    for r in rows:
        t.add_row(r["site"], r["archive"], r["status"])
    out.print(t)
