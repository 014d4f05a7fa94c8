"""Files store: folders inside the container (uploads, sessions, git repositories).

* **Snapshot** ``NAME`` copies each folder (as ``cp -a`` would, with nanosecond times) to
  ``/var/lib/sitectl/snapshots/files/NAME/<n>/`` and records a listing of it (type, mode,
  owner, size, modification time: nanoseconds with the helper, seconds plus content hashes
  with the sh way; path) next to the copy.
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
``python3 -c`` text, which keeps nanosecond times where BusyBox's ``cp -a`` keeps whole
seconds; in a container without python3 3.7 or newer, through :mod:`sitectl.stores.files_sh`,
the same modes as a BusyBox-safe POSIX ``sh`` program (whole seconds, and content hashes where
a second is not enough). Which of the two a container gets is detected once, by the first files
command that runs in it, and recorded inside it (:data:`RECORD`: ``python PATH`` or ``sh``);
every later command reads the record in the same ``docker exec`` (no extra round trip), a
snapshot's manifest entry names it (``way``), and ``sitectl doctor`` shows it. With neither
python3 nor the sh way's tools, the in-container command exits ``NO_WAY_IN`` (5) naming what
to install, and a record naming a python3 that is gone ``STALE_RECORD`` (6); the store raises
:class:`~sitectl.errors.StoreError` (sitectl exits 9).

No shell command is ever built from input: fixed scripts take paths as arguments.
"""
from __future__ import annotations

import re
from pathlib import Path

from sitectl.errors import StoreError
from sitectl.stores import files_helper, files_sh
from sitectl.stores.base import LIST_NAMES_SH, Changes, DiffLimits, Store, valid_names
from sitectl.stores.transport import Command, ExecTransport, budget_chunks, out_lines

ROOT = "/var/lib/sitectl/snapshots/files"
#: Where checkpoints keep their files (``<CKPT_ROOT>/<checkpoint>/<folder index>/``).
CKPT_ROOT = "/var/lib/sitectl/checkpoints/files"
#: Removes the folder "$1" (below /var/lib/sitectl) after checking that no folder on its way from
#: /var/lib/sitectl is a symbolic link or a file (one planted there is refused, never followed);
#: with "$2" = make, makes it again, private (0700).
CKPT_FOLDER_SH = ('t=$1; cur=/var/lib; rest=${t#/var/lib/}; [ "$rest" != "$t" ] || { echo "$t is not below /var/lib" >&2; '
                  'exit 1; }; while [ -n "$rest" ]; do part=${rest%%/*}; cur=$cur/$part; '
                  '[ "$part" = "$rest" ] && rest="" || rest=${rest#*/}; if [ -h "$cur" ]; then echo "$cur is a symbolic '
                  'link where sitectl\'s folder belongs: refused, not followed" >&2; exit 1; fi; if [ -e "$cur" ] && '
                  '[ ! -d "$cur" ]; then echo "$cur is not a folder: refused" >&2; exit 1; fi; done; rm -rf -- "$t" || '
                  'exit 1; [ "$2" != make ] || (' + files_sh.PRIVATE_FOLDER_SH + ')')
#: The container's userland record: ``python PATH`` or ``sh``, one line, written by the first
#: files command that runs in the container (see :data:`WAY_SH`).
RECORD = "/var/lib/sitectl/userland"
_ARG_BUDGET = 100_000  # bytes of paths per exec (Linux caps one argument at 128 KiB)

#: The helper program's text (stdlib only; see its docstring).
HELPER = Path(files_helper.__file__).read_text(encoding="utf-8")
#: Exit code of a files command in a container with neither python3 3.7+ nor the tools the sh
#: way needs.
NO_WAY_IN = 5
#: Exit code of a files command whose container's userland record names a python3 that is gone.
STALE_RECORD = 6
#: The tools the sh way runs (BusyBox applets on the Alpine images).
SH_TOOLS = ("find", "stat", "sha256sum", "od", "awk", "tr", "sed", "cut", "cp", "rm", "mkdir", "mv", "touch",
            "timeout", "tail", "wc", "dirname", "chmod", "chown", "readlink", "date", "du")

#: Where the helpers look for a python3, in order: PATH's, then GitLab's omnibus one (its only
#: python3; research/real-images.md, section 1.7).
PYTHONS = "python3 /opt/gitlab/embedded/bin/python3"

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

