"""Portable snapshot archives: ``snapshot export`` writes one ``.tar.gz``; ``snapshot import``
checks every member and digest before anything is changed, then loads it."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tarfile
import tempfile
import uuid
from pathlib import Path

from sitectl.engine.base import Engine
from sitectl.errors import SitectlError, StoreError, UsageError
from sitectl.progress import QUIET, Reporter
from sitectl.snapshots.journal import instance_lock
from sitectl.snapshots.manifest import manifest_path, read_manifest, write_manifest
from sitectl.stack.target import Target
from sitectl.stores import check_snapshot_name, stores_for

ARCHIVE_FORMAT = 2  # 2: a PostgreSQL payload is one pg_dump archive (its schema text inside)
_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\Z")
_PAYLOAD_FILE = re.compile(r"^\d+-[A-Za-z0-9_.-]+\Z")


def export(target: Target, name: str, path: Path, engine: Engine, reporter: Reporter = QUIET) -> dict:
    """Write snapshot ``name`` to a portable ``.tar.gz``: ``manifest.json`` (the snapshot's
    manifest plus a ``payload`` table of every file's SHA-256 and size) and ``payload/<site>/``
    files (a ``mysqldump``, a ``pg_dump`` archive, a tar of snapshot folders, Redis keys).

    Raises:
        UsageError: unknown snapshot; EngineError/StoreError: a dump or copy failed (no archive
        is left behind: it is written to a temporary name and renamed at the end).
    """

    m = read_manifest(target, name)
    if not path.parent.is_dir():
        raise UsageError(f"{path}: folder {path.parent} does not exist")
    if path.exists() and not path.is_file():
        raise UsageError(f"{path}: exists and is not a file")
    engine.ping()
    work = Path(tempfile.mkdtemp(prefix="sitectl-export-"))
    payload: dict[str, dict] = {}
    try:
        for site_name in sorted(m["sites"]):
            site = target.stack.sites[site_name]
            container = target.container(site)
            stage = f"{stores_for(site, container, engine)[0].STAGE}/{uuid.uuid4().hex}"
            engine.exec_checked(container, ["mkdir", "-p", stage], f"{site_name}: make {stage}")
            try:
                for i, st in enumerate(stores_for(site, container, engine)):
                    # Network sessions write their dump here, beside this process.
                    local_stage = work / "stage" / f"{site_name}-{i}"
                    if st.payload_local:
                        local_stage.mkdir(parents=True)
                    p = st.export_payload(name, str(local_stage) if st.payload_local else stage)
                    if p is None:
                        continue
                    rel = f"payload/{site_name}/{i}-{p.rsplit('/', 1)[1]}"
                    local = work / rel
                    local.parent.mkdir(parents=True, exist_ok=True)
                    reporter.step(site_name, f"export {st.label}")
                    if st.payload_local:
                        shutil.move(p, local)
                    else:
                        engine.copy_from(container, p, local)
                    payload[rel] = {"site": site_name, "store": st.label, "size": local.stat().st_size,
                                    "sha256": hashlib.sha256(local.read_bytes()).hexdigest()}
            finally:
                engine.exec(container, ["rm", "-rf", stage])
        manifest = {**m, "format": ARCHIVE_FORMAT, "payload": payload}
        (work / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
        tmp = path.with_name(path.name + ".part")
        with tarfile.open(tmp, "w:gz") as tar:
            tar.add(work / "manifest.json", arcname="manifest.json")
            for rel in sorted(payload):
                tar.add(work / rel, arcname=rel)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"name": name, "archive": str(path), "files": len(payload), "bytes": path.stat().st_size}


#: The files store's payload: a tar of its snapshot folder, ``./N/...`` (the N-th folder's copy)
#: and ``./N.list0`` (its listing; ``./N.list``: an older sitectl's).
_FILES_MEMBER = re.compile(r"^(?:\./)?(?:\.|\d+(?:\.list0?)?|\d+/.+)\Z", re.S)


def check_files_payload(inner: tarfile.TarFile, where: str, budget: int) -> int:
    """Check every member of a files store's payload before anything is loaded: its path (under
    ``./N/``, or a listing ``./N.list0``; no absolute path, no ``..``), its type (regular files,
    folders and symlinks only: no hard links, devices or FIFOs), a symlink's target (relative, and
    inside its own folder N when resolved beside the link), its mode (no setuid or setgid bit) and
    its size (the members' sizes add up to at most ``budget`` bytes). Returns that total.

    Raises:
        UsageError: naming ``where`` (the payload) and the first bad member.
    """
    total = 0
    for mem in inner:
        name = mem.name
        bad = None
        parts = name.split("/")
        if name.startswith("/") or ".." in parts or not _FILES_MEMBER.match(name):
            bad = "a path outside the snapshot's folders"
        elif not (mem.isfile() or mem.isdir() or mem.issym()):
            bad = ("a hard link" if mem.islnk() else "a device file" if mem.ischr() or mem.isblk()
                   else "a FIFO" if mem.isfifo() else "an entry of an unknown type")
        elif mem.mode & 0o6000:
            bad = f"a setuid or setgid mode ({mem.mode:o})"
        elif mem.issym():
            target = mem.linkname
            top = parts[1] if parts[0] == "." else parts[0]
            resolved = os.path.normpath(os.path.join(os.path.dirname(name), target))
            inside = resolved.split("/")[1:2] if resolved.startswith("./") else resolved.split("/")[:1]
            if target.startswith("/") or inside != [top] or resolved == ".":
                bad = f"a symlink to {target!r}, outside its folder"
        if bad is None:
            total += mem.size
            if total > budget:
                bad = f"more than {budget} bytes in all"
        if bad:
            raise UsageError(f"archive file {where}: member {name!r} is {bad}; nothing was imported")
    return total


def _check_archive(tar, target: Target) -> dict:
    """Validate an archive before anything is changed; return its manifest.

    Rejected: members that are not regular files, absolute paths, ``..``, unexpected names,
    a missing or malformed manifest, another format or stack, unknown sites, a payload file
    missing, extra or not matching its recorded SHA-256 or size, and a files store's payload
    with a member :func:`check_files_payload` refuses.
    """

    members = tar.getmembers()
    names = set()
    for mem in members:
        parts = mem.name.split("/")
        if not mem.isfile() or mem.name.startswith("/") or any(p in ("", ".", "..") for p in parts) \
                or not all(_SAFE_PART.match(p) for p in parts):
            raise UsageError(f"archive member {mem.name!r} is not allowed (only regular files under payload/)")
        if not (mem.name == "manifest.json" or (len(parts) == 3 and parts[0] == "payload")):
            raise UsageError(f"archive member {mem.name!r} is not allowed")
        if mem.name in names:  # tarfile reads the last of equal names: which one was checked?
            raise UsageError(f"archive member {mem.name!r} appears more than once")
        names.add(mem.name)
    if "manifest.json" not in names:
        raise UsageError("archive has no manifest.json")
    if next(mem for mem in members if mem.name == "manifest.json").size > 64 << 20:
        raise UsageError("archive manifest.json is larger than 64 MiB")
    try:
        m = json.loads(tar.extractfile("manifest.json").read())
    except ValueError as e:
        raise UsageError(f"archive manifest.json is not valid JSON: {e}") from None
    if not isinstance(m, dict) or m.get("format") != ARCHIVE_FORMAT:
        raise UsageError(f"archive format {m.get('format') if isinstance(m, dict) else '?'!r} is not {ARCHIVE_FORMAT}")
    for key, typ in (("name", str), ("stack", str), ("sites", dict), ("payload", dict)):
        if not isinstance(m.get(key), typ):
            raise UsageError(f"archive manifest field {key!r} is missing or not a {typ.__name__}")
    if not m["sites"] or not m["payload"]:
        raise UsageError("archive manifest names no sites or no payload")
    check_snapshot_name(m["name"])
    for site, entry in m["sites"].items():
        stores = entry.get("stores") if isinstance(entry, dict) else None
        if not isinstance(stores, dict) or not all(
                isinstance(s, dict) and isinstance(s.get("fingerprint"), dict) for s in stores.values()):
            raise UsageError(f"archive manifest: site {site!r} has no valid store entries")
    if m["stack"] != target.stack.name:
        raise UsageError(f"archive is of stack {m['stack']!r}, not {target.stack.name!r}")
    unknown = [s for s in m["sites"] if s not in target.stack.sites]
    if unknown:
        raise UsageError(f"archive names sites this stack lacks: {', '.join(unknown)}")
    payload = m["payload"]
    for rel, meta in payload.items():
        parts = rel.split("/")
        if not (isinstance(meta, dict) and len(parts) == 3 and parts[0] == "payload" and parts[1] in m["sites"]
                and _PAYLOAD_FILE.match(parts[2])
                and isinstance(meta.get("size"), int) and isinstance(meta.get("sha256"), str)
                and isinstance(meta.get("store"), str) and meta.get("store") in m["sites"][parts[1]]["stores"]):
            raise UsageError(f"archive manifest: payload entry {rel!r} is malformed")
    if set(payload) != names - {"manifest.json"}:
        raise UsageError("archive payload files do not match its manifest "
                         f"(missing: {sorted(set(payload) - names)}, extra: {sorted(names - set(payload) - {'manifest.json'})})")
    sizes = {mem.name: mem.size for mem in members}
    for rel, meta in payload.items():
        if sizes[rel] != meta["size"]:  # checked before reading: no unbounded reads
            raise UsageError(f"archive file {rel} does not match its manifest (tampered or damaged)")
        h = hashlib.sha256()
        f = tar.extractfile(rel)
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
        if h.hexdigest() != meta["sha256"]:
            raise UsageError(f"archive file {rel} does not match its manifest (tampered or damaged)")
        if meta.get("site") != rel.split("/")[1]:
            raise UsageError(f"archive file {rel} is filed under the wrong site")
        if meta["store"].startswith("files:"):  # a tar inside: every member checked as well
            try:
                with tarfile.open(fileobj=tar.extractfile(rel), mode="r:") as inner:
                    check_files_payload(inner, rel, budget=meta["size"])
            except tarfile.TarError as e:
                raise UsageError(f"archive file {rel} is not a tar of snapshot folders ({e}); nothing was imported") \
                    from None
    return m


def import_(target: Target, path: Path, engine: Engine, name: str | None = None,
            reporter: Reporter = QUIET) -> dict:
    """Load an archive written by :func:`export` as snapshot ``name`` (default: its own name).

    Everything is checked first (see :func:`_check_archive`, and that every site's container
    runs); then each store loads its file; then the loaded snapshot's fingerprints are compared
    with the archive's and the manifest is written. On a failure after loading started, the
    partly loaded snapshot is dropped again.

    Raises:
        UsageError: a rejected archive; StoreError/EngineError: a load failed.
    """
    with instance_lock(target, f"snapshot import {path.name}"):
        return _import(target, path, engine, name, reporter)


def _import(target: Target, path: Path, engine: Engine, name: str | None, reporter: Reporter) -> dict:

    if not path.is_file():
        raise UsageError(f"{path}: no such archive")
    try:
        tar = tarfile.open(path, "r:gz")
    except (tarfile.TarError, OSError) as e:
        raise UsageError(f"{path}: not a sitectl snapshot archive ({e})") from None
    with tar:
        try:
            m = _check_archive(tar, target)
        except (tarfile.TarError, OSError, EOFError) as e:
            raise UsageError(f"{path}: damaged archive ({e})") from None
        name = check_snapshot_name(name or m["name"])
        if manifest_path(target, name).is_file():
            raise UsageError(f"snapshot {name!r} exists; delete it first or import with --name NEW")
        engine.ping()
        for site_name in m["sites"]:
            site = target.stack.sites[site_name]
            info = engine.container(target.container(site))
            if info is None or not info.running:
                raise UsageError(f"site {site_name!r}: container {target.container(site)} is not running; `sitectl up` first")
        loaded: list[tuple] = []
        work = Path(tempfile.mkdtemp(prefix="sitectl-import-"))
        try:
            for rel, meta in sorted(m["payload"].items()):
                site = target.stack.sites[meta["site"]]
                container = target.container(site)
                stores = {st.label: st for st in stores_for(site, container, engine)}
                st = stores.get(meta["store"])
                if st is None:
                    raise UsageError(f"archive file {rel} is for store {meta['store']!r}, which site {site.name!r} lacks")
                local = work / rel.replace("/", "_")
                local.write_bytes(tar.extractfile(rel).read())
                if st.payload_local:  # a network session loads it from here
                    reporter.step(site.name, f"import {st.label}")
                    loaded.append((st, name))
                    st.import_payload(name, str(local), m["name"])
                    continue
                stage = f"{st.STAGE}/{uuid.uuid4().hex}"
                engine.exec_checked(container, ["mkdir", "-p", stage], f"{site.name}: make {stage}")
                try:
                    dest = f"{stage}/{rel.rsplit('/', 1)[1].split('-', 1)[1]}"
                    engine.copy_to(local, container, dest)
                    reporter.step(site.name, f"import {st.label}")
                    loaded.append((st, name))
                    st.import_payload(name, dest, m["name"])
                finally:
                    engine.exec(container, ["rm", "-rf", stage])
            # The loaded state must be what the archive's manifest says it is.
            for st, _ in loaded:
                want = m["sites"][st.site]["stores"][st.label]["fingerprint"]
                have = st.fingerprint(name)
                bad = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
                if bad:
                    raise StoreError(f"{st.site}: imported {st.label} differs from the archive's fingerprints: {', '.join(bad[:5])}")
        except BaseException:
            for st, n in loaded:
                try:
                    st.drop(n)
                except SitectlError:
                    pass
            raise
        finally:

            shutil.rmtree(work, ignore_errors=True)
    manifest = {k: v for k, v in m.items() if k not in ("payload", "format")}
    manifest.update({"name": name, "instance": target.instance, "imported_from": str(path)})
    write_manifest(target, name, manifest)
    return {"name": name, "sites": sorted(m["sites"]), "files": len(m["payload"])}
