"""Soak: random mutate -> reset -> verify cycles across all mutable sites, for a given count.

Each cycle picks a site and a mutation at random (seeded): task-like changes made through the
site's own HTTP (an order, a review, a price change, a forum post, a comment and a vote, a GitLab
issue, a pushed commit) or adversarial ones made with the site's own database or shell. Then
`reset` (the delta path, `sitectl.snapshots.reset`, timed) and `verify --deep` of that site
(full fingerprints against the golden manifest). A mismatch is any store that differs after the
reset, or a reset that raised. A move whose reset found no store changed is counted under
moves_that_changed_nothing (a move that tests nothing shows there). Runs on its own instance (default 3), so it never meets the test
suite's instance 0.

Output JSON: cycles, mismatches (must be 0) with details, and the reset latency over time
(median and p95 per window of cycles, and the least-squares slope in ms per 100 cycles) so a
drift shows.

    python bench/soak.py --cycles 1000 --instance 3

``--traffic`` (issue 16): the same cycles while the instance is in use. One writer thread per
mutable site makes HTTP writes through the site's own endpoints (orders, admin price and stock
changes over REST, forum up-votes, GitLab issues over the API), a write every ``--pace``
seconds, on every site but the one the cycle resets: the other sites are written to during its
move, its reset and its checks, and their writes pile up until their own cycle comes. The
replicas' background jobs (Magento's cron, GitLab's Sidekiq) run every ``--jobs-every``
seconds instead of every minute. After each reset, besides `verify --deep`, an independent
check compares the site with the state taken at the start, by code that shares nothing with
sitectl's stores or fingerprints: ``mysqldump`` in primary-key order, every PostgreSQL table's
rows sorted as text with ``pg_dump --schema-only`` and every sequence, ``find`` listings with
``sha256sum`` of every file, and each Redis key's type, value and expiry read by a Lua script.
What the jobs write on their own between resets (``cron_schedule``, Sidekiq's
``resque:gitlab:*`` keys) is left out of it, as ``jobs.writes`` leaves it out of
`verify --deep` (both are restored by every reset).

    python bench/soak.py --traffic --cycles 1000 --instance 3 --out bench/results/soak-traffic.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from python_on_whales import docker  # noqa: E402

from sitectl import snapshots  # noqa: E402
from sitectl.engine import DockerEngine  # noqa: E402
from sitectl.ops import lifecycle  # noqa: E402
from sitectl.progress import Reporter  # noqa: E402
from sitectl.stack.target import resolve_target  # noqa: E402
from tests.actions import gitlab as gl  # noqa: E402
from tests.actions import magento, postmill  # noqa: E402

PAT = "glpat-byteblaze-replica-01"
MUTABLE = ["shopping", "shopping_admin", "reddit", "gitlab"]


def moves(target, engine, rng) -> list[tuple[str, str, callable]]:
    """(site, name, action) for every mutation the soak draws from."""
    u = {s: target.url(target.stack.sites[s]) for s in MUTABLE}
    shop, admin, forum, git = u["shopping"], u["shopping_admin"], u["reddit"], u["gitlab"]
    admin_origin = admin.rsplit("/admin", 1)[0]
    c = {s: target.container(target.stack.sites[s]) for s in MUTABLE}

    def sh(site, *argv):
        rc, out = engine.exec(c[site], list(argv))
        if rc != 0:
            raise RuntimeError(out)

    def review():
        s = magento.storefront_session(shop)
        magento.write_review(shop, s, "sandgrens-swedish-handmade-wooden-clog-sandal-copenhagen", "soak", rng.randint(1, 5))

    def post_comment_vote():
        s = postmill.login(forum, "sitectl_trusted", "sitectl1234")
        url = postmill.create_post(forum, "sitectl_trusted", "sitectl1234", "books", uuid.uuid4().hex[:12], "soak", session=s)
        postmill.comment(forum, "sitectl_trusted", "sitectl1234", url, "soak comment", session=s)
        postmill.vote(forum, "sitectl_trusted", "sitectl1234", url, rng.choice([1, -1]), session=s)

    return [
        ("shopping", "order", lambda: magento.place_order(shop)),
        ("shopping", "review", review),
        ("shopping", "sql delete", lambda: sh("shopping", "mysql", "magentodb", "-e",
                                              "DELETE FROM review ORDER BY review_id DESC LIMIT 1")),
        ("shopping_admin", "price", lambda: magento.set_price_rest(admin_origin, "MB29", rng.randint(1, 99), qty=rng.randint(0, 9))),
        ("shopping_admin", "sql truncate", lambda: sh("shopping_admin", "mysql", "magentodb", "-e", "TRUNCATE TABLE sequence_order_1")),
        ("reddit", "post+comment+vote", post_comment_vote),
        ("reddit", "sql update", lambda: sh("reddit", "psql", "-U", "postgres", "-d", "postmill", "-c",
                                            "UPDATE submissions SET net_score = net_score + 1")),
        ("reddit", "upload file", lambda: sh("reddit", "sh", "-c", "echo soak > /var/www/html/public/submission_images/soak-$$.txt")),
        ("gitlab", "issue", lambda: gl.create_issue_api(git, PAT, "byteblaze/dotfiles", uuid.uuid4().hex[:12])),
        ("gitlab", "push", lambda: gl.push_commit(git, "byteblaze", "hello1234", "byteblaze/dotfiles", "main",
                                                  f"soak-{uuid.uuid4().hex[:6]}.md", "soak\n")),
        ("gitlab", "redis key", lambda: sh("gitlab", "gitlab-redis-cli", "SET", uuid.uuid4().hex, "1")),
    ]


# -- traffic: writers on the other sites, fast jobs, an independent check --------------------
class SiteWriter(threading.Thread):
    """HTTP writes to one site, one every ``pace`` s, while the site is released; ``hold()``
    returns once no write to it is in flight and none will start."""

    def __init__(self, site: str, write, pace: float):
        super().__init__(daemon=True, name=f"writer-{site}")
        self.site, self.write, self.pace = site, write, pace
        self.released, self.stop, self.lock = threading.Event(), threading.Event(), threading.Lock()
        self.done, self.errors, self.i = 0, [], 0

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.released.wait(0.2):
                continue
            with self.lock:
                if self.released.is_set() and not self.stop.is_set():
                    self.i += 1
                    try:
                        self.write(self.i)
                        self.done += 1
                    except Exception as e:  # noqa: BLE001 - counted and reported; the writes go on
                        self.errors.append(f"{type(e).__name__}: {e}"[:300])
            self.stop.wait(self.pace)

    def hold(self) -> None:
        self.released.clear()
        with self.lock:
            pass

    def release(self) -> None:
        self.released.set()


def writers(target, rng, pace: float) -> dict[str, SiteWriter]:
    """One :class:`SiteWriter` per mutable site: what an agent on that site writes."""
    u = {s: target.url(target.stack.sites[s]) for s in MUTABLE}
    shop, admin, forum, git = u["shopping"], u["shopping_admin"], u["reddit"], u["gitlab"]
    admin_origin = admin.rsplit("/admin", 1)[0]
    users = [("sitectl_trusted", "sitectl1234"), ("sitectl_admin", "sitectl1234")]
    sessions = [postmill.login(forum, n, pw) for n, pw in users]
    posts = [f"{forum}/f/{f}/{sid}/-" for sid, f in postmill.db_query(
        "SELECT s.id, f.name FROM submissions s JOIN forums f ON f.id = s.forum_id ORDER BY s.id",
        container=target.container(target.stack.sites["reddit"]))]
    skus = ["MB29", "MB40", "MB55"]

    def vote(i):
        (n, pw), sess = users[i % 2], sessions[i % 2]
        postmill.vote(forum, n, pw, posts[rng.randrange(len(posts))], rng.choice([1, -1]), session=sess)

    write = {
        "shopping": lambda i: magento.place_order(shop),
        "shopping_admin": lambda i: magento.set_price_rest(admin_origin, skus[i % len(skus)], rng.randint(1, 99),
                                                           qty=rng.randint(0, 9)),
        "reddit": vote,
        "gitlab": lambda i: gl.create_issue_api(git, PAT, "byteblaze/dotfiles", f"traffic {uuid.uuid4().hex[:10]}"),
    }
    return {site: SiteWriter(site, w, pace) for site, w in write.items()}


def jobs_every(target, engine, seconds: float) -> None:
    """The replicas' background jobs run every ``seconds`` (``replica-jobs`` reads
    ``/run/replica-jobs/NAME.every``; docs/contracts/magento.md, gitlab.md)."""
    for site, job in (("shopping", "cron"), ("shopping_admin", "cron"), ("gitlab", "sidekiq")):
        rc, out = engine.exec(target.container(target.stack.sites[site]),
                              ["sh", "-c", 'echo "$1" > /run/replica-jobs/"$2".every', "sh", str(seconds), job])
        if rc != 0:
            raise RuntimeError(f"{site}: could not set its {job} interval: {out}")


def job_runs(target, engine) -> int:
    """Runs of the replicas' jobs so far, from their own logs (``run START END RC`` lines)."""
    n = 0
    for site, job in (("shopping", "cron"), ("shopping_admin", "cron"), ("gitlab", "sidekiq")):
        rc, out = engine.exec(target.container(target.stack.sites[site]), ["cat", f"/run/replica-jobs/{job}.log"])
        n += sum(line.startswith("run ") for line in out.splitlines()) if rc == 0 else 0
    return n


