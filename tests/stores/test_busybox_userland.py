"""The files store on the userland of WebArena's Alpine images (research/real-images.md §1.1,
§1.7): a container whose PATH holds only BusyBox 1.35's applets (Debian's build, the version
Alpine 3.16 ships) and python3, nothing of GNU findutils, coreutils or grep. Real Docker.

First the container is shown to refuse what GNU-only scripts would use (``find -printf``,
``comm``, ``sha256sum -z``, ``grep -P``, ``date +%N``, sub-second ``stat``); then a snapshot,
edits (content of the same size within the same second, names with tabs, newlines and bytes
that are not UTF-8, modes, links), the detection, the delta restore and its closing check run
through :class:`sitectl.stores.files.FilesStore`; the result is proven by the folder as
``docker cp`` brings it out (a tar stream read on the host: types, modes, owners, times,
content) and nanosecond times by Python's `os.walk`, which shares nothing with the store's listings. Last, without python3 the
store fails with its exit code and what to install; with only GitLab's embedded python3
path it runs again."""
import io
import shutil
import subprocess
import tarfile

import pytest
from python_on_whales import docker

from sitectl.errors import StoreError
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
    rc, ns = engine.exec(NAME, ["python3", "-c", NS_PY, DATA])
    assert rc == 0, ns
    return {"tar": out, "ns": ns}


NS_PY = """import os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        print(repr(p), os.lstat(p).st_mtime_ns)
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
python3 - "$1" <<'EOF'
import os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for n in dirs + files:
        os.utime(os.path.join(d, n), ns=(1700000000100000000, 1700000000100000000), follow_symlinks=False)
EOF
"""

EDIT = r"""
set -e
# The same size, the same second, another nanosecond: only a sub-second time tells.
printf 'two' > "$1/a/b/same-size.txt"
python3 -c 'import os, sys; os.utime(sys.argv[1], ns=(1700000000200000000,) * 2)' "$1/a/b/same-size.txt"
rm "$1/$(printf 'new\nline')"
printf 'added' > "$1/$(printf 'added\tone')"
chmod 700 "$1/keep"
ln -sfn /etc/passwd "$1/a/link"
"""


def test_snapshot_detect_restore_on_busybox_is_exact(busybox):
    ok(busybox, "rm -rf /data /var/lib/sitectl")
    ok(busybox, SETUP, DATA)
    store = FilesStore("shopping", ExecTransport(busybox, NAME, "shopping"), [DATA])
    store.snapshot("golden")
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
    assert _tree(busybox) == golden  # the independent proof
    assert store.fingerprint() == store.fingerprint("golden")


def test_without_python3_it_fails_loudly_and_finds_gitlabs_embedded_one(busybox):
    ok(busybox, "rm -rf /data /var/lib/sitectl")
    ok(busybox, SETUP, DATA)
    store = FilesStore("shopping", ExecTransport(busybox, NAME, "shopping"), [DATA])
    busybox.exec_checked(NAME, [f"{BB}/rm", f"{BB}/python3"], "hide python3")
    try:
        with pytest.raises(StoreError, match=r"exit code 5.*needs python3.*apk add python3"):
            store.snapshot("golden")
        # GitLab's image: python3 only at /opt/gitlab/embedded/bin (not on PATH).
        ok(busybox, "mkdir -p /opt/gitlab/embedded/bin && ln -s /usr/bin/python3 /opt/gitlab/embedded/bin/python3")
        store.snapshot("golden")
        assert store.changes("golden").items == []
    finally:
        sh(busybox, "rm -rf /opt/gitlab; ln -sf /usr/bin/python3 /opt/bb/python3")
