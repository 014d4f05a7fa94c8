"""Background jobs: the replicas' Magento cron and GitLab Sidekiq write on their own (as the real
images' do), and sitectl pauses them around its snapshots, resets and deep verifies (stack file
``jobs``). Real Docker, the mini stack's replicas, their jobs made to run every 0.2 s.

Proofs that do not use sitectl's code: the replicas' own job log (each run's start and end, each
pause and resume, written by ``replica-jobs`` in the container) shows that no run overlapped a
pause and that the jobs ran again after each; row counts by separate queries.
"""
import time

import pytest

from sitectl import snapshots
from sitectl.errors import JobsPauseFailed
from tests.actions import magento

pytestmark = pytest.mark.docker

SHOP = "http://127.0.0.1:7770"
JOBS = {"shopping": ("shopping", "cron"), "gitlab": ("gitlab", "sidekiq")}


def sh(engine, container, *argv):
    rc, out = engine.exec(container, list(argv))
    assert rc == 0, out
    return out


def every(engine, site, seconds):
    container, job = JOBS[site]
    sh(engine, container, "sh", "-c", 'echo "$1" > /run/replica-jobs/"$2".every', "sh", str(seconds), job)


def log(engine, site) -> list[list[str]]:
    container, job = JOBS[site]
    return [ln.split() for ln in sh(engine, container, "cat", f"/run/replica-jobs/{job}.log").splitlines() if ln]


def runs(engine, site) -> int:
    return sum(1 for e in log(engine, site) if e[0] == "run")


def assert_no_run_overlapped_a_pause(events, since: float):
    """Every pause after ``since`` has its resume, no run overlaps a pause-resume window, and a
    run came after the last resume (the jobs were let run again)."""
    windows, start = [], None
    for e in events:
        if e[0] == "pause" and float(e[1]) >= since:
            start = float(e[1])
        elif e[0] == "resume" and start is not None:
            windows.append((start, float(e[1])))
            start = None
    assert windows, f"no pause since {since}: {events[-10:]}"
    assert start is None, "a pause was never resumed"
    for r in (e for e in events if e[0] == "run"):
        s, t = float(r[1]), float(r[2])
        assert not any(s < b and t > a for a, b in windows), f"run {s}-{t} overlapped a pause {windows}"
    assert any(e[0] == "run" and float(e[1]) > windows[-1][1] for e in events), "the jobs did not run again"


@pytest.fixture
def fast_jobs(mini, engine):
    for site in JOBS:
        every(engine, site, 0.2)
    time.sleep(1.5)
    yield
    for site in JOBS:
        every(engine, site, 60)
    # then a run each minute, as the real cron
    snapshots.reset(mini, [mini.stack.sites[s] for s in JOBS], engine)


def test_replica_jobs_write_on_their_own(mini, engine, fast_jobs):
    before = sh(engine, "shopping", "mysql", "magentodb", "-N", "-e", "SELECT COUNT(*), MAX(schedule_id) FROM cron_schedule")
    time.sleep(1)
    after = sh(engine, "shopping", "mysql", "magentodb", "-N", "-e", "SELECT COUNT(*), MAX(schedule_id) FROM cron_schedule")
    assert before != after, (before, after)
    keys = sh(engine, "gitlab", "gitlab-redis-cli", "--scan", "--pattern", "resque:gitlab:*").split()
    assert "resque:gitlab:stat:processed" in keys and any(k.startswith("resque:gitlab:cron_job:") for k in keys), keys


def test_snapshot_reset_and_verify_pause_the_jobs(mini, engine, fast_jobs):
    sites = [mini.stack.sites[s] for s in JOBS]
    t0 = time.time()
    snapshots.create(mini, "jobs", sites, engine)  # taken while the jobs run every 0.2 s
    try:
        orders = sh(engine, "shopping", "mysql", "magentodb", "-N", "-e", "SELECT COUNT(*) FROM sales_order").strip()
        magento.place_order(SHOP)
        time.sleep(1)  # the jobs write meanwhile
        rows = snapshots.reset(mini, sites, engine, name="jobs")
        for r in rows:
            assert r.method == "delta" and not r.notes, r
        shop = next(r for r in rows if r.site == "shopping")
        assert any(c.startswith("table sales_order ") for c in shop.changed), shop.changed
        assert any(c.startswith("table cron_schedule ") for c in shop.changed), shop.changed
        gitlab = next(r for r in rows if r.site == "gitlab")
        assert any(c.startswith("redis keys resque:gitlab:*") for c in gitlab.changed), gitlab.changed
        # Independent count: the order is gone.
        assert sh(engine, "shopping", "mysql", "magentodb", "-N", "-e", "SELECT COUNT(*) FROM sales_order").strip() == orders
        time.sleep(1)  # the jobs run again and write: verify --deep names what they wrote, and passes
        deep = snapshots.verify_deep(mini, sites, engine, "jobs")
        assert all(d["ok"] for d in deep), deep
        jobs = {(d["site"], j) for d in deep for j in d["jobs"]}
        assert ("shopping", "table cron_schedule") in jobs and ("gitlab", "redis keys resque:gitlab:*") in jobs, deep
        # A change that is not the jobs' still fails it.
        sh(engine, "shopping", "mysql", "magentodb", "-e", "UPDATE sales_order SET grand_total = grand_total + 1")
        deep = snapshots.verify_deep(mini, [mini.stack.sites["shopping"]], engine, "jobs")
        assert any("table sales_order" in d["differs"] for d in deep), deep
        time.sleep(1)  # runs after the last resume
        for site in JOBS:
            assert_no_run_overlapped_a_pause(log(engine, site), t0)
    finally:
        snapshots.delete(mini, "jobs", engine)