#: Lua: every key of database 0 but those under ARGV[1] (what the jobs write), sorted, with its
#: type, whether it expires, and the SHA-1 of its value read by type (order-free for hashes,
#: sets); written here, not sitectl's digest script.
REDIS_STATE_LUA = """
local keys = redis.call('KEYS', '*')
table.sort(keys)
local out = {}
for _, k in ipairs(keys) do
  if string.sub(k, 1, #ARGV[1]) ~= ARGV[1] then
    local t = redis.call('TYPE', k)['ok']
    local parts = {}
    if t == 'string' then parts = {redis.call('GET', k)}
    elseif t == 'hash' then
      local h = redis.call('HGETALL', k)
      for i = 1, #h, 2 do table.insert(parts, h[i] .. '=' .. h[i + 1]) end
      table.sort(parts)
    elseif t == 'set' then parts = redis.call('SMEMBERS', k); table.sort(parts)
    elseif t == 'list' then parts = redis.call('LRANGE', k, 0, -1)
    elseif t == 'zset' then parts = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
    end
    local ttl = redis.call('PTTL', k)
    table.insert(out, k .. ' ' .. t .. ' ' .. (ttl > 0 and 'expires' or 'persists') .. ' '
                 .. redis.sha1hex(table.concat(parts, '\\n')))
  end
end
return out
"""

