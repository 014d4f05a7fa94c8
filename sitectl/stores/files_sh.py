"""The files store's sh way: the helper's five working modes (:mod:`sitectl.stores.files_helper`;
``probe`` is :data:`sitectl.stores.files.WAY_SH`'s), as one
POSIX ``sh`` program for a container that has no python3 3.7 or newer.

It uses only what BusyBox 1.35 offers on WebArena's Alpine 3.16 images and GNU offers
everywhere else (research/real-images.md, section 1.7: ``find`` with ``-path``, ``-newer``,
``-exec ... +`` but no ``-printf``; ``stat -c`` with ``%F %a %u %g %s %Y %n`` in whole
seconds; ``sha256sum``, ``od``, ``awk``, ``tr``, ``sed``, ``cut``, ``cp -a``, ``touch -h -r``,
``touch -d @SECONDS``, ``touch -r`` (nanoseconds), ``du -sb``, ``date +%s``). Nothing GNU-only: no ``find -printf``,
``comm``, ``sort -z``, ``sha256sum -z``, ``sed -z``, ``grep -P``, ``date +%N``, ``flock``.
``tests/stores/test_files_helper.py`` runs it on a PATH of BusyBox applets only and on GNU's.

**Whole seconds, then content.** ``stat`` gives whole seconds here, so a file rewritten with the
same size within the second its snapshot was taken would look unchanged. A listing therefore
records the second ``T`` its snapshot began (its first line, ``#sitectl-sh-listing T``) and,
for every regular file whose modification second is ``T`` or later (git calls them "racy"),
the SHA-256 of its content beside the time (``S+SHA256``). The diff applies the same rule to the
live file with the same ``T``, so such a file is compared by content. A file whose second is
before ``T`` and that changes later gets a later second: its time shows the change. What this
cannot see is content that arrives with an old second of the same size: a write that sets the
time back by hand (``touch -d``), or a file moved in by ``mv``, ``cp -p``, ``tar x`` or
``rsync -t`` over another of the same size and second (two such files swapped); the python3
helper's nanoseconds see most of that. A folder's time is compared to the second (an
entry added or removed is seen by itself). A symlink's time is not recorded (BusyBox's
``touch`` sets it to the second only): its MTIME is ``-+SHA256`` of its target.

Copies keep nanosecond times all the same: after each ``cp -a`` (whole seconds in BusyBox), a
``touch -r`` per entry puts the source's times on the copy.

**Records.** One line per entry, ``TYPE MODE UID:GID SIZE MTIME REL`` tab-separated (the
helper's fields; MTIME ``S``, ``S+SHA256`` or a symlink's ``-+SHA256``, never with a dot, which is how the host tells
them from the helper's), REL escaped as :func:`sitectl.stores.files._arg` escapes an argument
(every byte outside printable ASCII, and the backslash, as ``\\0ooo``), so a record is one line
whatever the name. What goes back to the host is NUL-terminated records as hex (``od``), as the
helper prints them. Names that need escaping cost a ``stat`` and an ``od`` each; every other
entry is listed by one ``stat`` per ``find -exec ... +`` batch.

Differences from the helper, besides the seconds: a file that changes while the snapshot copies
it is not copied again (the jobs are paused, web requests are not); a folder swapped for a
symlink while a restore runs may be followed (a restore refuses a symlink it finds on the way
beforehand and removes one in a folder's place; ``find`` never follows one while listing); a
symlink's
own time is kept to the second and not compared (its target is); a restore copies hard links
within a folder as separate files (link counts are not compared); a snapshot costs a ``touch``
per entry, a name that needs escaping or a symlink a few processes (far slower than the helper
on large folders).

A listing is written as a stream (``find`` into ``awk``, no scratch file) ending in
``#n COUNT``; a snapshot reads it back and fails unless the trailer counts every line (a full
disk), and a diff refuses a listing without it (exit 4).

Called as ``sh -c PROGRAM sh PROGRAM MODE ARGS...`` (the program passes its own text to the
``sh -c`` it starts from ``find -exec``); :data:`sitectl.stores.files.WAY_SH` does that when
the container's userland record says ``sh``.
"""
from __future__ import annotations

