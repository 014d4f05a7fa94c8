"""``sitectl plan``: the docker commands ``up`` would run, without running them."""
from __future__ import annotations

from sitectl.engine import format_argv, run_argv
from sitectl.sites.containers import post_start_argvs, run_spec, service_spec, step_container
from sitectl.stack import Site
from sitectl.stack.target import Target


def plan(target: Target, sites: list[Site], with_labels: bool = False) -> list[dict]:
    """The commands, site by site, that ``sitectl up`` runs for ``target``.

    Returns:
        ``[{"site", "load": argv|None, "services": [argv, ...], "run": argv, "post_start":
        [argv, ...]}]``. ``load`` is ``docker load --input ARCHIVE`` for sites with an official
        archive; ``services`` are the ``docker run`` of the site's services, run first. Labels
        and the network are sitectl's additions to WebArena's commands and are left out unless
        ``with_labels``, except the network of a site with services (they find each other on it).
    """
    out = []
    for s in sites:
        keep = {} if with_labels else {"labels": {}} if s.services else {"labels": {}, "network": None}
        spec = run_spec(target, s)
        spec = type(spec)(**{**spec.__dict__, **keep})
        services = [service_spec(target, s, k) for k in s.services]
        out.append({
            "site": s.name,
            "load": ["docker", "load", "--input", s.image_archive] if s.image_archive else None,
            "services": [run_argv(type(v)(**{**v.__dict__, **keep})) for v in services],
            "run": run_argv(spec),
            "post_start": [["docker", "exec", step_container(target, s, n), *argv] for n, argv, _ in post_start_argvs(target, s)],
        })
    return out


def plan_text(entries: list[dict]) -> str:
    """Render :func:`plan` output as shell-quoted lines, one command per line."""
    lines = []
    for e in entries:
        lines.append(f"# {e['site']}")
        if e["load"]:
            lines.append(format_argv(e["load"]))
        lines += [format_argv(a) for a in e["services"]]
        lines.append(format_argv(e["run"]))
        lines += [format_argv(a) for a in e["post_start"]]
    return "\n".join(lines)
