"""``snapshot import`` checks every member of a files store's payload (the tar inside the
archive) before anything is loaded (issue 18, item 2): paths under the snapshot's folders only,
regular files, folders and symlinks that stay in their folder; no hard links, devices, FIFOs,
setuid or setgid modes; sizes within the payload's. Each refusal names the member. No Docker:
crafted tars in memory, read by :func:`sitectl.snapshots.archive.check_files_payload`; the
whole import path with a forged archive is in test_reset_delta.py."""
import io
import tarfile

import pytest

from sitectl.errors import UsageError
from sitectl.snapshots.archive import check_files_payload


def _tar(*members) -> tarfile.TarFile:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, kind, extra in members:
            m = tarfile.TarInfo(name)
            m.type = kind
            data = b""
            if kind == tarfile.REGTYPE:
                data = extra.get("data", b"x")
                m.size = len(data)
            m.linkname = extra.get("link", "")
            m.mode = extra.get("mode", 0o644)
            t.addfile(m, io.BytesIO(data) if data else None)
    return tarfile.open(fileobj=io.BytesIO(buf.getvalue()))


GOOD = [(".", tarfile.DIRTYPE, {}), ("./0", tarfile.DIRTYPE, {}), ("./0/a.jpg", tarfile.REGTYPE, {}),
        ("./0/sub", tarfile.DIRTYPE, {"mode": 0o1777}), ("./0/sub/up", tarfile.SYMTYPE, {"link": "../a.jpg"}),
        ("./0/sub/top", tarfile.SYMTYPE, {"link": ".."}), ("./0.list0", tarfile.REGTYPE, {}),
        ("1/b", tarfile.REGTYPE, {}), ("./1.list", tarfile.REGTYPE, {})]


def test_a_tree_of_files_folders_and_inner_links_passes():
    assert check_files_payload(_tar(*GOOD), "payload/shopping/1-files.tar", budget=1 << 20) == 4


@pytest.mark.parametrize("member, words", [
    (("./0/evil.jpg", tarfile.SYMTYPE, {"link": "/etc/passwd"}), "a symlink to '/etc/passwd', outside its folder"),
    (("./0/sub/evil", tarfile.SYMTYPE, {"link": "../../1/b"}), "a symlink to '../../1/b', outside its folder"),
    (("./0/evil", tarfile.SYMTYPE, {"link": "../../../etc"}), "outside its folder"),
    (("./0/evil", tarfile.SYMTYPE, {"link": "../"}), "outside its folder"),
    (("./0/hard", tarfile.LNKTYPE, {"link": "./0/a.jpg"}), "a hard link"),
    (("./0/dev", tarfile.CHRTYPE, {}), "a device file"),
    (("./0/fifo", tarfile.FIFOTYPE, {}), "a FIFO"),
    (("./0/suid", tarfile.REGTYPE, {"mode": 0o4755}), "a setuid or setgid mode (4755)"),
    (("./0/../../etc/cron.d/x", tarfile.REGTYPE, {}), "a path outside the snapshot's folders"),
    (("/etc/passwd", tarfile.REGTYPE, {}), "a path outside the snapshot's folders"),
    (("./etc", tarfile.DIRTYPE, {}), "a path outside the snapshot's folders"),
    (("./0/big", tarfile.REGTYPE, {"data": b"y" * 5000}), "more than 4096 bytes in all"),
])
def test_a_bad_member_is_refused_by_name(member, words):
    with pytest.raises(UsageError) as e:
        check_files_payload(_tar(*GOOD, member), "payload/shopping/1-files.tar", budget=4096)
    assert f"member {member[0]!r} is {words}" in str(e.value) or words in str(e.value), str(e.value)
    assert "payload/shopping/1-files.tar" in str(e.value) and "nothing was imported" in str(e.value)
