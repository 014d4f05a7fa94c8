"""How the Kubernetes sidecar agent empties a service's ``persist`` folder and enters a working
directory (sitectl/engine/pod.py): through ``/proc/PID/root`` without following a symbolic
link, which inside a container would resolve in the agent's own file system. Run here on this
process's own root (``/proc/<own pid>/root``), on real folders; nothing is mocked.
"""
from __future__ import annotations

import os

import pytest

from sitectl.engine.pod import _empty_folder, _open_folder
from sitectl.errors import EngineError


@pytest.fixture
def tree(tmp_path):
    data = tmp_path / "data"
    (data / "sub" / "deeper").mkdir(parents=True)
    (data / "sub" / "deeper" / "f").write_text("x")
    (data / ".hidden").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    (data / "link-to-outside").symlink_to(outside)
    (data / "sub" / "file-link").symlink_to(outside / "keep")
    return tmp_path


def test_emptying_removes_everything_inside_and_follows_no_link(tree):
    _empty_folder(os.getpid(), str(tree / "data"), "db")
    assert list((tree / "data").iterdir()) == []
    assert (tree / "outside" / "keep").read_text() == "keep"  # the links went, not their targets


def test_a_link_on_the_way_is_refused_not_followed(tree):
    (tree / "via").symlink_to(tree / "outside")
    with pytest.raises(EngineError, match="a part of it is a link or not a folder"):
        _empty_folder(os.getpid(), str(tree / "via"), "db")
    assert (tree / "outside" / "keep").exists()
    with pytest.raises(OSError):
        _open_folder(os.getpid(), str(tree / "via"))
    with pytest.raises(EngineError):
        _empty_folder(os.getpid(), str(tree / "missing"), "db")


def test_the_working_directory_is_opened_inside_the_root(tree):
    fd = _open_folder(os.getpid(), str(tree / "data" / "sub"))
    try:
        assert os.path.samefile(f"/proc/self/fd/{fd}", tree / "data" / "sub")
    finally:
        os.close(fd)


def test_copies_out_and_in_go_through_no_link(tree, tmp_path_factory):
    """The snapshot archive's copies (PodEngine.copy_from / copy_to): a link on the way, or as
    the file itself, is refused, never followed into the agent's own files."""
    from sitectl.engine.pod import _copy_in, _copy_out

    me = os.getpid()
    out = tmp_path_factory.mktemp("out")
    _copy_out(me, str(tree / "data" / "sub"), out)  # a folder: copied with its links as links
    assert (out / "sub" / "deeper" / "f").read_text() == "x"
    assert (out / "sub" / "file-link").is_symlink()
    _copy_out(me, str(tree / "data" / ".hidden"), out)
    assert (out / ".hidden").read_text() == "x"
    (tree / "via").symlink_to(tree / "outside")
    for hostile in (tree / "via" / "keep", tree / "data" / "link-to-outside", tree / "data" / "sub" / "file-link"):
        with pytest.raises(OSError):
            _copy_out(me, str(hostile), out)
    # In: into a folder, to a new file; never through a link, never over one.
    src = out / ".hidden"
    _copy_in(src, me, str(tree / "data"))
    _copy_in(src, me, str(tree / "data" / "new-name"))
    assert (tree / "data" / "new-name").read_text() == "x"
    for hostile in (tree / "via" / "new", tree / "data" / "link-to-outside" / "new", tree / "data" / "sub" / "file-link"):
        with pytest.raises(OSError):
            _copy_in(src, me, str(hostile))
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["keep"]
    assert (tree / "outside" / "keep").read_text() == "keep"
