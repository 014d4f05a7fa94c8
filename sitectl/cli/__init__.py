"""``sitectl`` command line (click). Each command has ``--json``; errors exit non-zero with one
clear message on stderr (and ``{"error": ...}`` on stdout with ``--json``)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from sitectl import __version__, snapshots
from sitectl.engine import DockerEngine
from sitectl.errors import UsageError, VerifyFailed
from sitectl.ops import checks, envvars, lifecycle
from sitectl.ops import plan as planmod
from sitectl.ops import tasks as taskmod
from sitectl.sites import containers
from sitectl.sites.probes import ProbeOutcome
from sitectl.stack.target import Target
from sitectl.cli.common import _fail, _print_sites, _reporter, out, read_or_make_token, target_options

@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sitectl")
def main():
    """Provision, check, reset and tear down WebArena-family benchmark sites."""


@main.command()
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


@main.command()
@click.argument("sites", nargs=-1)
@target_options
def status(target: Target, as_json: bool, sites):
    """Per site: container state, health and URL."""
    rows = checks.status(target, target.stack.select(sites), DockerEngine())
    if as_json:
        return {"stack": target.stack.name, "host": target.host, "instance": target.instance, "sites": rows}
    t = Table("site", "container", "state", "healthy", "url", "detail")
    t.columns[4].overflow = "fold"
    for r in rows:
        t.add_row(r["site"], r["container"], r["state"], "yes" if r["healthy"] else "[red]no[/red]", r["url"],
                  escape(r["detail"]))
    out.print(t)


@main.command()
@click.option("--volumes", is_flag=True, help="Also remove the containers' anonymous volumes.")
@target_options
def down(target: Target, as_json: bool, volumes):
    """Remove the instance's containers and network."""
    removed = lifecycle.down(target, DockerEngine(), volumes=volumes, reporter=_reporter(as_json))
    if as_json:
        return {"removed": removed}
    out.print(f"removed {len(removed)} container(s): {', '.join(removed) or '-'}")


@main.command()
@click.argument("sites", nargs=-1)
@click.option("--full", is_flag=True, help="Restore every store of the site from the golden snapshot.")
@click.option("--recreate", is_flag=True,
              help="Re-create the containers from their images and re-run post-start steps (WebArena's reset).")
@click.option("--no-wait", is_flag=True, help="Fail at once (exit 10) if another sitectl is changing this instance.")
@target_options
def reset(target: Target, as_json: bool, sites, full, recreate, no_wait):
    """Reset SITES (default: every mutable site) to the golden snapshot.

    By default only what changed since the snapshot is restored (the delta path); every
    reset ends with a check and escalates delta -> full -> re-create on a mismatch.
    """
    from sitectl.ops.reset import reset as reset_op

    chosen = target.stack.reset_sites(sites)
    res = reset_op(target, chosen, DockerEngine(), full=full, recreate=recreate, reporter=_reporter(as_json),
                   wait=not no_wait)
    rows, logins = res["sites"], res["logins"]
    if recreate:
        if as_json:
            return {"method": "recreate", "sites": [r.as_dict() for r in rows], "logins": logins}
        _print_sites(rows)
        return
    if as_json:
        return {"sites": [r.as_dict() for r in rows], "logins": logins}
    t = Table("site", "method", "changed", "seconds", "escalations")
    for r in rows:
        t.add_row(r.site, r.method, str(len(r.changed)), f"{r.seconds:.3f}", "; ".join(r.escalations))
    out.print(t)


@main.command("login")
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
    from sitectl.errors import LoginsFailed
    from sitectl.ops import login as loginmod

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


@main.command()
@click.argument("sites", nargs=-1)
@click.option("--deep", is_flag=True,
              help="Also compare full fingerprints (rows, sequences, files, git refs, Redis keys) with the golden snapshot.")
@click.option("--snapshot", "snap", default=snapshots.GOLDEN, show_default=True, help="Snapshot --deep compares with.")
@target_options
def verify(target: Target, as_json: bool, sites, deep, snap):
    """Deep health: database, login page, and a logged-in probe, per site."""
    # An interrupted reset is rolled forward first (sitectl/ops/journal.py); the state is
    # compared before the probes, whose logins write (sessions, last-login times).
    result = checks.verify_report(target, target.stack.select(sites), DockerEngine(), deep, snap, _reporter(as_json))
    outcomes = [ProbeOutcome(**o) for o in result["results"]]
    states = result.get("state", [])
    bad = [o for o in outcomes if not o.ok]
    bad_states = [s for s in states if not s["ok"]]
    if not as_json:
        _probe_table(outcomes)
        for s in states:
            out.print(f"{s['site']:<16} {escape(s['store']):<40} " + ("[green]golden[/green]" if s["ok"] else
                      "[red]differs[/red]: " + escape(", ".join(s["differs"][:10]))))
    if bad or bad_states:
        lines = [f"  {o.site}/{o.probe}: {o.detail}" for o in bad]
        lines += [f"  {s['site']}/{s['store']}: differs from {snap!r}: {', '.join(s['differs'][:10])}" for s in bad_states]
        err = VerifyFailed("verify failed:\n" + "\n".join(lines))
        err.payload = result
        raise err
    if as_json:
        return result
    out.print(f"[green]verify passed[/green]: {len(outcomes)} probes" + (f", {len(states)} stores golden" if deep else ""))


