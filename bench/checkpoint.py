"""Benchmark of checkpoints (issue 20): save and restore after one typical task's writes, per
site, and a tree search over web states (a root, BRANCHES branches of STEPS steps, a restore of
the parent and a save of the child at every step) with checkpoints against the same pattern with
full named snapshots (``snapshot create`` / a restore from it), in one run, on the mini stack at
any scale.

* **save**, **restore**: ``sitectl.snapshots.save_checkpoint`` and ``restore_checkpoint`` of one
  site (what ``sitectl checkpoint save|restore NAME SITE`` run), timed around the call. Before
  each restore the site is written again (another task's writes), so the restore has something
  to undo. After every restore the site's state read without sitectl (tests/actions/state.py:
  the servers' dump tools, find/stat/md5sum, redis-cli) must equal what it was at the save, or
  the run stops.
* **tree search**: per site, checkpoints (save a node, restore its parent) against named
  snapshots (``snapshots.create`` of the node, ``snapshots.reset(..., name=parent)``) doing the
  same walk; only the save and restore calls are timed; each step's act is one of the site's
  small writes. The state after the last restore is checked as above on both sides.

Output: JSON with every time, medians and p95 per site, the targets (save <= 0.2 s, restore <=
0.3 s median per site) met or missed, and the tree-search ratio (snapshots / checkpoints).

    python bench/checkpoint.py --scale full --instance 11 --reps 10 > bench/results/checkpoint-full.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sitectl import snapshots  # noqa: E402
from sitectl.engine import DockerEngine  # noqa: E402
from sitectl.ops import lifecycle  # noqa: E402
from sitectl.progress import Reporter  # noqa: E402
from sitectl.stack.target import resolve_target  # noqa: E402
from tests.actions import classifieds as cf  # noqa: E402
from tests.actions import magento, postmill  # noqa: E402
from tests.actions import state as independent  # noqa: E402

SAVE_TARGET, RESTORE_TARGET = 0.2, 0.3


def task(target, engine, site: str, n: int) -> None:
    """One typical task's writes on ``site``, through its pages where the replica has them."""
    base = target.url(target.stack.sites[site])
    tag = f"{n}-{uuid.uuid4().hex[:6]}"
    if site == "shopping":
        s = magento.storefront_session(base)
        magento.write_review(base, s, "sandgrens-swedish-handmade-wooden-clog-sandal-copenhagen", "Emma", 4,
                             title=f"bench {tag}", detail="good clogs")
    elif site == "reddit":
        postmill.create_post(base, "sitectl_trusted", "sitectl1234", "books", f"bench {tag}", "body")
    elif site == "gitlab":
        c = target.container(target.stack.sites[site])
        independent.run(engine, c, "gitlab-psql", "-c", f"UPDATE issues SET title = 'bench {tag}', updated_at = now() "
                        "WHERE id = (SELECT min(id) FROM issues)")
        independent.run(engine, c, "gitlab-redis-cli", "SET", f"bench:{tag}", "v")
    elif site == "classifieds":
        s = cf.session(base)
        cf.comment(s, base, 84154, f"bench {tag}", "Still available?", rating=4, author=("Tess", "tess@example.com"))
    else:
        raise SystemExit(f"no task for {site}")


def small_write(target, engine, site: str, n: int) -> None:
    """A tree-search step's act: one row written, as an agent's click would."""
    c = target.container(target.stack.sites[site])
    if site == "shopping":
        independent.run(engine, c, "mysql", "-uroot", "-p1234567890", "magentodb", "-e",
                        f"INSERT INTO flag (flag_code, state, flag_data) VALUES ('bench_{n}_{uuid.uuid4().hex[:6]}', 0, 'x')")
    elif site == "reddit":
        independent.run(engine, c, "psql", "-U", "postgres", "-d", "postmill", "-c",
                        f"UPDATE users SET biography = 'step {n}' WHERE username = 'sitectl_trusted'")
    elif site == "gitlab":
        independent.run(engine, c, "gitlab-psql", "-c", f"UPDATE projects SET description = 'step {n}' WHERE id = "
                        "(SELECT min(id) FROM projects)")
    elif site == "classifieds":
        db = target.service_container(target.stack.sites[site], "db")
        independent.run(engine, db, "mysql", "-uroot", "-ppassword", "osclass", "-e",
                        f"UPDATE oc_t_item SET s_contact_name = 'step {n}' WHERE pk_i_id = 84154")


