"""The files store on the userland of WebArena's Alpine images (research/real-images.md §1.1,
§1.7): a container whose PATH holds only BusyBox 1.35's applets (Debian's build, the version
Alpine 3.16 ships) and python3, nothing of GNU findutils, coreutils or grep. Real Docker.

First the container is shown to refuse what GNU-only scripts would use (``find -printf``,
``comm``, ``sha256sum -z``, ``grep -P``, ``date +%N``, sub-second ``stat``); then a snapshot,
edits (content of the same size within the same second, names with tabs, newlines and bytes
that are not UTF-8, modes, links), the detection, the delta restore and its closing check run
through :class:`sitectl.stores.files.FilesStore`, both ways in: the python3 helper, and the sh
way with python3 off the PATH (BusyBox's applets only); the result is proven by the folder as
``docker cp`` brings it out (a tar stream read on the host: types, modes, owners, times,
content) and nanosecond times by Python's `os.walk`, which shares nothing with the store's
listings. Last, the container's userland record: detected once, kept, and with neither python3
nor the sh way's tools the store fails with its exit code and what to install; with only
GitLab's embedded python3 path it runs the helper."""
import io
import shutil
import subprocess
import tarfile

import pytest
from python_on_whales import docker

from sitectl.errors import StoreError
from sitectl.ops import doctor
from sitectl.stores.files import FilesStore
from sitectl.stores.transport import ExecTransport

RUNTIME = "sitectl/replica-runtime:0.1"  # Debian bookworm with python3 (built with the mini stack)
NAME = "sitectl-test-busybox"
BB = "/opt/bb"
DATA = "/data/uploads"


def sh(engine, script: str, *args: str) -> tuple[int, str]:
    return engine.exec(NAME, ["sh", "-c", script, "sh", *args])


def ok(engine, script: str, *args: str) -> str:
    rc, out = sh(engine, script, *args)
    assert rc == 0, out
    return out


@pytest.fixture(scope="module")
def busybox(engine, mini):
    busybox = shutil.which("busybox")
    assert busybox, "no busybox on the host: run `make busybox`"
    if docker.container.exists(NAME):
        docker.container.remove(NAME, force=True)
    # PATH is the container's own, so every `docker exec` sees only the applets (and python3).
    docker.run(RUNTIME, ["/bin/sleep", "infinity"], name=NAME, detach=True, envs={"PATH": BB},
               labels={"sitectl.test": "busybox"})
    try:
        engine.exec_checked(NAME, ["/bin/mkdir", "-p", BB], "mkdir")
        docker.copy(busybox, (NAME, f"{BB}/busybox"))
        engine.exec_checked(NAME, [f"{BB}/busybox", "--install", "-s", BB], "install applets")
        engine.exec_checked(NAME, [f"{BB}/ln", "-s", "/usr/bin/python3", f"{BB}/python3"], "python3")
        yield engine
    finally:
        docker.container.remove(NAME, force=True)


def test_the_userland_refuses_what_gnu_only_scripts_use(busybox):
    assert ok(busybox, 'readlink -f "$(command -v find)"').strip() == f"{BB}/busybox"
    rc, out = sh(busybox, "find / -maxdepth 0 -printf x")
    assert rc != 0 and "unrecognized: -printf" in out
    rc, out = sh(busybox, "comm /dev/null /dev/null")
    assert rc == 127 and "not found" in out
    rc, _ = sh(busybox, "echo x | sha256sum -z")
    assert rc != 0
    rc, _ = sh(busybox, "echo x | grep -P x")
    assert rc != 0
    assert ok(busybox, "date +%N").strip() in ("%N", "N")  # no nanoseconds
    ok(busybox, "touch /tmp/t && python3 -c 'import os; os.utime(\"/tmp/t\", ns=(10**18 + 5, 10**18 + 5))'")
    assert ok(busybox, "stat -c %.9Y /tmp/t").strip() in ("1000000000", "1000000000.000000000")
    for gnu in ("find", "stat", "sort", "grep", "sed", "du", "cp", "touch", "od"):
        assert ok(busybox, 'readlink -f "$(command -v "$1")"', gnu).strip() == f"{BB}/busybox", gnu