def _probe_table(outcomes) -> None:
    t = Table("site", "probe", "ok", "detail")
    for o in outcomes:
        t.add_row(o.site, o.probe, "yes" if o.ok else "[red]NO[/red]", escape(o.detail))
    out.print(t)


@main.command()
@click.option("--no-health", is_flag=True, help="Skip the health probes (faster).")
@target_options
def instances(target: Target, as_json: bool, no_health):
    """List every instance on this engine with its sites, URLs and health."""
    from sitectl.ops.instances import list_instances

    rows = list_instances(target, DockerEngine(), health=not no_health)
    if as_json:
        return {"instances": rows}
    t = Table("instance", "host", "site", "state", "healthy", "url")
    for r in rows:
        for s in r["sites"]:
            t.add_row(str(r["instance"]), r["host"] + (" (site hosts)" if r["site_hosts"] else ""), s["site"], s["state"],
                      "?" if s["healthy"] is None else ("yes" if s["healthy"] else "[red]NO[/red]"), s["url"])
    out.print(t)
    if not rows:
        out.print("no instance runs on this engine (`sitectl up --instance N`)")


@main.command()
@click.option("--bind", default="127.0.0.1:7565", show_default=True,
              help="ADDRESS:PORT to listen on (loopback unless you give another address).")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File holding the token mutating requests need (created, mode 0600, if missing; "
                   "default: <snapshots dir>/serve-token).")
@click.option("--instances", "pool_spec", default=None,
              help="Instances the server resets and leases, e.g. 0,1-3 (default: --instance).")
@click.option("--reset-wait", type=click.FloatRange(0, 600), default=30.0, show_default=True,
              help="Seconds GET /reset waits for the reset to finish before answering 200.")
@click.option("--no-initial-reset", is_flag=True, help="Do not reset every instance when the server starts.")
@click.option("--public-url", default=None,
              help="Base URL clients reach the server at, for the reset URLs leases hand out (default: http://BIND).")
@target_options
def serve(target: Target, as_json: bool, bind, token_file, pool_spec, reset_wait, no_initial_reset, public_url):
    """Serve resets over HTTP: BrowserGym's /reset and /status, and a JSON API with leases.

    Mutating requests need the token (Authorization: Bearer, or a /t/<token>/ path prefix:
    WA_FULL_RESET=http://127.0.0.1:7565/t/$(cat TOKEN_FILE)). See docs/serve.md.
    """
    from sitectl import server as srvmod
    from sitectl.ops.instances import parse_instances, running_instances, target_of
    from sitectl.ops.pool import Pool
    from sitectl.paths import state_dir

    host, _, port = bind.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--bind {bind!r}: give ADDRESS:PORT, e.g. 127.0.0.1:7565")
    eng = DockerEngine()
    eng.ping()
    nums = parse_instances(pool_spec) if pool_spec else [target.instance]
    found = running_instances(eng)
    missing = [n for n in nums if n not in found]
    if missing:
        raise UsageError(f"instance(s) {', '.join(map(str, missing))} not up: run `sitectl up --instance N` first")
    targets = [target if n == target.instance else target_of(target, n, found[n]) for n in nums]
    token_path = token_file or state_dir() / "serve-token"
    token = read_or_make_token(token_path)
    # A plain reset restores the mutable sites each instance runs.
    running = {n: [s.name for s in t.stack.reset_sites() if t.container(s) in found[n]["containers"]]
               for n, t in zip(nums, targets)}
    pool = Pool(targets, eng, sites=running)
    try:
        srv = srvmod.make_server(pool, token, (host, int(port)), reset_wait, public_url=public_url)
    except OSError as e:
        raise UsageError(f"--bind {bind}: {e.strerror or e}") from None
    if not no_initial_reset:
        for n in nums:
            pool.start_reset(n, reason="server start")
    base = srv.public_base
    click.echo(f"sitectl serve on {base} for instance(s) {', '.join(map(str, nums))}; token in {token_path}\n"
               f"BrowserGym: WA_FULL_RESET={base}/t/$(cat {token_path})"
               + (f"/i/<N> (instance N; the bare path is instance {nums[0]})" if len(nums) > 1 else ""), err=True)
    srvmod.serve(srv)


def _hosts_note(target: Target) -> None:
    """After ``up``: say which site host names only browsers and sitectl can reach."""
    if not target.site_hosts:
        return
    names = envvars.host_names(target)
    if names["unresolved"]:
        click.echo(f"note: this machine does not resolve {', '.join(names['unresolved'])}. Browsers and sitectl "
                   "reach *.localhost anyway; for other clients run `apt-get install libnss-myhostname` or "
                   "add to /etc/hosts:\n  " + "\n  ".join(names["lines"]), err=True)


@main.command()
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


