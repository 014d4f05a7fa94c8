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
import errno
import hashlib
import os
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
    """(relative path, lstat result, parent folder's descriptor, name) of ``top`` (relative
    path ``b""``, no descriptor: its name is ``top``) and everything below it, symlinks not
    followed, folders opened by descriptor; entries that vanish or cannot be read are left out,
    as find does. A descriptor is valid until the next item is asked for."""
    try:
        st = os.lstat(top)
    except OSError:
        return
    yield b"", st, None, top
    fd = _open_dir(top, st) if stat.S_ISDIR(st.st_mode) else None
    if fd is None:
        return
    # Depth first, one open descriptor per level (never one per queued folder).
    stack = [(fd, b"", iter(_names(fd)))]
    try:
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
            yield sub, st, fd, name
            if stat.S_ISDIR(st.st_mode):
                child = _open_dir(name, st, fd)
                if child is not None:
                    stack.append((child, sub, iter(_names(child))))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _names(fd):
    try:
        return [os.fsencode(e.name) for e in os.scandir(fd)]
    except OSError:
        return []


def listing(top):
    """The set of listing records of ``top``."""
    return {record(st, rel) for rel, st, _, _ in walk(top)}


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


class Refused(Exception):
    """An entry that is not what the operation may go into or through: a symlink, file or other
    entry where a folder is expected, or a path that leaves the folder (``..``)."""


FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def open_folder(path, create=False, replace_last=False):
    """A descriptor of the folder at the absolute ``path``, each component opened from ``/``
    with O_NOFOLLOW: a symlink anywhere on the way is never followed (Refused). ``create``
    makes missing folders (mode 0755); ``replace_last`` removes a last component that is not
    a folder (a symlink planted in the folder's place: the link, never its target) and makes
    the folder again."""
    parts = path.split(b"/")
    if not path.startswith(b"/") or any(x in (b".", b"..") for x in parts):
        raise Refused("%s is not an absolute path without . or .." % os.fsdecode(path))
    parts = [x for x in parts if x]
    fd = os.open(b"/", DIR_FLAGS)
    try:
        for i, part in enumerate(parts):
            try:
                nfd = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                nfd = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                where = os.fsdecode(b"/" + b"/".join(parts[:i + 1]))
                if not (replace_last and i == len(parts) - 1 and e.errno in (errno.ELOOP, errno.ENOTDIR)):
                    raise Refused("%s is not a folder (a symlink or a file where a folder is expected): not followed"
                                  % where)
                os.unlink(part, dir_fd=fd)
                os.mkdir(part, 0o755, dir_fd=fd)
                nfd = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def parent_of(root, rel):
    """(a descriptor of the folder holding ``rel`` below the folder ``root``, ``rel``'s last
    name); each folder on the way opened with O_NOFOLLOW. Refused: an empty, ``.`` or ``..``
    component, or a component that is not a folder."""
    parts = rel.split(b"/")
    if any(x in (b"", b".", b"..") for x in parts):
        raise Refused("%r is not a path below the folder" % rel)
    fd = os.dup(root)
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                nfd = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                raise
            except OSError:
                raise Refused("%s is not a folder (a symlink or a file where a folder is expected): not followed"
                              % os.fsdecode(b"/".join(parts[:i + 1])))
            os.close(fd)
            fd = nfd
        return fd, parts[-1]
    except BaseException:
        os.close(fd)
        raise


def meta_fd(fd, st):
    """Owner, mode and times (nanoseconds) of ``st`` on the open entry ``fd``; an owner the file
    system refuses is left, as cp does."""
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except OSError:
        pass
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))


def meta_at(dfd, name, st):
    """Owner and times of ``st`` on the entry ``name`` of ``dfd`` itself (a symlink, FIFO or
    device file: never opened, never followed; its mode came with mknod)."""
    try:
        os.chown(name, st.st_uid, st.st_gid, dir_fd=dfd, follow_symlinks=False)
    except OSError:
        pass
    os.utime(name, ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=dfd, follow_symlinks=False)


def copy_xattrs(src, dst):
    try:
        for name in os.listxattr(src):
            os.setxattr(dst, name, os.getxattr(src, name))
    except OSError:
        pass


