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
