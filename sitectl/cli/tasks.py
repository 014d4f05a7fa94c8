"""``sitectl tasks check|prepare`` (also ``sitectl task``): WebArena task files."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from sitectl.cli.common import _reporter, out, target_options
from sitectl.errors import UsageError
from sitectl.ops import prepare as prep
from sitectl.ops import tasks as taskmod
from sitectl.stack.target import Target


@click.group()
def tasks():
    """WebArena task files."""


@tasks.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--evaluator", type=click.Choice(["auto", "webarena", "webarena-lite", "visualwebarena"]), default="auto",
              show_default=True,
              help="Whose evaluator reads the tasks' program_html checks (auto: from each task file's fields).")
@target_options
def tasks_check(target: Target, as_json: bool, paths: tuple[Path, ...], evaluator: str):
    """Report per site how many tasks of a task file of the WebArena family the running stack can
    serve (placeholders, login states, start URLs, and program_html checks the evaluator can
    run). Several files: one report each, then the total. Exits 8 when a task is not served."""
    loaded = [(p, taskmod.load_tasks(p)) for p in paths]  # every file read (and refused) before any request
    sessions: dict = {}  # each site logged in once for all the files
    reports = [{"file": str(p), **taskmod.check_tasks(target, tasks, evaluator=None if evaluator == "auto" else evaluator,
                                                      sessions=sessions)}
               for p, tasks in loaded]
    ok = all(r["served"] == r["total"] for r in reports)
    if as_json:
        body = reports[0] if len(reports) == 1 else {
            "files": reports, "total": sum(r["total"] for r in reports), "served": sum(r["served"] for r in reports)}
        if not ok:
            click.echo(json.dumps(body, indent=2))
            sys.exit(8)
        return body
    for report in reports:
        if len(reports) > 1:
            out.print(f"[bold]{escape(report['file'])}[/bold] ({report['format']})")
        t = Table("site(s)", "tasks", "served")
        for s, r in sorted(report["by_site"].items()):
            t.add_row(escape(s), str(r["tasks"]), str(r["served"]))
        out.print(t)
        for f in report["failures"][:20]:
            out.print(f"[red]task {escape(str(f['task_id']))}[/red]: {escape(f['reason'])}")
        how = (f"program_html read as {report['evaluator']}'s evaluator does" if report["evaluator"]
               else "no program_html in this format")
        out.print(f"{report['served']}/{report['total']} tasks served "
                  f"({report['unique_start_urls']} distinct start URLs checked; {how})")
    if len(reports) > 1:
        out.print(f"{sum(r['served'] for r in reports)}/{sum(r['total'] for r in reports)} tasks served "
                  f"in {len(reports)} files")
    if not ok:
        sys.exit(8)


@tasks.command("prepare")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--task-id", "task_ids", multiple=True, type=int, help="Which task of a task file (repeatable).")
@click.option("--all", "all_tasks", is_flag=True, help="Every task of the file (each site reset, each combination logged in once).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("config_files"),
              show_default=True, help="Folder of the ready configs (<task_id>.json) and their storage states (.auth/).")
@click.option("--dry-run", is_flag=True, help="Preflight and show the plan; reset, log in and write nothing.")
@click.option("--no-reset", is_flag=True, help="Do not reset the sites the tasks touch.")
@click.option("--images-root", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Folder VisualWebArena's relative image paths are read from (its checkout; default: the working folder).")
@click.option("--urls-from-env", is_flag=True,
              help="Take the site URLs from WebArena's variables in the environment (SHOPPING, ...), as the harness will.")
@target_options
def tasks_prepare(target: Target, as_json: bool, path: Path, task_ids, all_tasks, out_dir, dry_run, no_reset, urls_from_env,
                  images_root):
    """Make tasks ready: preflight their URLs, reset their sites, log in their storage state,
    and write the substituted config. PATH holds one task, or a task file with --task-id/--all."""
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
                       dry_run=dry_run, reset=not no_reset, reporter=_reporter(as_json), images_root=images_root)
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
