"""``budget_chunks`` and ``fits`` (``sitectl/stores/transport.py``), the byte budgets of one exec
(``BATCH_BUDGET``, ``ARG_BUDGET``), and ``SqlSession.query_chunks`` (``sitectl/stores/sql.py``),
which splits statements into texts under ``SQL_BUDGET``.

Sizes are as the functions define them: an item (or argument) counts its UTF-8 bytes plus one
separator byte; a chunk also counts ``base`` (a prelude's bytes); ``fits`` adds 8 bytes per argv
(its count argument in the exec). A greedy split: an item starts a new chunk only when adding
it would pass the budget; an item over the budget alone gets a chunk of its own.
"""
from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sitectl.stores.sql as sqlmod
from sitectl.stores.sql import SQL_BUDGET, SqlSession
from sitectl.stores.transport import ARG_BUDGET, BATCH_BUDGET, ExecTransport, budget_chunks, fits


def size(item: str) -> int:
    return len(item.encode("utf-8")) + 1


ITEM = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


# -- budget_chunks ---------------------------------------------------------------------------
@pytest.mark.parametrize("items, budget, base, chunks", [
    ([], 10, 0, []),
    (["aa", "b", "cc"], 5, 0, [["aa", "b"], ["cc"]]),          # 3 + 2 = 5 fits exactly; + 3 does not
    (["aa", "b", "cc"], 4, 0, [["aa"], ["b"], ["cc"]]),
    (["a", "b", "c"], 100, 0, [["a", "b", "c"]]),
    (["a", "b"], 5, 2, [["a"], ["b"]]),                         # the base counts in every chunk
    (["é", "é"], 6, 0, [["é", "é"]]),                           # bytes, not characters: 3 + 3
    (["é", "é"], 5, 0, [["é"], ["é"]]),
    (["", "", ""], 2, 0, [["", ""], [""]]),                     # an empty item still costs its separator
    (["a", "x" * 10, "b"], 5, 0, [["a"], ["x" * 10], ["b"]]),   # an oversized item alone, never dropped
    (["x" * 10, "y" * 10], 5, 0, [["x" * 10], ["y" * 10]]),
    (["a", "b"], 1, 5, [["a"], ["b"]]),                         # base alone over the budget: one item a chunk
])
def test_budget_chunks_exact_splits(items, budget, base, chunks):
    assert list(budget_chunks(items, budget, base)) == chunks


@given(items=st.lists(ITEM, max_size=40), budget=st.integers(1, 60), base=st.integers(0, 30))
@settings(database=None, max_examples=300)
def test_budget_chunks_keeps_every_item_once_in_order_each_chunk_within_budget_unless_alone(items, budget, base):
    chunks = list(budget_chunks(items, budget, base))
    assert [it for c in chunks for it in c] == items
    assert all(c for c in chunks)
    for c in chunks:
        total = base + sum(size(it) for it in c)
        assert total <= budget or len(c) == 1, (c, total)
    # Greedy: a chunk ended only because its next item would not fit.
    for c, nxt in zip(chunks, chunks[1:]):
        assert base + sum(size(it) for it in c) + size(nxt[0]) > budget


def test_an_item_that_alone_passes_the_budget_gets_its_own_chunk_between_its_neighbours():
    big = "é" * 50  # 101 bytes with its separator
    assert list(budget_chunks(["a", "b", big, "c", "d"], 100)) == [["a", "b"], [big], ["c", "d"]]


# -- fits ------------------------------------------------------------------------------------
def test_the_budgets_stay_under_linuxs_exec_limits():
    assert ARG_BUDGET < 128 * 1024            # MAX_ARG_STRLEN, one argument
    assert BATCH_BUDGET < 2 * 1024 * 1024     # about ARG_MAX: every argument and the environment
    assert SQL_BUDGET < ARG_BUDGET            # one SQL text travels as one argument


def test_fits_no_argvs_and_empty_argvs():
    assert fits([])
    assert fits([[]])


