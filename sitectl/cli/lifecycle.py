"""``sitectl up``, ``plan``, ``down``, ``reset``, ``build``: bring an instance's sites up (or
print the docker commands that would), tear them down, reset them, build their images."""
from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from sitectl.cli.common import _print_sites, _reporter, out, target_options
from sitectl.engine import DockerEngine
from sitectl.errors import LoginsFailed
from sitectl.ops import envvars, lifecycle
from sitectl.ops import plan as planmod
from sitectl.ops.reset import reset as reset_op
from sitectl.sites import containers
from sitectl.stack.target import Target


@click.command()
@click.argument("sites", nargs=-1)
@click.option("--no-build", is_flag=True, help="Fail instead of building a missing image.")
@target_options
def up(target: Target, as_json: bool, sites, no_build):
    """Bring SITES (default: all) up, health-checked, and print their URLs. Idempotent."""
    rows = lifecycle.up(target, target.stack.select(sites), DockerEngine(), _reporter(as_json), build=not no_build)
    if as_json:
        return {"stack": target.stack.name, "host": target.host, "instance": target.instance,
                "sites": [r.as_dict() for r in rows]}
    _print_sites(rows)
    _hosts_note(target)


def _hosts_note(target: Target) -> None:
    """After ``up``: say which site host names only browsers and sitectl can reach."""
    if not target.site_hosts:
        return
    names = envvars.host_names(target)
    if names["unresolved"]:
        click.echo(f"note: this machine does not resolve {', '.join(names['unresolved'])}. Browsers and sitectl "
                   "reach *.localhost anyway; for other clients run `apt-get install libnss-myhostname` or "
                   "add to /etc/hosts:\n  " + "\n  ".join(names["lines"]), err=True)


@click.command()
@click.argument("sites", nargs=-1)
@click.option("--labels", is_flag=True, help="Include sitectl's labels and network in the commands.")
@target_options
def plan(target: Target, as_json: bool, sites, labels):
    """Print the docker commands `up` would run, without running anything."""
    entries = planmod.plan(target, target.stack.select(sites), with_labels=labels)
    if as_json:
        return {"stack": target.stack.name, "host": target.host, "commands": entries}
    click.echo(planmod.plan_text(entries))


@click.command()
@click.option("--volumes", is_flag=True, help="Also remove the containers' anonymous volumes.")
@target_options
def down(target: Target, as_json: bool, volumes):
    """Remove the instance's containers and network."""
    removed = lifecycle.down(target, DockerEngine(), volumes=volumes, reporter=_reporter(as_json))
    if as_json:
        return {"removed": removed}
    out.print(f"removed {len(removed)} container(s): {', '.join(removed) or '-'}")


@click.command()
@click.argument("sites", nargs=-1)
@click.option("--full", is_flag=True, help="Restore every store of the site from the golden snapshot.")
@click.option("--recreate", is_flag=True,
              help="Re-create the containers from their images and re-run post-start steps (WebArena's reset).")
@click.option("--no-wait", is_flag=True, help="Fail at once (exit 10) if another sitectl is changing this instance.")
@click.option("--force", is_flag=True,
              help="Reset even an instance a reset server (sitectl serve) has leased to a client; the server's "
                   "status says so. Without it such a reset exits 10 naming the lease.")
@click.option("--login", "relogin", is_flag=True,
              help="Then log in again for the storage states `sitectl login` recorded that the reset made stale "
                   "(writes sessions: the sites are then golden plus those logins). A failed login exits 6; "
                   "the reset's result stands.")
@target_options
def reset(target: Target, as_json: bool, sites, full, recreate, no_wait, force, relogin):
    """Reset SITES (default: every mutable site) to the golden snapshot.

    By default only what changed since the snapshot is restored (the delta path); every
    reset ends with a check and escalates delta -> full -> re-create on a mismatch. Nothing
    is written after the restore: storage states recorded by `sitectl login` whose sessions
    the reset discarded are named, with the command that logs in again (or use --login).
    """
    chosen = target.stack.reset_sites(sites)
    res = reset_op(target, chosen, DockerEngine(), full=full, recreate=recreate, reporter=_reporter(as_json),
                   wait=not no_wait, login=relogin, force=force)
    rows, logins = res["sites"], res["logins"]
    result = {"sites": [r.as_dict() for r in rows], "logins": logins, "logins_ok": res["logins_ok"]}
    if recreate:
        result["method"] = "recreate"
    if not as_json:
        if recreate:
            _print_sites(rows)
        else:
            t = Table("site", "method", "changed", "seconds", "escalations")
            for r in rows:
                t.add_row(r.site, r.method, str(len(r.changed)), f"{r.seconds:.3f}", "; ".join(r.escalations))
            out.print(t)
            for r in rows:
                for n in r.notes:
                    out.print(f"[yellow]note[/yellow]: {escape(n)}")
        for row in logins:
            if "stale" in row:
                out.print(f"storage states in {row['folder']} for {', '.join(row['stale'])} no longer log in (the reset "
                          f"put their sessions back to golden's); to log in again: {row['refresh']}")
            elif row["ok"]:
                out.print(f"logged in again in {row['folder']}: {', '.join(row['rebuilt']) or 'nothing needed'}")
    if not res["logins_ok"]:
        bad = "; ".join(f"{r['folder']}: {r.get('error') or 'not every state logs in'}" for r in logins if not r.get("ok", True))
        err = LoginsFailed(f"the reset succeeded (its rows stand), but logging in again failed: {bad}")
        err.payload = result
        raise err
    return result if as_json else None


@click.command()
@click.argument("sites", nargs=-1)
@click.option("--force", is_flag=True, help="Rebuild even when the images exist.")
@target_options
def build(target: Target, as_json: bool, sites, force):
    """Build the images the stack builds itself (the mini replicas)."""
    eng = DockerEngine()
    eng.ping()
    built = containers.ensure_images(target, target.stack.select(sites), eng, _reporter(as_json), force=force)
    if as_json:
        return {"built": built}
    out.print(f"built: {', '.join(built) or 'nothing (all present)'}")
