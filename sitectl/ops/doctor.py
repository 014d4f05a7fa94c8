"""``sitectl doctor``: whether each site's running container offers what its stack file and
stores assume, with the fix for each failure.

One POSIX ``sh`` probe per container (BusyBox-safe: research/real-images.md §1.7, §5) reads
the userland (OS, BusyBox or GNU find, python3), the
commands the stack file names (SQL and Redis clients, cache flushes, the jobs' pause and
resume), every files store folder and its size, the entrypoint's ``/run`` markers
(``init_markers``), free disk where golden copies go and available memory; then each SQL store
answers ``SELECT version()`` and its database's size through its own client, and each Redis
store ``PING`` in its database. ``up`` runs it before it takes golden and refuses with the
report (:class:`sitectl.errors.DoctorFailed`). Where a site has a files store, its ``probe``
mode detects the way into the container (the python3 helper or the BusyBox-safe sh way) and
records it there, once (:data:`sitectl.stores.files.RECORD`); the report names it.

A check is ``ok``, ``warn`` (worth knowing, not blocking) or ``fail`` (golden would be wrong or
a reset would fail); a failure carries its fix.
"""
from __future__ import annotations

import concurrent.futures
from dataclasses import asdict, dataclass

from sitectl import snapshots
from sitectl.engine import Engine
from sitectl.errors import DoctorFailed, SitectlError
from sitectl.stack import Site
from sitectl.stack.target import Target
from sitectl.stores import ElasticsearchStore, session_for
from sitectl.stores.files import PYTHONS, STALE_RECORD, parse_way
from sitectl.stores.files import RECORD as FILES_RECORD
from sitectl.stores.files import ROOT as FILES_ROOT
from sitectl.stores.files import helper_argv as files_helper_argv
from sitectl.stores.transport import ExecTransport, out_lines

#: Seconds a folder's ``du`` may take before its size is reported unknown (a WebArena media
#: folder holds millions of files).
DU_SECONDS = 10
#: Available memory under which the report warns, in KiB.
LOW_MEMORY_KIB = 1 << 20

# Arguments: "c:NAME" (a command to find), "d:PATH" (a folder: its size in KiB), "m:PATH" (a
# marker file). Prints tab-separated records; nothing of the arguments reaches a shell's parser.
PROBE_SH = r"""
os=$( (. /etc/os-release 2>/dev/null && printf '%s' "$PRETTY_NAME") )
printf 'os\t%s\n' "${os:-$(uname -s 2>/dev/null)}"
f=$(command -v find 2>/dev/null)
printf 'find\t%s\n' "$(readlink -f "$f" 2>/dev/null || printf '%s' "$f")"
if find / -maxdepth 0 -printf '' >/dev/null 2>&1; then printf 'gnu_find\tyes\n'; else printf 'gnu_find\tno\n'; fi
for py in PYTHONS; do
  if command -v "$py" >/dev/null 2>&1; then
    printf 'python\t%s\t%s\n' "$(command -v "$py")" "$("$py" -E -s -S -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>&1 | head -1)"
    break
  fi
done
for a; do
  v=${a#*:}
  case $a in
    c:*) printf 'cmd\t%s\t%s\n' "$v" "$(command -v "$v" 2>/dev/null)" ;;
    d:*) if [ -d "$v" ]; then
           s=$(timeout DU_SECONDS du -sk "$v" 2>/dev/null | cut -f1)
           printf 'dir\t%s\t%s\n' "$v" "${s:-unknown}"
         else printf 'dir\t%s\tmissing\n' "$v"; fi ;;
    m:*) if [ -e "$v" ]; then printf 'marker\t%s\tyes\n' "$v"; else printf 'marker\t%s\tno\n' "$v"; fi ;;
  esac
done
d=SNAPSHOT_ROOT
while [ ! -d "$d" ]; do d=${d%/*}; d=${d:-/}; done
printf 'disk\t%s\t%s\n' "$d" "$(df -Pk "$d" 2>/dev/null | awk 'NR == 2 { print $1 "\t" $4 }')"
printf 'rootdisk\t/\t%s\n' "$(df -Pk / 2>/dev/null | awk 'NR == 2 { print $1 "\t" $4 }')"
printf 'mem\t%s\n' "$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)"
for p in cron crond; do pgrep -x "$p" >/dev/null 2>&1 && printf 'running\t%s\n' "$p"; done
pgrep -f 'sidekiq [0-9]' >/dev/null 2>&1 && printf 'running\tsidekiq\n'
exit 0
""".replace("DU_SECONDS", str(DU_SECONDS)).replace("SNAPSHOT_ROOT", FILES_ROOT).replace("PYTHONS", PYTHONS)