def _tree(engine) -> dict:
    """The folder as ``docker cp CONTAINER:PATH -`` streams it (a tar from the Engine API, with
    owners, modes and times as they are in the container), read on the host: path -> (type,
    mode, uid, gid, time in seconds, link target, content), and each entry's time in
    nanoseconds, which the tar lacks, from a few lines of Python's own ``os.walk`` in the
    container."""
    r = subprocess.run(["docker", "cp", f"{NAME}:{DATA}", "-"], capture_output=True, check=True)
    out = {}
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tar:
        for m in tar.getmembers():
            body = tar.extractfile(m).read() if m.isfile() else None
            mtime = m.pax_headers.get("mtime", str(m.mtime))
            out[m.name] = (m.type, m.mode, m.uid, m.gid, mtime, m.linkname, body)
    rc, ns = engine.exec(NAME, ["/usr/bin/python3", "-c", NS_PY, DATA])
    assert rc == 0, ns
    return {"tar": out, "ns": ns}


NS_PY = """import os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        st = os.lstat(p)
        print(repr(p), "link" if os.path.islink(p) else "", st.st_mtime_ns)
"""


SETUP = r"""
set -e
mkdir -p "$1/a/b" "$1/keep"
printf 'one' > "$1/a/b/same-size.txt"
printf 'x' > "$1/$(printf 'tab\there')"
printf 'y' > "$1/$(printf 'new\nline')"
printf 'z' > "$1/$(printf 'latin\377')"
printf 'k' > "$1/keep/k"
ln -s ../keep/k "$1/a/link"
chown -R 33:33 "$1/a"
/usr/bin/python3 - "$1" <<'EOF'
import os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for n in dirs + files:
        os.utime(os.path.join(d, n), ns=(1700000000100000000, 1700000000100000000), follow_symlinks=False)
# A second after the snapshot's (as a file written while it is taken): the sh way keeps its hash.
os.utime(os.path.join(sys.argv[1], "a/b/same-size.txt"), ns=(4000000000100000000,) * 2)
EOF
"""

EDIT = r"""
set -e
# The same size, the same second, another nanosecond: the helper's times tell, and the sh
# way's hash of a file of the snapshot's second or later.
printf 'two' > "$1/a/b/same-size.txt"
/usr/bin/python3 -c 'import os, sys; os.utime(sys.argv[1], ns=(4000000000200000000,) * 2)' "$1/a/b/same-size.txt"
rm "$1/$(printf 'new\nline')"
printf 'added' > "$1/$(printf 'added\tone')"
chmod 700 "$1/keep"
ln -sfn /etc/passwd "$1/a/link"
"""


