"""The files store's two ways in give the same answers: the stdlib-only Python helper
(``sitectl/stores/files_helper.py``, what runs wherever python3 is, the Alpine images included)
and the GNU find scripts it replaced (what runs where python3 is missing). Both run here on the
host, on real trees in a temporary folder: names with any byte but NUL and "/", sub-second
times, modes, symlinks, FIFOs, hard links and bare git repositories. Random trees and random
edits (hypothesis); every listing, comparison, check and fingerprint is compared byte for byte.

No Docker: the helper's and the scripts' texts are run with the host's ``sh``, ``python3`` and
GNU tools. What the real images lack (BusyBox userland) is in ``test_busybox_userland.py``."""
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitectl.stores.files import (
    FALLBACK_SH,
    HELPER,
    NO_WAY_IN,
    STUB_PY,
    TOO_OLD,
    FilesStore,
    _arg,
    _records,
    _sections,
    helper_argv,
)

NAME = st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b and b"/" not in b and b not in (b".", b".."))
KIND = st.sampled_from(["file", "dir", "link", "fifo", "git"])


def helper(mode, *args, cwd=None):
    """The helper through its own wrapper (python3 is on the host's PATH)."""
    return subprocess.run(helper_argv(mode, *args), capture_output=True, text=True, cwd=cwd)


def gnu(mode, *args):
    """The GNU find script of ``mode``, with the arguments it takes after the wrapper."""
    return subprocess.run(["sh", "-c", FALLBACK_SH[mode], "sh", *args], capture_output=True, text=True)


