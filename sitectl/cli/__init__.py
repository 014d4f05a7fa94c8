"""``sitectl`` command line (click). Each command has ``--json``; errors exit non-zero with one
clear message on stderr (and ``{"error": ...}`` on stdout with ``--json``).

This module holds ``main``, the table of every command (:data:`COMMANDS`) and ``run()``; each
command group has its module (``lifecycle``, ``checks``, ``env``, ``login``, ``serve``,
``snapshot``, ``checkpoint``, ``diff``, ``images``, ``tasks``, ``cluster``), the shared plumbing is
:mod:`sitectl.cli.common`. ``main`` is lazy (harnesses run the CLI in loops): ``sitectl --help``
imports no command module, ``sitectl CMD`` only CMD's.
"""
from __future__ import annotations

import sys

import click

from sitectl import __version__
from sitectl.cli.common import LazyGroup, _fail

#: Every command of ``sitectl``: name -> (module in sitectl.cli, attribute, the first paragraph
#: of its help, which ``sitectl --help`` shortens as click does). tests/cli/test_commands.py
#: checks this table against the commands themselves.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "build": ("lifecycle", "build", "Build the images the stack builds itself (the mini replicas)."),
    "checkpoint": ("checkpoint", "checkpoint",
                   "Checkpoints: a mid-episode state kept as its delta from golden, restored in milliseconds."),
    "cluster": ("cluster", "cluster",
                "A fleet of instances on a Docker Swarm: deploy, status, push-images, rm (docs/cluster.md)."),
    "diff": ("diff", "diff", "What changed since a snapshot or a checkpoint: rows (with their changed values), files, Redis keys."),
    "doctor": ("checks", "doctor", "Check that each site's container offers what its stack file and stores assume."),
    "down": ("lifecycle", "down", "Remove the instance's containers and network."),
    "env": ("env", "env", "Print the sites' environment variables (WebArena, BrowserGym or .env format)."),
    "hosts": ("env", "hosts", "Show the sites' host names, which ones this machine cannot resolve, and the "
                              "/etc/hosts lines that would fix that (see --site-hosts)."),
    "images": ("images", "images", "Official image archives."),
    "instances": ("checks", "instances", "List every instance on this engine with its sites, URLs and health."),
    "k8s": ("cluster", "k8s", "Kubernetes manifests for a fleet (docs/cluster.md#kubernetes)."),
    "login": ("login", "login_cmd",
              "Write Playwright storage-state files (WebArena's names) by HTTP form login, or --check them."),
    "plan": ("lifecycle", "plan", "Print the docker commands `up` would run, without running anything."),
    "reset": ("lifecycle", "reset", "Reset SITES (default: every mutable site) to the golden snapshot."),
    "serve": ("serve", "serve",
              "Serve resets over HTTP: BrowserGym's /reset and /status, and a JSON API with leases."),
    "snapshot": ("snapshot", "snapshot", "Named snapshots of the sites' state stores."),
    "status": ("checks", "status", "Per site: container state, health and URL."),
    # `sitectl task prepare` reads as well as `sitectl tasks prepare`.
    "task": ("tasks", "tasks", "WebArena task files."),
    "tasks": ("tasks", "tasks", "WebArena task files."),
    "up": ("lifecycle", "up", "Bring SITES (default: all) up, health-checked, and print their URLs. Idempotent."),
    "verify": ("checks", "verify", "Deep health: database, login page, and a logged-in probe, per site."),
}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sitectl")
def main():
    """Provision, check, reset and tear down WebArena-family benchmark sites."""


def run() -> None:
    """Console-script entry point: click's own usage errors (a bad option value) become the
    same one-line error, and ``{"error": ...}`` on stdout when ``--json`` was given."""
    as_json = "--json" in sys.argv[1:]
    try:
        main(standalone_mode=False)
    except click.exceptions.Abort:
        _fail("interrupted", 130, as_json)
    except click.ClickException as e:
        if isinstance(e, click.exceptions.UsageError) and e.ctx is not None and not as_json:
            click.echo(e.ctx.get_usage(), err=True)
        _fail(e.format_message(), 2, as_json)
    except SystemExit:
        raise


if __name__ == "__main__":
    run()