#: ``enc NAME`` sets ``$e`` to NAME escaped as :func:`sitectl.stores.files._arg` escapes it (every
#: byte outside printable ASCII, and the backslash, as ``\\0ooo``); ``dec ARG`` sets ``$r`` to
#: ARG with those escapes turned back into bytes (``printf %b``). Names without a backslash or
#: an unprintable byte cost no subshell either way.
ENC_SH, DEC_SH = (r"""enc() {
  case $1 in
    *[!\ -~]*|*\\*) e=$(printf %s "$1" | od -An -v -tu1 | awk '{ for (i = 1; i <= NF; i++) { b = $i + 0
        if (b >= 32 && b < 127 && b != 92) printf "%c", b; else printf "\\0%03o", b } }') ;;
    *) e=$1 ;;
  esac
}
""", r"""
dec() { case $1 in *\\*) r=$(printf '%bx' "$1"); r=${r%x} ;; *) r=$1 ;; esac; }

""")

#: The program (see the module's docstring). ``_stat``, ``_hash``, ``_fhash``, ``_flink`` and
#: ``_fdir`` are the internal modes its ``find -exec`` children run.
PROGRAM = r"""
self=$1; mode=$2; shift 2
export LC_ALL=C
MAGIC='#sitectl-sh-listing'

ENC_DEC
# link NAME: $t = the target of the symlink NAME, exactly (a trailing newline kept).
link() { t=$(readlink -- "$1" && echo x) || return 1; t=${t%x}; t=${t%?}; }
# filehash NAME: $h = the SHA-256 of the regular file NAME (sha256sum opens it, under a timeout:
# a FIFO swapped in never hangs the shell; GNU's puts a backslash before the hash of a name it
# escapes). linkhash NAME: $h = the SHA-256 of the symlink NAME's target.
filehash() {
  [ -f "$1" ] && [ ! -h "$1" ] && h=$(timeout 10 sha256sum -- "$1" 2>/dev/null) || return 1
  h=${h#\\}; h=${h%% *}
}
linkhash() { link "$1" || return 1; h=$(printf %s "$t" | sha256sum); h=${h%% *}; }

# A stat line KIND|MODE|U:G|SIZE|SECONDS|NAME (NAME escaped) and, first, "=SHA256|NAME" lines
# of the regular files that may need one; FMT turns them into records.
STAT='%F|%a|%u:%g|%s|%Y|'
FMT='BEGIN { FS = "|" }
$0 == "#end" { ended = 1; next }
substr($0, 1, 1) == "=" { hash[substr($0, index($0, "|") + 1)] = substr($1, 2); next }
{
  count++
  n = $0
  for (i = 0; i < 5; i++) n = substr(n, index(n, "|") + 1)
  rel = (n == ".") ? "" : substr(n, 3)
  t = $1
  if (t == "regular file" || t == "regular empty file") y = "f"
  else if (t == "directory") y = "d"
  else if (t == "symbolic link") y = "l"
  else if (t == "fifo") y = "p"
  else if (t == "socket") y = "s"
  else if (t == "character special file") y = "c"
  else if (t == "block special file") y = "b"
  else y = "U"
  m = $5
  if (y == "f" && m + 0 >= T + 0) m = m "+" ((n in hash) ? hash[n] : "?")
  if (y == "l") m = "-+" ((n in hash) ? hash[n] : "?")
  printf "%s\t%s\t%s\t%s\t%s\t%s\n", y, $2, $3, (y == "d") ? "-" : $4, m, rel
}
END { if (TRAIL) { if (!ended) exit 3; printf "#n %d\n", count } }'
WEIRD='*[! -~]*'
# find's brace pair, spelled so that this text holds none: BusyBox find refuses an -exec ... + whose
# other arguments (this program, passed to the children) hold one.
EACH='{''}'

case $mode in
  _stat)
    for f; do s=$(stat -c "$STAT" -- "$f" 2>/dev/null) || continue; enc "$f"; printf '%s%s\n' "$s" "$e"; done
    exit 0 ;;
  _hash)
    for f; do filehash "$f" || continue; enc "$f"; printf '=%s|%s\n' "$h" "$e"; done
    exit 0 ;;
  _lhash)
    for f; do linkhash "$f" || continue; enc "$f"; printf '=%s|%s\n' "$h" "$e"; done
    exit 0 ;;
  _times)  # DST NAME...: each NAME's times (nanoseconds) onto DST/NAME; a symlink's to the second
    dst=$1; shift
    for f; do
      if [ -h "$f" ]; then s=$(stat -c %Y -- "$f") && touch -h -d "@$s" "$dst/$f"
      else touch -h -r "$f" "$dst/$f"; fi 2>/dev/null
    done
    exit 0 ;;
  _fhash)
    for f; do filehash "$f" || continue; printf 'f %s  %s\0' "$h" "$f"; done
    exit 0 ;;
  _flink)
    for f; do link "$f" || continue; printf 'l %s\0%s\0' "$f" "$t"; done
    exit 0 ;;
  _fdir)
    for f; do m=$(stat -c %a -- "$f" 2>/dev/null) || continue; printf 'd %s %s\0' "$m" "$f"; done
    exit 0 ;;
esac

# lst DIR T SCRATCH: the stat and hash lines of DIR and everything in it (unsorted; FMT makes
# records of them), then "#end" when every step ran: a stream, so a full disk cannot shorten it
# unseen. SCRATCH: a path prefix for the one temporary file (find -newer's reference).
lst() (
  cd -- "$1" || exit 1
  ref=$3.$$.ref
  trap 'rm -f -- "$ref"' EXIT
  touch -d "@$(($2 - 1))" -- "$ref" || exit 1
  find . -type f -newer "$ref" -exec sh -c "$self" sh "$self" _hash "$EACH" + 2>/dev/null
  find . -type l -exec sh -c "$self" sh "$self" _lhash "$EACH" + 2>/dev/null
  find . ! -path "$WEIRD" ! -path '*\\*' -exec stat -c "$STAT%n" -- "$EACH" + 2>/dev/null
  find . \( -path "$WEIRD" -o -path '*\\*' \) -exec sh -c "$self" sh "$self" _stat "$EACH" + 2>/dev/null
  echo "#end"
)

# rootlink DIR: the lines of DIR when it is a symlink (a link planted in the folder's place):
# the link itself as the folder's entry, nothing below it (as the helper lists it).
rootlink() {
  linkhash "$1" || exit 1
  printf '=%s|.\n' "$h"
  s=$(stat -c "$STAT" -- "$1") || exit 1
  printf '%s.\n#end\n' "$s"
}

# since LIST: $T = the second LIST's snapshot began, or exit 4 for a listing of another way or
# a damaged one.
since() {
  T=; magic=
  [ -f "$1" ] && [ ! -h "$1" ] || { echo "no snapshot listing $1" >&2; exit 3; }
  IFS=' ' read -r magic T < "$1" 2>/dev/null || :
  bad=
  case $magic in
    "$MAGIC") case $T in ''|0*|*[!0-9]*|??????????????*) bad=1 ;; esac ;;
    '#'*|'') bad=1 ;;
    *) echo "snapshot listing $1 was recorded by sitectl's python3 helper, and this container's userland record now says sh (no python3 3.7 or newer); take this snapshot again" >&2; exit 4 ;;
  esac
  if [ -n "$bad" ]; then echo "snapshot listing $1 is damaged (its first line); take this snapshot again" >&2; exit 4; fi
}

# copytimes SRC DST: the times of SRC and everything in it onto their copies in DST (BusyBox's
# cp -a keeps whole seconds; touch -r keeps nanoseconds).
copytimes() {
  if [ -d "$1" ] && [ ! -h "$1" ]; then
    (cd -- "$1" && find . -exec sh -c "$self" sh "$self" _times "$2" "$EACH" +) || return 1
  elif [ -h "$1" ]; then
    s=$(stat -c %Y -- "$1") && touch -h -d "@$s" "$2"
  else
    touch -r "$1" "$2"
  fi
}

# onway BASE REL: exit 1 when a folder on the way from BASE to REL (REL's last name left out)
# is a symlink or not a folder, or REL leaves BASE: nothing is written through a planted link.
onway() {
  case /$2/ in */../*|*/./*) echo "$2 is not a path below ${1:-/}" >&2; exit 1 ;; esac
  p=$1 rest=$2
  while :; do
    case $rest in */*) c=${rest%%/*}; rest=${rest#*/} ;; *) return 0 ;; esac
    [ -n "$c" ] || continue
    p=$p/$c
    if [ -h "$p" ] || [ ! -d "$p" ]; then
      echo "$p is not a folder (a symlink or a file where a folder is expected): not followed" >&2; exit 1
    fi
  done
}
# notlink PATH: a symlink or a file where the folder PATH belongs is removed (never followed).
notlink() { if [ -h "$1" ] || { [ -e "$1" ] && [ ! -d "$1" ]; }; then rm -f -- "$1" || exit 1; fi; }

hex() { tr '\n' '\000' | od -An -v -tx1; }
# private DIR: DIR and its parents down from /var/lib/sitectl/snapshots exist as real folders,
# mode 0700, and /var/lib/sitectl is 0755 (PRIVATE_FOLDER_SH below).
PRIVATE_DEF
case $mode in
  snapshot)  # LIVE SNAP LIST OLD
    live=$1 snap=$2 list=$3
    onway "" "${live#/}"
    if [ -h "$live" ]; then echo "$live is not a folder (a symlink where a folder is expected): not followed" >&2; exit 1; fi
    rm -rf -- "$snap" "$4" "$list" "$list.new" && private "${snap%/*}" && mkdir -m 700 -- "$snap" || exit 1
    T=$(date +%s) || exit 1
    if [ -d "$live" ]; then cp -a -- "$live/." "$snap/" && copytimes "$live" "$snap" || exit 1; fi
    { printf '%s %s\n' "$MAGIC" "$T" && lst "$snap" "$T" "$list" | awk -v T="$T" -v TRAIL=1 "$FMT"; } > "$list.new"
    # Read back: the trailer, and as many records as it counts (a full disk shows here).
    n=$(tail -n 1 "$list.new" 2>/dev/null); lines=$(wc -l < "$list.new" 2>/dev/null)
    case $n in "#n "[0-9]*) n=${n#"#n "} ;; *) n=-9 ;; esac
    if [ "$((n + 2))" != "$lines" ]; then
      rm -f -- "$list.new"; echo "the listing of $snap could not be written whole (disk full?): df -h $(dirname -- "$list")" >&2; exit 1
    fi
    mv -f -- "$list.new" "$list" || { rm -f -- "$list.new"; exit 1; }
    du -sb -- "$snap" | cut -f1 ;;
  diff)  # (LIVE LIST OLD)...
    while [ $# -ge 3 ]; do
      live=$1 list=$2
      if [ ! -f "$list" ]; then
        [ -f "$3" ] && { echo "snapshot listing $3 was recorded by an older sitectl with GNU find, which this container does not have; take this snapshot again" >&2; exit 4; }
        echo "no snapshot listing $list" >&2; exit 3
      fi
      since "$list"
      out=$( {
          if [ -h "$live" ]; then rootlink "$live"
          elif [ -d "$live" ]; then lst "$live" "$T" "$list"
          else echo "#end"; fi
        } | awk -v T="$T" -v TRAIL=1 "$FMT" | awk '
        NR == FNR { if (FNR == 1) next; if ($0 ~ /^#n /) { whole = 1; next }; rec[$0] = 1; next }
        $0 ~ /^#n / { seen = 1; next }
        ($0 in rec) { delete rec[$0]; next }
        { print }
        END { if (!whole) exit 4; if (!seen) exit 3; for (r in rec) print "\t" r }' "$list" -)
      case $? in
        0) ;;
        4) echo "snapshot listing $list is incomplete (no trailer); take this snapshot again" >&2; exit 4 ;;
        *) echo "listing $live did not finish (disk full, or a command missing?)" >&2; exit 1 ;;
      esac
      if [ -n "$out" ]; then printf '%s\n' "$out" | hex; fi
      echo @@
      shift 3
    done ;;
  check)  # LIVE LIST PATH... (escaped "./REL")
    live=$1; since "$2"; shift 2
    if [ -h "$live" ]; then exit 0; fi  # a link in the folder's place: nothing of it is listed
    cd -- "$live" 2>/dev/null || exit 0
    out=$(for a; do
      dec "$a"
      s=$(stat -c "$STAT" -- "$r" 2>/dev/null) || continue
      enc "$r"
      case $s in
        regular*) sec=${s%|}; sec=${sec##*|}
          if [ "$sec" -ge "$T" ] && filehash "$r"; then printf '=%s|%s\n' "$h" "$e"; fi ;;
        symbolic*) linkhash "$r" && printf '=%s|%s\n' "$h" "$e" ;;
      esac
      printf '%s%s\n' "$s" "$e"
    done | awk -v T="$T" "$FMT") || exit 1
    if [ -n "$out" ]; then printf '%s\n' "$out" | hex; fi ;;
  fingerprint)  # DIR
    if [ -h "$1" ]; then exit 0; fi  # a link in the folder's place: nothing of it is read
    cd -- "$1" 2>/dev/null || exit 0
    {
      find . -type f ! -path "$WEIRD" ! -path '*\\*' -exec timeout 300 sha256sum -- "$EACH" + 2>/dev/null | sed 's/^/f /' | tr '\n' '\000'
      find . -type f \( -path "$WEIRD" -o -path '*\\*' \) -exec sh -c "$self" sh "$self" _fhash "$EACH" + 2>/dev/null
      find . -type l -exec sh -c "$self" sh "$self" _flink "$EACH" + 2>/dev/null
      find . -type d ! -path "$WEIRD" ! -path '*\\*' -exec stat -c 'd %a %n' -- "$EACH" + 2>/dev/null | tr '\n' '\000'
      find . -type d \( -path "$WEIRD" -o -path '*\\*' \) -exec sh -c "$self" sh "$self" _fdir "$EACH" + 2>/dev/null
      find . -maxdepth 5 -type d -name '*.git' -exec sh -c 'for r; do
        printf "r %s %s\0" "$(git -c safe.directory="*" --git-dir="$r" for-each-ref --format="%(objectname) %(refname)" 2>/dev/null | sha256sum | cut -c1-64)" "$r"
      done' sh "$EACH" +
    } | od -An -v -tx1 ;;
  restore)  # LIVE SNAP OP... ("rm:REL", "cp:REL", "dir:REL", "time:REL"; REL escaped)
    live=$1 snap=$2; shift 2
    onway "" "${live#/}"
    notlink "$live"
    mkdir -p -- "$live" || exit 1
    for a; do
      op=${a%%:*}; dec "${a#*:}"; rel=$r; t=$live
      if [ -n "$rel" ]; then onway "$live" "$rel"; t=$live/$rel; fi
      case $op in
        rm) rm -rf -- "$t" || exit 1 ;;
        cp) rm -rf -- "$t"; cp -a -- "$snap/$rel" "$t" && copytimes "$snap/$rel" "$t" || exit 1 ;;
        dir) notlink "$t"; mkdir -p -- "$t" && chmod "$(stat -c %a -- "$snap/$rel")" "$t" \
               && chown "$(stat -c %u:%g -- "$snap/$rel")" "$t" || exit 1 ;;
        time) if [ -h "$snap/$rel" ]; then s=$(stat -c %Y -- "$snap/$rel") && touch -h -d "@$s" -- "$t" || exit 1
              else touch -h -r "$snap/$rel" -- "$t" || exit 1; fi ;;
        *) echo "unknown restore operation $op" >&2; exit 1 ;;
      esac
    done
    touch -r "$snap" -- "$live" ;;
  *) echo "unknown mode $mode" >&2; exit 1 ;;
esac
"""
#: The folder "$1" under /var/lib/sitectl/snapshots and its parents made real folders of mode
#: 0700 (root's alone: the application's users can neither read nor change a snapshot), and
#: /var/lib/sitectl itself 0755 (written by root only; the stage below it is read by the
#: database clients' own users, e.g. GitLab's gitlab-psql). Also used by the files store's import.
PRIVATE_FOLDER_SH = ('[ -e /var/lib/sitectl ] || [ -h /var/lib/sitectl ] || mkdir -m 755 /var/lib/sitectl || exit 1; '
                     '(umask 077 && mkdir -p -- "$1") || exit 1; p=$1; while :; do case $p in '
                     '/var/lib/sitectl) chmod 755 -- "$p"; break ;; /var/lib/sitectl/*) ;; *) break ;; esac; '
                     'if [ -h "$p" ] || [ ! -d "$p" ]; then echo "$p is not a folder (a symlink or a file where '
                     'sitectl\'s folder belongs)" >&2; exit 1; fi; chmod 700 -- "$p" || exit 1; p=${p%/*}; done')
PROGRAM = PROGRAM.replace("ENC_DEC\n", ENC_SH + DEC_SH).replace("PRIVATE_DEF\n", f"private() {{ ( {PRIVATE_FOLDER_SH} ) || exit 1; }}\n")