def _second_for_links(tree: dict) -> dict:
    """``tree`` with each symlink's own time cut to the second (the sh way sets it with
    ``touch -h -d @SECONDS``: BusyBox's ``touch -r`` follows a symlink)."""
    tar = {k: (v[:4] + (str(int(float(v[4]))),) + v[5:] if v[0] == tarfile.SYMTYPE else v) for k, v in tree["tar"].items()}
    ns = [" ".join(parts[:2] + [str(int(parts[2]) // 10**9)]) if parts[1] == "link" else line
          for line in tree["ns"].splitlines() for parts in [line.rsplit(" ", 2)]]
    return {"tar": tar, "ns": ns}


@pytest.mark.parametrize("way", ["python", "sh"])
def test_snapshot_detect_restore_on_busybox_is_exact(busybox, way):
    ok(busybox, "rm -rf /data /var/lib/sitectl")
    ok(busybox, SETUP, DATA)
    if way == "sh":  # python3 off the PATH (it stays at /usr/bin for the test's own proof)
        ok(busybox, f"rm {BB}/python3")
    try:
        _snapshot_detect_restore(busybox, way)
    finally:
        sh(busybox, f"ln -sf /usr/bin/python3 {BB}/python3")


def _snapshot_detect_restore(busybox, way):
    store = FilesStore("shopping", ExecTransport(busybox, NAME, "shopping"), [DATA])
    assert store.snapshot("golden")["way"] == ("sh" if way == "sh" else f"python {BB}/python3")
    assert ok(busybox, "cat /var/lib/sitectl/userland").split()[0] == way
    golden = _tree(busybox)
    assert store.changes("golden").items == []

    ok(busybox, EDIT, DATA)
    changes = store.changes("golden")
    shown = "\n".join(changes.items)
    assert "same-size.txt (changed or deleted)" in shown
    assert "new\\nline (changed or deleted)" in shown and "added\\tone (added)" in shown
    assert "a/link (changed or deleted)" in shown and "keep" in changes.detail[0]["dirs"]  # its mode

    for cmd in store.restore_requests("golden", changes):
        busybox.exec_checked(NAME, cmd.argv, "restore")
    results = [busybox.exec(NAME, c.argv) for c in store.check_requests("golden", changes)]
    assert store.parse_check("golden", changes, results) == []
    assert store.changes("golden").items == []
    # The independent proof; the sh way keeps every time to the nanosecond but a symlink's own.
    if way == "sh":
        assert _second_for_links(_tree(busybox)) == _second_for_links(golden)
    else:
        assert _tree(busybox) == golden
    assert store.fingerprint() == store.fingerprint("golden")


def test_the_userland_is_recorded_once_and_without_a_way_in_it_fails_loudly(busybox):
    ok(busybox, "rm -rf /data /var/lib/sitectl")
    ok(busybox, SETUP, DATA)
    store = FilesStore("shopping", ExecTransport(busybox, NAME, "shopping"), [DATA])
    busybox.exec_checked(NAME, [f"{BB}/rm", f"{BB}/python3", f"{BB}/stat"], "hide python3 and stat")
    try:
        # Neither python3 nor every tool of the sh way: nothing recorded, nothing copied.
        with pytest.raises(StoreError, match=r"exit code 5.*needs python3.*: stat;.*apk add python3"):
            store.snapshot("golden")
        assert sh(busybox, "test -e /var/lib/sitectl/userland")[0] != 0
        # BusyBox's stat back: the sh way, recorded, and kept when python3 comes back.
        ok(busybox, f"ln -s busybox {BB}/stat")
        assert store.snapshot("golden")["way"] == "sh"
        report = {"userland": {}}
        check = doctor._files_way_check(busybox, NAME, "shopping", "BusyBox", report)
        assert check.level == "ok" and "the sh way" in check.detail and report["userland"]["files_way"] == "sh"
        ok(busybox, f"ln -s /usr/bin/python3 {BB}/python3")
        assert store.changes("golden").items == []
        assert ok(busybox, "cat /var/lib/sitectl/userland").strip() == "sh"
        # GitLab's image: python3 only at /opt/gitlab/embedded/bin (not on PATH); a container
        # without a record is detected anew.
        ok(busybox, f"rm {BB}/python3 /var/lib/sitectl/userland")
        ok(busybox, "mkdir -p /opt/gitlab/embedded/bin && ln -s /usr/bin/python3 /opt/gitlab/embedded/bin/python3")
        assert store.snapshot("golden")["way"] == "python /opt/gitlab/embedded/bin/python3"
        assert store.changes("golden").items == []
        # The recorded python3 gone: the store and doctor say so, with the next step.
        ok(busybox, "rm /opt/gitlab/embedded/bin/python3")
        with pytest.raises(StoreError, match=r"exit code 6.*no longer an executable python3.*remove the record"):
            store.changes("golden")
        check = doctor._files_way_check(busybox, NAME, "shopping", "BusyBox", {"userland": {}})
        assert check.level == "fail" and "reset --recreate shopping" in check.fix and "/var/lib/sitectl/userland" in check.fix
    finally:
        sh(busybox, f"rm -rf /opt/gitlab; ln -sf /usr/bin/python3 {BB}/python3; ln -sf busybox {BB}/stat")
