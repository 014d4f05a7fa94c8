"""``sitectl instances``: every instance on this engine, with its URLs and health; and the
targets a pool or a list command acts on."""
from __future__ import annotations

from sitectl.engine import Engine
from sitectl.errors import UsageError
from sitectl.ops import checks
from sitectl.stack.target import Target, resolve_target


def running_instances(engine: Engine) -> dict[int, dict]:
    """``{instance: {"stack", "host", "site_hosts", "containers"}}`` from the ``sitectl.*``
    labels of the engine's containers (running or not)."""
    out: dict[int, dict] = {}
    for c in engine.iter_containers({"sitectl.instance": None, "sitectl.site": None}):
        lab = c.labels
        try:
            n = int(lab["sitectl.instance"])
        except ValueError:
            continue
        row = out.setdefault(n, {"stack": lab.get("sitectl.stack", ""), "host": lab.get("sitectl.host", ""),
                                 "site_hosts": lab.get("sitectl.site_hosts") == "1", "containers": []})
        row["containers"].append(c.name)
    return dict(sorted(out.items()))


def target_of(base: Target, instance: int, found: dict | None) -> Target:
    """The :class:`Target` of ``instance``: ``base``'s stack, scale and seed, with the host and
    site-host setting its containers were made with (when it has any)."""
    return resolve_target(base.stack.path or base.stack.name, instance=instance, data_dir=base.data_dir,
                          recorded_host=(found or {}).get("host") or None, seed=base.seed, scale=base.scale,
                          recorded_site_hosts=(found or {}).get("site_hosts"))


def parse_instances(spec: str) -> list[int]:
    """``"0,2-4"`` → ``[0, 2, 3, 4]``.

    Raises:
        UsageError: anything but numbers 0-99, commas and ranges.
    """
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise UsageError(f"--instances {spec!r}: give numbers and ranges, e.g. 0,2-4")
        a, b = int(lo), int(hi or lo)
        if a > b or b > 99:
            raise UsageError(f"--instances {spec!r}: ranges go up, within 0-99")
        out += [i for i in range(a, b + 1) if i not in out]
    return out


def list_instances(base: Target, engine: Engine, health: bool = True) -> list[dict]:
    """One row per instance on the engine: ``{"instance", "stack", "host", "site_hosts",
    "containers", "sites": [{"site", "state", "healthy", "url"}], "healthy"}``."""

    rows = []
    for n, found in running_instances(engine).items():
        t = target_of(base, n, found)
        mine = set(found["containers"])
        sites = [s for s in t.stack.sites.values() if t.container(s) in mine]
        st = checks.status(t, sites, engine) if health else [
            {"site": s.name, "state": "?", "healthy": None, "url": t.url(s)} for s in sites]
        rows.append({"instance": n, "stack": found["stack"], "host": found["host"], "site_hosts": found["site_hosts"],
                     "containers": sorted(found["containers"]),
                     "sites": [{k: r[k] for k in ("site", "state", "healthy", "url")} for r in st],
                     "healthy": bool(st) and all(r["healthy"] for r in st)})
    return rows