# $1 = the stub, $2 = a helper's text, then the mode and its arguments. Runs the helper with the
# first executable python3 that is 3.7 or newer (PATH's, then GitLab's embedded one) and exits
# with its code; what follows PYTHON_SH runs only when there is none. The Elasticsearch store's
# way in (its helper has no sh twin).
PYTHON_SH = r"""
stub=$1; h=$2; shift 2
for py in PYTHONS; do
  p=$(command -v "$py" 2>/dev/null) || continue
  [ -f "$p" ] && [ -x "$p" ] || continue
  "$p" -E -s -S -c "$stub" "$h" "$@"
  rc=$?
  [ "$rc" -eq TOO_OLD ] || exit "$rc"
done
""".replace("TOO_OLD", str(TOO_OLD)).replace("PYTHONS", PYTHONS)

# $1 = the stub, $2 = the helper's text, $3 = the sh way's program, $4 = the userland record,
# then the mode and its arguments. The way is detected once per container and recorded in $4
# (``python PATH``: the first executable python3 3.7+ of PATH's and GitLab's embedded one, which
# the helper's ``probe`` mode proves; else ``sh``, when every tool of SH_TOOLS is there); every
# later command reads the record and takes the same way, so a snapshot and its later diffs
# never mix ways. A record naming a python3 that is gone is an error, not a silent change of
# way. The modes ``snapshot`` and ``probe`` print the way first (``@way WAY PATH``).
WAY_SH = r"""
stub=$1; h=$2; prog=$3; rec=$4; shift 4
way=; wpy=
[ -f "$rec" ] && { IFS=' ' read -r way wpy < "$rec" || :; }
case $way in
  python)
    if [ ! -f "$wpy" ] || [ ! -x "$wpy" ]; then
      echo "sitectl's files store: this container's userland record ($rec) names $wpy, which is no longer an executable python3; remove the record to detect again (docker exec CONTAINER rm $rec), then take the snapshot again" >&2
      exit STALE; fi ;;
  sh) ;;
  *)
    way=
    for py in PYTHONS; do
      p=$(command -v "$py" 2>/dev/null) || continue
      [ -f "$p" ] && [ -x "$p" ] || continue
      if "$p" -E -s -S -c "$stub" "$h" probe >/dev/null 2>&1; then way=python; wpy=$p; break; fi
    done
    if [ -z "$way" ]; then
      missing=
      for t in TOOLS; do command -v "$t" >/dev/null 2>&1 || missing="$missing $t"; done
      if [ -n "$missing" ]; then
        echo "sitectl's files store needs python3 (3.7 or newer: its helper uses only the standard library) or, for its sh way, these tools, which this container lacks:$missing; install python3 in the image (Alpine: apk add python3), or run sitectl doctor for what the container offers" >&2
        exit NO_WAY; fi
      way=sh; wpy=
    fi
    { mkdir -p -- "${rec%/*}" && printf '%s\n' "$way${wpy:+ $wpy}" > "$rec.$$" && mv -f -- "$rec.$$" "$rec"; } 2>/dev/null \
      || rm -f -- "$rec.$$" 2>/dev/null ;;
esac
case $1 in snapshot|probe) printf '@way %s %s\n' "$way" "$wpy" ;; esac
[ "$way" = python ] && exec "$wpy" -E -s -S -c "$stub" "$h" "$@"
[ "$1" = probe ] && exit 0
exec sh -c "$prog" sh "$prog" "$@"
""".replace("STALE", str(STALE_RECORD)).replace("NO_WAY", str(NO_WAY_IN)).replace("TOOLS", " ".join(SH_TOOLS)) \
    .replace("PYTHONS", PYTHONS)
#: The modes both ways offer (``probe`` only detects, records and prints the way).
MODES = ("snapshot", "diff", "check", "fingerprint", "restore", "probe")


def helper_argv(mode: str, *args: str, record: str = RECORD) -> list[str]:
    """The argv that runs the files store's ``mode`` with ``args`` inside a container: the
    python3 helper or the sh way, whichever the container's userland ``record`` (a path inside
    it) names; the first command in a container detects and records it (:data:`WAY_SH`)."""
    if mode not in MODES:
        raise ValueError(f"unknown files store mode {mode!r}")
    return ["sh", "-c", WAY_SH, "sh", STUB_PY, HELPER, files_sh.PROGRAM, record, mode, *args]