@main.command()
@click.option("--format", "fmt", type=click.Choice(envvars.FORMATS), default="webarena", show_default=True)
@target_options
def env(target: Target, as_json: bool, fmt):
    """Print the sites' environment variables (WebArena, BrowserGym or .env format)."""
    values = envvars.env_vars(target, fmt)
    if as_json:
        return values
    click.echo(envvars.env_text(values, fmt))


@main.command()
@click.argument("sites", nargs=-1)
@click.option("--labels", is_flag=True, help="Include sitectl's labels and network in the commands.")
@target_options
def plan(target: Target, as_json: bool, sites, labels):
    """Print the docker commands `up` would run, without running anything."""
    entries = planmod.plan(target, target.stack.select(sites), with_labels=labels)
    if as_json:
        return {"stack": target.stack.name, "host": target.host, "commands": entries}
    click.echo(planmod.plan_text(entries))


@main.command()
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


@main.group()
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
@target_options
def snapshot_list(target: Target, as_json: bool):
    """List the instance's snapshots."""
    rows = snapshots.list_snapshots(target)
    if as_json:
        return {"snapshots": rows}
    t = Table("name", "created", "sites", "bytes")
    for r in rows:
        t.add_row(r["name"], str(r["created"]), ", ".join(r["sites"]), str(r["size"]))
    out.print(t)


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


@main.group()
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


@main.group()
def tasks():
    """WebArena task files."""


@tasks.command("check")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@target_options
def tasks_check(target: Target, as_json: bool, path: Path):
    """Report per site how many tasks of a WebArena task file the running stack can serve."""
    report = taskmod.check_tasks(target, taskmod.load_tasks(path))
    if as_json:
        ok = report["served"] == report["total"]
        if not ok:
            click.echo(json.dumps(report, indent=2))
            sys.exit(8)
        return report
    t = Table("site(s)", "tasks", "served")
    for s, r in sorted(report["by_site"].items()):
        t.add_row(escape(s), str(r["tasks"]), str(r["served"]))
    out.print(t)
    for f in report["failures"][:20]:
        out.print(f"[red]task {escape(str(f['task_id']))}[/red]: {escape(f['reason'])}")
    out.print(f"{report['served']}/{report['total']} tasks served "
              f"({report['unique_start_urls']} distinct start URLs checked)")
    if report["served"] != report["total"]:
        sys.exit(8)


@tasks.command("prepare")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--task-id", "task_ids", multiple=True, type=int, help="Which task of a task file (repeatable).")
@click.option("--all", "all_tasks", is_flag=True, help="Every task of the file (each site reset, each combination logged in once).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("config_files"),
              show_default=True, help="Folder of the ready configs (<task_id>.json) and their storage states (.auth/).")
@click.option("--dry-run", is_flag=True, help="Preflight and show the plan; reset, log in and write nothing.")
@click.option("--no-reset", is_flag=True, help="Do not reset the sites the tasks touch.")
@click.option("--urls-from-env", is_flag=True,
              help="Take the site URLs from WebArena's variables in the environment (SHOPPING, ...), as the harness will.")
@target_options
def tasks_prepare(target: Target, as_json: bool, path: Path, task_ids, all_tasks, out_dir, dry_run, no_reset, urls_from_env):
    """Make tasks ready: preflight their URLs, reset their sites, log in their storage state,
    and write the substituted config. PATH holds one task, or a task file with --task-id/--all."""
    from sitectl.ops import prepare as prep

    data = taskmod.load_tasks(path)
    if all_tasks and task_ids:
        raise UsageError("give --task-id or --all, not both")
    if task_ids:
        by_id = {t.get("task_id"): t for t in data}
        missing = [i for i in task_ids if i not in by_id]
        if missing:
            raise UsageError(f"{path}: no task with task_id {', '.join(map(str, missing))}")
        chosen = [by_id[i] for i in task_ids]
    elif all_tasks or len(data) == 1:
        chosen = data
    else:
        raise UsageError(f"{path} holds {len(data)} tasks: choose with --task-id ID or --all")
    res = prep.prepare(target, chosen, out_dir, environ=dict(os.environ) if urls_from_env else None,
                       dry_run=dry_run, reset=not no_reset, reporter=_reporter(as_json))
    if as_json:
        return res
    verb = "would" if dry_run else "did"
    out.print(f"reset ({verb}): {', '.join(res['reset']) or '-'}")
    out.print(f"log in ({verb}): {', '.join(res['logins']) or '-'}")
    for r in res["tasks"][:20]:
        out.print(f"task {r['task_id']}: {r['config']}" + (f" (state {Path(r['storage_state']).name})" if r["storage_state"] else ""))
    if len(res["tasks"]) > 20:
        out.print(f"... {len(res['tasks']) - 20} more")
    out.print(f"{len(res['tasks'])} task(s) {'planned' if dry_run else 'ready'} in {res['seconds']:.2f} s")


# `sitectl task prepare` reads as well as `sitectl tasks prepare`.
main.add_command(tasks, name="task")

from sitectl.cli.cluster import cluster, k8s  # noqa: E402 - registers on `main`, which it imports

main.add_command(cluster)
main.add_command(k8s)


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
