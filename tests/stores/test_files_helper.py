"""The files store's two ways in give the same answers: the stdlib-only Python helper
(``sitectl/stores/files_helper.py``, what runs wherever python3 3.7+ is, the Alpine images
included) and the sh way (``sitectl/stores/files_sh.py``, what runs where it is not), the sh way
run twice: on a PATH of BusyBox 1.35's applets only (the Alpine images' userland) and on a PATH
of GNU's tools, neither with python3. All run here on the host, on real trees in a temporary
folder: names with any byte but NUL and "/", sub-second times, modes, symlinks, FIFOs, hard
links and bare git repositories. Random trees and random edits (hypothesis): the ways find the
same changes, restore the same trees and give byte-identical fingerprints; their listings agree
on every field (to the second, which is what the sh way records).

Each call gets the userland record it would find in a container (a file in the test's folder,
never the host's /var/lib/sitectl). No Docker: the ways' texts run with the host's ``sh``,
``python3``, GNU tools and Debian's busybox (``make busybox``). The same ways inside containers
are in ``test_busybox_userland.py``."""
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitectl.stores.base import Changes
from sitectl.stores.files import (
    HELPER,
    NO_WAY_IN,
    SH_TOOLS,
    STALE_RECORD,
    STUB_PY,
    TOO_OLD,
    FilesStore,
    _arg,
    _parse_listing,
    _records,
    _sections,
    helper_argv,
    parse_way,
)

NAME = st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b and b"/" not in b and b not in (b".", b".."))
KIND = st.sampled_from(["file", "dir", "link", "fifo", "git"])
BUSYBOX = shutil.which("busybox")
USERLANDS = ["busybox", "gnu"]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    """``{"busybox": PATH, "gnu": PATH}``: folders of BusyBox's applets and of links to the
    host's GNU tools, with ``sh`` and ``git`` (GitLab has git; a ref digest needs it) and no
    python3."""
    assert BUSYBOX, "no busybox on the host: run `make busybox`"
    base = tmp_path_factory.mktemp("userlands")
    bb, gnu = base / "busybox", base / "gnu"
    bb.mkdir()
    gnu.mkdir()
    subprocess.run([BUSYBOX, "--install", "-s", str(bb)], check=True)
    for tool in (*SH_TOOLS, "sh", "git", "printf", "sleep"):
        os.symlink(shutil.which(tool), gnu / tool)
    os.symlink(shutil.which("git"), bb / "git")
    return {"busybox": str(bb), "gnu": str(gnu)}


def run(argv, path=None):
    return subprocess.run(argv, capture_output=True, text=True, env={"PATH": path} if path else None)


def helper(mode, *args, record):
    """The helper through the way in (python3 is on the host's PATH)."""
    r = run(helper_argv(mode, *args, record=record))
    assert parse_way(r.stdout)[0] in ("python", "") and open(record).read().startswith("python "), r.stdout
    return r


def shway(mode, *args, record, path):
    """The sh way through the way in, on a PATH without python3."""
    r = run(helper_argv(mode, *args, record=record), path)
    assert open(record).read().strip() == "sh", r.stderr
    return r


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


def seconds(listing: dict) -> dict:
    """A parsed listing with each time cut to its second, and a symlink's time left out (the sh
    way compares a symlink by its target, and a file by content where a second is not enough)."""
    return {rel: (y, mode, owner, size, "" if y == "l" else mtime.split(".")[0].split("+")[0])
            for rel, (y, mode, owner, size, mtime) in listing.items()}


