"""Snapshot copies are root's alone inside the containers (found by a breaker run: the files
store's folders were created 0777 and the listings 0666, so the web user could rewrite golden).
/var/lib/sitectl is writable by root only and /var/lib/sitectl/snapshots and every folder down to a
copy are 0700, also where an older sitectl left them open (the next snapshot closes them); the
application's user can neither list nor change a copy, nor plant anything in sitectl's folder. Checked with plain commands as the web user, not with sitectl's code."""
from __future__ import annotations

import subprocess

import pytest

from tests.conftest import cli

pytestmark = pytest.mark.docker

FOLDERS = ["/var/lib/sitectl/snapshots", "/var/lib/sitectl/snapshots/files", "/var/lib/sitectl/snapshots/files/private_t"]


def sh(container: str, script: str, user: str = "root") -> subprocess.CompletedProcess:
    return subprocess.run(["docker", "exec", "-u", user, container, "sh", "-c", script], capture_output=True, text=True)


@pytest.mark.parametrize("site,container,user", [("reddit", "forum", "www-data"), ("shopping", "shopping", "www-data")])
def test_copies_are_root_s_alone(mini, site, container, user):
    # An older sitectl's open folders: the next snapshot closes them.
    assert sh(container, "mkdir -p /var/lib/sitectl/snapshots/files/private_t && "
                         "chmod 777 /var/lib/sitectl /var/lib/sitectl/snapshots /var/lib/sitectl/snapshots/files "
                         "/var/lib/sitectl/snapshots/files/private_t").returncode == 0
    code, res = cli("snapshot", "create", "private_t", site, "--json")
    assert code == 0, res
    try:
        modes = sh(container, "stat -c '%a %U %n' /var/lib/sitectl " + " ".join(FOLDERS)).stdout.split("\n")
        # sitectl's own folder: writable by root only (database clients read its stage); below: root's alone
        assert [m.split()[:2] for m in modes if m] == [["755", "root"]] + [["700", "root"]] * len(FOLDERS), modes
        # The web user can neither list a copy, nor read or change its listing.
        for script in ["ls /var/lib/sitectl/snapshots/files/private_t",
                       "cat /var/lib/sitectl/snapshots/files/private_t/0.list0",
                       ": > /var/lib/sitectl/snapshots/files/private_t/0.list0",
                       "mkdir /var/lib/sitectl/snapshots/files/planted",
                       "mkdir /var/lib/sitectl/planted",
                       "ls /var/lib/sitectl/snapshots/files/golden"]:
            r = sh(container, script, user)
            assert r.returncode != 0 and "denied" in r.stderr, (script, r)
    finally:
        assert cli("snapshot", "delete", "private_t", "--json")[0] == 0