def parse_way(out: str) -> tuple[str, str]:
    """``(way, python3 path or "")`` from the ``@way`` line a ``snapshot`` or ``probe`` printed
    (``("", "")`` when there is none)."""
    for line in out_lines(out):
        if line.startswith("@way "):
            way, _, path = line[5:].strip().partition(" ")
            return way, path.strip()
    return "", ""


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
    """The NUL-terminated records of a command's hex output (``od -An -v -tx1``), each decoded from
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
    (octal), which the sh way's ``dec`` (``printf %b``) and the helper's ``unescape`` turn back
    into the byte. The sh way's ``enc`` escapes its records' names the same way."""
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


def _unarg(text: str) -> str:
    """The inverse of :func:`_arg`: ``\\0ooo`` escapes back to their bytes."""
    if "\\" not in text:
        return text
    raw = text.encode("utf-8", "surrogateescape")
    return re.sub(rb"\\0([0-7]{3})", lambda m: bytes([int(m.group(1), 8) & 0xFF]), raw).decode(
        "utf-8", "surrogateescape")


def _parse_listing(records: list[str]) -> dict[str, tuple]:
    """``{REL: (TYPE, MODE, OWNER, SIZE of a file or "", MTIME)}`` of listing records. The sh
    way's records (MTIME without a dot: whole seconds) carry REL escaped; the helper's carry it
    as it is."""
    out = {}
    for rec in records:
        parts = rec.split("\t", 5)
        if len(parts) == 6:
            y, mode, owner, size, mtime, rel = parts
            if "." not in mtime:
                rel = _unarg(rel)
            out[rel] = (y, mode, owner, size if y == "f" else "", mtime)
    return out


#: ``sh -c`` script of a diff: for each argument (a path relative to both folders, escaped as
#: :func:`_arg` does), one line per folder ("$1" live, "$2" the snapshot's copy): ``f SIZE SHA256``
#: of a regular file, ``l`` a symbolic link (not followed), ``d`` a folder, ``o`` anything else,
#: ``-`` nothing there. Only regular files are read, and only the entries a diff lists.
DIFF_STAT_SH = r"""live=$1; gold=$2; shift 2
for a; do
  rel=$(printf '%bx' "$a"); rel=${rel%x}
  for side in "$live" "$gold"; do
    f="$side${rel:+/$rel}"
    if [ -h "$f" ]; then echo l
    elif [ -f "$f" ]; then printf 'f %s %s\n' "$(wc -c < "$f" | tr -d ' ')" "$(sha256sum < "$f" | cut -d ' ' -f 1)"
    elif [ -d "$f" ]; then echo d
    elif [ -e "$f" ]; then echo o
    else echo -
    fi
  done
done"""


