"""Every foreign-key action MariaDB runs, undone by a delta reset: random sequences of deletes
and key updates (hypothesis) on a schema with ``ON DELETE CASCADE``, ``SET NULL``, ``ON UPDATE
CASCADE`` chains, a key over a non-primary column, a table that references itself and a child
without a primary key. Magento's schema has no ``ON UPDATE`` action, so this is where those
paths meet the server. Proof: the tests' independent dump (tests/stores/real_schema.py)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.stores import real_schema as rs

pytestmark = pytest.mark.docker

CONTAINER = "sitectl-test-fk-actions"
SCHEMA = """
CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL UNIQUE);
CREATE TABLE c1 (id INT PRIMARY KEY, p_id INT, FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE c2 (id INT PRIMARY KEY, p_code VARCHAR(10),
  FOREIGN KEY (p_code) REFERENCES p (code) ON DELETE SET NULL ON UPDATE CASCADE, KEY (p_code));
CREATE TABLE g1 (id INT PRIMARY KEY, c1_id INT, FOREIGN KEY (c1_id) REFERENCES c1 (id) ON DELETE CASCADE);
CREATE TABLE g2 (id INT PRIMARY KEY, code VARCHAR(10),
  FOREIGN KEY (code) REFERENCES c2 (p_code) ON DELETE CASCADE ON UPDATE SET NULL);
CREATE TABLE tree (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES tree (id) ON DELETE CASCADE);
CREATE TABLE loose (x INT, p_id INT, FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE);
INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd');
INSERT INTO c1 VALUES (10, 1), (11, 1), (12, 2), (13, 3), (14, NULL);
INSERT INTO c2 VALUES (20, 'a'), (21, 'b'), (22, 'b'), (23, 'd');
INSERT INTO g1 VALUES (100, 10), (101, 11), (102, 12), (103, 14);
INSERT INTO g2 VALUES (200, 'a'), (201, 'b'), (202, 'd');
INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2), (4, 3), (5, 1), (6, NULL);
INSERT INTO loose VALUES (1, 1), (2, 2), (3, 2);
"""

OPS = st.one_of(
    st.builds(lambda k: f"DELETE FROM p WHERE id = {k}", st.integers(1, 4)),
    st.builds(lambda k, n: f"UPDATE p SET id = {n} WHERE id = {k}", st.integers(1, 4), st.integers(5, 9)),
    st.builds(lambda k, c: f"UPDATE p SET code = '{c}' WHERE id = {k}", st.integers(1, 4), st.sampled_from("wxyz")),
    st.builds(lambda k: f"DELETE FROM c1 WHERE id = {k}", st.integers(10, 14)),
    st.builds(lambda k, c: f"UPDATE c2 SET p_code = NULL WHERE id = {k} AND '{c}' <> ''", st.integers(20, 23),
              st.just("x")),
    st.builds(lambda k: f"DELETE FROM tree WHERE id = {k}", st.integers(1, 6)),
    st.builds(lambda k: f"INSERT INTO tree VALUES ({k}, 4)", st.integers(7, 9)),
)


@pytest.fixture(scope="module")
def fk_db(engine):
    container = rs.start_mariadb(engine, CONTAINER)
    try:
        rs.mysql(engine, container, "CREATE DATABASE magentodb", db="mysql")
        rs.mysql(engine, container, SCHEMA)
        stores = rs.site_stores(engine, container, rs.magento_site())
        stores.snapshot("golden")
        yield engine, container, stores, rs.mysql_state(engine, container)
    finally:
        rs.docker.container.remove(container, force=True)


@given(st.lists(OPS, min_size=1, max_size=5))
@settings(max_examples=25, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_deletes_and_key_updates_are_undone_exactly(fk_db, ops):
    engine, container, stores, golden = fk_db
    for op in ops:
        # A statement the server refuses (a duplicate key, a key no one has) changes nothing.
        engine.exec(container, ["mysql", "-u", "root", "magentodb", "-e", op])
    path, found, left = rs.reset(stores)
    now = rs.mysql_state(engine, container)
    assert now == golden, f"{ops}: not golden after the reset ({path}; found {found}):\n{rs.diff(golden, now)}"
    assert left == [] and path in ("nothing", "delta"), (path, found, left)
