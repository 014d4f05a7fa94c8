#!/usr/bin/env bash
# Make sure a Docker engine answers and the local Debian base image exists.
# Used by the README's `make up`/`make test` and by .ci/run. Idempotent; needs root
# (or a working engine already). No image is ever pulled from a registry.
#
#   scripts/bootstrap-engine.sh            # engine + base image
#   SITECTL_BASE_IMAGE=... to change the tag (default sitectl/base:bookworm)
set -euo pipefail

BASE_IMAGE="${SITECTL_BASE_IMAGE:-sitectl/base:bookworm}"
SUITE="${SITECTL_BASE_SUITE:-bookworm}"
MIRROR="${SITECTL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
LOG_DIR="${SITECTL_LOG_DIR:-/var/log/sitectl}"

log() { printf '[bootstrap] %s\n' "$*" >&2; }
mkdir -p "$LOG_DIR"  # for dockerd's and debootstrap's logs, whichever branch runs

engine_up() { docker info >/dev/null 2>&1; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
}

if ! engine_up; then
  if ! command -v dockerd >/dev/null 2>&1; then
    log "no Docker engine: installing Debian's docker.io"
    apt_install docker.io
  fi
  if ! engine_up; then
    log "starting dockerd (log: $LOG_DIR/dockerd.log)"
    # setsid: the engine must outlive this script and the caller's process group.
    setsid dockerd >>"$LOG_DIR/dockerd.log" 2>&1 < /dev/null &
    for _ in $(seq 1 120); do
      engine_up && break
      sleep 0.5
    done
    engine_up || { log "dockerd did not answer after 60 s; see $LOG_DIR/dockerd.log"; exit 1; }
  fi
fi
log "engine: $(docker version --format '{{.Server.Version}}')"

if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  log "base image $BASE_IMAGE present"
  exit 0
fi

command -v debootstrap >/dev/null 2>&1 || { log "installing debootstrap"; apt_install debootstrap; }
root="$(mktemp -d /var/tmp/sitectl-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
log "debootstrap $SUITE (minbase) into $root: a few minutes, once"
debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >"$LOG_DIR/debootstrap.log" 2>&1 \
  || { log "debootstrap failed; see $LOG_DIR/debootstrap.log"; exit 1; }
# Keep the image lean: no apt caches, no docs.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
log "docker import -> $BASE_IMAGE"
tar -C "$root" -c . | docker import - "$BASE_IMAGE" >/dev/null
log "base image $BASE_IMAGE ready"
