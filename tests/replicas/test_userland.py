"""The userland of the running replicas, as on WebArena's images (research/real-images.md §1.1):
the Magento pair and the forum (Alpine 3.16 there) refuse what GNU-only scripts use and answer
with BusyBox's applets; GitLab (Ubuntu there) keeps GNU's. Asked of the containers the mini
stack runs, with plain commands through `docker exec` (nothing of sitectl's stores).

Every other test of the suite that resets, snapshots, verifies or diagnoses these three sites
then runs on that userland: the stores' in-container commands, the jobs' pause under
`timeout`, the cache flushes, `sitectl doctor`'s probe."""
import pytest

pytestmark = pytest.mark.docker

ALPINE_LIKE = ("shopping", "shopping_admin", "forum")


def sh(engine, container: str, script: str) -> tuple[int, str]:
    return engine.exec(container, ["sh", "-c", script])


@pytest.mark.parametrize("container", ALPINE_LIKE)
def test_gnu_only_options_are_refused(mini, engine, container):
    rc, out = sh(engine, container, "find / -maxdepth 0 -printf x")
    assert rc != 0 and "unrecognized: -printf" in out, out
    rc, out = sh(engine, container, "comm /dev/null /dev/null")
    assert rc == 127 and "not found" in out, out
    rc, out = sh(engine, container, "echo x | grep -P x")
    assert rc != 0, out
    rc, out = sh(engine, container, "echo x | sha256sum -z")
    assert rc != 0, out
    rc, out = sh(engine, container, "date +%N")
    assert rc == 0 and out.strip() in ("%N", "N"), out  # no nanoseconds
    rc, out = sh(engine, container, "ls --version")
    assert "GNU" not in out, out


@pytest.mark.parametrize("container", ALPINE_LIKE)
def test_the_tools_on_path_are_busybox_applets(mini, engine, container):
    for tool in ("sh", "find", "stat", "sort", "grep", "sed", "awk", "du", "cp", "touch", "od", "timeout", "env"):
        rc, out = engine.exec(container, ["readlink", "-f", f"/usr/bin/{tool}"])
        assert rc == 0 and out.strip() == "/usr/bin/busybox", (tool, out)
    rc, out = engine.exec(container, ["busybox"])
    assert "BusyBox v1.35" in out, out
    for kept in ("bash", "tar", "python3"):  # the real images have these
        rc, out = sh(engine, container, f"command -v {kept}")
        assert rc == 0, (kept, out)
    rc, out = sh(engine, container, "tar --version")
    assert "GNU tar" in out, out


def test_gitlab_keeps_a_gnu_userland(mini, engine):
    rc, out = sh(engine, "gitlab", "find / -maxdepth 0 -printf ok")
    assert rc == 0 and out == "ok", out
    rc, out = sh(engine, "gitlab", "ls --version")
    assert "GNU coreutils" in out, out


def test_gitlab_python3_is_only_the_embedded_one(mini, engine):
    """GitLab's image has no python3 but omnibus' /opt/gitlab/embedded/bin/python3, reached
    through the image's PATH (research/real-images.md §1.5; gitlab-ce's Dockerfile puts
    /opt/gitlab/embedded/bin first)."""
    rc, out = sh(engine, "gitlab", "ls -d /usr/bin/python* /bin/python* /usr/local/bin/python* 2>/dev/null")
    assert out.strip() == "", out
    rc, out = sh(engine, "gitlab", "command -v python3")
    assert rc == 0 and out.strip() == "/opt/gitlab/embedded/bin/python3", out
    rc, out = sh(engine, "gitlab", "/usr/bin/python3 -c 1")
    assert rc != 0, out
    rc, out = sh(engine, "gitlab", "/usr/bin/env python3 -c 'import sys; print(sys.version_info[0])'")
    assert rc == 0 and out.strip() == "3", out
