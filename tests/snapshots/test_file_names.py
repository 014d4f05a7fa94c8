"""Any file name the file system allows survives a snapshot and comes back after a reset: tab,
newline, carriage return, backslash, bytes that are not UTF-8, quotes and shell characters, a
leading dash, Unicode, 255-byte names, a path of over 3,000 bytes, folders and symlinks with
such names. Real Docker, the forum replica's uploads folder (a files store of the mini stack).

Proof independent of the store's code: a Python walk inside the container (bytes names; type,
mode, owner, size, SHA-256 of content, link target) before the changes and after the reset.
"""
import json

import pytest

from sitectl import snapshots

pytestmark = pytest.mark.docker

ROOT = b"/var/www/html/public/submission_images/names"
NAMES = [b"tab\there", b"new\nline", b"trailing-newline\n", b"cr\rreturn", b"back\\slash\\0101", b"bad\xff\xfebytes",
         b"quote'\"$(touch x)`y`;z", b"-dash", b" lead space", "uni-é-日本-\u2028".encode(), b"x" * 255,
         b"star*?[a]", b"%s%n{origin}"]
# A walk of ROOT inside the container, in key order: [hex path, type, mode, uid, gid, size, sha256/target].
WALK = r"""
import hashlib, os, stat, sys, json
root = bytes.fromhex(sys.argv[1]); out = []
for d, dirs, files in os.walk(root):
    for n in sorted(dirs + files):
        p = os.path.join(d, n); s = os.lstat(p)
        what = (os.readlink(p).hex() if stat.S_ISLNK(s.st_mode) else
                hashlib.sha256(open(p, "rb").read()).hexdigest() if stat.S_ISREG(s.st_mode) else "")
        out.append([p.hex(), stat.S_IFMT(s.st_mode), stat.S_IMODE(s.st_mode), s.st_uid, s.st_gid,
                    s.st_size if stat.S_ISREG(s.st_mode) else 0, what])
print(json.dumps(sorted(out)))
"""
# Makes entries from hex arguments: "f:PATH:CONTENT", "d:PATH", "l:PATH:TARGET", "rm:PATH", "a:PATH:MORE".
MAKE = r"""
import os, shutil, sys
for a in sys.argv[1:]:
    op, *rest = a.split(":"); p, *more = [bytes.fromhex(x) for x in rest]
    if op == "d": os.makedirs(p, exist_ok=True)
    elif op == "f": open(p, "wb").write(more[0])
    elif op == "a": open(p, "ab").write(more[0])
    elif op == "l": os.symlink(more[0], p)
    elif op == "rm": shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
"""


def py(engine, script, *args):
    rc, out = engine.exec("forum", ["python3", "-c", script, *args])
    assert rc == 0, out
    return out


def make(engine, *ops):
    py(engine, MAKE, *(":".join([op, *(x.hex() for x in parts)]) for op, *parts in ops))


def walk(engine):
    return json.loads(py(engine, WALK, ROOT.hex()))


def test_any_file_name_is_detected_and_restored(mini, engine):
    site = mini.stack.sites["reddit"]
    deep = ROOT
    for i in range(15):  # a path of over 3,000 bytes (each folder name 200 bytes)
        deep = deep + b"/" + (b"%02d" % i) * 100
    weird_dir = ROOT + b"/dir\twith\nnewline\xff"
    make(engine, ("d", ROOT), ("d", weird_dir), ("d", deep), ("f", deep + b"/deep\nfile", b"deep"),
         *[("f", ROOT + b"/" + n, b"content of " + n) for n in NAMES],
         ("f", weird_dir + b"/inner\tfile", b"inner"), ("l", ROOT + b"/link\nname", b"../target\twith\xfftab"))
    try:
        snapshots.create(mini, "names", [site], engine)
        before = walk(engine)
        assert len(before) >= len(NAMES) + 18
        assert all(d["ok"] for d in snapshots.verify_deep(mini, [site], engine, "names"))

        # Changed, deleted, added: content and metadata, files, folders and links with such names.
        make(engine, ("a", ROOT + b"/" + NAMES[0], b" more"), ("rm", ROOT + b"/" + NAMES[1]),
             ("rm", ROOT + b"/" + NAMES[5]), ("rm", weird_dir), ("rm", ROOT + b"/link\nname"),
             ("l", ROOT + b"/link\nname", b"elsewhere"), ("f", ROOT + b"/added\nfile\xfe", b"new"),
             ("d", ROOT + b"/added dir\t"), ("f", ROOT + b"/added dir\t/x\ny", b"new"),
             ("a", deep + b"/deep\nfile", b"!"), ("f", deep + b"/" + b"y" * 255, b"new"))
        py(engine, "import os, sys; os.chmod(bytes.fromhex(sys.argv[1]), 0o600)", (ROOT + b"/" + NAMES[2]).hex())
        bad = [d for d in snapshots.verify_deep(mini, [site], engine, "names") if not d["ok"]]
        assert bad, "the changes were not seen"

        (res,) = snapshots.reset(mini, [site], engine, name="names")
        assert res.method == "delta", res
        # Every item the reset names is printable, one line (no raw tab, newline or bad byte).
        assert res.changed and all(c.isprintable() for c in res.changed), res.changed
        assert any("\\n" in c for c in res.changed) and any("\\xff" in c for c in res.changed), res.changed
        assert walk(engine) == before  # the independent proof
        assert all(d["ok"] for d in snapshots.verify_deep(mini, [site], engine, "names"))
        (again,) = snapshots.reset(mini, [site], engine, name="names")
        assert again.method == "none", again
    finally:
        make(engine, ("rm", ROOT))
        snapshots.reset(mini, [site], engine)
        snapshots.delete(mini, "names", engine)
    assert all(d["ok"] for d in snapshots.verify_deep(mini, [site], engine))
