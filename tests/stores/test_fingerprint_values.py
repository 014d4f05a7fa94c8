"""verify --deep sees every value: a price moved by one cent, a FLOAT and a DOUBLE by less than
one, on the mini stack's MariaDB (Magento's schema) and on the classifieds' MySQL. MySQL's and
MariaDB's HEX() turn a number into a BIGINT first (HEX(12.5) and HEX(12.6) are both "D"), so a
digest of HEX(column) was blind to them. A manifest written by the older digest is compared with
its copy digested again, not failed. Real servers in the session's mini stack."""
from __future__ import annotations

import json

import pytest

from sitectl import snapshots
from sitectl.snapshots.manifest import manifest_path
from tests.actions.state import run

pytestmark = pytest.mark.docker

MYSQL = ["mysql", "-uroot", "-p1234567890", "magentodb", "-e"]


@pytest.fixture(autouse=True)
def golden_around(mini, engine):
    sites = [mini.stack.sites[n] for n in ("shopping", "classifieds")]
    snapshots.reset(mini, sites, engine)
    yield
    snapshots.reset(mini, sites, engine)


def differing(mini, engine, site: str) -> list[str]:
    return [i for r in snapshots.verify_deep(mini, [mini.stack.sites[site]], engine) for i in r["differs"]]


def test_a_cent_is_a_difference(mini, engine):
    run(engine, "shopping", *MYSQL, "UPDATE catalog_product_entity_decimal SET value = value + 0.01 WHERE value_id = "
        "(SELECT MIN(value_id) FROM (SELECT value_id FROM catalog_product_entity_decimal) x)")
    assert "table catalog_product_entity_decimal" in differing(mini, engine, "shopping")


@pytest.mark.parametrize("column", ["FLOAT", "DOUBLE"])
def test_floating_point_below_one_is_a_difference(mini, engine, column):
    """A table of the application's with a FLOAT or DOUBLE column, golden taken with it, then a
    value moved by 0.25 (MySQL 9 on the classifieds' database container)."""
    db = "classifieds_db"
    sql = ["mysql", "-uroot", "-ppassword", "osclass", "-e"]
    site = mini.stack.sites["classifieds"]
    run(engine, db, *sql, f"DROP TABLE IF EXISTS sitectl_fp; CREATE TABLE sitectl_fp (id INT PRIMARY KEY, v {column}); "
        "INSERT INTO sitectl_fp VALUES (1, 12.5)")
    try:
        snapshots.create(mini, "fp", [site], engine)
        run(engine, db, *sql, "UPDATE sitectl_fp SET v = 12.75 WHERE id = 1")
        rows = snapshots.verify_deep(mini, [site], engine, "fp")
        assert any("table sitectl_fp" in r["differs"] for r in rows), rows
    finally:
        snapshots.delete(mini, "fp", engine)
        run(engine, db, *sql, "DROP TABLE IF EXISTS sitectl_fp")
        snapshots.reset(mini, [site], engine, full=True)


def test_a_manifest_of_the_older_digest_is_compared_with_its_copy(mini, engine):
    """Golden's manifest as an older sitectl wrote it (no "fingerprint format", other digests):
    verify --deep of an unchanged site still passes, and still sees a cent."""
    p = manifest_path(mini, "golden")
    kept = p.read_text()
    m = json.loads(kept)
    fp = m["sites"]["shopping"]["stores"]["mysql:magentodb"]["fingerprint"]
    fp.pop("fingerprint format")
    for k in fp:
        fp[k] = "0:0"
    p.write_text(json.dumps(m))
    try:
        assert differing(mini, engine, "shopping") == []
        run(engine, "shopping", *MYSQL, "UPDATE catalog_product_entity_decimal SET value = value + 0.01 WHERE value_id = "
            "(SELECT MIN(value_id) FROM (SELECT value_id FROM catalog_product_entity_decimal) x)")
        assert "table catalog_product_entity_decimal" in differing(mini, engine, "shopping")
    finally:
        p.write_text(kept)
