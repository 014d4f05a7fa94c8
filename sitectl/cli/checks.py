"""``sitectl status``, ``verify``, ``instances``, ``doctor``: what runs, whether it is healthy
(and, with ``verify --deep``, still golden), and whether its containers offer what the stack
file and the stores assume."""
from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from sitectl import snapshots
from sitectl.cli.common import _reporter, out, target_options
from sitectl.engine import DockerEngine
from sitectl.errors import DoctorFailed, VerifyFailed
from sitectl.ops import checks
from sitectl.ops import doctor as doctor_ops
from sitectl.ops.instances import list_instances
from sitectl.sites.probes import ProbeOutcome
from sitectl.stack.target import Target


@click.command()
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


@click.command()
@click.argument("sites", nargs=-1)
@click.option("--deep", is_flag=True,
              help="Also compare full fingerprints (rows, sequences, files, git refs, Redis keys) with the golden snapshot.")
@click.option("--snapshot", "snap", default=snapshots.GOLDEN, show_default=True, help="Snapshot --deep compares with.")
@target_options
def verify(target: Target, as_json: bool, sites, deep, snap):
    """Deep health: database, login page, and a logged-in probe, per site."""
    # An interrupted reset is rolled forward first (sitectl.snapshots.recover_pending, under the lock of sitectl/snapshots/journal.py); the state is
    # compared before the probes, whose logins write (sessions, last-login times).
    result = checks.verify_report(target, target.stack.select(sites), DockerEngine(), deep, snap, _reporter(as_json))
    outcomes = [ProbeOutcome(**o) for o in result["results"]]
    states = result.get("state", [])
    bad = [o for o in outcomes if not o.ok]
    bad_states = [s for s in states if not s["ok"]]
    if not as_json:
        _probe_table(outcomes)
        for s in states:
            jobs = s.get("jobs") or []
            out.print(f"{s['site']:<16} {escape(s['store']):<40} " + ("[green]golden[/green]" if s["ok"] else
                      "[red]differs[/red]: " + escape(", ".join(s["differs"][:10])))
                      + (f" (written by its background jobs since: {escape(', '.join(jobs[:5]))}; a reset restores them)"
                         if jobs else ""))
    if bad or bad_states:
        lines = [f"  {o.site}/{o.probe}: {o.detail}" for o in bad]
        lines += [f"  {s['site']}/{s['store']}: differs from {snap!r}: {', '.join(s['differs'][:10])}" for s in bad_states]
        if bad_states:  # the next step; verify's own probes log in after comparing (sessions, login times)
            lines.append(f"  what changed since the last reset differs, the logins of an earlier verify included; "
                         f"`sitectl reset {' '.join(sorted({s['site'] for s in bad_states}))}` brings it back")
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


@click.command()
@click.option("--no-health", is_flag=True, help="Skip the health probes (faster).")
@target_options
def instances(target: Target, as_json: bool, no_health):
    """List every instance on this engine with its sites, URLs and health."""
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


@click.command()
@click.argument("sites", nargs=-1)
@target_options
def doctor(target: Target, as_json: bool, sites):
    """Check that each site's container offers what its stack file and stores assume."""
    report = doctor_ops.doctor(target, target.stack.select(sites), DockerEngine())
    if not as_json:
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}
        for r in report["sites"]:
            out.print(f"[bold]{r['site']}[/bold] ({r['container']}): [{colour[r['verdict']]}]{r['verdict']}[/]")
            t = Table("check", "", "detail", "fix", show_header=False, box=None, padding=(0, 1))
            t.columns[2].overflow = t.columns[3].overflow = "fold"
            for c in r["checks"]:
                t.add_row("  " + escape(c["check"]), f"[{colour[c['level']]}]{c['level']}[/]", escape(c["detail"]),
                          escape(c["fix"]))
            out.print(t)
    if not report["ok"]:
        raise DoctorFailed(report, doctor_ops.failures(report))
    if as_json:
        return report
    out.print("[green]doctor: every site offers what its stores assume[/green] "
              "(share `sitectl doctor --json` when asking for help)")