def test_fits_refuses_one_argument_of_arg_budget_bytes_and_takes_one_byte_less():
    assert fits([["x" * (ARG_BUDGET - 1)]])
    assert not fits([["x" * ARG_BUDGET]])
    assert not fits([["é" * (ARG_BUDGET // 2)]])  # counted in UTF-8 bytes: 2 per é
    assert fits([["é" * ((ARG_BUDGET - 1) // 2)]])


def test_fits_total_boundary_counts_a_separator_per_argument_and_8_bytes_per_argv():
    # 10 argvs of one argument each: 10 * (L + 1) + 10 * 8 == BATCH_BUDGET
    length = (BATCH_BUDGET - 80) // 10 - 1
    argvs = [["x" * length] for _ in range(10)]
    assert 10 * (length + 1) + 80 == BATCH_BUDGET
    assert fits(argvs)
    argvs[3] = ["x" * (length + 1)]
    assert not fits(argvs)


@given(st.lists(st.lists(ITEM, max_size=4), max_size=6))
@settings(database=None)
def test_fits_small_batches_and_every_prefix_of_a_batch_that_fits(argvs):
    assert fits(argvs)
    assert all(fits(argvs[:i]) for i in range(len(argvs)))


def test_a_batch_at_the_budget_really_runs_in_one_local_exec():
    """fits() leaves room for the script, the counts and the environment: the largest batch it
    admits (every argument at the per-argument budget too) starts under the real sh."""

    class LocalEngine:  # stands in for docker exec: the kernel's exec limits are the same here
        def exec(self, name, argv, timeout=600):
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
            return p.returncode, p.stdout.decode(errors="replace")

    if os.sysconf("SC_ARG_MAX") < 2 * 1024 * 1024:
        pytest.skip(f"this machine's ARG_MAX is {os.sysconf('SC_ARG_MAX')} (a small stack limit), Linux's default is 2 MiB")
    arg = "x" * (ARG_BUDGET - 1)
    n = BATCH_BUDGET // (ARG_BUDGET + 8 + 5)
    argvs = [["true", arg] for _ in range(n)]
    assert fits(argvs) and not fits([*argvs, ["true", arg]])
    assert ExecTransport(LocalEngine(), "c1", "s").run_many(argvs, "w") == [(0, "")] * n


# -- SqlSession.query_chunks -------------------------------------------------------------------
class RecordingSession(SqlSession):
    """A session that only records the SQL texts it is asked to run."""

    dialect = "mysql"

    def __init__(self):
        super().__init__("shopping", "magentodb")
        self.texts: list[tuple[str, str]] = []

    def query(self, sql, what, timeout=600):
        self.texts.append((sql, what))
        return []

    def dump(self, args, out, what):
        raise AssertionError("not used")

    def load(self, program, args, src, what):
        raise AssertionError("not used")


def test_query_chunks_no_statements_runs_nothing():
    s = RecordingSession()
    s.query_chunks([], "w", prelude="SET @x=1;\n")
    assert s.texts == []


def test_query_chunks_small_batch_is_one_text_prelude_first_statements_joined_by_newlines():
    s = RecordingSession()
    s.query_chunks(["INSERT INTO a VALUES (1);", "INSERT INTO b VALUES (2);"], "snapshot golden",
                   prelude="SET @sitectl_off=1;\n")
    assert s.texts == [("SET @sitectl_off=1;\nINSERT INTO a VALUES (1);\nINSERT INTO b VALUES (2);",
                        "snapshot golden")]


def test_query_chunks_splits_at_sql_budget_with_the_prelude_in_every_text():
    s = RecordingSession()
    stmt = "SELECT '" + "x" * 40_000 + "';"
    s.query_chunks([stmt, stmt, stmt], "w", prelude="USE `m`;\n")
    assert [t for t, _ in s.texts] == [f"USE `m`;\n{stmt}\n{stmt}", f"USE `m`;\n{stmt}"]
    assert all(len(t.encode()) <= SQL_BUDGET for t, _ in s.texts)


def test_query_chunks_sends_a_statement_over_the_budget_alone_and_whole():
    s = RecordingSession()
    huge = "SELECT '" + "y" * SQL_BUDGET + "';"
    s.query_chunks(["A;", huge, "B;"], "w")
    assert [t for t, _ in s.texts] == ["A;", huge, "B;"]


@given(stmts=st.lists(st.text(alphabet="ab;é\n'", min_size=1, max_size=15), max_size=30),
       prelude=st.sampled_from(["", "SET @sitectl_off=1;\n", "USE `é`;\nDELIMITER $$\n"]),
       budget=st.integers(10, 80))
@settings(database=None, max_examples=200)
def test_query_chunks_texts_are_prelude_plus_consecutive_statements_under_the_budget(stmts, prelude, budget):
    s = RecordingSession()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sqlmod, "SQL_BUDGET", budget)
        s.query_chunks(stmts, "w", prelude=prelude)
    texts = [t for t, _ in s.texts]
    assert all(t.startswith(prelude) for t in texts)
    assert "\n".join(t[len(prelude):] for t in texts) == "\n".join(stmts)
    chunks = list(budget_chunks(stmts, budget, len(prelude.encode())))
    assert texts == [prelude + "\n".join(c) for c in chunks]
    for t, c in zip(texts, chunks):
        assert len(t.encode()) < budget or len(c) == 1