#: SQL that gives the server's version and the database's size in bytes.
VERSION_SQL = {
    # {db}: the store's database name, letters, digits and _ only (StateStore.database's pattern).
    # Also the tables that are not InnoDB, and MySQL's enforce_gtid_consistency (MariaDB has no
    # such variable: no row): with it ON, the server refuses every write to such a table once
    # sitectl's change-tracking trigger (which writes an InnoDB table) is on it.
    "mysql": "SELECT VERSION(), (SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables "
             "WHERE table_schema = '{db}'), (SELECT IFNULL(GROUP_CONCAT(table_name ORDER BY table_name), '') "
             "FROM information_schema.tables WHERE table_schema = '{db}' AND table_type = 'BASE TABLE' "
             "AND engine <> 'InnoDB'); SHOW GLOBAL VARIABLES LIKE 'enforce_gtid_consistency'",
    "postgres": "SELECT version(), pg_database_size(current_database())",
}


@dataclass
class Check:
    """One finding: ``level`` is ``ok``, ``warn`` or ``fail``; ``fix`` says what to do."""

    check: str
    level: str
    detail: str
    fix: str = ""


def _probe_args(site: Site) -> list[str]:
    cmds: list[str] = []
    for s in site.stores:
        if s.kind in ("mysql", "postgres") and s.connect is None:
            cmds.append((s.client or [{"mysql": "mysql", "postgres": "psql"}[s.kind]])[0])
        elif s.kind == "redis":
            cmds.append((s.client or ["redis-cli"])[0])
        elif s.kind == "cache" and s.flush:
            cmds.append(s.flush[0])
    if site.jobs:
        cmds += [site.jobs.pause[0], site.jobs.resume[0]]
    if any(s.kind == "files" for s in site.stores):
        cmds += ["cp", "tar", "stat", "touch", "od"]
    args = [f"c:{c}" for c in dict.fromkeys(cmds)]
    args += [f"d:{p}" for s in site.stores if s.kind == "files" for p in s.paths]
    args += [f"m:{m}" for m in site.init_markers]
    return args


def _parse_probe(out: str) -> dict:
    """The probe's records (a container may print anything: only known keys are kept)."""
    got: dict = {"cmd": {}, "dir": {}, "marker": {}, "running": []}
    for line in out_lines(out):
        key, _, rest = line.partition("\t")
        if key in ("cmd", "dir", "marker"):
            name, _, value = rest.rpartition("\t")
            got[key][name] = value
        elif key == "running":
            got["running"].append(rest)
        elif key == "python":
            got[key] = tuple(rest.split("\t", 1))
        elif key in ("disk", "rootdisk"):
            got[key] = tuple(rest.split("\t", 2))  # path, file system, free KiB
        elif key in ("os", "find", "gnu_find", "mem"):
            got[key] = rest
    return got


def _number(v) -> int | None:
    """``v`` as a whole number when it is one in ASCII digits (``isdigit`` takes "²")."""
    return int(v) if isinstance(v, str) and v.isascii() and v.isdecimal() else None


def _kib(n: int) -> str:
    return f"{n / (1 << 20):.1f} GiB" if n >= 1 << 20 else f"{n / 1024:.1f} MiB"


