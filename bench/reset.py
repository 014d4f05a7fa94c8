"""Benchmark of sitectl's resets against WebArena's own (re-create the container).

For each scale (tiny, full) the mini stack is brought up at that scale, then, per site:

* for each realistic task mutation, made through the replica's own HTTP endpoints:
  mutate, then time a delta reset (``sitectl reset SITE``);
* time a reset with nothing changed, a ``--full`` reset, and WebArena's reset: re-create the
  container from its image, run the post-start steps and wait for the health probes
  (``sitectl reset --recreate`` without the golden snapshot that sitectl then takes).

Every timing goes through the same code the CLI runs (``sitectl.ops``, ``sitectl.snapshots``). Each delta reset
must report method ``delta`` with no escalation, and after each mutation's repetitions the
site's state is compared with the golden snapshot (``verify --deep``): a mismatch is counted.

Output: JSON (median and p95 per measurement, ratios against the re-create baseline measured
in the same run, full/tiny ratios, each target met or missed) and a PNG chart.

    python bench/reset.py --reps 20 --scales tiny full
"""
from __future__ import annotations

import argparse
import json
import platform
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
from sitectl.sites.jobs import written_by_jobs  # noqa: E402
from sitectl.stack.target import resolve_target  # noqa: E402
from tests.actions import gitlab as gl  # noqa: E402
from tests.actions import magento, postmill  # noqa: E402

SHOP, ADMIN, FORUM, GITLAB = ("http://127.0.0.1:7770", "http://127.0.0.1:7780/admin",
                              "http://127.0.0.1:9999", "http://127.0.0.1:8023")
PAT = "glpat-byteblaze-replica-01"
TRUSTED = ("sitectl_trusted", "sitectl1234")
PRODUCT = "sandgrens-swedish-handmade-wooden-clog-sandal-copenhagen"


def _tag() -> str:
    return uuid.uuid4().hex[:10]


def _post() -> str:
    return postmill.create_post(FORUM, *TRUSTED, "books", f"bench {_tag()}", "benchmark post")


# Mutation name -> (site, function). Each is what an agent's task does, over HTTP.
MUTATIONS = {
    "place an order": ("shopping", lambda: magento.place_order(SHOP)),
    "add to cart": ("shopping", lambda: magento.add_to_cart(SHOP, magento.storefront_session(SHOP), PRODUCT)),
    "write a review": ("shopping", lambda: magento.write_review(SHOP, magento.storefront_session(SHOP), PRODUCT,
                                                                "bench", 4, "Bench review")),
    "change price and stock (admin)": ("shopping_admin", lambda: magento.admin_set_price_and_stock(
        ADMIN, magento.admin_session(ADMIN), 1481, 12.34, qty=5, in_stock=True)),
    "create a post": ("reddit", _post),
    "comment": ("reddit", lambda: postmill.comment(FORUM, *TRUSTED, "/f/books/59421/friendly-reminder-bookshop-org-exists",
                                                   f"bench comment {_tag()}")),
    "vote": ("reddit", lambda: postmill.vote(FORUM, *TRUSTED, "/f/books/59421/friendly-reminder-bookshop-org-exists", 1)),
    "create a forum": ("reddit", lambda: postmill.create_forum(FORUM, *TRUSTED, f"bench{_tag()}", "Bench", "bench forum")),
    "create an issue": ("gitlab", lambda: gl.create_issue(GITLAB, "byteblaze", "hello1234", "byteblaze/dotfiles",
                                                          f"bench issue {_tag()}")),
    "open a merge request": ("gitlab", lambda: gl.open_merge_request(GITLAB, "byteblaze", "hello1234",
                                                                     "byteblaze/dotfiles", f"bench-{_tag()}")),
    "push a commit": ("gitlab", lambda: gl.push_commit(GITLAB, "byteblaze", "hello1234", "byteblaze/dotfiles",
                                                       "main", "BENCH.md", f"{_tag()}\n")),
    "add a project member": ("gitlab", lambda: gl.add_project_member(GITLAB, "byteblaze", "hello1234",
                                                                     "byteblaze/dotfiles", "yjlou", "developer")),
}
MUTABLE = ("shopping", "shopping_admin", "reddit", "gitlab")


