"""The files store's in-container helper: a stdlib-only Python program (3.7 and newer: Alpine
3.16's python3 is 3.10, GitLab 15.7's embedded one 3.9; research/real-images.md, section 1.7) that
:mod:`sitectl.stores.files` sends into the container as the text of ``python3 -c``.

It does with the standard library what GNU ``find -printf``, ``sort -z``, ``comm -z`` and
``sha256sum -z`` would do, which BusyBox lacks (``find: unrecognized: -printf``; no ``comm``;
``stat`` in whole seconds):

* ``snapshot LIVE SNAP LIST OLD``: copies LIVE to SNAP (as ``cp -a`` does, with nanosecond
  times, which BusyBox's ``cp -a`` drops), writes SNAP's sorted listing to LIST, removes OLD;
  prints the copy's size in bytes. A file that changes while it is copied is copied again.
* ``restore LIVE SNAP OP...``: puts entries of LIVE back from SNAP: ``rm:REL`` removes,
  ``cp:REL`` replaces with the snapshot's copy, ``dir:REL`` makes the folder with the
  snapshot's mode and owner, ``time:REL`` sets the snapshot's times (REL escaped); then LIVE's
  own times. The same operations as the sh way's ``cp -a``, ``touch -h -r``.
* ``diff LIVE LIST OLD [LIVE LIST OLD ...]``: for each folder, the listing records that differ
  between LIVE and LIST (live-only ones as they are, recorded-only ones after a tab), as hex,
  one section per folder, each ended by a line ``@@``.
* ``check LIVE LIST PATH...``: the records of those PATHs (``./REL``, escaped as
  :func:`sitectl.stores.files._arg` does) that exist, as hex.
* ``fingerprint DIR``: ``f SHA256  ./REL`` of every file, ``l ./REL`` then the target of every
  symlink, ``d MODE ./REL`` of every folder and ``r SHA256 ./REL`` of the refs of every
  ``*.git`` folder down to depth 5, NUL-terminated, as hex.
* ``probe``: ``python3 X.Y.Z`` (the files store's way in proves the interpreter with it).

LIST is ignored by ``check`` (the sh way, :mod:`sitectl.stores.files_sh`, reads the second its
snapshot began there). A listing the sh way recorded (first line ``#sitectl-sh-listing``) is
refused with exit code 4: the ways' listings differ (whole seconds and hashes there).

A listing record is ``TYPE MODE UID:GID SIZE MTIME REL``, tab-separated, NUL-terminated: GNU
find's ``%y %m %U:%G %s %T@ %P`` (a folder's size ``-``; MTIME seconds, a dot and ten digits:
nanoseconds and a 0). Exit codes: 3 no listing recorded, 4 an old listing that cannot be
trusted, 1 any other failure (the message on stderr).

Folders are walked through file descriptors (``O_NOFOLLOW``, each one checked against the
entry it was listed as), so a folder swapped for a symlink while it is walked is never followed
(as GNU find). The text is ASCII (a Python in a C locale reads ``-c`` text as ASCII).

Nothing here imports sitectl: this file's text is the program.
"""
import binascii
import hashlib
import os
import shutil
import stat
import subprocess
import sys

#: Times a file that keeps changing is copied before the snapshot gives up.
COPY_TRIES = 10

TYPES = {stat.S_IFREG: b"f", stat.S_IFDIR: b"d", stat.S_IFLNK: b"l", stat.S_IFIFO: b"p",
         stat.S_IFSOCK: b"s", stat.S_IFCHR: b"c", stat.S_IFBLK: b"b"}