def diagnose(target: Target, site: Site, engine: Engine) -> dict:
    """Every check of one site (see the module's docstring).

    Returns:
        ``{"site", "container", "verdict" ("ok", "warn" or "fail"), "userland", "checks": [Check as dict]}``.
    """
    name = target.container(site)
    stack_file = target.stack.path or "the stack file"
    checks: list[Check] = []
    report = {"site": site.name, "container": name, "userland": {}}

    def done() -> dict:
        levels = {c.level for c in checks}
        report["verdict"] = "fail" if "fail" in levels else "warn" if "warn" in levels else "ok"
        report["checks"] = [asdict(c) for c in checks]
        return report

    info = engine.container(name)
    if info is None or not info.running:
        checks.append(Check("container", "fail", f"container {name} is {info.status if info else 'missing'}",
                            f"sitectl up --stack {target.stack.name} --instance {target.instance} {site.name}"))
        return done()
    for k in site.services:  # a stopped service (the classifieds database) fails the stores' checks below
        c = target.service_container(site, k)
        si = engine.container(c)
        if si is None or not si.running:
            checks.append(Check(f"service {k}", "fail", f"container {c} is {si.status if si else 'missing'}",
                                f"sitectl up --stack {target.stack.name} --instance {target.instance} {site.name}"))
    args = _probe_args(site)
    budget = DU_SECONDS * (1 + sum(a.startswith("d:") for a in args)) + 30
    rc, out = engine.exec(name, ["sh", "-c", PROBE_SH, "sh", *args], timeout=budget)
    if rc == 124:
        checks.append(Check("userland", "fail", f"the probe did not finish within {budget} s",
                            f"see what is slow in {name} (`docker exec {name} top -b -n 1`), then run doctor again"))
        return done()
    if rc != 0:
        checks.append(Check("userland", "fail", f"`sh` could not run the probe (exit code {rc}): {out.strip()[-300:]}",
                            "sitectl runs POSIX sh inside every container: use an image that has /bin/sh"))
        return done()
    got = _parse_probe(out)
    py = got.get("python")
    busybox = got.get("find", "").endswith("busybox")
    report["userland"] = {"os": got.get("os", ""), "find": got.get("find", ""), "gnu_find": got.get("gnu_find") == "yes",
                          "busybox": busybox, "python": py[0] if py else None,
                          "python_version": py[1] if py and len(py) > 1 else None}
    land = f"{got.get('os') or 'unknown OS'}; {'BusyBox' if busybox else 'GNU' if got.get('gnu_find') == 'yes' else 'other'} find"
    land += f"; python3 {py[1]} at {py[0]}" if py and len(py) > 1 else "; no python3"
    if any(s.kind == "files" for s in site.stores):
        checks.append(_files_way_check(engine, name, site.name, land, report))
    else:
        checks.append(Check("userland", "ok", land))

    for cmd, path in got["cmd"].items():
        if not path:
            checks.append(Check(f"command {cmd}", "fail", f"`{cmd}` is not on the container's PATH",
                                f"{stack_file}, site {site.name}: the stores or jobs name `{cmd}`; give its full path "
                                "inside the container, or install it in the image"))
    for s_index, s in enumerate(site.stores):
        where = f"{stack_file}, site {site.name}, stores[{s_index}]"
        if s.kind in ("mysql", "postgres"):
            checks.append(_sql_check(site, s, s_index, ExecTransport(engine, name, site.name), where, got))
        elif s.kind == "redis":
            client = s.client or ["redis-cli"]
            rc, out = engine.exec(name, [*client, "-n", str(s.db), "PING"], timeout=30)
            ok = rc == 0 and out.strip() == "PONG"
            checks.append(Check(f"redis db {s.db}", "ok" if ok else "fail",
                                "answers PING" if ok else f"`{' '.join(client)} -n {s.db} PING` gave exit code {rc}: {out.strip()[-300:]}",
                                "" if ok else f"{where}.client: a redis-cli that reaches the server (a socket: -s PATH; "
                                              "GitLab's image: gitlab-redis-cli)"))
        elif s.kind == "elasticsearch":
            checks.append(_es_check(site, s, ExecTransport(engine, name, site.name), where))
    for path, size in got["dir"].items():
        if size == "missing":
            checks.append(Check(f"folder {path}", "warn", "does not exist (the files store takes it as empty)",
                                f"{stack_file}, site {site.name}: check the path in its files store"))
    for marker, there in got["marker"].items():
        checks.append(Check(f"marker {marker}", "ok" if there == "yes" else "fail",
                            "present" if there == "yes" else "missing: the image's entrypoint re-initialises its database at the next start",
                            "" if there == "yes" else f"docker exec {name} touch {marker}; in Swarm or Kubernetes keep /run "
                                                      "from the image (no tmpfs or emptyDir on /run)"))
    if got["running"] and not site.jobs:
        checks.append(Check("background jobs", "warn", f"{', '.join(got['running'])} runs and {stack_file} declares no jobs "
                            f"for {site.name}: its writes land in golden or make verify --deep differ",
                            f"declare jobs (pause, resume, writes) for {site.name} (docs/stack-files.md)"))
    _disk_check(target, site, got, checks)
    mem = _number(got.get("mem"))
    if mem is not None:
        checks.append(Check("memory", "warn" if mem < LOW_MEMORY_KIB else "ok", f"{_kib(mem)} available"))
    return done()