def stats(samples: list[float]) -> dict:
    s = sorted(samples)
    p95 = s[min(len(s) - 1, max(0, round(0.95 * len(s)) - 1))]
    return {"n": len(s), "median": round(statistics.median(s), 4), "p95": round(p95, 4),
            "min": round(s[0], 4), "max": round(s[-1], 4)}


#: What each site's database is made of, read by its own client (not by sitectl): the tables,
#: foreign keys and triggers of the applications' own structures (issue 15), and Magento's
#: indexers on "Update by Schedule", and two row counts that tell the scale (products and reviews,
#: submissions and comments, projects and issues).
STRUCTURE = {
    "shopping": ("shopping", ["mysql", "-uroot", "-p1234567890", "-N", "-B", "magentodb", "-e",
                              "SELECT (SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'magentodb'), "
                              "(SELECT COUNT(*) FROM information_schema.referential_constraints WHERE constraint_schema = 'magentodb'), "
                              "(SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = 'magentodb' "
                              "AND trigger_name NOT LIKE 'sitectl\\_%'), (SELECT COUNT(*) FROM mview_state WHERE mode = 'enabled'), "
                              "(SELECT COUNT(*) FROM catalog_product_entity), (SELECT COUNT(*) FROM review)"]),
    "reddit": ("forum", ["psql", "-U", "postgres", "-d", "postmill", "-At", "-F", "\t", "-c",
                         "SELECT (SELECT count(*) FROM pg_tables WHERE schemaname = 'public'), "
                         "(SELECT count(*) FROM pg_constraint WHERE contype = 'f'), "
                         "(SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname NOT LIKE 'sitectl%'), 0, "
                         "(SELECT count(*) FROM submissions), (SELECT count(*) FROM comments)"]),
    "gitlab": ("gitlab", ["gitlab-psql", "-d", "gitlabhq_production", "-At", "-F", "\t", "-c",
                          "SELECT (SELECT count(*) FROM pg_class WHERE relkind IN ('r', 'p') AND relnamespace::regnamespace::text "
                          "IN ('public', 'gitlab_partitions_static', 'gitlab_partitions_dynamic')), "
                          "(SELECT count(*) FROM pg_constraint WHERE contype = 'f'), "
                          "(SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname NOT LIKE 'sitectl%'), "
                          "(SELECT count(*) FROM pg_partitioned_table), "
                          "(SELECT count(*) FROM projects), (SELECT count(*) FROM issues)"]),
}


ROWS = {"shopping": ("products", "reviews"), "reddit": ("submissions", "comments"), "gitlab": ("projects", "issues")}


def structure(engine) -> dict:
    """Per site: tables, foreign keys, application triggers, (Magento) indexers on schedule or
    (GitLab) partitioned tables, and the rows of :data:`ROWS`, as the database's own client
    counts them."""
    out = {}
    for site, (container, argv) in STRUCTURE.items():
        rc, text = engine.exec(container, argv)
        if rc != 0:
            raise SystemExit(f"{site}: counting its structure failed: {text[-300:]}")
        tables, fks, triggers, last, rows_a, rows_b = (int(x) for x in text.split())
        out[site] = {"tables": tables, "foreign_keys": fks, "app_triggers": triggers,
                     ("indexers_on_schedule" if site == "shopping" else "partitioned_parents" if site == "gitlab"
                      else "extra"): last,
                     **dict(zip(ROWS[site], (rows_a, rows_b)))}
        out[site].pop("extra", None)
    return out


