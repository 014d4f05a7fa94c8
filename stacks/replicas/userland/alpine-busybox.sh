#!/bin/sh
# Build-time, last step of the Magento and Postmill replicas: this Debian image's userland made
# the one WebArena's Alpine 3.16 images have (research/real-images.md §1.1, §1.7): every program
# of GNU coreutils, findutils, grep, sed, diffutils and mawk becomes the BusyBox 1.35 applet of
# the same name (Debian's busybox package, the version Alpine 3.16 ships) or, where BusyBox has
# none (comm, stdbuf, numfmt, ...), is removed; /bin/sh and awk are BusyBox's too, and dash is
# gone. Where unsure, the smaller applet set: Debian's BusyBox build (no nohup, pgrep, flock or comm).
# Kept as on the real images: bash, GNU tar, python3 (supervisord's there), the database and
# Redis clients. procps and util-linux stay (docs/contracts.md lists them). Nothing else runs
# after this step: apt and dpkg's maintainer scripts need the GNU tools.
set -eu
BB=/usr/bin/busybox
[ -x "$BB" ] || { echo "alpine-busybox.sh: Debian's busybox package is not installed" >&2; exit 1; }
LIST=$(mktemp)
$BB --list > "$LIST.applets"
dpkg -L coreutils findutils grep sed diffutils mawk dash 2>/dev/null \
  | grep -E '^/(usr/)?s?bin/[^/]+$' > "$LIST" || true
# dpkg's own files (the GNU programs it lists) are read before any of them is replaced.
while IFS= read -r path; do
  [ -e "$path" ] || [ -L "$path" ] || continue
  name=$($BB basename "$path")
  if $BB grep -qxF -- "$name" "$LIST.applets"; then
    $BB ln -sf "$BB" "$path"
  else
    $BB rm -f -- "$path"
  fi
done < "$LIST"
$BB ln -sf "$BB" /usr/bin/sh
$BB ln -sf "$BB" /usr/bin/awk
$BB rm -f "$LIST" "$LIST.applets"
# The proof the tests repeat: GNU-only options are refused.
if find / -maxdepth 0 -printf x >/dev/null 2>&1; then echo "alpine-busybox.sh: find still takes -printf" >&2; exit 1; fi
if command -v comm >/dev/null 2>&1; then echo "alpine-busybox.sh: comm is still on PATH" >&2; exit 1; fi
