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
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sitectl import snapshots
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
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/soak.json")
    a = ap.parse_args()
    engine = DockerEngine()
    target = resolve_target("mini", host="127.0.0.1", instance=a.instance)
    lifecycle.up(target, target.stack.select(MUTABLE), engine, Reporter())
    snapshots.reset(target, target.stack.select(MUTABLE), engine)
    rng = random.Random(a.seed)
    table = moves(target, engine, rng)
    lat, mismatches, counts, action_errors, unchanged = [], [], {}, [], {}
    t_start = time.time()
    for i in range(a.cycles):
        site, name, act = rng.choice(table)
        counts[f"{site}/{name}"] = counts.get(f"{site}/{name}", 0) + 1
        try:
            act()
        except Exception as e:  # noqa: BLE001 - a failed mutation is reported, the cycle still resets
            action_errors.append({"cycle": i, "move": f"{site}/{name}", "error": str(e)[:300]})
        s = target.stack.sites[site]
        t0 = time.perf_counter()
        try:
            (row,) = snapshots.reset(target, [s], engine)
            lat.append(time.perf_counter() - t0)
            if not row.changed:  # the move left every store as golden: it tested nothing
                unchanged[f"{site}/{name}"] = unchanged.get(f"{site}/{name}", 0) + 1
            if row.method == "recreate":
                mismatches.append({"cycle": i, "move": f"{site}/{name}", "reset": "escalated to re-create",
                                   "escalations": row.escalations})
        except Exception as e:  # noqa: BLE001
            lat.append(time.perf_counter() - t0)
            mismatches.append({"cycle": i, "move": f"{site}/{name}", "reset": f"raised {type(e).__name__}: {e}"})
            continue
        bad = [d for d in snapshots.verify_deep(target, [s], engine) if not d["ok"]]
        if bad:
            mismatches.append({"cycle": i, "move": f"{site}/{name}", "differs": bad})
        if (i + 1) % 50 == 0:
            print(f"cycle {i + 1}/{a.cycles}: median reset {statistics.median(lat[-50:]):.3f} s, "
                  f"mismatches {len(mismatches)}", file=sys.stderr, flush=True)
    report = {"command": " ".join(["python", "bench/soak.py", *sys.argv[1:]]),
              "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
              "instance": a.instance, "cycles": a.cycles, "seconds": round(time.time() - t_start, 1),
              "mismatches": len(mismatches), "mismatch_details": mismatches[:20],
              "mutation_errors": len(action_errors), "mutation_error_details": action_errors[:10],
              "moves": dict(sorted(counts.items())),
              "moves_that_changed_nothing": dict(sorted(unchanged.items())),
              "reset_latency": {"median_s": round(statistics.median(lat), 3),
                                "p95_s": round(sorted(lat)[max(0, round(0.95 * len(lat)) - 1)], 3),
                                "max_s": round(max(lat), 3), "slope_ms_per_100_cycles": slope_ms_per_100(lat),
                                "windows": windows(lat, a.window)}}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "mismatch_details"}, indent=1))
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
