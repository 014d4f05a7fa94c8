"""Files store: folders inside the container (uploads, sessions, git repositories).

* **Snapshot** ``NAME`` copies each folder with ``cp -a`` to
  ``/var/lib/sitectl/snapshots/files/NAME/<n>/`` and records a listing of it (type, mode,
  owner, size, modification time with nanoseconds, path) next to the copy.
* **Changes**: the live listing compared with the recorded one: files and folders changed,
  added or deleted. Git repositories are folders of files, so a push, a new branch or a deleted
  repository shows up as changed ref files, objects or folders; the deep fingerprint also
  hashes each bare repository's ``git for-each-ref`` output (repositories compared by refs).
* **Restore** copies back only what changed or was deleted, removes what was added, and puts
  folder times back.

**One way in, on both userlands** (research/real-images.md §1.7): the Magento and forum images
are Alpine with BusyBox (no ``find -printf``, ``comm``, ``sha256sum -z``; ``stat`` in whole
seconds), GitLab's is Ubuntu with GNU tools and python3 only at
``/opt/gitlab/embedded/bin/python3``. Listing, comparing, checking, hashing, copying and
restoring run through :mod:`sitectl.stores.files_helper`, a stdlib-only Python program sent as
``python3 -c`` text, on the first python3 3.7 or newer that :data:`WITH_PYTHON_SH` finds on
each call (PATH's, then GitLab's embedded one; no extra round trip). It keeps nanosecond times
where BusyBox's ``cp -a`` keeps whole seconds. Without such a python3, GNU find's and GNU
coreutils' scripts below do the same with identical output; with neither (BusyBox and no
python3), the command exits 5 with a message naming what to install. ``sitectl doctor`` shows
what a container offers.

No shell command is ever built from input: fixed scripts take paths as arguments.
"""
from __future__ import annotations

from pathlib import Path

from sitectl.errors import StoreError
from sitectl.stores import files_helper
from sitectl.stores.base import Changes, Store
from sitectl.stores.transport import Command, ExecTransport, budget_chunks, out_lines

ROOT = "/var/lib/sitectl/snapshots/files"
# One listing record per entry, NUL-terminated (a file name may hold any byte but NUL and "/"):
# type, mode, owner, size, mtime, path, tab-separated, the path last. A folder's size is left
# out ("-"): it is the file system's own bookkeeping (4096 on ext4 and overlay, 20 per entry on
# tmpfs), so a snapshot kept on another file system than the live folder would always differ.
# ``{p}``: %P (relative to the folder listed) or %p (as given, for the closing check).
_LIST = r"""\( -type d -printf 'd\t%m\t%U:%G\t-\t%T@\t{p}\0' \) -o -printf '%y\t%m\t%U:%G\t%s\t%T@\t{p}\0'"""
_ARG_BUDGET = 100_000  # bytes of paths per exec (Linux caps one argument at 128 KiB)
# What comes back out of the container is hex (`od`): the engine's output is text, and a file
# name need not be UTF-8. Paths going in are escaped by :func:`_arg` and decoded by DEC_SH.
_HEX = "| od -An -v -tx1"
# `dec ARG`: $r = ARG with its \0ooo escapes (see :func:`_arg`) turned back into bytes; a
# name without a backslash is taken as it is (no subshell).
DEC_SH = r"""
dec() { case $1 in *\\*) r=$(printf '%bx' "$1"); r=${r%x} ;; *) r=$1 ;; esac; }
"""

# $1 = live folder, $2 = snapshot folder, $3 = listing file, $4 = an older listing to remove
SNAPSHOT_SH = r"""
live=$1; snap=$2; list=$3
rm -rf -- "$snap" "$4" && mkdir -p -- "$snap" || exit 1
if [ -d "$live" ]; then cp -a -- "$live/." "$snap/" || exit 1; fi
find "$snap" -mindepth 0 LIST_P | LC_ALL=C sort -z > "$list" || exit 1
du -sb -- "$snap" | cut -f1
"""