def after_a_job_run(target, engine, site: str, wait: float = 90.0) -> None:
    """Return just after the site's background jobs (``replica-jobs``, the stack file's
    ``jobs``) start a run, so that the next minute holds none: the bench's own readings of a
    site's state run with the jobs going (they are not sitectl's), and a run between a save and
    that reading (GitLab's Sidekiq rewrites its cron keys each minute) would make the reading
    differ from what the checkpoint holds. Nothing timed waits here."""
    jobs = target.stack.sites[site].jobs
    if jobs is None or "replica-jobs" not in jobs.pause[0]:
        return
    log = f"/run/replica-jobs/{jobs.pause[2]}.log"
    c = target.container(target.stack.sites[site])

    def runs() -> int:
        rc, out = engine.exec(c, ["sh", "-c", f"grep -c '^run ' {log} || true"])
        return int(out.strip() or 0)

    seen, end = runs(), time.monotonic() + wait
    while time.monotonic() < end and runs() == seen:
        time.sleep(0.5)


def stats(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"median": round(statistics.median(xs), 3), "p95": round(xs[min(len(xs) - 1, int(0.95 * len(xs)))], 3),
            "min": round(xs[0], 3), "max": round(xs[-1], 3), "n": len(xs)}


def save_restore(target, engine, site: str, reps: int) -> dict:
    s = [target.stack.sites[site]]
    saves, restores = [], []
    for n in range(reps):
        snapshots.reset(target, s, engine)
        after_a_job_run(target, engine, site)  # the save, the readings and the restore within a minute
        task(target, engine, site, n)
        t = time.perf_counter()
        snapshots.save_checkpoint(target, "bench", s, engine)
        saves.append(time.perf_counter() - t)
        want = independent.of_site(engine, target, site)
        task(target, engine, site, 1000 + n)
        t = time.perf_counter()
        snapshots.restore_checkpoint(target, "bench", s, engine)
        restores.append(time.perf_counter() - t)
        got = independent.of_site(engine, target, site)
        if got != want:
            raise SystemExit(f"{site}: after restore {n}: {independent.differs({site: want}, {site: got})}")
    snapshots.delete_checkpoint(target, "bench", engine)
    return {"save": stats(saves), "restore": stats(restores), "save_s": [round(x, 3) for x in saves],
            "restore_s": [round(x, 3) for x in restores]}


