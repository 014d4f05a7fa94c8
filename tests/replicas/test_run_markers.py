"""The `/run` markers of WebArena's Alpine images, on the replicas (research/real-images.md §1.1):
their entrypoint initialises a database server again, against the data the image holds, when
its marker (`/run/mysqld/.init`, `/run/postgresql/.init`) is missing, as it is in a container
that starts with a fresh `/run` (a tmpfs or an emptyDir there). The replicas do the same steps
(stacks/replicas/userland/lemp-entrypoint.sh), so this shows what such a start does to a site:
MariaDB's root loses the socket login (only `-p1234567890` gets in; a stack file with plain
`mysql -u root` fails from then on), PostgreSQL gains a database `test` and its `postgres` role a password; the catalogue and the
forum's rows stay. With the image's own `/run`, nothing of that runs. sitectl's answer is to keep
`/run` from the image (tests/fleet/test_k8s.py) and to name a missing marker (`sitectl doctor`,
tests/ops/test_doctor.py).

The containers are started here with plain `docker run` (python-on-whales), not through
sitectl, from the mini stack's images, under names no instance uses."""
import time

import pytest
from python_on_whales import docker

pytestmark = pytest.mark.docker

PREFIX = "sitectl-test-run-markers"


def _start(image: str, name: str, fresh_run: bool) -> str:
    if docker.container.exists(name):
        docker.container.remove(name, force=True)
    docker.run(image, name=name, detach=True, tmpfs=["/run"] if fresh_run else [],
               labels={"sitectl.test": "run-markers"})
    return name


def _until(engine, name: str, argv: list[str], timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        rc, out = engine.exec(name, argv)
        if rc == 0:
            return out
        assert time.monotonic() < deadline, f"{name}: {argv} still failing after {timeout} s: {out}\n" \
                                            f"{docker.container.logs(name)}"
        time.sleep(0.5)


@pytest.fixture
def started():
    names = []

    def start(image, suffix, fresh_run):
        names.append(_start(image, f"{PREFIX}-{suffix}", fresh_run))
        return names[-1]

    yield start
    for n in names:
        docker.container.remove(n, force=True)


def test_magento_with_a_fresh_run_is_initialised_again(mini, engine, started):
    image = mini.image(mini.stack.sites["shopping"])
    products = ["mysql", "-umagentouser", "-pMyPassword", "-N", "-B", "magentodb", "-e",
                "SELECT COUNT(*) FROM catalog_product_entity"]

    kept = started(image, "shop-kept", fresh_run=False)
    count = _until(engine, kept, products).split()[-1]
    assert int(count) > 0
    assert "initialising" not in docker.container.logs(kept)
    rc, out = engine.exec(kept, ["mysql", "-u", "root", "-N", "-e", "SELECT 1"])
    assert rc == 0, out  # the replica's root keeps its socket login (docs/contracts.md)

    fresh = started(image, "shop-fresh", fresh_run=True)
    _until(engine, fresh, ["ls", "/run/mysqld/.init"])  # the init is over
    assert _until(engine, fresh, products).split()[-1] == count  # the data stays
    logs = docker.container.logs(fresh)
    assert "/run/mysqld/.init is missing: initialising MariaDB" in logs, logs
    rc, out = engine.exec(fresh, ["ls", "/run/mysqld/.init"])
    assert rc == 0, out
    rc, out = engine.exec(fresh, ["mysql", "-u", "root", "-N", "-e", "SELECT 1"])
    assert rc != 0 and "Access denied" in out, out
    rc, out = engine.exec(fresh, ["mysql", "-uroot", "-p1234567890", "-N", "-e", "SELECT 1"])
    assert rc == 0, out
    # No MYSQL_USER: the GRANTs made anonymous accounts (any name, password 123456), and the
    # entrypoint's DELETE through the view mysql.user removed them again, with every account
    # whose Password is empty (MariaDB lets a DELETE through that single-table view).
    rc, out = engine.exec(fresh, ["mysql", "-uroot", "-p1234567890", "-N", "-e",
                                  "SELECT COUNT(*) FROM mysql.global_priv WHERE User = ''"])
    assert rc == 0 and out.split() == ["0"], out
    rc, out = engine.exec(fresh, ["mysql", "-uanyone", "-p123456", "-N", "-e", "SELECT 1"])
    assert rc != 0 and "Access denied" in out, out
    rc, out = engine.exec(kept, ["mysql", "-uanyone", "-p123456", "-N", "-e", "SELECT 1"])
    assert rc != 0 and "Access denied" in out, out


def test_the_forum_with_a_fresh_run_is_initialised_again(mini, engine, started):
    image = mini.image(mini.stack.sites["reddit"])
    databases = ["psql", "-U", "postgres", "-At", "-c", "SELECT datname FROM pg_database ORDER BY 1"]
    users = ["psql", "-U", "postgres", "-d", "postmill", "-At", "-c", "SELECT COUNT(*) FROM users"]

    kept = started(image, "forum-kept", fresh_run=False)
    count = _until(engine, kept, users).strip()
    assert int(count) > 0
    assert "test" not in _until(engine, kept, databases).split()
    assert "initialising" not in docker.container.logs(kept)

    fresh = started(image, "forum-fresh", fresh_run=True)
    # The init runs a server of its own on the same socket: ask only once it wrote the marker.
    _until(engine, fresh, ["ls", "/run/postgresql/.init"])
    assert _until(engine, fresh, users).strip() == count  # the data stays
    assert "test" in _until(engine, fresh, databases).split()
    logs = docker.container.logs(fresh)
    assert "/run/postgresql/.init is missing: initialising PostgreSQL" in logs, logs
    assert "is not empty" in logs, logs  # initdb refused the populated data folder and the script went on
    rc, out = engine.exec(fresh, ["ls", "/run/postgresql/.init"])
    assert rc == 0, out
    # The postgres role now has the entrypoint's default password (TCP logins check it).
    tcp = ["env", "PGPASSWORD=1234567890", "psql", "-h", "127.0.0.1", "-U", "postgres", "-At", "-c", "SELECT 1"]
    rc, out = engine.exec(fresh, tcp)
    assert rc == 0 and out.strip() == "1", out
    rc, out = engine.exec(kept, tcp)
    assert rc != 0 and "password authentication failed" in out, out