# $1 = live folder, $2 = listing file, $3 = the listing sitectl recorded before 0.1.x's
# NUL-separated one (newline-separated; converted once). Prints, as hex, only the records that
# differ between the live listing and the recorded one (`comm -3`: live-only records as they
# are, recorded-only ones after a tab), so an unchanged tree costs one listing inside the
# container and no transfer.
LIST_SH = r"""
if [ ! -f "$2" ]; then
  [ -f "$3" ] || { echo "no snapshot listing $2" >&2; exit 3; }
  # A line with fewer than six fields is the rest of a name with a newline, which the older
  # listing could not hold: that snapshot cannot be trusted.
  awk -F'\t' 'NF < 6 { exit 1 }' "$3" || {
    echo "snapshot listing $3 was recorded by an older sitectl and holds a file name with a newline, which it cannot represent; take this snapshot again" >&2; exit 4; }
  awk 'BEGIN { FS = OFS = "\t" } $1 == "d" { $4 = "-" } { print }' "$3" | tr '\n' '\000' | LC_ALL=C sort -z > "$2.new" \
    && mv -f -- "$2.new" "$2" && rm -f -- "$3" || { rm -f -- "$2.new"; exit 1; }
fi
{ [ -d "$1" ] && find "$1" -mindepth 0 LIST_P; } | LC_ALL=C sort -z | LC_ALL=C comm -z -3 - "$2" HEX
"""

# $1 = live, $2 = snapshot, then ops "rm:REL", "cp:REL", "dir:REL", "time:REL" (REL escaped).
RESTORE_SH = DEC_SH + r"""
live=$1; snap=$2; shift 2
mkdir -p -- "$live" || exit 1
for a in "$@"; do
  op=${a%%:*}; dec "${a#*:}"; rel=$r
  case $op in
    rm) rm -rf -- "$live/$rel" || exit 1 ;;
    cp) rm -rf -- "$live/$rel"; cp -a -- "$snap/$rel" "$live/$rel" || exit 1 ;;
    dir) mkdir -p -- "$live/$rel" && chmod "$(stat -c %a -- "$snap/$rel")" "$live/$rel" \
           && chown "$(stat -c %u:%g -- "$snap/$rel")" "$live/$rel" || exit 1 ;;
    time) touch -h -r "$snap/$rel" -- "$live/$rel" || exit 1 ;;
  esac
done
touch -r "$snap" -- "$live"
"""

# $1 = live folder, then paths "./REL" (escaped): the listing records of those that exist, as
# hex (the closing check after a restore looks only at what the restore touched).
CHECK_SH = DEC_SH + r"""
cd -- "$1" 2>/dev/null || exit 0
shift
n=$#
while [ "$n" -gt 0 ]; do dec "$1"; shift; set -- "$@" "$r"; n=$((n - 1)); done
[ $# -gt 0 ] && find "$@" -maxdepth 0 LIST_p 2>/dev/null HEX
exit 0
"""

SNAPSHOT_SH, LIST_SH = (x.replace("LIST_P", _LIST.format(p="%P")).replace("HEX", _HEX) for x in (SNAPSHOT_SH, LIST_SH))
CHECK_SH = CHECK_SH.replace("LIST_p", _LIST.format(p="%p")).replace("HEX", _HEX)

# $1 = folder: as hex, NUL-terminated records: "f SHA256  PATH" of every file, "l PATH" and then
# its target for every symlink, "d MODE PATH" of every folder, "r SHA256 PATH" of the refs of
# every bare git repository.
FINGERPRINT_SH = r"""
cd -- "$1" 2>/dev/null || exit 0
{
find . -type f -exec sha256sum -z -- {} + 2>/dev/null | sed -z 's/^/f /'
find . -type l -printf 'l %p\0%l\0'
find . -type d -printf 'd %m %p\0'
find . -maxdepth 5 -type d -name '*.git' -exec sh -c 'for r; do
  printf "r %s %s\0" "$(git -c safe.directory="*" --git-dir="$r" for-each-ref --format="%(objectname) %(refname)" 2>/dev/null | sha256sum | cut -c1-64)" "$r"
done' sh {} +
} HEX
""".replace("HEX", _HEX)

