"""``retry_deadlocks`` (``sitectl/stores/sql.py``): a transaction the server ended as a
deadlock's victim runs again; any other error, or a deadlock every time, is raised as it came.

The errors are in the form the clients print them (PostgreSQL's ``deadlock detected`` with its
DETAIL line, SQLSTATE 40P01; MariaDB's ER_LOCK_DEADLOCK, 1213/40001, as ``mysql`` reports it);
no server is needed to test the retry policy itself, so ``run`` is a Python stand-in that fails
as told (the traffic tests, tests/snapshots/test_traffic.py, meet real deadlocks).
"""
from __future__ import annotations

import pytest

from sitectl.errors import StoreError
from sitectl.stores.sql import DEADLOCK_ATTEMPTS, deadlocked, retry_deadlocks

PG = ("reddit: install change tracking failed (exit code 1): ERROR:  deadlock detected\n"
      "DETAIL:  Process 812 waits for ShareRowExclusiveLock on relation 16502 of database 16384; "
      "blocked by process 790.")
MARIA = "shopping: restore failed: ERROR 1213 (40001) at line 3: Deadlock found when trying to get lock; try restarting transaction"


@pytest.mark.parametrize("text", [PG, MARIA])
def test_the_servers_deadlock_errors_are_deadlocks(text):
    assert deadlocked(text) and deadlocked(StoreError(text))


@pytest.mark.parametrize("text", [None, "", "ERROR:  relation \"x\" does not exist",
                                  "ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction"])
def test_other_errors_are_not(text):
    assert not deadlocked(text)


class Flaky:
    def __init__(self, failures: list[Exception]):
        self.failures, self.calls = list(failures), 0

    def __call__(self):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "done"


def test_a_deadlock_victim_runs_again_until_it_commits():
    run = Flaky([StoreError(PG), StoreError(MARIA)])
    assert retry_deadlocks(run) == "done" and run.calls == 3


def test_a_deadlock_every_time_raises_the_last_error_after_the_attempts():
    run = Flaky([StoreError(PG)] * DEADLOCK_ATTEMPTS)
    with pytest.raises(StoreError, match="deadlock detected"):
        retry_deadlocks(run)
    assert run.calls == DEADLOCK_ATTEMPTS


@pytest.mark.parametrize("error", [StoreError("reddit: restore failed: ERROR:  syntax error"), ValueError(PG)])
def test_any_other_error_is_raised_at_once(error):
    run = Flaky([error])
    with pytest.raises(type(error)):
        retry_deadlocks(run)
    assert run.calls == 1
