"""``sitectl env`` and ``sitectl hosts``: what clients point at (the sites' variables, host
names and ``/etc/hosts`` lines); nothing changes. Harnesses run ``env`` in loops: this module
imports no table, console or engine of its own."""
from __future__ import annotations

import click

from sitectl.cli.common import target_options
from sitectl.ops import envvars
from sitectl.stack.target import Target


@click.command()
@target_options
def hosts(target: Target, as_json: bool):
    """Show the sites' host names, which ones this machine cannot resolve, and the
    /etc/hosts lines that would fix that (see --site-hosts)."""
    names = envvars.host_names(target)
    if as_json:
        return names
    for site, h in names["hosts"].items():
        click.echo(f"{site:16} {h}{'  (not resolved here)' if h in names['unresolved'] else ''}")
    for line in names["lines"]:
        click.echo(f"# for /etc/hosts:\n{line}")


@click.command()
@click.option("--format", "fmt", type=click.Choice(envvars.FORMATS), default="webarena", show_default=True)
@target_options
def env(target: Target, as_json: bool, fmt):
    """Print the sites' environment variables (WebArena, BrowserGym or .env format)."""
    values = envvars.env_vars(target, fmt)
    if as_json:
        return values
    click.echo(envvars.env_text(values, fmt))
