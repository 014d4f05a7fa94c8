"""``sitectl login``: Playwright storage-state files by HTTP form login, or ``--check`` them."""
from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from sitectl.cli.common import _reporter, out, target_options
from sitectl.errors import LoginsFailed, UsageError
from sitectl.ops import login as loginmod
from sitectl.stack.target import Target


@click.command("login")
@click.argument("sites", nargs=-1)
@click.option("--all", "all_sites", is_flag=True, help="Every site with a login and an account of the role.")
@click.option("--role", default="default", show_default=True, help="Account role (the stack file's accounts.<role>).")
@click.option("--out", "out_folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of the state files (default ./.auth; other roles: <folder>/<role>).")
@click.option("--check", "check_only", is_flag=True,
              help="Check the existing files with WebArena's probes; log in again where the session is gone.")
@target_options
def login_cmd(target: Target, as_json: bool, sites, all_sites, role, out_folder, check_only):
    """Write Playwright storage-state files (WebArena's names) by HTTP form login, or --check them.

    One file per site and WebArena's pairs (gitlab.reddit, gitlab.shopping,
    gitlab.shopping_admin, shopping.shopping_admin); files are mode 0600.
    """
    if sites and all_sites:
        raise UsageError("give SITE names or --all, not both")
    chosen = target.stack.select(sites) if sites else [s for s in target.stack.sites.values()
                                                       if s.name in loginmod.STATE_SITES or all_sites]
    rep = _reporter(as_json)
    if check_only:
        res = loginmod.check(target, chosen, role, out_folder, reporter=rep)
        if not as_json:
            t = Table("file", "site", "state", "detail")
            for r in res["files"]:
                t.add_row(Path(r["file"]).name, r["site"], r["state"], escape(r["detail"]))
            out.print(t)
    else:
        res = loginmod.login(target, chosen, role, out_folder, explicit=bool(sites), reporter=rep)
        if not as_json:
            t = Table("site", "user", "state", "seconds", "detail")
            for r in res["sites"]:
                t.add_row(r["site"], r["username"], r["state"], f"{r['seconds']:.2f}", escape(r["detail"]))
            out.print(t)
            out.print(f"{len(res['files'])} file(s) in {res['folder']}: "
                      + ", ".join(Path(f["file"]).name for f in res["files"]))
            for sk in res["skipped_pairs"]:
                out.print(f"pair {'.'.join(sk['pair'])} skipped: {sk['reason']}")
    if not res["ok"]:
        raise LoginsFailed.from_result(res)
    return res if as_json else None