class Links:
    """The hard links met while copying one tree: (device, inode) of a source file -> (a
    descriptor of its copy's folder, the copy's name), so a hard link stays one."""

    def __init__(self):
        self.seen = {}

    def close(self):
        for fd, _ in self.seen.values():
            os.close(fd)
        self.seen = {}


def copy_file_at(sfd, sname, dfd, dname, links):
    """Copy the regular file ``sname`` of ``sfd`` to the new entry ``dname`` of ``dfd``; again
    while its size or time moved during the copy. Opened with O_NOFOLLOW and O_NONBLOCK and
    checked against what it was listed as: a symlink or FIFO put in its place is never read."""
    for _ in range(COPY_TRIES):
        st = os.stat(sname, dir_fd=sfd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return copy_at(sfd, sname, dfd, dname, links)
        key = (st.st_dev, st.st_ino)
        if st.st_nlink > 1 and key in links.seen:
            lfd, lname = links.seen[key]
            os.link(lname, dname, src_dir_fd=lfd, dst_dir_fd=dfd, follow_symlinks=False)
            return
        src = os.open(sname, FILE_FLAGS, dir_fd=sfd)
        try:
            if not os.path.samestat(os.fstat(src), st):
                continue
            dst = os.open(dname, NEW_FLAGS, 0o600, dir_fd=dfd)
            try:
                while True:
                    block = os.read(src, 1 << 20)
                    if not block:
                        break
                    view = memoryview(block)
                    while view:
                        view = view[os.write(dst, view):]
                after = os.fstat(src)
                if (after.st_mtime_ns, after.st_size) == (st.st_mtime_ns, st.st_size):
                    copy_xattrs(src, dst)
                    meta_fd(dst, st)
                    if st.st_nlink > 1:
                        links.seen[key] = (os.dup(dfd), dname)
                    return
            finally:
                os.close(dst)
            os.unlink(dname, dir_fd=dfd)
        finally:
            os.close(src)
    fail(1, "%s kept changing while it was copied (%d tries)" % (os.fsdecode(sname), COPY_TRIES))


def copy_at(sfd, sname, dfd, dname, links):
    """Copy the entry ``sname`` of the folder ``sfd`` (any type, never followed) to the new
    entry ``dname`` of ``dfd``, as ``cp -a`` does: owners, modes, times with nanoseconds,
    symlinks as links, FIFOs and device files as such, hard links kept. Every entry is made
    relative to its folder's descriptor with O_NOFOLLOW or O_EXCL: nothing is written through
    a link."""
    st = os.stat(sname, dir_fd=sfd, follow_symlinks=False)
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        src = _open_dir(sname, st, sfd)
        if src is None:
            return copy_at(sfd, sname, dfd, dname, links)  # no longer that folder: copy what is there
        try:
            os.mkdir(dname, 0o700, dir_fd=dfd)
            dst = os.open(dname, DIR_FLAGS, dir_fd=dfd)
            try:
                for n in _names(src):
                    try:
                        copy_at(src, n, dst, n, links)
                    except FileNotFoundError:
                        continue  # gone since it was listed, as cp -a would miss it
                copy_xattrs(src, dst)
                meta_fd(dst, st)
            finally:
                os.close(dst)
        finally:
            os.close(src)
    elif stat.S_ISREG(mode):
        copy_file_at(sfd, sname, dfd, dname, links)
    elif stat.S_ISLNK(mode):
        os.symlink(os.readlink(sname, dir_fd=sfd), dname, dir_fd=dfd)
        meta_at(dfd, dname, st)
    else:  # FIFO, socket, character or block device (the mode is mknod's: umask 0)
        os.mknod(dname, mode, st.st_rdev, dir_fd=dfd)
        meta_at(dfd, dname, st)


def remove_at(dfd, name):
    """``rm -rf`` of the entry ``name`` of ``dfd`` (a symlink itself, never its target), its
    content removed through descriptors."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dfd)
        return
    sub = _open_dir(name, st, dfd)
    if sub is None:
        return remove_at(dfd, name)  # no longer that folder
    try:
        for n in _names(sub):
            remove_at(sub, n)
    finally:
        os.close(sub)
    os.rmdir(name, dir_fd=dfd)


def remove(path):
    """``rm -rf``: the entry at ``path`` whatever it is (a symlink itself, not its target)."""
    parent, _, name = path.rstrip(b"/").rpartition(b"/")
    try:
        fd = os.open(parent or b"/", DIR_FLAGS)
    except FileNotFoundError:
        return
    try:
        remove_at(fd, name)
    finally:
        os.close(fd)


#: sitectl's folder in a container: writable by root only (the stage below it is read by the
#: database clients' own users, GitLab's gitlab-psql); its snapshots folder and every folder
#: below it that leads to a copy is root's alone (0700), so the application's users can neither
#: read nor change a snapshot.
SITECTL_DIR = b"/var/lib/sitectl"
PRIVATE = SITECTL_DIR + b"/snapshots"


def _real_folder(path, mode):
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise Refused("%s is not a folder (a symlink or a file where sitectl's folder belongs)" % os.fsdecode(path))
        return st
    return os.lstat(path)


def private_folders(path):
    """Make ``path`` and its parents down from :data:`PRIVATE` (those that ``path`` lies under)
    exist as real folders of mode 0700, and :data:`SITECTL_DIR` one of mode 0755 (written by
    root only, passed through by the database clients' users); a symlink on the way is refused
    (Refused)."""
    path = os.fsencode(path).rstrip(b"/")
    if not (path == PRIVATE or path.startswith(PRIVATE + b"/")):
        os.makedirs(path, 0o700, exist_ok=True)
        return
    if stat.S_IMODE(_real_folder(SITECTL_DIR, 0o755).st_mode) != 0o755:
        os.chmod(SITECTL_DIR, 0o755)
    cur = PRIVATE
    for part in [b""] + [p for p in path[len(PRIVATE):].split(b"/") if p]:
        cur = cur + b"/" + part if part else cur
        if stat.S_IMODE(_real_folder(cur, 0o700).st_mode) != 0o700:
            os.chmod(cur, 0o700)


def cmd_snapshot(live, snap, lst, old):
    os.umask(0)
    links = Links()
    try:
        remove(snap)
        if os.path.lexists(old):
            os.remove(old)
        private_folders(os.path.dirname(os.fsencode(snap)))
        os.mkdir(snap, 0o700)
        if os.path.lexists(live):
            src = open_folder(live)
            dst = os.open(snap, DIR_FLAGS)
            try:
                for n in _names(src):
                    try:
                        copy_at(src, n, dst, n, links)
                    except FileNotFoundError:
                        continue
                copy_xattrs(src, dst)
                meta_fd(dst, os.fstat(src))
            finally:
                os.close(src)
                os.close(dst)
    except (OSError, Refused) as e:
        fail(1, "copying %s: %s" % (os.fsdecode(live), e))
    finally:
        links.close()
    seen, size = set(), 0
    records = []
    for rel, st, _, _ in walk(snap):
        records.append(record(st, rel))
        if (st.st_dev, st.st_ino) not in seen:  # du -b counts a hard-linked file once
            seen.add((st.st_dev, st.st_ino))
            size += st.st_size
    write_atomic(lst, joined(records))
    sys.stdout.write("%d\n" % size)


def cmd_restore(live, snap, ops):
    """The restore operations (see the module's docstring), in the order given, each made
    relative to descriptors opened with O_NOFOLLOW from ``/``: the folder ``live`` (a symlink
    planted in its place is removed, not followed), then each path's folders below it. A
    symlink met on the way (a folder swapped for one while the restore runs) stops the restore
    with exit code 1: nothing is ever written, removed or chowned through a link."""
    os.umask(0)
    links = Links()
    root = sroot = None
    try:
        root = open_folder(live, create=True, replace_last=True)
        sroot = os.open(snap, DIR_FLAGS)
        for op in ops:
            kind, _, arg = op.partition(":")
            rel = unescape(arg)
            if rel == b"":  # the folder itself: its mode, owner and times
                if kind == "dir":
                    st = os.fstat(sroot)
                    os.fchmod(root, stat.S_IMODE(st.st_mode))
                    os.fchown(root, st.st_uid, st.st_gid)
                elif kind != "time":
                    fail(1, "restore operation %r on the folder itself" % kind)
                continue
            try:
                pfd, name = parent_of(root, rel)
            except FileNotFoundError:
                if kind == "rm":
                    continue  # its folder is gone already
                raise
            sfd = sname = None
            if kind != "rm":  # a removal needs nothing of the snapshot
                try:
                    sfd, sname = parent_of(sroot, rel)
                except BaseException:
                    os.close(pfd)
                    raise
            try:
                if kind == "rm":
                    remove_at(pfd, name)
                elif kind == "cp":
                    remove_at(pfd, name)
                    copy_at(sfd, sname, pfd, name, links)
                elif kind == "dir":
                    st = os.stat(sname, dir_fd=sfd, follow_symlinks=False)
                    try:
                        d = os.open(name, DIR_FLAGS, dir_fd=pfd)
                    except FileNotFoundError:
                        os.mkdir(name, 0o700, dir_fd=pfd)
                        d = os.open(name, DIR_FLAGS, dir_fd=pfd)
                    except OSError:  # a symlink or a file in the folder's place: removed, not followed
                        remove_at(pfd, name)
                        os.mkdir(name, 0o700, dir_fd=pfd)
                        d = os.open(name, DIR_FLAGS, dir_fd=pfd)
                    try:
                        os.fchmod(d, stat.S_IMODE(st.st_mode))
                        os.fchown(d, st.st_uid, st.st_gid)
                    finally:
                        os.close(d)
                elif kind == "time":
                    st = os.stat(sname, dir_fd=sfd, follow_symlinks=False)
                    os.utime(name, ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=pfd, follow_symlinks=False)
                else:
                    fail(1, "unknown restore operation %r" % kind)
            finally:
                os.close(pfd)
                if sfd is not None:
                    os.close(sfd)
        st = os.fstat(sroot)
        os.utime(root, ns=(st.st_atime_ns, st.st_mtime_ns))
    except (OSError, Refused) as e:
        fail(1, "restoring %s: %s" % (os.fsdecode(live), e))
    finally:
        links.close()
        for fd in (root, sroot):
            if fd is not None:
                os.close(fd)


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
        root = open_folder(live)
    except (OSError, Refused):
        return  # nothing there (a symlink in its place included): every entry is missing
    out = []
    try:
        for p in paths:
            rel = unescape(p)
            bare = rel[2:] if rel.startswith(b"./") else rel
            try:
                if bare in (b"", b"."):
                    st = os.fstat(root)
                else:
                    pfd, name = parent_of(root, bare)
                    try:
                        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
                    finally:
                        os.close(pfd)
            except (OSError, Refused):
                continue
            out.append(record(st, rel) + b"\0")
    finally:
        os.close(root)
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


def file_digest_at(pfd, name, st):
    """SHA-256 (hex) of the regular file ``name`` of ``pfd`` if it still is the file ``st``
    describes (opened with O_NOFOLLOW and O_NONBLOCK: a link or FIFO put in its place is
    never read); OSError otherwise."""
    fd = os.open(name, FILE_FLAGS, dir_fd=pfd)
    try:
        if not os.path.samestat(os.fstat(fd), st):
            raise OSError("changed while it was read")
        h = hashlib.sha256()
        for block in iter(lambda: os.read(fd, 1 << 20), b""):
            h.update(block)
        return h.hexdigest().encode()
    finally:
        os.close(fd)


def cmd_fingerprint(top):
    try:
        root = open_folder(top)
    except (OSError, Refused):
        return
    out = []
    try:
        os.fchdir(root)  # the repositories' refs are read by path below it
        for rel, st, pfd, name in walk(b"."):
            p = b"./" + rel if rel else b"."
            mode = st.st_mode
            if stat.S_ISREG(mode):
                try:
                    out.append(b"f " + file_digest_at(pfd, name, st) + b"  " + p + b"\0")
                except OSError:
                    continue
            elif stat.S_ISLNK(mode):
                try:
                    out.append(b"l " + p + b"\0" + os.readlink(name, dir_fd=pfd) + b"\0")
                except OSError:
                    continue
            elif stat.S_ISDIR(mode):
                out.append(b"d %o %s\0" % (stat.S_IMODE(mode), p))
                if rel and rel.count(b"/") < 5 and rel.rsplit(b"/", 1)[-1].endswith(b".git"):
                    out.append(b"r " + refs_digest(p) + b" " + p + b"\0")
    finally:
        os.close(root)
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