#: Each folder as ``find`` lists it (type, mode, owner, size and mtime of what is not a folder,
#: link targets) and ``sha256sum`` of every file, both sorted bytewise.
FILES_STATE_SH = r"""for p in "$@"; do
  [ -e "$p" ] || { echo "absent $p"; continue; }
  find "$p" \( -type d -printf 'd %m %U %G %p
' \) -o -printf '%y %m %U %G %s %T@ %p -> %l
'
  find "$p" -type f -exec sha256sum {} +
done | LC_ALL=C sort"""

PG_CLIENTS = {"reddit": (["psql", "-U", "postgres", "-d", "postmill"], ["pg_dump", "-U", "postgres", "postmill"]),
              "gitlab": (["gitlab-psql"], ["chpst", "-u", "gitlab-psql", "/opt/gitlab/embedded/bin/pg_dump",
                                           "-h", "/var/opt/gitlab/postgresql", "gitlabhq_production"])}
FILE_PATHS = {"shopping": ["/var/www/magento2/pub/media", "/var/www/magento2/var/session"],
              "shopping_admin": ["/var/www/magento2/pub/media", "/var/www/magento2/var/session"],
              "reddit": ["/var/www/html/public/submission_images", "/var/www/html/var/sessions"],
              "gitlab": ["/var/opt/gitlab/git-data/repositories", "/var/opt/gitlab/gitlab-rails/uploads"]}


def _ok(engine, container: str, argv: list[str], what: str, codes=(0,)) -> str:
    rc, out = engine.exec(container, argv)
    if rc not in codes:
        raise RuntimeError(f"{container}: {what} failed (exit {rc}): {out[-500:]}")
    return out