def fs(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def build(root: bytes, entries, seed: int):
    """Make ``entries`` (kind, names path) under ``root``; times with nanoseconds."""
    os.makedirs(root, exist_ok=True)
    for n, (kind, parts) in enumerate(entries):
        parent = root
        for p in parts[:-1]:
            parent = os.path.join(parent, p)
            if os.path.lexists(parent) and not os.path.isdir(parent):
                return
            os.makedirs(parent, exist_ok=True)
        path = os.path.join(parent, parts[-1])
        if os.path.lexists(path):
            continue
        if kind == "file":
            with open(path, "wb") as f:
                f.write(bytes([seed % 256]) * (n * 7))
            os.chmod(path, 0o600 + n % 0o100)
        elif kind == "dir":
            os.mkdir(path, 0o755)
        elif kind == "link":
            os.symlink(b"../target-" + parts[-1], path)
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            subprocess.run(["git", "init", "-q", "--bare", path], check=True)
            continue
        os.utime(path, ns=(1_700_000_000_123_456_789 + n * 1_000_000_007,) * 2, follow_symlinks=False)
    first = next((os.path.join(root, p[0]) for k, p in entries if k == "file"), None)
    if first and os.path.isfile(first) and not os.path.lexists(os.path.join(root, b"hardlink")):
        os.link(first, os.path.join(root, b"hardlink"))


tree = st.lists(st.tuples(KIND, st.lists(NAME, min_size=1, max_size=3)), min_size=0, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=tree, edits=tree, seed=st.integers(0, 255))
def test_helper_and_gnu_find_agree_on_every_mode(tmp_path_factory, entries, edits, seed):
    base = tmp_path_factory.mktemp("tree")
    live, b = os.fsencode(base / "live"), os.fsencode(base)
    build(live, entries, seed)
    snap_h, snap_g = b + b"/snap-h", b + b"/snap-g"
    lst_h, lst_g = b + b"/h.list0", b + b"/g.list0"
    old = b + b"/none.list"

    # Snapshot: the copy's listing files are byte-identical.
    rh = helper("snapshot", fs(live), fs(snap_h), fs(lst_h), fs(old))
    rg = gnu("snapshot", fs(live), fs(snap_g), fs(lst_g), fs(old))
    assert rh.returncode == 0 and rg.returncode == 0, (rh.stderr, rg.stderr)
    with open(lst_h, "rb") as f1, open(lst_g, "rb") as f2:
        assert f1.read() == f2.read()

    # Edits on the live tree, then the comparison with the recorded listing.
    build(live, edits, seed + 1)
    if entries:
        victim = os.path.join(live, entries[0][1][0])
        if os.path.lexists(victim) and not os.path.isdir(victim) or os.path.islink(victim):
            os.utime(victim, ns=(1_800_000_000_000_000_001,) * 2, follow_symlinks=False)
    dh = helper("diff", fs(live), fs(lst_h), fs(old), fs(live), fs(lst_g), fs(old))
    dg = gnu("diff", fs(live), fs(lst_g), fs(old))
    assert dh.returncode == 0 and dg.returncode == 0, (dh.stderr, dg.stderr)
    sh, sg = _sections(dh.stdout), _sections(dg.stdout)
    assert len(sh) == 2 and len(sg) == 1
    assert sorted(_records(sh[0])) == sorted(_records(sg[0])) == sorted(_records(sh[1]))

    # The closing check's listing of named entries (escaped as the store sends them).
    names = sorted({fs(b"./" + p[0]) for _, p in entries + edits}) + ["./absent"]
    ch, cg = helper("check", fs(live), *map(_arg, names)), gnu("check", fs(live), *map(_arg, names))
    assert ch.returncode == 0 and cg.returncode == 0, (ch.stderr, cg.stderr)
    assert sorted(_records(ch.stdout)) == sorted(_records(cg.stdout))

    # The deep fingerprint: files' SHA-256, links' targets, folders' modes, repositories' refs.
    fh, fg = helper("fingerprint", fs(live)), gnu("fingerprint", fs(live))
    assert fh.returncode == 0 and fg.returncode == 0, (fh.stderr, fg.stderr)
    assert sorted(_records(fh.stdout)) == sorted(_records(fg.stdout))

    # The delta restore, by each from its own copy, of two identical edited trees: both end
    # with a listing that equals the recorded one, and the same content as the snapshot.
    live_g = b + b"/live-g"
    subprocess.run(["cp", "-a", "--", live, live_g], check=True)
    for snap, lst, tree, run in ((snap_h, lst_h, live, "helper"), (snap_g, lst_g, live_g, "gnu")):
        d = helper("diff", fs(tree), fs(lst), fs(old))
        (text,) = _sections(d.stdout)
        changed, added, dirs, recorded = FilesStore._diff_text(text)
        store = FilesStore("t", None, [fs(tree)])
        store._snap = lambda name, i, snap=snap: fs(snap)
        for cmd in store._restore_commands("golden", 0, {"changed": changed, "added": added, "dirs": dirs,
                                                           "recorded": recorded}):
            argv = cmd.argv if run == "helper" else ["sh", "-c", FALLBACK_SH["restore"], "sh", *cmd.argv[7:]]
            r = subprocess.run(argv, capture_output=True, text=True)
            assert r.returncode == 0, (run, r.stderr)
        after = helper("diff", fs(tree), fs(lst), fs(old))
        assert _records(_sections(after.stdout)[0]) == [], (run, _records(_sections(after.stdout)[0]))
        assert sorted(_records(helper("fingerprint", fs(tree)).stdout)) == \
            sorted(_records(helper("fingerprint", fs(snap)).stdout)), run
    shutil.rmtree(base)


def test_old_newline_listing_is_converted_the_same_way(tmp_path):
    # A listing recorded before 0.1.x: newline-separated, a folder's size given.
    old_text = b"d\t755\t0:0\t4096\t1.0000000000\t\nf\t644\t0:0\t3\t2.0000000000\ta\tb\n"
    live = tmp_path / "live"
    live.mkdir()
    for who in ("h", "g"):
        (tmp_path / f"{who}.list").write_bytes(old_text)
    rh = helper("diff", str(live), str(tmp_path / "h.list0"), str(tmp_path / "h.list"))
    rg = gnu("diff", str(live), str(tmp_path / "g.list0"), str(tmp_path / "g.list"))
    assert rh.returncode == rg.returncode == 0, (rh.stderr, rg.stderr)
    assert (tmp_path / "h.list0").read_bytes() == (tmp_path / "g.list0").read_bytes()
    assert b"d\t755\t0:0\t-\t" in (tmp_path / "h.list0").read_bytes()
    assert not (tmp_path / "h.list").exists() and not (tmp_path / "g.list").exists()
    # A name holding a newline cannot be told from the next record: refused, exit 4.
    (tmp_path / "bad.list").write_bytes(b"f\t644\t0:0\t3\t2.0\tname\nwith-newline\n")
    bad = helper("diff", str(live), str(tmp_path / "bad.list0"), str(tmp_path / "bad.list"))
    assert bad.returncode == 4 and "take this snapshot again" in bad.stderr
    # No listing at all: exit 3, naming the file.
    none = helper("diff", str(live), str(tmp_path / "x.list0"), str(tmp_path / "x.list"))
    assert none.returncode == 3 and "x.list0" in none.stderr


@pytest.mark.skipif(not shutil.which("busybox"), reason="make test installs Debian's busybox")
def test_neither_python_nor_gnu_find_fails_loudly(tmp_path):
    # A PATH of BusyBox applets only, as on the Alpine images without python3.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    subprocess.run([shutil.which("busybox"), "--install", "-s", str(bindir)], check=True)
    env = {"PATH": str(bindir)}
    r = subprocess.run(helper_argv("diff", str(tmp_path), str(tmp_path / "l"), str(tmp_path / "o")),
                       capture_output=True, text=True, env=env)
    assert r.returncode == NO_WAY_IN
    assert "needs python3" in r.stderr and "apk add python3" in r.stderr
    # A python3 the stub finds too old (it exits TOO_OLD there: Python 2 or 3.6) and one that is
    # not executable are passed over: the same refusal, not their failure.
    for text, mode in ((f"#!/bin/sh\nexit {TOO_OLD}\n", 0o755), ("#!/bin/sh\nexit 0\n", 0o644)):
        fake = bindir / "python3"
        fake.write_text(text)
        fake.chmod(mode)
        r = subprocess.run(helper_argv("diff", str(tmp_path), str(tmp_path / "l"), str(tmp_path / "o")),
                           capture_output=True, text=True, env=env)
        assert r.returncode == NO_WAY_IN and "needs python3" in r.stderr, (oct(mode), r.returncode, r.stderr)
        fake.unlink()
    # With python3 on that PATH, the helper runs on the BusyBox userland.
    os.symlink(sys.executable, bindir / "python3")
    ok = subprocess.run(helper_argv("fingerprint", str(tmp_path)), capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "d " in "".join(_records(ok.stdout))


def test_the_closing_check_reads_what_the_restore_put_back(tmp_path):
    # parse_check compares the check's listing ("./REL", find's %p) with the recorded entries
    # (REL): a restored entry is not reported as left, a changed one is (both ways in).
    live, snap = tmp_path / "live", tmp_path / "snap"
    (live / "d").mkdir(parents=True)
    (live / "d" / "f").write_text("x")
    assert helper("snapshot", str(live), str(snap), str(tmp_path / "l0"), str(tmp_path / "old")).returncode == 0
    (live / "d" / "f").write_text("yy")
    (text,) = _sections(helper("diff", str(live), str(tmp_path / "l0"), str(tmp_path / "old")).stdout)
    changed, added, dirs, recorded = FilesStore._diff_text(text)
    store = FilesStore("t", None, [str(live)])
    from sitectl.stores.base import Changes
    changes = Changes(["..."], {0: {"changed": changed, "added": added, "dirs": dirs, "recorded": recorded}})
    reqs = store.check_requests("golden", changes)
    before = [(lambda r: (r.returncode, r.stdout))(subprocess.run(c.argv, capture_output=True, text=True)) for c in reqs]
    assert store.parse_check("golden", changes, before) == [f"file {live}/d/f (not restored)"]
    store._snap = lambda name, i: str(snap)
    for cmd in store._restore_commands("golden", 0, changes.detail[0]):
        assert subprocess.run(cmd.argv).returncode == 0
    after = [(lambda r: (r.returncode, r.stdout))(subprocess.run(c.argv, capture_output=True, text=True)) for c in reqs]
    assert store.parse_check("golden", changes, after) == []
    gnu_after = [(lambda r: (r.returncode, r.stdout))(subprocess.run(["sh", "-c", FALLBACK_SH["check"], "sh", *c.argv[7:]],
                                                                     capture_output=True, text=True)) for c in reqs]
    assert store.parse_check("golden", changes, gnu_after) == []


def test_the_stub_refuses_an_old_python_and_the_helper_is_ascii():
    # A Python older than 3.7 (os.scandir of a descriptor, and the helper's syntax) exits TOO_OLD
    # before the helper is compiled; a C-locale Python reads -c text as ASCII, so the helper is.
    old = subprocess.run([sys.executable, "-c", "import sys; sys.version_info = (3, 6, 15); exec(sys.argv[1])",
                          STUB_PY, "print('ran')"], capture_output=True, text=True)
    assert old.returncode == TOO_OLD and "ran" not in old.stdout
    new = subprocess.run([sys.executable, "-E", "-s", "-S", "-c", STUB_PY, "print('ran')"], capture_output=True, text=True)
    assert new.returncode == 0 and new.stdout == "ran\n"
    assert HELPER.isascii()


def test_a_folder_swapped_for_a_symlink_while_walked_is_not_followed(tmp_path):
    # A hostile application replaces a folder with a symlink to somewhere else between the
    # moment the walk lists it and the moment it goes into it: nothing outside is listed (it
    # would be "added" and then removed by a restore, through the link).
    from sitectl.stores import files_helper
    top, outside = tmp_path / "top", tmp_path / "outside"
    (top / "d").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim").write_text("not yours")
    seen = []
    for rel, _ in files_helper.walk(os.fsencode(top)):
        seen.append(rel)
        if rel == b"d":
            os.rmdir(top / "d")
            os.symlink(outside, top / "d")
    assert seen == [b"", b"d"]
    assert (outside / "victim").exists()


def test_an_answer_that_is_not_the_helpers_is_a_store_error():
    from sitectl.errors import StoreError
    with pytest.raises(StoreError, match="not what sitectl's helper prints"):
        _records("this is not hex\n")
