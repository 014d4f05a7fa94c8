"""``sitectl env`` and ``sitectl hosts``: what clients point at (the sites' variables, host
names and ``/etc/hosts`` lines); nothing changes. Harnesses run ``env`` in loops: this module
imports no table, console or engine of its own."""
from __future__ import annotations

import click

from sitectl.cli.common import run_guarded, target_option_flags, target_options
from sitectl.engine import DockerEngine
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
@target_option_flags
def env(fmt, stack, host, site_hosts, instance, seed, scale, data_dir, config_file, as_json):
    """Print the sites' environment variables (WebArena, BrowserGym or .env format)."""
    def call():
        # Remembered between runs (keyed by every input, checked against the stack's files):
        # a harness loop does not load the stack model each time.
        values = envvars.running_env_vars(DockerEngine(), fmt, stack=stack, host=host, instance=instance,
                                          data_dir=data_dir, config=config_file, seed=seed, scale=scale,
                                          site_hosts=site_hosts)
        if as_json:
            return values
        click.echo(envvars.env_text(values, fmt))
    run_guarded(call, as_json)