def _files_way_check(engine: Engine, name: str, site_name: str, land: str, report: dict) -> Check:
    """The files store's way into the container (its ``probe`` mode: detected once and recorded
    in the container, :data:`sitectl.stores.files.RECORD`), as ``report["userland"]["files_way"]``
    (``python PATH``, ``sh`` or None)."""
    rc, out = engine.exec(name, files_helper_argv("probe"), timeout=60)
    way, py = parse_way(out)
    report["userland"]["files_way"] = f"{way} {py}".strip() if rc == 0 and way else None
    if rc == 0 and way == "python":
        return Check("userland", "ok", f"{land} (files store: the python3 helper on {py}; recorded in {FILES_RECORD})")
    if rc == 0 and way == "sh":
        return Check("userland", "ok", f"{land} (files store: the sh way, BusyBox-safe: times to the second and content "
                                       f"hashes where a second is not enough; recorded in {FILES_RECORD})")
    told = out.strip()[-400:]
    if rc == STALE_RECORD:
        fix = (f"put that python3 back; or forget the record and re-create the site from its image, whose golden "
               f"the new way takes: docker exec {name} rm {FILES_RECORD}; sitectl reset --recreate {site_name}")
    else:
        fix = "install python3 in the image (Alpine: apk add python3; Debian: apt-get install python3-minimal)"
    return Check("userland", "fail", f"{land}: the files store has no way in (exit code {rc}): {told}", fix)


def _es_check(site: Site, s, transport: ExecTransport, where: str) -> Check:
    """The Elasticsearch server answers the store's helper (on the container's python3) and
    which indices match; none matching is a warning (nothing would be reset)."""
    store = ElasticsearchStore(site.name, transport, s.url or "http://127.0.0.1:9200", s.indices)
    label = f"elasticsearch {','.join(s.indices)}"
    try:
        got = store.server()
    except SitectlError as e:
        return Check(label, "fail", str(e)[-400:],
                     f"{where}: the server must answer at {store.url} inside the container (WebArena's Magento images run "
                     "Elasticsearch under supervisor: supervisorctl status elasticsearch), and python3 must be there")
    names = [n for n in got.get("indices") or [] if isinstance(n, str)]
    if not names:
        return Check(label, "warn", f"version {got.get('version')}; no index matches {','.join(s.indices)}",
                     f"{where}.indices: the patterns of the application's indices (curl {store.url}/_cat/indices)")
    double = " (the server calls itself a test double)" if "test double" in str(got.get("tagline", "")) else ""
    return Check(label, "ok", f"version {got.get('version')}{double}; {len(names)} index(es): {', '.join(names[:5])}")


def _masked(argv: list[str]) -> list[str]:
    """``argv`` with a client's password argument (``-pSECRET``, ``--password=SECRET``) shown as
    ``***``: a report is shared when asking for help."""
    return ["-p***" if a.startswith("-p") and len(a) > 2 else
            "--password=***" if a.startswith("--password=") else a for a in argv]


def _sql_check(site: Site, s, s_index: int, transport: ExecTransport, where: str, got: dict) -> Check:
    label = f"{s.kind} {s.database}"
    try:
        rows = session_for(site, s, transport).query(VERSION_SQL[s.kind].replace("{db}", s.database or ""), "doctor",
                                                     timeout=60)
    except SitectlError as e:
        client = " ".join(_masked(s.client or [])) or "(default client)"
        return Check(label, "fail", f"the declared client ({client}) could not query {s.database}: {str(e)[-400:]}",
                     f"{where}.client: a client and user that reach {s.database} inside the container with the "
                     "rights to create tables and triggers (WebArena's Magento images: mysql -uroot -p1234567890; "
                     "the forum: psql -U postgres; GitLab: gitlab-psql)")
    version, size, other = (list(rows[0]) + [None, None, None])[:3] if rows else (None, None, None)
    size = _number(str(size)) or 0
    if s.connect is None:  # copies over the network land on that server, not in this container
        got["db_bytes"] = got.get("db_bytes", 0) + size
    gtid = next((r[1] for r in rows[1:] if r and r[0] == "enforce_gtid_consistency"), None)
    if s.kind == "mysql" and other and str(gtid).upper() == "ON":
        return Check(label, "fail", f"{version}: enforce_gtid_consistency is ON and {s.database} has tables that are not "
                     f"InnoDB ({other}): the server would refuse the application's writes to them once sitectl's "
                     "change tracking (a trigger writing an InnoDB table) is on them",
                     "start the server with enforce-gtid-consistency=OFF and gtid-mode=OFF (MySQL 8's defaults; the "
                     "classifieds replica's my.cnf), or convert those tables to InnoDB")
    return Check(label, "ok", f"{version} ({_kib(size // 1024)})")