def tree(target, engine, site: str, branches: int, steps: int, way: str) -> dict:
    """The walk: save the root; per branch, from the root, STEPS times restore the parent, act,
    save the child. ``way``: ``checkpoint`` or ``snapshot``. Returns the timed seconds."""
    s = [target.stack.sites[site]]
    snapshots.reset(target, s, engine)
    task(target, engine, site, 0)

    def save(name: str) -> float:
        t = time.perf_counter()
        if way == "checkpoint":
            snapshots.save_checkpoint(target, name, s, engine)
        else:
            snapshots.create(target, name, s, engine)
        return time.perf_counter() - t

    def restore(name: str) -> float:
        t = time.perf_counter()
        if way == "checkpoint":
            snapshots.restore_checkpoint(target, name, s, engine)
        else:
            snapshots.reset(target, s, engine, name=name)
        return time.perf_counter() - t

    saved, restored = [save("root")], []
    want = {"root": independent.of_site(engine, target, site)}
    last = "root"
    for b in range(branches):
        parent = "root"
        for k in range(steps):
            restored.append(restore(parent))
            small_write(target, engine, site, b * 100 + k)
            child = f"n{k}"  # each branch reuses its depth's names: a tree search keeps a frontier
            saved.append(save(child))
            parent = last = child
        want[last] = independent.of_site(engine, target, site)
    restored.append(restore("root"))
    if independent.of_site(engine, target, site) != want["root"]:
        raise SystemExit(f"{site}: tree search ({way}): the root did not come back")
    restored.append(restore(last))
    if independent.of_site(engine, target, site) != want[last]:
        raise SystemExit(f"{site}: tree search ({way}): the last leaf did not come back")
    for name in ["root"] + [f"n{k}" for k in range(steps)]:
        if way == "checkpoint":
            snapshots.delete_checkpoint(target, name, engine)
        else:
            snapshots.delete(target, name, engine)
    snapshots.reset(target, s, engine, full=way == "snapshot")
    return {"seconds": round(sum(saved) + sum(restored), 3), "saves": stats(saved), "restores": stats(restored)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=["tiny", "full"], default="tiny")
    ap.add_argument("--instance", type=int, default=11)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--branches", type=int, default=10)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--sites", nargs="+", default=["shopping", "reddit", "gitlab", "classifieds"])
    ap.add_argument("--tree-sites", nargs="*", default=None,
                    help="Sites the tree search runs on (default: --sites); each named snapshot of the baseline side "
                         "copies the whole site")
    a = ap.parse_args()
    engine = DockerEngine()
    target = resolve_target("mini", host="127.0.0.1", instance=a.instance, scale=a.scale)
    sites = target.stack.select(a.sites)
    t0 = time.perf_counter()
    lifecycle.up(target, sites, engine, Reporter())
    up_s = time.perf_counter() - t0
    per_site, trees = {}, {}
    tree_sites = a.sites if a.tree_sites is None else a.tree_sites
    for site in a.sites:
        print(f"bench: {site}: save and restore x{a.reps}", file=sys.stderr)
        per_site[site] = save_restore(target, engine, site, a.reps)
        # Each site's numbers as soon as they are measured (a later site's failure keeps them).
        print("bench: result " + json.dumps({"site": site, "save": per_site[site]["save"],
                                             "restore": per_site[site]["restore"]}), file=sys.stderr)
        if site not in tree_sites:
            continue
        print(f"bench: {site}: tree search, {a.branches} x {a.steps}", file=sys.stderr)
        ck = tree(target, engine, site, a.branches, a.steps, "checkpoint")
        sn = tree(target, engine, site, a.branches, a.steps, "snapshot")
        trees[site] = {"checkpoints": ck, "snapshots": sn, "ratio_snapshots_to_checkpoints": round(sn["seconds"] / ck["seconds"], 2)}
    snapshots.reset(target, sites, engine)
    targets = {site: {"save_median_s": r["save"]["median"], "save_met": r["save"]["median"] <= SAVE_TARGET,
                      "restore_median_s": r["restore"]["median"], "restore_met": r["restore"]["median"] <= RESTORE_TARGET}
               for site, r in per_site.items()}
    print(json.dumps({
        "bench": "checkpoint", "scale": a.scale, "instance": a.instance,
        "host": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "up_seconds": round(up_s, 1), "save_restore": per_site, "tree_search": trees,
        "targets": {"save_s": SAVE_TARGET, "restore_s": RESTORE_TARGET, "per_site": targets},
        "command": f"python bench/checkpoint.py --scale {a.scale} --instance {a.instance} --reps {a.reps} "
                   f"--branches {a.branches} --steps {a.steps} --sites {' '.join(a.sites)}"
                   + (f" --tree-sites {' '.join(tree_sites)}" if a.tree_sites is not None else ""),
    }, indent=1))


if __name__ == "__main__":
    main()