def record(st, rel):
    """GNU find's ``%y\\t%m\\t%U:%G\\t%s\\t%T@\\t%P`` of one entry (``-`` for a folder's size)."""
    kind = TYPES.get(stat.S_IFMT(st.st_mode), b"U")
    sec, ns = divmod(st.st_mtime_ns, 10 ** 9)
    size = b"-" if kind == b"d" else str(st.st_size).encode()
    head = b"%s\t%o\t%d:%d\t%s\t%d.%09d0\t" % (kind, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, size, sec, ns)
    return head + rel


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _open_dir(name, st, dir_fd=None):
    """A descriptor of the folder ``name`` (relative to ``dir_fd``) if it still is the folder
    ``st`` describes (not a symlink put in its place), else None."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    if os.path.samestat(os.fstat(fd), st):
        return fd
    os.close(fd)
    return None


def walk(top):
    """(relative path, lstat result) of ``top`` (relative path ``b""``) and everything below it,
    symlinks not followed, folders opened by descriptor; entries that vanish or cannot be read
    are left out, as find does."""
    try:
        st = os.lstat(top)
    except OSError:
        return
    yield b"", st
    fd = _open_dir(top, st) if stat.S_ISDIR(st.st_mode) else None
    if fd is None:
        return
    # Depth first, one open descriptor per level (never one per queued folder).
    stack = [(fd, b"", iter(_names(fd)))]
    while stack:
        fd, rel, names = stack[-1]
        name = next(names, None)
        if name is None:
            os.close(fd)
            stack.pop()
            continue
        sub = rel + b"/" + name if rel else name
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        yield sub, st
        if stat.S_ISDIR(st.st_mode):
            child = _open_dir(name, st, fd)
            if child is not None:
                stack.append((child, sub, iter(_names(child))))


def _names(fd):
    try:
        return [os.fsencode(e.name) for e in os.scandir(fd)]
    except OSError:
        return []


def listing(top):
    """The set of listing records of ``top``."""
    return {record(st, rel) for rel, st in walk(top)}


#: The first line of a listing the sh way recorded.
SH_LISTING = b"#sitectl-sh-listing "


def read_records(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(SH_LISTING):
        fail(4, "snapshot listing %s was recorded by sitectl's sh way (whole seconds), and this container's "
                "userland record now names a python3; take this snapshot again" % os.fsdecode(path))
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def write_atomic(path, data):
    tmp = path + b".new"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def joined(records):
    return b"".join(r + b"\0" for r in sorted(records))


def fail(code, message):
    sys.stderr.write(message + "\n")
    sys.exit(code)


def convert_old(lst, old):
    """Turn a listing recorded before 0.1.x (newline-separated) into LIST, once."""
    if not os.path.isfile(old):
        fail(3, "no snapshot listing %s" % os.fsdecode(lst))
    with open(old, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for line in lines:
        fields = line.split(b"\t", 5)
        if len(fields) < 6:
            fail(4, "snapshot listing %s was recorded by an older sitectl and holds a file name with a "
                    "newline, which it cannot represent; take this snapshot again" % os.fsdecode(old))
        if fields[0] == b"d":
            fields[3] = b"-"
        out.append(b"\t".join(fields))
    write_atomic(lst, joined(out))
    os.remove(old)


def set_meta(path, st):
    """Owner, mode, extended attributes and times (nanoseconds) of ``st`` on ``path``, not
    following a symlink; an owner or attribute the file system refuses is left, as cp does."""
    try:
        os.lchown(path, st.st_uid, st.st_gid)
    except OSError:
        pass
    if not stat.S_ISLNK(st.st_mode):
        os.chmod(path, stat.S_IMODE(st.st_mode))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)


def copy_xattrs(src, dst):
    try:
        for name in os.listxattr(src, follow_symlinks=False):
            os.setxattr(dst, name, os.getxattr(src, name, follow_symlinks=False), follow_symlinks=False)
    except OSError:
        pass


def copy_file(src, dst, links):
    """Copy one regular file; again while its size, time or inode moved during the copy."""
    for _ in range(COPY_TRIES):
        st = os.lstat(src)
        if not stat.S_ISREG(st.st_mode):
            return copy_tree(src, dst, links)
        key = (st.st_dev, st.st_ino)
        if st.st_nlink > 1 and key in links:  # a hard link within the tree stays one
            os.link(links[key], dst)
            return
        with open(src, "rb") as f, open(dst, "wb") as g:
            shutil.copyfileobj(f, g, 1 << 20)
        after = os.lstat(src)
        if (after.st_mtime_ns, after.st_size, after.st_ino) == (st.st_mtime_ns, st.st_size, st.st_ino):
            copy_xattrs(src, dst)
            set_meta(dst, st)
            if st.st_nlink > 1:
                links[key] = dst
            return
        os.unlink(dst)
    fail(1, "%s kept changing while it was copied (%d tries)" % (os.fsdecode(src), COPY_TRIES))


def copy_tree(src, dst, links, into=False):
    """Copy ``src`` (any type) to ``dst`` as ``cp -a`` does: owners, modes, times with
    nanoseconds, symlinks as links, FIFOs and device files as such, hard links kept. With
    ``into``, ``dst`` is an existing folder that takes ``src``'s content and metadata."""
    todo = [(src, dst, into)]
    done = []  # folders whose metadata is set once their content is there (deepest last)
    while todo:
        s_path, d_path, exists = todo.pop()
        st = os.lstat(s_path)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            if not exists:
                os.mkdir(d_path, 0o700)
            copy_xattrs(s_path, d_path)
            done.append((d_path, st))
            for e in os.scandir(s_path):
                todo.append((os.path.join(s_path, e.name), os.path.join(d_path, e.name), False))
        elif stat.S_ISREG(mode):
            copy_file(s_path, d_path, links)
        elif stat.S_ISLNK(mode):
            os.symlink(os.readlink(s_path), d_path)
            set_meta(d_path, st)
        else:  # FIFO, socket, character or block device
            os.mknod(d_path, mode, st.st_rdev)
            set_meta(d_path, st)
    for d_path, st in reversed(done):
        set_meta(d_path, st)


