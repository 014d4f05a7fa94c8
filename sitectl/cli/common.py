"""The CLI's shared plumbing: the lazy command group, the options every command takes, the
guarded runner (one clear error and its exit code, ``--json`` output), progress, tables, the
token file.

Start-up: this module imports only click and the standard library (``sitectl --help`` and
``run()`` load it). The console ``out`` (rich) is made on first use, and the engine and the
stack are imported when a command runs.
"""
from __future__ import annotations

import functools
import importlib
import json
import os
import re
import secrets
import stat
import sys
from gettext import gettext as _
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sitectl.errors import SitectlError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from sitectl.progress import Reporter


def __getattr__(name: str):
    """``out``: the console the commands print to (``from sitectl.cli.common import out``),
    made on first use: rich costs ~30 ms at start-up."""
    if name == "out":
        return _out()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _out() -> Console:
    from rich.console import Console  # noqa: PLC0415 - slow third-party module at start-up

    # Piped output is not cut at 80 columns (URLs and messages stay whole).
    return Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 200)


# click >= 8.4 raises NoSuchCommand, with close names ("Did you mean 'status'?"); older ones, a
# plain UsageError without suggestions.
_NoSuchCommand = getattr(click.exceptions, "NoSuchCommand", ())


class LazyGroup(click.Group):
    """A click group whose commands (``lazy``: name -> (module in sitectl.cli, attribute, help),
    as :data:`sitectl.cli.COMMANDS`) are imported when one runs; its ``--help`` lists them from
    the table alone. Commands added with ``add_command`` work as in any group."""

    def __init__(self, *args, lazy: dict[str, tuple[str, str, str]], **kw):
        super().__init__(*args, **kw)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.lazy, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in self.lazy:
            module, attr = self.lazy[cmd_name][:2]
            cmd = getattr(importlib.import_module(f"sitectl.cli.{module}"), attr)
        return cmd

    def resolve_command(self, ctx: click.Context, args: list[str]):
        try:
            return super().resolve_command(ctx, args)
        except _NoSuchCommand as e:  # its close names come from self.commands: take every name
            raise _NoSuchCommand(e.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing (``Group.format_commands``), over stand-ins that carry the help
        of the commands not imported yet."""
        commands = []
        for name in self.list_commands(ctx):
            cmd = self.commands.get(name) or click.Command(name, help=self.lazy[name][2])
            if not cmd.hidden:
                commands.append((name, cmd))
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _cmd in commands)
            with formatter.section(_("Commands")):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in commands])


def target_option_flags(f):
    """The options every command shares, as click parameters only (:func:`target_options`
    turns them into a target): --stack, --host, --site-hosts, --instance, --seed, --scale,
    --data-dir, --config, --json."""
    for option in reversed((
        click.option("--stack", help="Stack: mini (default), webarena, or a path to a stack YAML file."),
        click.option("--host", help="Host name or IPv4 the browser uses (default: config, running stack, 127.0.0.1)."),
        click.option("--site-hosts/--no-site-hosts", default=None,
                     help="Give each site its own host name under --host (shopping.localhost), so that no "
                          "two sites share cookies (default: config, running stack, off)."),
        click.option("--instance", type=int, default=None, help="Instance number (0 = WebArena's names and ports)."),
        click.option("--seed", type=int, default=None, help="Replica seed (default: config, else 0)."),
        click.option("--scale", type=click.Choice(["tiny", "full"]), default=None, help="Replica scale (default tiny)."),
        click.option("--data-dir", type=click.Path(file_okay=False), help="Folder for {data} (e.g. the wiki ZIM)."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False),
                     help="Config file (default ./sitectl.yaml)."),
        click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."),
    )):
        f = option(f)
    return f


def monitor_options(f):
    """The reset server's monitoring options (``serve``, ``cluster pool``; docs/monitoring.md):
    ``log_format``, ``private_metrics``, ``probe_every``."""
    for option in reversed((
        click.option("--log-format", type=click.Choice(["human", "json"]), default="human", show_default=True,
                     help="The serve log on stderr: human lines, or one JSON object a line."),
        click.option("--private-metrics", is_flag=True,
                     help="GET /metrics needs the token too (default: open; it holds counts only)."),
        click.option("--probe-every", type=click.FloatRange(0, 86400), default=30.0, show_default=True,
                     help="Seconds between health readings of every instance's sites (0: none); failures "
                          "count in sitectl_probe_failures_total and show on the status page."),
    )):
        f = option(f)
    return f


def target_options(f):
    """Options every command shares (:func:`target_option_flags`); the command gets
    ``target`` (the running target of the instance) and ``as_json`` instead of them."""
    @target_option_flags
    @functools.wraps(f)
    def wrapper(stack, host, site_hosts, instance, seed, scale, data_dir, config_file, as_json, **kw):
        def call():
            # Imported when a command runs, not when the CLI loads: python-on-whales, pydantic,
            # requests and rich are slow third-party modules at start-up.
            from sitectl.engine import DockerEngine  # noqa: PLC0415 - slow third-party module at start-up
            from sitectl.engine.recorded import running_target  # noqa: PLC0415 - slow third-party module at start-up

            target = running_target(DockerEngine(), stack, host, instance, data_dir, config_file,
                                    seed=seed, scale=scale, site_hosts=site_hosts)
            return f(target=target, as_json=as_json, **kw)

        run_guarded(call, as_json)
    return wrapper


def run_guarded(call, as_json: bool) -> None:
    """Run a command's body: a SitectlError becomes one clear message and its exit code, an
    interrupt exit 130; with ``--json`` the result is printed as JSON."""
    try:
        result = call()
    except SitectlError as e:
        _fail(str(e), e.exit_code, as_json, getattr(e, "payload", None))
    except KeyboardInterrupt:
        _fail("interrupted", 130, as_json)
    if as_json and result is not None:
        click.echo(json.dumps(result, indent=2, default=str))


def _fail(message: str, code: int, as_json: bool, payload=None) -> None:
    if as_json:
        extra = payload if isinstance(payload, dict) else ({"results": payload} if payload else {})
        click.echo(json.dumps({"error": message, **extra}, indent=2))
    click.echo(f"sitectl: error: {message}", err=True)
    sys.exit(code)


def _reporter(as_json: bool) -> Reporter:
    """Progress goes to stderr, so it is shown with ``--json`` too (stdout stays JSON)."""
    from sitectl.progress import Reporter  # noqa: PLC0415 - slow third-party module at start-up (rich)

    return Reporter()


def _print_sites(rows) -> None:
    """A table of what was done per site, then the URLs in full (one per line)."""
    from rich.table import Table  # noqa: PLC0415 - slow third-party module at start-up

    out = _out()
    t = Table("site", "container", "action", "seconds")
    for r in rows:
        t.add_row(r.site, r.container, r.action, f"{r.seconds:.1f}")
    out.print(t)
    for r in rows:
        out.print(f"{r.site:<16} {r.url}")


def read_or_make_token(path: Path) -> str:
    """The token in ``path`` (stripped); a new random one written there (mode 0600) when the file
    does not exist.

    Raises:
        UsageError: the file is empty, unreadable, or readable by others.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32) + "\n")
    try:
        mode = path.stat().st_mode
        token = path.read_text().strip()
    except OSError as e:
        raise UsageError(f"{path}: cannot read the token file: {e.strerror}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UsageError(f"{path}: the token file is readable by others; chmod 600 it")
    if not re.fullmatch(r"[A-Za-z0-9_-]{16,200}", token):
        raise UsageError(f"{path}: the token file holds no usable token (16 or more of A-Z a-z 0-9 _ -; "
                         "it goes into URLs)")
    return token