#: The helper program's text (stdlib only; see its docstring).
HELPER = Path(files_helper.__file__).read_text(encoding="utf-8")
#: Exit code of a files command in a container with neither python3 nor GNU find.
NO_WAY_IN = 5

#: Exit code of the stub below when the Python it runs on is older than the helper needs.
TOO_OLD = 96
#: Runs the helper's text (argv[1]) on a Python 3.7 or newer; exits TOO_OLD on an older one
#: (Python 2 included: this text is valid in both). No site packages (-S), no PYTHON*
#: variables (-E), no user site (-s), and not the current folder on sys.path.
STUB_PY = (
    "import sys\n"
    "if sys.version_info < (3, 7):\n"
    f"    sys.exit({TOO_OLD})\n"
    "sys.path[:] = [p for p in sys.path if p]\n"
    "h = sys.argv.pop(1)\n"
    "exec(compile(h, 'files_helper', 'exec'))\n"
)

# $1 = the stub, $2 = the helper's text, $3 = its mode, then the mode's arguments. Runs the
# helper with the first executable python3 that is 3.7 or newer (PATH's, then GitLab's embedded
# one) and exits with its code; what follows PYTHON_SH runs only when there is none (here the
# mode's GNU find script, FALLBACK_SH, which needs GNU find).
PYTHON_SH = r"""
stub=$1; h=$2; shift 2
for py in python3 /opt/gitlab/embedded/bin/python3; do
  p=$(command -v "$py" 2>/dev/null) || continue
  [ -f "$p" ] && [ -x "$p" ] || continue
  "$p" -E -s -S -c "$stub" "$h" "$@"
  rc=$?
  [ "$rc" -eq TOO_OLD ] || exit "$rc"
done
""".replace("TOO_OLD", str(TOO_OLD))
WITH_PYTHON_SH = PYTHON_SH + r"""find / -maxdepth 0 -printf '' >/dev/null 2>&1 || {
  echo "sitectl's files store needs python3 (3.7 or newer: its helper uses only the standard library) or GNU find in this container, and it has neither (BusyBox find has no -printf); install python3 in the image (Alpine: apk add python3), or run sitectl doctor for what the container offers" >&2
  exit 5; }
shift
"""
# The diff mode's GNU fallback: LIST_SH for each (live, listing, old listing) triple, one section
# each, ended by a line "@@" as the helper's.
DIFF_SH = "while [ $# -ge 3 ]; do\n(\n" + LIST_SH + "\n) || exit $?\necho @@\nshift 3\ndone\n"
FALLBACK_SH = {"snapshot": SNAPSHOT_SH, "diff": DIFF_SH, "check": CHECK_SH, "fingerprint": FINGERPRINT_SH,
               "restore": RESTORE_SH}


def helper_argv(mode: str, *args: str) -> list[str]:
    """The argv that runs the helper's ``mode`` with ``args`` inside a container (python3 when
    there is one, else the GNU find script; see :data:`WITH_PYTHON_SH`)."""
    return ["sh", "-c", WITH_PYTHON_SH + FALLBACK_SH[mode], "sh", STUB_PY, HELPER, mode, *args]


def _sections(out: str) -> list[str]:
    """The per-folder sections of a ``diff`` output (each ended by a line ``@@``)."""
    parts = out_lines(out)
    sections, cur = [], []
    for line in parts:
        if line.strip() == "@@":
            sections.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    return sections


def _records(out: str) -> list[str]:
    """The NUL-terminated records of a command's hex output (:data:`_HEX`), each decoded from
    UTF-8 with surrogate escapes (a byte that is not UTF-8 stays one character, and goes back
    into the container as the same byte)."""
    try:
        raw = bytes.fromhex("".join(out.split()))
    except ValueError:
        raise StoreError(f"a files command answered with something that is not what sitectl's helper prints "
                         f"(hex): {out.strip()[:200]!r}") from None
    parts = raw.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "surrogateescape") for p in parts]