def _side(line: str) -> dict | None:
    """A line of :data:`DIFF_STAT_SH` as a diff entry's ``now`` or ``was`` (None: absent)."""
    parts = line.split()
    kind = {"f": "file", "l": "link", "d": "folder", "o": "other"}.get(parts[0] if parts else "-")
    if kind is None:
        return None
    if kind == "file":
        if len(parts) != 3 or not parts[1].isdigit() or not re.fullmatch(r"[0-9a-f]{64}", parts[2]):
            raise StoreError(f"a file's size and SHA-256 could not be read: {line.strip()[:200]!r}")
        return {"type": kind, "size": int(parts[1]), "sha256": parts[2]}
    return {"type": kind}


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
        """Copy every folder as ``name``; the result names the way the container's userland
        record chose (``way``: ``python /path/to/python3`` or ``sh``)."""
        size, way = 0, ""
        for i, p in enumerate(self.paths):
            out = self.transport.run(helper_argv("snapshot", p, self._snap(name, i), self._list_file(name, i),
                                                 self._old_list_file(name, i)), f"snapshot {p}")
            way = " ".join(x for x in parse_way(out) if x)  # one container, one recorded way
            size += int(([x for x in out_lines(out.strip()) if not x.startswith("@way ")] or ["0"])[-1] or 0)
        return {"fingerprint": self.fingerprint(name), "size": size, "paths": self.paths, "way": way}

    def detect_requests(self, name: str) -> list:
        # One command for all the folders: one interpreter start inside the container.
        return [self._diff_command(name, range(len(self.paths)))]

    def _diff_command(self, name: str, indices) -> Command:
        args = [a for i in indices for a in (self.paths[i], self._list_file(name, i), self._old_list_file(name, i))]
        return Command(helper_argv("diff", *args))

    @staticmethod
    def _diff_text(out: str) -> tuple[list[str], list[str], list[str], dict[str, tuple]]:
        """(changed or deleted, top-most added, folders whose own metadata changed, the recorded
        listing entry of each changed entry and folder) from a ``diff`` section (the records
        only the live folder has, and, after a tab, those only the listing has). A deleted
        folder's content is missing too, so it is listed among the changed entries. An entry
        added below a changed entry that was no folder (a file replaced by a folder with
        content) is not listed: replacing the changed entry removes it."""
        records = _records(out)
        live_only = _parse_listing([r for r in records if not r.startswith("\t")])
        base_only = _parse_listing([r[1:] for r in records if r.startswith("\t")])
        dirs = sorted(r for r, v in base_only.items() if v[0] == "d" and live_only.get(r, ("",))[0] == "d")
        changed = sorted(r for r in base_only if r not in dirs)
        # The folder itself ("") is listed for its own mode, owner and time; it is never
        # "added" (a listing recorded without it must not make a restore remove the folder).
        added = sorted(r for r in live_only if r not in base_only and r != "")
        # Keep only the top-most added entries (removing a folder removes its content).
        replaced = set(added) | {r for r in changed if base_only[r][0] != "d"}
        top = [r for r in added if not any(r[:i] in replaced for i in range(len(r)) if r[i] == "/")]
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

    def diff(self, name: str, changes: Changes, limits: DiffLimits) -> dict:
        """Files and folders added, removed or changed since snapshot ``name`` (docs/diff.md):
        each with what is there now and what the snapshot holds (type; a regular file's size
        in bytes and SHA-256), read inside the container (links are not followed; only the
        first ``limits.entries`` entries per store are read). ``metadata``: a folder whose own
        mode, owner or time changed."""
        entries, total = [], 0
        for i, det in sorted((changes.detail or {}).items()):
            p = self.paths[int(i)]
            todo = ([(r, "changed") for r in det["changed"]] + [(r, "added") for r in det["added"]]
                    + [(r, "metadata") for r in det["dirs"]])
            total += len(todo)
            todo = todo[:max(0, limits.entries - len(entries))]
            lines: list[str] = []
            for chunk in budget_chunks([_arg(r) for r, _ in todo], 60_000):
                lines += out_lines(self.transport.run(["sh", "-c", DIFF_STAT_SH, "sh", p, self._snap(name, int(i)), *chunk],
                                                      f"read changed files of {p}", timeout=300))
            if len(lines) != 2 * len(todo):
                raise StoreError(f"{self.site}: reading the changed files of {p}: {len(lines)} lines for "
                                 f"{len(todo)} entries: {' | '.join(lines[-4:])[-300:]}")
            for j, (rel, kind) in enumerate(todo):
                now, was = (_side(x) for x in lines[2 * j:2 * j + 2])
                change = "removed" if kind == "changed" and now is None else kind
                entries.append({"path": f"{p}/{shown(rel)}" if rel else p, "change": change, "now": now, "was": was})
        return {"items": list(changes.items), "files": entries, "truncated": total > len(entries)}

    def _stat_sides(self, folder: str, source: str, rels: list[str]) -> list[tuple[dict | None, dict | None]]:
        """``(now, in source)`` of each entry ``rels`` of ``folder``, read inside the container by
        :data:`DIFF_STAT_SH` (type; a regular file's size and SHA-256; links not followed)."""
        lines: list[str] = []
        for chunk in budget_chunks([_arg(r) for r in rels], 60_000):
            lines += out_lines(self.transport.run(["sh", "-c", DIFF_STAT_SH, "sh", folder, source, *chunk],
                                                  f"read changed files of {folder}", timeout=300))
        if len(lines) != 2 * len(rels):
            raise StoreError(f"{self.site}: reading the changed files of {folder}: {len(lines)} lines for "
                             f"{len(rels)} entries: {' | '.join(lines[-4:])[-300:]}")
        return [(_side(lines[2 * j]), _side(lines[2 * j + 1])) for j in range(len(rels))]

    def diff_checkpoint(self, ckpt: str, entry: dict, golden: str, changes: Changes, limits: DiffLimits) -> dict:
        """Files added, removed or changed since checkpoint ``ckpt`` (``entry``: this store's
        entry of its record), in :meth:`diff`'s terms: every entry that differs from golden now
        or differed at the checkpoint (those below an added folder too), what is there now and
        what the checkpoint holds (golden's copy where it holds nothing); an entry the same on
        both sides (type, size, SHA-256) is left out, as is a folder's own metadata."""
        (res,) = self.transport.run_many([self._diff_command(golden, range(len(self.paths))).argv], "list changes")
        # Every entry that differs from golden now, on either side of the listing.
        now = {i: set(_parse_listing([r.removeprefix("\t") for r in _records(text)]))
               for i, text in enumerate(self._checked(res, list(range(len(self.paths)))))}
        then: dict[int, set[str]] = {}
        for k in entry.get("listed") or {}:
            i, _, rel = k.partition("\t")
            then.setdefault(int(i), set()).add(rel)
        folders = entry.get("folders") or {}
        entries, total = [], 0
        for i, p in enumerate(self.paths):
            e = folders.get(str(i)) or {"present": [], "absent": [], "folders": []}
            held = set(e["present"]) | set(e["absent"])

            def in_ckpt(rel: str) -> bool:
                return rel in held or rel in then.get(i, set()) or any(rel.startswith(h + "/") for h in e["present"])
            todo = sorted(r for r in now.get(i, set()) | then.get(i, set()) | held if r)
            total += len(todo)
            todo = todo[:max(0, limits.entries - len(entries))]
            mine = [r for r in todo if in_ckpt(r)]
            rest = [r for r in todo if not in_ckpt(r)]
            sides = dict(zip(mine, self._stat_sides(p, self._ckpt(ckpt, i), mine))) if mine else {}
            sides.update(dict(zip(rest, self._stat_sides(p, self._snap(golden, i), rest))) if rest else {})
            for rel in todo:
                n, w = sides[rel]
                if n == w:
                    continue
                change = "added" if w is None else "removed" if n is None else "changed"
                entries.append({"path": f"{p}/{shown(rel)}", "change": change, "now": n, "was": w})
        return {"items": list(changes.items), "files": entries, "truncated": total > len(entries)}

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
        return [cmd for _, cmd in self._check_commands(name, changes)]

    def _check_commands(self, name: str, changes: Changes) -> list[tuple[int, Command]]:
        out = []
        for i, d in sorted(changes.detail.items(), key=lambda x: int(x[0])):
            paths = [_arg(f"./{r}") for r in d["added"] + d["changed"] + d["dirs"]]
            for chunk in _chunks(paths):
                out.append((int(i), Command(helper_argv("check", self.paths[int(i)], self._list_file(name, int(i)),
                                                        *chunk))))
        return out

    def parse_check(self, name: str, changes: Changes, results: list) -> list[str]:
        """What the restore left different, folder by folder: an added entry still there, or a
        changed, deleted or folder entry whose listing (type, mode, owner, size, time) is not
        the recorded one."""
        live: dict[int, dict[str, tuple]] = {}
        for (i, _), (rc, out) in zip(self._check_commands(name, changes), results):
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

    # -- checkpoints (docs/checkpoints.md) ------------------------------------------------
    def _ckpt(self, ckpt: str, i: int) -> str:
        return f"{CKPT_ROOT}/{ckpt}/{i}"

    @staticmethod
    def _ancestors(rels: list[str]) -> list[str]:
        """The folders above ``rels`` (relative paths), the folder itself (``""``) left out."""
        out = set()
        for r in rels:
            parts = r.split("/")[:-1]
            out |= {"/".join(parts[:j]) for j in range(1, len(parts) + 1)}
        return sorted(out)

    @staticmethod
    def _ckpt_ops(present: list[str], absent: list[str], folders: list[str]) -> list[str]:
        """The helper's restore operations that make a folder's entries ``present`` those of the
        source folder and remove ``absent``: ``folders`` (the entries' parents and the folders
        whose own metadata changed) made and given their mode and owner, shallowest first; each
        entry copied (not again below an entry already copied); the folders' times, deepest
        first, once their content is in place."""
        def depth(x: str) -> tuple:
            return (x.count("/"), x)
        copied: list[str] = []
        for r in sorted(present, key=depth):
            if not any(r.startswith(c + "/") for c in copied):
                copied.append(r)
        return ([f"rm:{_arg(r)}" for r in sorted(absent, key=depth)]
                + [f"dir:{_arg(r)}" for r in sorted(folders, key=depth)]
                + [f"cp:{_arg(r)}" for r in copied]
                + [f"time:{_arg(r)}" for r in sorted(folders, key=lambda x: (-x.count("/"), x)) if r])

    def checkpoint_refusal(self, changes: Changes) -> str:
        return "" if self.diffable(changes) else "no record of golden (" + "; ".join(changes.items[:2]) + ")"

    def checkpoint_save(self, ckpt: str, golden: str, changes: Changes) -> dict:
        """Checkpoint ``ckpt`` in ``/var/lib/sitectl/checkpoints/files/CKPT/<n>/``: per folder,
        the entries changed or added since golden as they are now (copied with the restore's
        helper, live folder as its source: nanosecond times, owners, modes, links as links),
        the folders above them with their mode, owner and times, and the list of entries that
        are gone (kept in the checkpoint record)."""
        self.transport.run(["sh", "-c", CKPT_FOLDER_SH, "sh", f"{CKPT_ROOT}/{ckpt}"], f"checkpoint {ckpt}")
        entry: dict[str, dict] = {}
        for i, d in sorted((changes.detail or {}).items(), key=lambda x: int(x[0])):
            i = int(i)
            p = self.paths[i]
            candidates = sorted(set(d["changed"]) | set(d["added"]))
            present: set[str] = set()
            for chunk in _chunks([_arg(f"./{r}") for r in candidates]):
                out = self.transport.run(helper_argv("check", p, self._list_file(golden, i), *chunk), f"list {p}")
                present |= {(r[2:] if r.startswith("./") else r) for r in _parse_listing(_records(out))}
            absent = sorted(r for r in d["changed"] if r not in present)
            kept = sorted(r for r in candidates if r in present)
            # The folders above what is kept or gone, as they are now: never one that is gone itself.
            gone = set(absent)
            folders = sorted(f for f in set(self._ancestors(kept + absent)) | set(d["dirs"])
                             if f not in gone and not any(f.startswith(g + "/") for g in gone))
            self.transport.run(["sh", "-c", CKPT_FOLDER_SH, "sh", self._ckpt(ckpt, i), "make"], f"checkpoint {ckpt}")
            for chunk in _chunks(self._ckpt_ops(kept, [], folders)):
                self.transport.run(helper_argv("restore", self._ckpt(ckpt, i), p, *chunk), f"checkpoint {p}")
            entry[str(i)] = {"present": kept, "absent": absent, "folders": folders}
        # What the restore's closing check compares: every entry that differs from golden, with
        # its listing (type, mode, owner, size, time), read now; the detection reads the same.
        (res,) = self.transport.run_many([self._diff_command(golden, range(len(self.paths))).argv], "list changes")
        listed = self._live_records(res)
        # And the bytes of every regular file among them (a copy edited in the container keeping
        # its size and time is caught too).
        hashed: dict[str, dict] = {}
        for i, rels in self._regular(listed).items():
            hashed.update({f"{i}\t{r}": now for r, (now, _) in
                           zip(rels, self._stat_sides(self.paths[i], self._ckpt(ckpt, i), rels))})
        return {"folders": entry, "listed": listed, "hashed": hashed}

    @staticmethod
    def _regular(listed: dict[str, list]) -> dict[int, list[str]]:
        """``{folder index: [path]}`` of the regular files among ``listed`` (its keys
        ``"<index>\\t<path>"``, its values listings whose first field is the type)."""
        out: dict[int, list[str]] = {}
        for k, v in sorted(listed.items()):
            i, _, rel = k.partition("\t")
            if v and v[0] == "f" and rel:
                out.setdefault(int(i), []).append(rel)
        return out

    def checkpoint_check_requests(self, ckpt: str, entry: dict) -> list:
        """The size and SHA-256 of each regular file the save hashed, read live (the copy's side
        is read too and ignored)."""
        out = []
        for i, rels in self._regular({k: ["f"] for k in entry.get("hashed") or {}}).items():
            out += [Command(["sh", "-c", DIFF_STAT_SH, "sh", self.paths[i], self._ckpt(ckpt, i), *chunk])
                    for chunk in budget_chunks([_arg(r) for r in rels], 60_000)]
        return out

    def _live_records(self, res: tuple[int, str]) -> dict[str, list]:
        """``{"<folder index>\\t<path>": listing}`` of every live entry a ``diff`` result over all
        the folders lists as differing from the snapshot (those below an added folder too)."""
        out = {}
        for i, text in enumerate(self._checked(res, list(range(len(self.paths))))):
            live = _parse_listing([r for r in _records(text) if not r.startswith("\t")])
            out.update({f"{i}\t{r}": list(v) for r, v in live.items()})
        return out

    def checkpoint_check(self, entry: dict, results: list, detected: list) -> list[str]:
        # The detection of the same round trip lists every live entry that differs from golden.
        try:
            got = self._live_records(detected[0])
        except (StoreError, IndexError) as e:
            return [f"listing failed: {e}"]
        want = entry.get("listed") or {}
        out = [f"file {self.paths[int(k.split(chr(9), 1)[0])]}/{shown(k.split(chr(9), 1)[1])}"
               for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k)]
        hashed = entry.get("hashed") or {}
        keys = [f"{i}\t{r}" for i, rels in self._regular({k: ["f"] for k in hashed}).items() for r in rels]
        if any(rc != 0 for rc, _ in results):
            return [*out, "reading the files' bytes failed: " + " | ".join(t.strip()[-200:] for rc, t in results if rc)]
        lines = [ln for _, text in results for ln in out_lines(text)]
        if len(lines) != 2 * len(keys):
            return [*out, f"reading the files' bytes: {len(lines)} lines for {len(keys)} files"]
        for j, k in enumerate(keys):
            try:
                now = _side(lines[2 * j])
            except StoreError:
                now = None
            if now != hashed[k]:
                out.append(f"file {self.paths[int(k.split(chr(9), 1)[0])]}/{shown(k.split(chr(9), 1)[1])} (its bytes)")
        return out

    def checkpoint_apply_requests(self, ckpt: str, golden: str, entry: dict) -> list:
        """Per folder, the helper's restore from the checkpoint's copy: the entries gone at the
        checkpoint removed, its entries copied in, the folders above them given the
        checkpoint's mode, owner and times."""
        out = []
        for i, e in sorted((entry.get("folders") or {}).items(), key=lambda x: int(x[0])):
            ops = self._ckpt_ops(e["present"], e["absent"], e["folders"])
            out += [Command(helper_argv("restore", self.paths[int(i)], self._ckpt(ckpt, int(i)), *chunk))
                    for chunk in _chunks(ops)]
        return out

    def checkpoint_drop(self, ckpt: str) -> None:
        self.transport.run(["sh", "-c", CKPT_FOLDER_SH, "sh", f"{CKPT_ROOT}/{ckpt}"], f"drop checkpoint {ckpt}")

    def checkpoint_held(self) -> set[str]:
        out = self.transport.run(["sh", "-c", LIST_NAMES_SH, "sh", CKPT_ROOT, ""], "list checkpoint copies")
        return valid_names(out.splitlines())

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

    def held(self) -> set[str]:
        out = self.transport.run(["sh", "-c", LIST_NAMES_SH, "sh", ROOT, ""], "list snapshot copies")
        return valid_names(out.splitlines())

    def export_payload(self, name: str, stage: str) -> str | None:
        out = f"{stage}/files.tar"
        self.transport.run(["tar", "-C", f"{ROOT}/{name}", "-cf", out, "."], f"{self.label} export")
        return out

    def import_payload(self, name: str, path: str, original: str) -> None:
        self.transport.run(["rm", "-rf", f"{ROOT}/{name}"], "drop old snapshot")
        # As a snapshot makes it: /var/lib/sitectl 0755, the snapshots' folders root's alone (0700).
        self.transport.run(["sh", "-c", files_sh.PRIVATE_FOLDER_SH, "sh", f"{ROOT}/{name}"], "make snapshot folder")
        # --no-same-owner is not wanted: uploads keep their owners (www-data, git).
        self.transport.run(["tar", "-C", f"{ROOT}/{name}", "-xpf", path], f"{self.label} import")


def _chunks(ops: list[str]):
    return budget_chunks(ops, _ARG_BUDGET)