def _pg_state(engine, container: str, client: list[str], dump: list[str]) -> str:
    schema = _ok(engine, container, [*dump[:-1], "--schema-only", "-N", "sitectl", "-N", "sitectl_*", dump[-1]],
                 "pg_dump --schema-only")
    schema = "\n".join(x for x in schema.splitlines() if not x.startswith(("\\restrict", "\\unrestrict")))
    q = [*client, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c"]
    tables = _ok(engine, container, [*q, "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname "
                                        "NOT IN ('pg_catalog', 'information_schema') AND schemaname NOT LIKE 'sitectl%' "
                                        "ORDER BY 1"], "table list").split()
    seqs = _ok(engine, container, [*q, "SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences "
                                      "WHERE schemaname NOT LIKE 'sitectl%' ORDER BY 1"], "sequence list").split()
    script = "".join(f"SELECT '== {t}';\nCOPY (SELECT x FROM ONLY {t} x ORDER BY x::text COLLATE \"C\") TO STDOUT;\n"
                     for t in tables)
    script += "".join(f"SELECT '{t}', last_value, is_called FROM {t};\n" for t in seqs)
    _copy_in(container, script, "/tmp/soak-state.sql")
    rows = _ok(engine, container, [*client, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", "/tmp/soak-state.sql"],
               "rows")
    return schema + "\n-- rows\n" + rows


def _copy_in(container: str, text: str, path: str) -> None:
    import tempfile  # noqa: PLC0415 - only the traffic mode writes files into containers

    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(text)
    try:
        os.chmod(f.name, 0o644)  # docker cp keeps the mode: readable by gitlab-psql's peer-authenticated psql
        docker.copy(f.name, (container, path))
    finally:
        Path(f.name).unlink()


def independent_state(target, engine, site: str) -> str:
    """The site's state as text, by code that shares nothing with sitectl's stores: what the
    site's jobs write on their own left out (``cron_schedule``; ``resque:gitlab:*`` keys)."""
    c = target.container(target.stack.sites[site])
    parts = []
    if site in ("shopping", "shopping_admin"):
        parts.append(_ok(engine, c, ["mysqldump", "-uroot", "-p1234567890", "--skip-dump-date", "--skip-comments",
                                     "--order-by-primary", "--skip-extended-insert", "--skip-triggers", "--routines",
                                     "--events", "--single-transaction", "--ignore-table=magentodb.cron_schedule",
                                     "magentodb"], "mysqldump"))
        parts.append(_ok(engine, c, ["mysql", "-uroot", "-p1234567890", "-N", "-B", "information_schema", "-e",
                                     "SELECT trigger_name, event_object_table, action_timing, event_manipulation, "
                                     "action_order, action_statement FROM triggers WHERE trigger_schema = 'magentodb' "
                                     "AND trigger_name NOT LIKE 'sitectl\\\\_%' ORDER BY trigger_name"], "triggers"))
    else:
        parts.append(_pg_state(engine, c, *PG_CLIENTS[site]))
    if site == "gitlab":
        parts.append(_ok(engine, c, ["gitlab-redis-cli", "EVAL", REDIS_STATE_LUA, "0", "resque:gitlab:"], "redis"))
    parts.append(_ok(engine, c, ["sh", "-c", FILES_STATE_SH, "sh", *FILE_PATHS[site]], "files"))
    return "\n-- next --\n".join(parts)


def first_difference(a: str, b: str, n: int = 12) -> list[str]:
    """The first lines of a unified diff (golden's text → now)."""
    import difflib  # noqa: PLC0415 - only on a mismatch

    return list(difflib.unified_diff(a.splitlines(), b.splitlines(), "start", "after reset", lineterm="", n=0))[:n]


def windows(lat: list[float], size: int) -> list[dict]:
    out = []
    for i in range(0, len(lat), size):
        w = sorted(lat[i:i + size])
        out.append({"from": i, "to": i + len(w) - 1, "median_s": round(statistics.median(w), 3),
                    "p95_s": round(w[max(0, round(0.95 * len(w)) - 1)], 3)})
    return out


def slope_ms_per_100(lat: list[float]) -> float:
    n = len(lat)
    if n < 2:
        return 0.0
    xs = range(n)
    mx, my = (n - 1) / 2, statistics.fmean(lat)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, lat))
    den = sum((x - mx) ** 2 for x in xs)
    return round(num / den * 100 * 1000, 2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--instance", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", type=int, default=100)
    ap.add_argument("--out", type=Path, default=None,
                    help="default bench/results/soak.json, with --traffic bench/results/soak-traffic.json")
    ap.add_argument("--traffic", action="store_true", help="HTTP writers on the other sites, fast jobs, independent check")
    ap.add_argument("--pace", type=float, default=0.3, help="--traffic: seconds between one writer's writes")
    ap.add_argument("--jobs-every", type=float, default=1.0, help="--traffic: seconds between the jobs' runs")
    a = ap.parse_args()
    a.out = a.out or ROOT / ("bench/results/soak-traffic.json" if a.traffic else "bench/results/soak.json")
    engine = DockerEngine()
    target = resolve_target("mini", host="127.0.0.1", instance=a.instance)
    lifecycle.up(target, target.stack.select(MUTABLE), engine, Reporter())
    snapshots.reset(target, target.stack.select(MUTABLE), engine)
    rng = random.Random(a.seed)
    table = moves(target, engine, rng)
    lat, mismatches, counts, action_errors, unchanged = [], [], {}, [], {}
    traffic, during, methods = {}, [], {}
    if a.traffic:
        jobs_every(target, engine, a.jobs_every)
        runs_before = job_runs(target, engine)
        reference = {site: independent_state(target, engine, site) for site in MUTABLE}
        traffic = writers(target, rng, a.pace)
        for w in traffic.values():
            w.start()
            w.release()
    t_start = time.time()
    for i in range(a.cycles):
        site, name, act = rng.choice(table)
        counts[f"{site}/{name}"] = counts.get(f"{site}/{name}", 0) + 1
        if traffic:
            traffic[site].hold()  # the cycle's site is the task's; the others keep being written to
        try:
            act()
        except Exception as e:  # noqa: BLE001 - a failed mutation is reported, the cycle still resets
            action_errors.append({"cycle": i, "move": f"{site}/{name}", "error": str(e)[:300]})
        s = target.stack.sites[site]
        others_before = sum(w.done for n, w in traffic.items() if n != site)
        t0 = time.perf_counter()
        try:
            (row,) = snapshots.reset(target, [s], engine)
            lat.append(time.perf_counter() - t0)
            if traffic:
                during.append(sum(w.done for n, w in traffic.items() if n != site) - others_before)
            methods[row.method] = methods.get(row.method, 0) + 1
            if not row.changed:  # the move left every store as golden: it tested nothing
                unchanged[f"{site}/{name}"] = unchanged.get(f"{site}/{name}", 0) + 1
            if row.method == "recreate":
                mismatches.append({"cycle": i, "move": f"{site}/{name}", "reset": "escalated to re-create",
                                   "escalations": row.escalations})
        except Exception as e:  # noqa: BLE001
            lat.append(time.perf_counter() - t0)
            mismatches.append({"cycle": i, "move": f"{site}/{name}", "reset": f"raised {type(e).__name__}: {e}"})
            if traffic:
                traffic[site].release()
            continue
        bad = [d for d in snapshots.verify_deep(target, [s], engine) if not d["ok"]]
        if bad:
            mismatches.append({"cycle": i, "move": f"{site}/{name}", "differs": bad})
        if traffic:
            now = independent_state(target, engine, site)
            if now != reference[site]:
                mismatches.append({"cycle": i, "move": f"{site}/{name}", "independent_check": first_difference(
                    reference[site], now)})
            traffic[site].release()
        if (i + 1) % 50 == 0:
            print(f"cycle {i + 1}/{a.cycles}: median reset {statistics.median(lat[-50:]):.3f} s, "
                  f"mismatches {len(mismatches)}", file=sys.stderr, flush=True)
    final = {}
    if traffic:
        for w in traffic.values():
            w.stop.set()
        for w in traffic.values():
            w.join(120)
        # Quiet: every site reset once more, then both checks on all of them.
        rows = snapshots.reset(target, target.stack.select(MUTABLE), engine)
        deep = [d for d in snapshots.verify_deep(target, target.stack.select(MUTABLE), engine) if not d["ok"]]
        indep = {site: first_difference(reference[site], independent_state(target, engine, site)) for site in MUTABLE}
        final = {"reset_methods": {r.site: r.method for r in rows}, "verify_deep_failures": deep,
                 "independent_check_differences": {k: v for k, v in indep.items() if v}}
        if deep or final["independent_check_differences"]:
            mismatches.append({"cycle": "final", **final})
        job_total = job_runs(target, engine) - runs_before
        jobs_every(target, engine, 60)
    report = {"command": " ".join(["python", "bench/soak.py", *sys.argv[1:]]),
              "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
              "instance": a.instance, "cycles": a.cycles, "seconds": round(time.time() - t_start, 1),
              "mismatches": len(mismatches), "mismatch_details": mismatches[:20],
              "mutation_errors": len(action_errors), "mutation_error_details": action_errors[:10],
              "moves": dict(sorted(counts.items())),
              "moves_that_changed_nothing": dict(sorted(unchanged.items())),
              "reset_methods": dict(sorted(methods.items())),
              "reset_latency": {"median_s": round(statistics.median(lat), 3),
                                "p95_s": round(sorted(lat)[max(0, round(0.95 * len(lat)) - 1)], 3),
                                "max_s": round(max(lat), 3), "slope_ms_per_100_cycles": slope_ms_per_100(lat),
                                "windows": windows(lat, a.window)}}
    if traffic:
        report["traffic"] = {
            "pace_s": a.pace, "jobs_every_s": a.jobs_every, "job_runs": job_total,
            "writes": {n: w.done for n, w in traffic.items()},
            "write_errors": {n: len(w.errors) for n, w in traffic.items()},
            "write_error_examples": {n: w.errors[:3] for n, w in traffic.items() if w.errors},
            "other_sites_writes_during_resets": {"total": sum(during), "resets_with_none": sum(d == 0 for d in during),
                                                 "median_per_reset": statistics.median(during) if during else 0},
            "final": final}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "mismatch_details"}, indent=1))
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