def _disk_check(target: Target, site: Site, got: dict, checks: list[Check]) -> None:
    """Free disk for golden's copies: the files stores' copies go to the snapshot folder's file
    system, the SQL stores' into their server's own (taken as the container's root file
    system); on one file system both count together. Fails only when the copies cannot fit;
    warns when less than half as much again is left, or a size is unknown."""
    if site.name in _golden_sites(target):  # no manifest (or a damaged one): none taken
        checks.append(Check("disk", "ok", "golden taken (its copies are there)"))
        return
    sizes = [v for v in got["dir"].values() if v != "missing"]
    unknown = any(_number(v) is None for v in sizes)
    files_need = sum(_number(v) or 0 for v in sizes)
    sql_need = got.get("db_bytes", 0) // 1024
    places: dict[str, list] = {}  # file system -> [path, free, need, what]
    for key, need, what in (("disk", files_need, "files stores' copies"), ("rootdisk", sql_need, "SQL stores' copies")):
        disk = got.get(key)
        if not need and not (key == "disk" and unknown):
            continue
        if not disk or len(disk) < 3 or _number(disk[2]) is None:
            checks.append(Check(f"disk for {what}", "warn", "free space unknown (df gave nothing)"))
            continue
        entry = places.setdefault(disk[1], [disk[0], _number(disk[2]), 0, []])
        entry[2] += need
        entry[3].append(what)
    for path, free, need, whats in places.values():
        what = " and ".join(whats)
        detail = f"{_kib(free)} free at {path}; golden's {what} take about {_kib(need)}" + (
            f" or more (a folder's du took over {DU_SECONDS} s)" if unknown and "files stores' copies" in whats else "")
        if free < need:
            checks.append(Check(f"disk for {what}", "fail", detail,
                                "free disk space where the container's files live (the Docker data root), or move "
                                "the largest folders out of the files store"))
        else:
            checks.append(Check(f"disk for {what}", "warn" if free < need * 1.5 or unknown else "ok", detail))


def _golden_sites(target: Target) -> set[str]:
    try:
        return set(snapshots.read_manifest(target, snapshots.GOLDEN)["sites"])
    except SitectlError:
        return set()


def doctor(target: Target, sites: list[Site], engine: Engine) -> dict:
    """Diagnose every site of ``sites`` at once (their containers must exist to say much).

    Returns:
        ``{"ok": bool, "stack", "instance", "sites": [diagnose(...)]}``; ``ok`` is False when a
        check of any site failed.
    """
    engine.ping()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(sites))) as pool:
        rows = list(pool.map(lambda s: diagnose(target, s, engine), sites))
    return {"ok": all(r["verdict"] != "fail" for r in rows), "stack": target.stack.name,
            "instance": target.instance, "sites": rows}


def failures(report: dict) -> list[str]:
    """One line per failed check of a :func:`doctor` report: site, check, what was seen, fix."""
    return [f"{r['site']}: {c['check']}: {c['detail']}" + (f" -> fix: {c['fix']}" if c["fix"] else "")
            for r in report["sites"] for c in r["checks"] if c["level"] == "fail"]


def require(target: Target, sites: list[Site], engine: Engine) -> dict:
    """:func:`doctor`, raising when a check failed.

    Raises:
        DoctorFailed: the message lists every failed check with its fix; ``report`` holds it all.
    """
    report = doctor(target, sites, engine)
    if not report["ok"]:
        raise DoctorFailed(report, failures(report))
    return report