def _arg(rel: str) -> str:
    """``rel`` as an argument that survives the trip into the container (the engine passes
    text, not bytes): every byte outside printable ASCII, and the backslash, as ``\\0ooo``
    (octal), which DEC_SH's ``printf %b`` turns back into the byte."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\0{b:03o}"
                   for b in rel.encode("utf-8", "surrogateescape"))


def shown(rel: str) -> str:
    """``rel`` for messages and fingerprint keys: printable, one line, and one-to-one (a
    backslash doubled; a byte that is not UTF-8 as ``\\xNN``; \\n, \\t and \\r as
    such; any other unprintable character as ``\\uXXXX`` or ``\\UXXXXXXXX``)."""
    out = []
    for ch in rel:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif not ch.isprintable():
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
        else:
            out.append(ch)
    return "".join(out)


def _parse_listing(records: list[str]) -> dict[str, tuple]:
    out = {}
    for rec in records:
        parts = rec.split("\t", 5)
        if len(parts) == 6:
            y, mode, owner, size, mtime, rel = parts
            out[rel] = (y, mode, owner, size if y == "f" else "", mtime)
    return out


class FilesStore(Store):
    """Folders inside one container.

    Args:
        paths: absolute folder paths (e.g. ``/var/www/magento2/pub/media``).
    """

    kind = "files"

    def __init__(self, site: str, transport: ExecTransport, paths: list[str]):
        super().__init__(site, "files:" + ",".join(paths))
        self.transport = transport
        self.paths = paths

    def _snap(self, name: str, i: int) -> str:
        return f"{ROOT}/{name}/{i}"

    def _list_file(self, name: str, i: int) -> str:
        return f"{ROOT}/{name}/{i}.list0"

    def _old_list_file(self, name: str, i: int) -> str:
        """The newline-separated listing of sitectl before 0.1.x (converted when first read)."""
        return f"{ROOT}/{name}/{i}.list"

    def exists(self, name: str) -> bool:
        rc, _ = self.transport.engine.exec(self.transport.container, [
            "sh", "-c", 'test -f "$1" || test -f "$2"', "sh", self._list_file(name, 0), self._old_list_file(name, 0)])
        return rc == 0

    def snapshot(self, name: str) -> dict:
        size = 0
        for i, p in enumerate(self.paths):
            out = self.transport.run(helper_argv("snapshot", p, self._snap(name, i), self._list_file(name, i),
                                                 self._old_list_file(name, i)), f"snapshot {p}")
            size += int((out_lines(out.strip()) or ["0"])[-1] or 0)
        return {"fingerprint": self.fingerprint(name), "size": size, "paths": self.paths}

    def detect_requests(self, name: str) -> list:
        # One command for all the folders: one interpreter start inside the container.
        return [self._diff_command(name, range(len(self.paths)))]

    def _diff_command(self, name: str, indices) -> Command:
        args = [a for i in indices for a in (self.paths[i], self._list_file(name, i), self._old_list_file(name, i))]
        return Command(helper_argv("diff", *args))

    @staticmethod
    def _diff_text(out: str) -> tuple[list[str], list[str], list[str], dict[str, tuple]]:
        """(changed or deleted, top-most added, folders whose own metadata changed, the recorded
        listing entry of each changed entry and folder) from the ``comm -3`` output of
        :data:`LIST_SH`. A deleted folder's content is missing too, so it is listed among the
        changed entries."""
        records = _records(out)
        live_only = _parse_listing([r for r in records if not r.startswith("\t")])
        base_only = _parse_listing([r[1:] for r in records if r.startswith("\t")])
        dirs = sorted(r for r, v in base_only.items() if v[0] == "d" and live_only.get(r, ("",))[0] == "d")
        changed = sorted(r for r in base_only if r not in dirs)
        # The folder itself ("") is listed for its own mode, owner and time; it is never
        # "added" (a listing recorded without it must not make a restore remove the folder).
        added = sorted(r for r in live_only if r not in base_only and r != "")
        # Keep only the top-most added entries (removing a folder removes its content).
        added_set = set(added)
        top = [r for r in added if not any(r[:i] in added_set for i in range(len(r)) if r[i] == "/")]
        return changed, top, dirs, {r: base_only[r] for r in changed + dirs}

    def _diff(self, name: str, i: int) -> tuple[list[str], list[str], list[str], dict[str, tuple]]:
        (res,) = self.transport.run_many([self._diff_command(name, [i]).argv], f"list {self.paths[i]}")
        return self._diff_text(self._checked(res, [i])[0])

    def _checked(self, res: tuple[int, str], indices: list[int]) -> list[str]:
        """The per-folder sections of a ``diff`` result over the folders ``indices``.

        Raises:
            StoreError: the command failed or answered with another number of sections.
        """
        rc, out = res
        where = ", ".join(self.paths[i] for i in indices)
        if rc != 0:
            raise StoreError(f"{self.site}: listing {where} failed (exit code {rc}): {out.strip()[-300:]}")
        sections = _sections(out)
        if len(sections) != len(indices):
            raise StoreError(f"{self.site}: listing {where}: {len(sections)} sections for {len(indices)} folders: "
                             f"{out.strip()[-300:]}")
        return sections

    def parse_changes(self, name: str, results: list[tuple[int, str]]) -> Changes:
        items, detail = [], {}
        (res,) = results
        for i, (p, text) in enumerate(zip(self.paths, self._checked(res, list(range(len(self.paths)))))):
            changed, added, dirs, recorded = self._diff_text(text)
            if changed or added or dirs:
                detail[i] = {"changed": changed, "added": added, "dirs": dirs, "recorded": recorded}
                items += [f"file {p}/{shown(r)} (changed or deleted)" for r in changed]
                items += [f"file {p}/{shown(r)} (added)" for r in added]
                items += [f"folder {p}/{shown(r)} (metadata)" for r in dirs if not changed and not added]
        return Changes(sorted(items), detail)

    def change_marks(self, changes: Changes) -> set[str]:
        # A path, whether changed, added or only its metadata: the same entry written again
        # is the same mark.
        return {f"{i}\t{r}" for i, d in changes.detail.items()
                for r in (*d["changed"], *d["added"], *d["dirs"])}

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        if changes is None:
            changes = Changes(["all"], {i: None for i in range(len(self.paths))})
        done = []
        for i, d in changes.detail.items():
            i = int(i)
            if d is None:  # full: the folder becomes the snapshot again
                changed, added, dirs, recorded = self._diff(name, i)
                d = {"changed": changed, "added": added, "dirs": dirs, "recorded": recorded}
            for cmd in self._restore_commands(name, i, d):
                self.transport.run(cmd.argv, f"restore {self.paths[i]}")
            done.append(self.paths[i])
        return done

    def check_requests(self, name: str, changes: Changes) -> list:
        """The listing of only what the restore touched (see :meth:`parse_check`)."""
        return [cmd for _, cmd in self._check_commands(changes)]

    def _check_commands(self, changes: Changes) -> list[tuple[int, Command]]:
        out = []
        for i, d in sorted(changes.detail.items(), key=lambda x: int(x[0])):
            paths = [_arg(f"./{r}") for r in d["added"] + d["changed"] + d["dirs"]]
            for chunk in _chunks(paths):
                out.append((int(i), Command(helper_argv("check", self.paths[int(i)], *chunk))))
        return out

    def parse_check(self, name: str, changes: Changes, results: list) -> list[str]:
        """What the restore left different, folder by folder: an added entry still there, or a
        changed, deleted or folder entry whose listing (type, mode, owner, size, time) is not
        the recorded one."""
        live: dict[int, dict[str, tuple]] = {}
        for (i, _), (rc, out) in zip(self._check_commands(changes), results):
            if rc != 0:
                return [f"{self.label}: check failed (exit code {rc}): {out.strip()[-200:]}"]
            # The check lists "./REL" (find's %p of the paths given): keyed as the detection's REL.
            live.setdefault(i, {}).update({(r[2:] if r.startswith("./") else r): v
                                           for r, v in _parse_listing(_records(out)).items()})
        left = []
        for i, d in changes.detail.items():
            p, seen = self.paths[int(i)], live.get(int(i), {})
            left += [f"file {p}/{shown(r)} (still there)" for r in d["added"] if r in seen]
            left += [f"file {p}/{shown(r)} (not restored)" for r in d["changed"] + d["dirs"]
                     if seen.get(r) != tuple(d["recorded"][r])]
        return sorted(left)

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if any(d is None for d in changes.detail.values()):
            return None
        return [cmd for i, d in changes.detail.items() for cmd in self._restore_commands(name, int(i), d)]

    def _restore_commands(self, name: str, i: int, d: dict) -> list[Command]:
        """The commands that put folder ``i`` back, given its differences ``d`` (from
        :meth:`_diff_text`): added entries removed, changed or deleted ones copied back from
        the snapshot (shallowest first), then folder times (deepest first)."""
        changed, added, dirs, rec = d["changed"], d["added"], d["dirs"], d["recorded"]
        ops = [f"rm:{_arg(r)}" for r in added]
        # Folders whose own mode or owner changed get them back ("dir"), then their times.
        ops += [f"{'dir' if r in dirs or rec[r][0] == 'd' else 'cp'}:{_arg(r)}"
                for r in sorted(changed + dirs, key=lambda x: (x.count("/"), x))]
        touched = set(dirs) | {x.rsplit("/", 1)[0] for x in changed + added if "/" in x}
        touched |= {r for r in changed if rec[r][0] == "d"}
        ops += [f"time:{_arg(r)}" for r in sorted(touched, key=lambda x: -x.count("/"))]
        return [Command(helper_argv("restore", self.paths[i], self._snap(name, i), *chunk)) for chunk in _chunks(ops)]

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        out = {}
        for i, p in enumerate(self.paths):
            folder = self._snap(name, i) if name else p
            text = self.transport.run(helper_argv("fingerprint", folder), f"fingerprint {p}")
            records = iter(_records(text))
            for rec in records:
                kind, _, rest = rec.partition(" ")
                if kind == "f":
                    digest, rel = rest[:64], rest[66:]
                elif kind == "l":
                    digest, rel = shown(next(records, "")), rest
                else:  # d MODE PATH, r SHA256 PATH
                    digest, _, rel = rest.partition(" ")
                rel = rel[2:] if rel.startswith("./") else rel
                label = {"f": "file", "l": "link", "d": "folder", "r": "repo refs"}.get(kind, kind)
                out[f"{label} {p}/{shown(rel)}"] = digest
        return out

    def drop(self, name: str) -> None:
        self.transport.run(["rm", "-rf", f"{ROOT}/{name}"], f"drop snapshot {name}")

    def export_payload(self, name: str, stage: str) -> str | None:
        out = f"{stage}/files.tar"
        self.transport.run(["tar", "-C", f"{ROOT}/{name}", "-cf", out, "."], f"{self.label} export")
        return out

    def import_payload(self, name: str, path: str, original: str) -> None:
        self.transport.run(["rm", "-rf", f"{ROOT}/{name}"], "drop old snapshot")
        self.transport.run(["mkdir", "-p", f"{ROOT}/{name}"], "make snapshot folder")
        # --no-same-owner is not wanted: uploads keep their owners (www-data, git).
        self.transport.run(["tar", "-C", f"{ROOT}/{name}", "-xpf", path], f"{self.label} import")


def _chunks(ops: list[str]):
    return budget_chunks(ops, _ARG_BUDGET)