@pytest.mark.parametrize("userland", USERLANDS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=tree, edits=tree, seed=st.integers(0, 255))
def test_helper_and_sh_way_agree_on_every_mode(tmp_path_factory, paths, userland, entries, edits, seed):
    base = tmp_path_factory.mktemp("tree")
    live, b = os.fsencode(base / "live"), os.fsencode(base)
    build(live, entries, seed)
    snap_h, snap_s = b + b"/snap-h", b + b"/snap-s"
    lst_h, lst_s = b + b"/h.list0", b + b"/s.list0"
    old = b + b"/none.list"
    rec_h, rec_s = str(base / "rec-h"), str(base / "rec-s")
    path = paths[userland]

    def sh_(mode, *args):
        return shway(mode, *args, record=rec_s, path=path)

    def py_(mode, *args):
        return helper(mode, *args, record=rec_h)

    # Snapshot: both listings hold the same entries, types, modes, owners, sizes and seconds.
    rh = py_("snapshot", fs(live), fs(snap_h), fs(lst_h), fs(old))
    rs = sh_("snapshot", fs(live), fs(snap_s), fs(lst_s), fs(old))
    assert rh.returncode == 0 and rs.returncode == 0, (rh.stderr, rs.stderr)
    assert parse_way(rs.stdout) == ("sh", "") and parse_way(rh.stdout)[0] == "python"
    with open(lst_h, "rb") as f1, open(lst_s, "rb") as f2:
        listed_h = _parse_listing(_records(f1.read().hex()))
        head, _, body = f2.read().partition(b"\n")
    assert head.startswith(b"#sitectl-sh-listing ")
    listed_s = _parse_listing([r for r in body.decode("utf-8", "surrogateescape").split("\n") if r])
    assert seconds(listed_h) == seconds(listed_s)

    # Edits on the live tree (a file's time moved to another second), then the comparison.
    build(live, edits, seed + 1)
    if entries:
        victim = os.path.join(live, entries[0][1][0])
        if os.path.isfile(victim) and not os.path.islink(victim):
            os.utime(victim, ns=(1_800_000_000_000_000_001,) * 2, follow_symlinks=False)
    dh, ds = py_("diff", fs(live), fs(lst_h), fs(old)), sh_("diff", fs(live), fs(lst_s), fs(old))
    assert dh.returncode == 0 and ds.returncode == 0, (dh.stderr, ds.stderr)
    (th,), (ts,) = _sections(dh.stdout), _sections(ds.stdout)
    found_h, found_s = FilesStore._diff_text(th), FilesStore._diff_text(ts)
    assert found_h[:2] == found_s[:2]
    # A folder whose only change is its time within the same second (an entry added to it just
    # after the snapshot) is seen by the helper's nanoseconds only; any other folder by both.
    assert set(found_s[2]) <= set(found_h[2])
    for rel in set(found_h[2]) - set(found_s[2]):
        assert found_h[3][rel][4].split(".")[0] == str(os.lstat(os.path.join(live, os.fsencode(rel))).st_mtime_ns // 10**9)

    # The closing check's listing of named entries (escaped as the store sends them).
    names = sorted({fs(b"./" + p[0]) for _, p in entries + edits}) + ["./absent"]
    ch, cs = py_("check", fs(live), fs(lst_h), *map(_arg, names)), sh_("check", fs(live), fs(lst_s), *map(_arg, names))
    assert ch.returncode == 0 and cs.returncode == 0, (ch.stderr, cs.stderr)
    # (the helper names them "./REL" as given, the sh way REL, as the store's parse_check reads both)
    assert seconds({r[2:]: v for r, v in _parse_listing(_records(ch.stdout)).items()}) == \
        seconds(_parse_listing(_records(cs.stdout)))

    # The deep fingerprint: files' SHA-256, links' targets, folders' modes, repositories' refs.
    fh, fsh = py_("fingerprint", fs(live)), sh_("fingerprint", fs(live))
    assert fh.returncode == 0 and fsh.returncode == 0, (fh.stderr, fsh.stderr)
    assert sorted(_records(fh.stdout)) == sorted(_records(fsh.stdout))

    # The delta restore, by each from its own copy, of two identical edited trees: both end
    # with nothing left to restore, and the same content as the snapshot.
    live_s = b + b"/live-s"
    subprocess.run(["cp", "-a", "--", live, live_s], check=True)
    for snap, lst, tree, way, rec in ((snap_h, lst_h, live, py_, rec_h), (snap_s, lst_s, live_s, sh_, rec_s)):
        (text,) = _sections(way("diff", fs(tree), fs(lst), fs(old)).stdout)
        changed, added, dirs, recorded = FilesStore._diff_text(text)
        store = FilesStore("t", None, [fs(tree)])
        store._snap = lambda name, i, snap=snap: fs(snap)
        detail = {"changed": changed, "added": added, "dirs": dirs, "recorded": recorded}
        for cmd in store._restore_commands("golden", 0, detail):
            r = way(*cmd.argv[8:])
            assert r.returncode == 0, (way, r.stderr)
        after = way("diff", fs(tree), fs(lst), fs(old))
        assert _records(_sections(after.stdout)[0]) == [], (way, _records(_sections(after.stdout)[0]))
        assert sorted(_records(way("fingerprint", fs(tree)).stdout)) == \
            sorted(_records(way("fingerprint", fs(snap)).stdout)), way
        # The closing check finds nothing left, read through the same way.
        store._list_file = lambda name, i, lst=lst: fs(lst)
        changes = Changes(["..."], {0: detail})
        results = [(r.returncode, r.stdout) for r in (way(*c.argv[8:]) for c in store.check_requests("golden", changes))]
        assert store.parse_check("golden", changes, results) == [], way
    shutil.rmtree(base)


def test_old_newline_listing_is_converted_by_the_helper_and_refused_by_the_sh_way(tmp_path, paths):
    # A listing recorded before 0.1.x: newline-separated, a folder's size given.
    old_text = b"d\t755\t0:0\t4096\t1.0000000000\t\nf\t644\t0:0\t3\t2.0000000000\ta\tb\n"
    live = tmp_path / "live"
    live.mkdir()
    rec = str(tmp_path / "rec")
    (tmp_path / "h.list").write_bytes(old_text)
    rh = helper("diff", str(live), str(tmp_path / "h.list0"), str(tmp_path / "h.list"), record=rec)
    assert rh.returncode == 0, rh.stderr
    assert b"d\t755\t0:0\t-\t" in (tmp_path / "h.list0").read_bytes()
    assert not (tmp_path / "h.list").exists()
    # A name holding a newline cannot be told from the next record: refused, exit 4.
    (tmp_path / "bad.list").write_bytes(b"f\t644\t0:0\t3\t2.0\tname\nwith-newline\n")
    bad = helper("diff", str(live), str(tmp_path / "bad.list0"), str(tmp_path / "bad.list"), record=rec)
    assert bad.returncode == 4 and "take this snapshot again" in bad.stderr
    # No listing at all: exit 3, naming the file.
    none = helper("diff", str(live), str(tmp_path / "x.list0"), str(tmp_path / "x.list"), record=rec)
    assert none.returncode == 3 and "x.list0" in none.stderr
    # The sh way cannot read a listing of GNU find's nanoseconds: exit 4, and the next step.
    (tmp_path / "s.list").write_bytes(old_text)
    rs = shway("diff", str(live), str(tmp_path / "s.list0"), str(tmp_path / "s.list"), record=str(tmp_path / "rec-s"),
               path=paths["busybox"])
    assert rs.returncode == 4 and "take this snapshot again" in rs.stderr
    none = shway("diff", str(live), str(tmp_path / "y.list0"), str(tmp_path / "y.list"), record=str(tmp_path / "rec-s"),
                 path=paths["busybox"])
    assert none.returncode == 3 and "y.list0" in none.stderr


def test_the_way_is_detected_once_recorded_and_kept(tmp_path, paths):
    # A PATH of BusyBox applets only, as on the Alpine images without python3: the sh way,
    # recorded in the container's userland record on the first command.
    rec = tmp_path / "rec"
    live, snap, lst = tmp_path / "live", tmp_path / "snap", tmp_path / "l.list0"
    live.mkdir()
    (live / "a").write_text("x")
    bindir = tmp_path / "bin"
    shutil.copytree(paths["busybox"], bindir, symlinks=True)
    env = str(bindir)
    r = run(helper_argv("probe", record=str(rec)), env)
    assert r.returncode == 0 and parse_way(r.stdout) == ("sh", "") and rec.read_text() == "sh\n", (r.stdout, r.stderr)
    r = run(helper_argv("snapshot", str(live), str(snap), str(lst), str(tmp_path / "o"), record=str(rec)), env)
    assert r.returncode == 0 and parse_way(r.stdout) == ("sh", ""), r.stderr
    # A python3 that appears later does not change the way: the snapshot's listing stays readable.
    os.symlink(sys.executable, bindir / "python3")
    r = run(helper_argv("diff", str(live), str(lst), str(tmp_path / "o"), record=str(rec)), env)
    assert r.returncode == 0 and _records(_sections(r.stdout)[0]) == [], r.stderr
    # Without the record the container is detected again: python3 now, which refuses the sh
    # way's listing with the next step rather than comparing what it cannot read.
    rec.unlink()
    r = run(helper_argv("diff", str(live), str(lst), str(tmp_path / "o"), record=str(rec)), env)
    assert r.returncode == 4 and "recorded by sitectl's sh way" in r.stderr and "take this snapshot again" in r.stderr
    assert rec.read_text() == f"python {bindir / 'python3'}\n"
    r = run(helper_argv("snapshot", str(live), str(snap), str(lst), str(tmp_path / "o"), record=str(rec)), env)
    assert r.returncode == 0 and parse_way(r.stdout) == ("python", str(bindir / "python3")), r.stderr
    # The recorded python3 gone: an error naming the record and the next step, not a quiet
    # change of way; the sh way reads the helper's listing no better.
    (bindir / "python3").unlink()
    r = run(helper_argv("diff", str(live), str(lst), str(tmp_path / "o"), record=str(rec)), env)
    assert r.returncode == STALE_RECORD and str(rec) in r.stderr and "remove the record" in r.stderr
    rec.write_text("sh\n")
    r = run(helper_argv("diff", str(live), str(lst), str(tmp_path / "o"), record=str(rec)), env)
    assert r.returncode == 4 and "python3 helper" in r.stderr and "take this snapshot again" in r.stderr
    # A record that says anything else is detected again.
    rec.write_text("$(reboot)\n")
    r = run(helper_argv("probe", record=str(rec)), env)
    assert r.returncode == 0 and parse_way(r.stdout) == ("sh", "") and rec.read_text() == "sh\n"


def test_neither_python_nor_the_sh_ways_tools_fails_loudly(tmp_path, paths):
    # BusyBox without its stat applet (and no python3): nothing to run the files store with.
    bindir = tmp_path / "bin"
    shutil.copytree(paths["busybox"], bindir, symlinks=True)
    (bindir / "stat").unlink()
    rec = tmp_path / "rec"
    r = run(helper_argv("diff", str(tmp_path), str(tmp_path / "l"), str(tmp_path / "o"), record=str(rec)), str(bindir))
    assert r.returncode == NO_WAY_IN and not rec.exists()
    assert "needs python3" in r.stderr and "apk add python3" in r.stderr and "stat" in r.stderr
    # A python3 the stub finds too old (it exits TOO_OLD there: Python 2 or 3.6) and one that is
    # not executable are passed over: the same refusal, not their failure.
    for text, mode in ((f"#!/bin/sh\nexit {TOO_OLD}\n", 0o755), ("#!/bin/sh\nexit 0\n", 0o644)):
        fake = bindir / "python3"
        fake.write_text(text)
        fake.chmod(mode)
        r = run(helper_argv("diff", str(tmp_path), str(tmp_path / "l"), str(tmp_path / "o"), record=str(rec)),
                str(bindir))
        assert r.returncode == NO_WAY_IN and "needs python3" in r.stderr, (oct(mode), r.returncode, r.stderr)
        fake.unlink()
    # With python3 on that PATH, the helper runs on the BusyBox userland.
    os.symlink(sys.executable, bindir / "python3")
    ok = run(helper_argv("fingerprint", str(tmp_path), record=str(rec)), str(bindir))
    assert ok.returncode == 0, ok.stderr
    assert "d " in "".join(_records(ok.stdout)) and rec.read_text().startswith("python ")


@pytest.mark.parametrize("userland", ["python", *USERLANDS])
def test_the_closing_check_reads_what_the_restore_put_back(tmp_path, paths, userland):
    # parse_check compares the check's listing ("./REL") with the recorded entries (REL): a
    # restored entry is not reported as left, a changed one is. The same content of the same
    # size within the same second too (the sh way compares such a file by its SHA-256).
    live, snap, lst = tmp_path / "live", tmp_path / "snap", tmp_path / "l0"
    rec = str(tmp_path / "rec")

    def way(mode, *args):
        if userland == "python":
            return helper(mode, *args, record=rec)
        return shway(mode, *args, record=rec, path=paths[userland])
    (live / "d").mkdir(parents=True)
    (live / "d" / "f").write_text("x")
    assert way("snapshot", str(live), str(snap), str(lst), str(tmp_path / "old")).returncode == 0
    (live / "d" / "f").write_text("y")
    (text,) = _sections(way("diff", str(live), str(lst), str(tmp_path / "old")).stdout)
    changed, added, dirs, recorded = FilesStore._diff_text(text)
    assert changed == ["d/f"], (userland, text)
    store = FilesStore("t", None, [str(live)])
    store._list_file = lambda name, i: str(lst)
    changes = Changes(["..."], {0: {"changed": changed, "added": added, "dirs": dirs, "recorded": recorded}})
    reqs = store.check_requests("golden", changes)
    before = [(r.returncode, r.stdout) for r in (way(*c.argv[8:]) for c in reqs)]
    assert store.parse_check("golden", changes, before) == [f"file {live}/d/f (not restored)"]
    store._snap = lambda name, i: str(snap)
    for cmd in store._restore_commands("golden", 0, changes.detail[0]):
        assert way(*cmd.argv[8:]).returncode == 0
    after = [(r.returncode, r.stdout) for r in (way(*c.argv[8:]) for c in reqs)]
    assert store.parse_check("golden", changes, after) == []
    assert (live / "d" / "f").read_text() == "x"


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
    for rel, _, _, _ in files_helper.walk(os.fsencode(top)):
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