def remove(path):
    """``rm -rf``: the entry at ``path`` whatever it is (a symlink itself, not its target)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def cmd_snapshot(live, snap, lst, old):
    try:
        remove(snap)
        if os.path.lexists(old):
            os.remove(old)
        os.makedirs(snap)
        if os.path.isdir(live):
            copy_tree(live, snap, {}, into=True)
    except OSError as e:
        fail(1, "copying %s: %s" % (os.fsdecode(live), e))
    seen, size = set(), 0
    records = []
    for rel, st in walk(snap):
        records.append(record(st, rel))
        if (st.st_dev, st.st_ino) not in seen:  # du -b counts a hard-linked file once
            seen.add((st.st_dev, st.st_ino))
            size += st.st_size
    write_atomic(lst, joined(records))
    sys.stdout.write("%d\n" % size)


def cmd_restore(live, snap, ops):
    """The restore operations (see the module's docstring), in the order given."""
    try:
        os.makedirs(live, exist_ok=True)
        for op in ops:
            kind, _, arg = op.partition(":")
            rel = unescape(arg)
            src, dst = os.path.join(snap, rel), os.path.join(live, rel)
            if kind == "rm":
                remove(dst)
            elif kind == "cp":
                remove(dst)
                copy_tree(src, dst, {})
            elif kind == "dir":
                st = os.stat(src)
                os.makedirs(dst, exist_ok=True)
                os.chmod(dst, stat.S_IMODE(st.st_mode))
                os.chown(dst, st.st_uid, st.st_gid)
            elif kind == "time":
                st = os.lstat(src)
                os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
            else:
                fail(1, "unknown restore operation %r" % kind)
        st = os.stat(snap)
        os.utime(live, ns=(st.st_atime_ns, st.st_mtime_ns))
    except OSError as e:
        fail(1, "restoring %s: %s" % (os.fsdecode(live), e))


def cmd_diff(args):
    if len(args) % 3:
        fail(1, "diff takes LIVE LIST OLD triples")
    out = []
    for i in range(0, len(args), 3):
        live, lst, old = args[i:i + 3]
        if not os.path.isfile(lst):
            convert_old(lst, old)
        recorded = set(read_records(lst))
        now = listing(live) if os.path.isdir(live) else set()
        rows = sorted([r for r in now - recorded] + [b"\t" + r for r in recorded - now], key=lambda r: r.lstrip(b"\t"))
        out.append(binascii.hexlify(b"".join(r + b"\0" for r in rows)).decode() + "\n@@\n")
    sys.stdout.write("".join(out))


def unescape(arg):
    """An argument escaped by sitectl (every byte outside printable ASCII, and the backslash,
    as ``\\0ooo``) back to its bytes."""
    raw = os.fsencode(arg)
    if b"\\" not in raw:
        return raw
    out, i = bytearray(), 0
    while i < len(raw):
        if raw[i:i + 2] == b"\\0" and len(raw) >= i + 5:
            out.append(int(raw[i + 2:i + 5], 8) & 0xFF)
            i += 5
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def cmd_check(live, paths):
    try:
        os.chdir(live)
    except OSError:
        return
    out = []
    for p in paths:
        rel = unescape(p)
        try:
            st = os.lstat(rel)
        except OSError:
            continue
        out.append(record(st, rel) + b"\0")
    sys.stdout.write(binascii.hexlify(b"".join(out)).decode())


def refs_digest(repo):
    """SHA-256 (hex) of ``git for-each-ref`` of the bare repository ``repo`` (of nothing when
    git is missing or the folder is not a repository)."""
    try:
        out = subprocess.run(["git", "-c", "safe.directory=*", b"--git-dir=" + repo, "for-each-ref",
                              "--format=%(objectname) %(refname)"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    except OSError:
        out = b""
    return hashlib.sha256(out).hexdigest().encode()


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest().encode()


def cmd_fingerprint(top):
    try:
        os.chdir(top)
    except OSError:
        return
    out = []
    for rel, st in walk(b"."):
        p = b"./" + rel if rel else b"."
        mode = st.st_mode
        if stat.S_ISREG(mode):
            try:
                out.append(b"f " + file_digest(p) + b"  " + p + b"\0")
            except OSError:
                continue
        elif stat.S_ISLNK(mode):
            try:
                out.append(b"l " + p + b"\0" + os.readlink(p) + b"\0")
            except OSError:
                continue
        elif stat.S_ISDIR(mode):
            out.append(b"d %o %s\0" % (stat.S_IMODE(mode), p))
            if rel and rel.count(b"/") < 5 and rel.rsplit(b"/", 1)[-1].endswith(b".git"):
                out.append(b"r " + refs_digest(p) + b" " + p + b"\0")
    sys.stdout.write(binascii.hexlify(b"".join(out)).decode())


def main(argv):
    if not argv:
        fail(1, "usage: snapshot|diff|check|fingerprint|restore|probe ARGS")
    mode, args = argv[0], [os.fsencode(a) for a in argv[1:]]
    if mode == "snapshot" and len(args) == 4:
        cmd_snapshot(*args)
    elif mode == "diff":
        cmd_diff(args)
    elif mode == "check" and len(args) >= 2:
        cmd_check(args[0], argv[3:])
    elif mode == "restore" and len(args) >= 2:
        cmd_restore(args[0], args[1], argv[3:])
    elif mode == "fingerprint" and len(args) == 1:
        cmd_fingerprint(args[0])
    elif mode == "probe" and not args:
        sys.stdout.write("python3 %d.%d.%d\n" % sys.version_info[:3])
    else:
        fail(1, "unknown mode or arguments: %s" % mode)


if __name__ == "__main__":
    main(sys.argv[1:])