def run_scale(scale: str, reps: int, recreate_reps: int, full_reps: int, log) -> dict:
    engine = DockerEngine()
    target = resolve_target("mini", host="127.0.0.1", scale=scale)
    rep = Reporter()
    log(f"[{scale}] bringing the mini stack up (building {scale} images if missing)")
    lifecycle.down(target, engine)
    lifecycle.up(target, list(target.stack.sites.values()), engine, rep)
    sites = target.stack.sites
    out = {"mutations": {}, "sites": {}, "mismatches": [], "structure": structure(engine)}
    log(f"[{scale}] structure: {out['structure']}")

    for name, (site, fn) in MUTATIONS.items():
        times, changed = [], []
        for i in range(reps):
            fn()
            t0 = time.perf_counter()
            (r,) = snapshots.reset(target, [sites[site]], engine)
            times.append(time.perf_counter() - t0)
            changed.append(len(r.changed))
            if r.method != "delta" or r.escalations:
                out["mismatches"].append({"mutation": name, "rep": i, "method": r.method, "escalations": r.escalations})
        deep = snapshots.verify_deep(target, [sites[site]], engine)
        bad = [d for d in deep if not d["ok"]]
        if bad:
            out["mismatches"].append({"mutation": name, "verify_deep": bad})
        out["mutations"][name] = {"site": site, "delta": stats(times), "changed_items_median": statistics.median(changed)}
        log(f"[{scale}] {name:<32} delta median {out['mutations'][name]['delta']['median']:.3f} s")

    for site in MUTABLE:
        s = sites[site]
        none_t, full_t, rec_t, jobs_wrote = [], [], [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            (r,) = snapshots.reset(target, [s], engine)
            none_t.append(time.perf_counter() - t0)
            if r.method != "none" and all(written_by_jobs(s, item) for item in r.changed):
                jobs_wrote.append(r.changed[:5])  # the site's background jobs ran meanwhile (declared writes)
            elif r.method != "none":
                out["mismatches"].append({"site": site, "nothing_changed_but": r.method, "changed": r.changed[:5]})
        for _ in range(full_reps):
            t0 = time.perf_counter()
            (r,) = snapshots.reset(target, [s], engine, full=True)
            full_t.append(time.perf_counter() - t0)
            if r.escalations:
                out["mismatches"].append({"site": site, "full": r.escalations})
        for _ in range(recreate_reps):
            t0 = time.perf_counter()
            snapshots.bring_up(target, s, engine, recreate=True)  # WebArena's reset, nothing more
            rec_t.append(time.perf_counter() - t0)
        # Re-creating drops the site's golden snapshot (it lived in the old container): take it
        # once more, untimed (sitectl's own extra, not part of WebArena's reset).
        snapshots.create(target, snapshots.GOLDEN, [s], engine)
        deep = snapshots.verify_deep(target, [s], engine)
        if any(not d["ok"] for d in deep):
            out["mismatches"].append({"site": site, "verify_deep": [d for d in deep if not d["ok"]]})
        out["sites"][site] = {"nothing_changed": stats(none_t), "full": stats(full_t), "recreate": stats(rec_t),
                              "nothing_changed_but_jobs_wrote": len(jobs_wrote)}
        log(f"[{scale}] {site:<15} none {stats(none_t)['median']:.3f} s, full {stats(full_t)['median']:.3f} s, "
            f"recreate {stats(rec_t)['median']:.2f} s")
    lifecycle.down(target, engine)
    return out


def summarize(res: dict) -> dict:
    """Ratios and targets (issue: delta <= 1 s median at full scale; nothing changed <= 0.1 s;
    full/tiny <= 1.5 for the same mutation; >= 100x faster than --recreate, same run)."""
    summary = {"targets": []}
    for scale, r in res.items():
        for name, m in r["mutations"].items():
            rec = r["sites"][m["site"]]["recreate"]["median"]
            m["speedup_vs_recreate"] = round(rec / m["delta"]["median"], 1)
    if "full" in res:
        full = res["full"]
        worst = max(m["delta"]["median"] for m in full["mutations"].values())
        summary["targets"].append({"target": "delta reset median <= 1 s at full scale (worst mutation)",
                                   "value": worst, "met": worst <= 1.0})
        worst_none = max(s["nothing_changed"]["median"] for s in full["sites"].values())
        summary["targets"].append({"target": "reset with nothing changed <= 0.1 s (worst site, full)",
                                   "value": worst_none, "met": worst_none <= 0.1})
        low = min(m["speedup_vs_recreate"] for m in full["mutations"].values())
        summary["targets"].append({"target": ">= 100x faster than --recreate (worst mutation, full)",
                                   "value": low, "met": low >= 100})
        if "tiny" in res:
            ratios = {n: round(full["mutations"][n]["delta"]["median"] / res["tiny"]["mutations"][n]["delta"]["median"], 2)
                      for n in full["mutations"]}
            summary["full_over_tiny"] = ratios
            summary["targets"].append({"target": "same mutation full/tiny ratio <= 1.5 (worst)",
                                       "value": max(ratios.values()), "met": max(ratios.values()) <= 1.5})
    # Issue 15's targets, on the applications' own structures (Magento's indexers on schedule).
    if "full" in res:
        worst = max(m["delta"]["median"] for m in res["full"]["mutations"].values())
        summary["targets"].append({"target": "issue 15: delta reset median <= 0.5 s at full scale, real structures "
                                             "(worst mutation)", "value": worst, "met": worst <= 0.5})
    if "tiny" in res:
        full_t = res["tiny"]["sites"]["shopping"]["full"]["median"]
        summary["targets"].append({"target": "issue 15: full restore of the 361-table Magento database <= 3 s at tiny "
                                             "scale (reset --full of shopping)", "value": full_t, "met": full_t <= 3.0})
        worst_none = max(s["nothing_changed"]["median"] for s in res["tiny"]["sites"].values())
        summary["targets"].append({"target": "reset with nothing changed <= 0.1 s (worst site, tiny)",
                                   "value": worst_none, "met": worst_none <= 0.1})
    summary["mismatches"] = sum(len(r["mismatches"]) for r in res.values())
    return summary


def chart(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    scales = list(res)
    fig, axes = plt.subplots(1, len(scales), figsize=(7 * len(scales), 6), squeeze=False)
    for ax, scale in zip(axes[0], scales):
        r = res[scale]
        labels, med, p95 = [], [], []
        for name, m in r["mutations"].items():
            labels.append(f"delta: {name}")
            med.append(m["delta"]["median"])
            p95.append(m["delta"]["p95"])
        for site, s in r["sites"].items():
            for mode in ("nothing_changed", "full", "recreate"):
                labels.append(f"{mode}: {site}")
                med.append(s[mode]["median"])
                p95.append(s[mode]["p95"])
        y = range(len(labels))
        ax.barh(y, med, color=["#2b8cbe" if lbl.startswith("delta") else "#7bccc4" if "nothing" in lbl
                               else "#fdae6b" if lbl.startswith("full") else "#e34a33" for lbl in labels])
        ax.errorbar(p95, y, fmt="|", color="black", label="p95")
        ax.set_yticks(list(y))
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # minor labels overlap on short ranges
        ax.set_xlabel("seconds (log scale): bar = median, tick = p95")
        ax.set_title(f"sitectl reset, mini stack, {scale} scale")
        ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", nargs="+", default=["tiny", "full"], choices=["tiny", "full"])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--recreate-reps", type=int, default=None, help="default: --reps")
    ap.add_argument("--full-reps", type=int, default=None,
                    help="repetitions of --full resets (default: --reps; a full restore copies every row)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/reset.json")
    ap.add_argument("--png", type=Path, default=ROOT / "bench/results/reset.png")
    ap.add_argument("--chart-only", action="store_true", help="Only draw --png from the results already in --out.")
    a = ap.parse_args()
    if a.chart_only:
        chart(json.loads(a.out.read_text())["results"], a.png)
        return 0
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    t0 = time.time()
    res = {s: run_scale(s, a.reps, a.recreate_reps or a.reps, a.full_reps or a.reps, log) for s in a.scales}
    report = {"command": " ".join(["python", "bench/reset.py", *sys.argv[1:]]),
              "machine": {"python": platform.python_version(), "platform": platform.platform(),
                          "cpus": __import__("os").cpu_count()},
              "seconds": round(time.time() - t0, 1), "results": res, "summary": summarize(res)}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=1))
    chart(res, a.png)
    print(json.dumps(report["summary"], indent=1))
    return 0 if report["summary"]["mismatches"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