def test_a_pause_that_fails_stops_the_reset_without_escalation(mini, engine, fast_jobs):
    site = mini.stack.sites["shopping"]
    # A run that does not end: the lock held by another process for 30 s; the pause waits 1 s.
    sh(engine, "shopping", "sh", "-c", "setsid python3 -c \"import fcntl, time; f = open('/run/replica-jobs/cron.lock', 'a'); "
       "fcntl.flock(f, fcntl.LOCK_EX); time.sleep(30)\" >/dev/null 2>&1 &")
    time.sleep(0.5)
    jobs = site.jobs.model_copy(update={"pause": ["replica-jobs", "pause", "cron", "--wait", "1"]})
    slow = site.model_copy(update={"jobs": jobs})
    sh(engine, "shopping", "mysql", "magentodb", "-e", "UPDATE sales_order SET grand_total = grand_total + 1")
    try:
        with pytest.raises(JobsPauseFailed) as e:
            snapshots.reset(mini, [slow], engine)
        assert "shopping" in str(e.value) and "replica-jobs pause cron" in str(e.value) and "nothing was" in str(e.value)
        # Nothing restored, no escalation (the container is the same one), the jobs resumed.
        assert "paused" not in sh(engine, "shopping", "replica-jobs", "status", "cron")
    finally:
        sh(engine, "shopping", "sh", "-c", "pkill -f '[f]cntl.LOCK_EX' || true")
    (row,) = snapshots.reset(mini, [site], engine)
    assert row.method == "delta" and any(c.startswith("table sales_order ") for c in row.changed), row


def test_a_pause_ends_by_itself_when_its_caller_dies(mini, engine, fast_jobs):
    # sitectl killed between pause and resume: the replica's pause has a bound (--for).
    sh(engine, "shopping", "replica-jobs", "pause", "cron", "--for", "1")
    n = runs(engine, "shopping")
    assert "paused" in sh(engine, "shopping", "replica-jobs", "status", "cron")
    time.sleep(2)
    assert runs(engine, "shopping") > n


class CountingEngine:
    """The real engine, with its ``docker exec`` calls counted (a spy: every call still goes to
    Docker; nothing is mocked)."""

    def __init__(self, engine):
        self._engine = engine
        self.execs: list[str] = []

    def exec(self, name, argv, timeout=600):
        self.execs.append(name)
        return self._engine.exec(name, argv, timeout)

    def __getattr__(self, attr):
        return getattr(self._engine, attr)


def test_a_reset_pauses_the_jobs_inside_its_own_round_trips(mini, engine):
    """Nothing changed: one ``docker exec`` (pause, detection, resume); a delta: two (the
    restore's trip pauses and resumes them again), and still no run overlapped a pause (the
    replica's own log). The jobs are made idle between the pauses so that the counts do not
    depend on a run landing in the test."""
    site = mini.stack.sites["shopping"]
    every(engine, "shopping", 3600)
    try:
        snapshots.reset(mini, [site], engine)
        t0 = time.time()
        spy = CountingEngine(engine)
        (row,) = snapshots.reset(mini, [site], spy)
        assert row.method == "none" and not row.notes, row
        assert spy.execs == ["shopping"], spy.execs
        total = "SELECT COUNT(*), SUM(grand_total) FROM sales_order"
        before = sh(engine, "shopping", "mysql", "magentodb", "-N", "-e", total)
        sh(engine, "shopping", "mysql", "magentodb", "-e", "UPDATE sales_order SET grand_total = grand_total + 1 ORDER BY entity_id LIMIT 1")
        spy.execs.clear()
        (row,) = snapshots.reset(mini, [site], spy)
        assert row.method == "delta" and [c.split(" (")[0] for c in row.changed] == ["table sales_order"] and not row.notes, row
        assert spy.execs == ["shopping", "shopping"], spy.execs
        pauses = [e for e in log(engine, "shopping") if e[0] in ("pause", "resume") and float(e[1]) >= t0]
        assert [e[0] for e in pauses] == ["pause", "resume"] * 3, pauses
        assert sh(engine, "shopping", "mysql", "magentodb", "-N", "-e", total) == before  # a separate query
    finally:
        every(engine, "shopping", 60)
    every(engine, "shopping", 0.2)
    time.sleep(1)
    assert_no_run_overlapped_a_pause(log(engine, "shopping"), t0)
    every(engine, "shopping", 60)
    snapshots.reset(mini, [site], engine)
