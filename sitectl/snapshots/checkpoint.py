"""Checkpoints: a mid-episode state kept as its delta from golden, restored in the time what
changed takes (``sitectl checkpoint``; docs/checkpoints.md).

A checkpoint ``NAME`` has two halves, as a snapshot has:

* **inside each site's container**, what changed since golden as it is now: per store, only the
  rows at the keys the change log holds (with the log itself), the files changed or added (and
  which are gone), the Redis keys that differ, the changed search indices
  (:meth:`sitectl.stores.base.Store.checkpoint_save`);
* **on the host**, the record ``<state dir>/i<instance>/_checkpoints/NAME.json``: per site and
  store what the apply needs, the *marks* of the detection it was saved from (every logged
  key, changed file, table counter: :meth:`~sitectl.stores.base.Store.checkpoint_marks`), and
  which golden it is relative to.

**Save** pauses the site's jobs, reads what changed since golden (the reset's own detection),
copies it, and reads again: the two detections must agree (nothing written meanwhile), or it
tries again. A store whose change log does not follow golden, or whose schema changed, cannot
keep a delta: the save is refused (:class:`~sitectl.errors.CheckpointUnavailable`) with the
next step.

**Restore**, from any state: the site goes back to golden by the reset's own path (delta,
escalating to full), the checkpoint is applied on top with its writes logged as the
application's would be (so the change log follows golden again, and a later reset, diff or
checkpoint sees them), the caches are flushed and the site detected against golden, in one
round trip where it can. The closing check: that detection's marks must be the saved ones.
Otherwise the site is put back to golden and the restore fails loudly. A journal covers the
whole restore: one that is interrupted is finished by the next ``sitectl reset`` (to golden).
"""
from __future__ import annotations

import concurrent.futures
import datetime as dt
import hashlib
import json
import os
import time
from pathlib import Path

from sitectl.engine.base import Engine
from sitectl.errors import CheckpointUnavailable, DamagedRecord, NotCovered, SitectlError, StoreError, UsageError
from sitectl.paths import instance_dir
from sitectl.progress import QUIET, Reporter
from sitectl.sites.jobs import jobs_paused
from sitectl.snapshots.journal import clear_journal, instance_lock, read_journal, write_journal
from sitectl.snapshots.manifest import GOLDEN, read_manifest, stateful
from sitectl.snapshots.reset import SiteReset, recover, restore_stores
from sitectl.stack.model import Site
from sitectl.stack.target import Target
from sitectl.stores import check_snapshot_name
from sitectl.stores.site import SiteChanges, SiteStores
from sitectl.version import __version__

#: Version of the checkpoint record's layout.
FORMAT = 1
#: Attempts at a save while something writes to the site (the detections before and after the
#: copy differ), with a pause of this many seconds times the attempt's number in between.
SAVE_ATTEMPTS = 3
SAVE_RETRY_S = 0.2


def record_path(target: Target, name: str) -> Path:
    """The host record of checkpoint ``name`` of ``target``'s instance (the folder's name,
    ``_checkpoints``, is no snapshot name)."""
    return instance_dir(target.instance) / "_checkpoints" / f"{name}.json"


def golden_id(golden: dict, site: str) -> str:
    """The identity of golden's copy of ``site``: a hash of its manifest entry (fingerprints,
    container, seconds), which changes whenever golden is taken again."""
    return hashlib.sha256(json.dumps(golden["sites"].get(site), sort_keys=True).encode()).hexdigest()[:16]


def read_record(target: Target, name: str) -> dict:
    """Checkpoint ``name``'s record, checked in shape.

    Raises:
        UsageError: a bad name, or no such checkpoint (the known ones are listed).
        DamagedRecord: the record is unreadable or of the wrong shape.
    """
    check_snapshot_name(name, "checkpoint")
    p = record_path(target, name)
    if not p.is_file():
        known = ", ".join(r["name"] for r in list_checkpoints(target)) or "none"
        raise UsageError(f"no checkpoint {name!r} for instance {target.instance} (checkpoints: {known})")
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise DamagedRecord(f"checkpoint record {p} is unreadable ({type(e).__name__}); delete it with "
                            f"`sitectl checkpoint delete {name}`") from None
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        raise DamagedRecord(f"checkpoint record {p} is not of format {FORMAT}; delete it with "
                            f"`sitectl checkpoint delete {name}` and save it again")
    if _record_fault(rec):
        raise DamagedRecord(f"checkpoint record {p} is damaged ({_record_fault(rec)}); delete it with "
                            f"`sitectl checkpoint delete {name}`")
    return rec


def _record_fault(rec: dict) -> str:
    """What is wrong with the shape of a checkpoint record ("" when nothing): sites, each with
    its stores' entries (objects), marks (lists of text per store) and golden's identity."""
    sites, golden = rec.get("sites"), rec.get("golden")
    if not isinstance(sites, dict) or not sites:
        return "no sites"
    if not isinstance(golden, dict) or set(golden) != set(sites) or not all(isinstance(v, str) for v in golden.values()):
        return "golden's identity"
    for site, e in sites.items():
        if not isinstance(e, dict) or not isinstance(e.get("stores"), dict) or not all(
                isinstance(v, dict) for v in e["stores"].values()):
            return f"the stores of {site}"
        marks = e.get("marks")
        if not isinstance(marks, dict) or not all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in marks.values()):
            return f"the marks of {site}"
    return ""


def _write_record(target: Target, name: str, rec: dict) -> None:
    p = record_path(target, name)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(rec, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)


def list_checkpoints(target: Target) -> list[dict]:
    """``[{"name", "created", "sites", "size", "changed"}]`` of the instance's checkpoints, by
    name (``size``: bytes the SQL copies take in the containers; ``changed``: items saved); an
    unreadable record is listed with ``"damaged"``."""
    folder = instance_dir(target.instance) / "_checkpoints"
    out = []
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
            sites = rec["sites"]
            out.append({"name": rec.get("name", p.stem), "created": rec.get("created"), "sites": sorted(sites),
                        "size": sum(int(e.get("size", 0)) for s in sites.values() for e in s["stores"].values()
                                    if isinstance(e, dict)),
                        "changed": sum(int(s.get("changed", 0)) for s in sites.values())})
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            out.append({"name": p.stem, "created": None, "sites": [], "size": 0, "changed": 0,
                        "damaged": f"{type(e).__name__}: `sitectl checkpoint delete {p.stem}` removes it"})
    return out


def _marks_differ(want: dict[str, list[str]], got: dict[str, list[str]]) -> list[str]:
    """What one set of marks has that the other lacks, store by store (``+`` now, ``-`` saved)."""
    out = []
    for label in sorted(set(want) | set(got)):
        w, g = set(want.get(label) or []), set(got.get(label) or [])
        out += [f"{label}: + {m}" for m in sorted(g - w)] + [f"{label}: - {m}" for m in sorted(w - g)]
    return out


def refuse(site: Site, found: SiteChanges, flag: str) -> None:
    """Refuse a save whose detection a store cannot keep as a delta from golden
    (:meth:`~sitectl.stores.base.Store.checkpoint_refusal`), before anything is copied.

    Raises:
        CheckpointUnavailable: naming each store's reason and the next steps.
    """
    why = [f"{st.label}: {w}" for st, c in found.per_store for w in [st.checkpoint_refusal(c)] if w]
    if why:
        raise CheckpointUnavailable(
            f"{site.name}: no checkpoint can be kept: {'; '.join(why)}. A checkpoint is a delta from golden. If a "
            f"database or service is down, start it first (`sitectl status{flag}`); if the change log follows another "
            f"snapshot, `sitectl reset {site.name}{flag}` starts it again from golden (discarding what changed); after a "
            f"schema change, take a named snapshot instead (`sitectl snapshot create NAME {site.name}{flag}`)")


def save_site(target: Target, site: Site, name: str, engine: Engine) -> dict:
    """Checkpoint ``name`` of one site, its jobs paused (``jobs`` in the stack file); returns the
    site's record entry.

    Raises:
        CheckpointUnavailable: a store cannot keep its changes as a delta from golden.
        StoreError: a copy failed, or the site kept being written (:data:`SAVE_ATTEMPTS` times).
        JobsPauseFailed: the jobs would not pause (nothing copied).
    """
    stores = SiteStores(site, target.container(site), engine)
    flag = f" --instance {target.instance}" if target.instance else ""
    t0 = time.monotonic()
    with jobs_paused(engine, target.container(site), site) as notes:
        for attempt in range(1, SAVE_ATTEMPTS + 1):
            found = stores.changes(GOLDEN)
            refuse(site, found, flag)
            entries = stores.checkpoint_save(name, GOLDEN, found)
            marks = stores.checkpoint_marks(found)
            after = stores.checkpoint_marks(stores.changes(GOLDEN))
            if after == marks:
                break
            if attempt == SAVE_ATTEMPTS:
                moved = _marks_differ(marks, after)
                raise StoreError(f"{site.name}: written to while checkpoint {name!r} was saved, {SAVE_ATTEMPTS} times "
                                 f"(last: {', '.join(moved[:5])}); stop what writes to the site, then save it again")
            time.sleep(SAVE_RETRY_S * attempt)
    entry = {"container": target.container(site), "stores": entries, "marks": marks, "changed": len(found.items),
             "seconds": round(time.monotonic() - t0, 3)}
    if notes:
        entry["notes"] = notes
    return entry


def _chosen(target: Target, sites: list[Site], golden: dict, named: bool) -> list[Site]:
    out = []
    for s in stateful(target, sites):
        if s.name in golden["sites"]:
            out.append(s)
        elif named:
            why = (golden.get("incomplete") or {}).get(s.name, "not in it")
            raise NotCovered(f"{s.name}: golden has no complete copy of it ({why}); a checkpoint is relative to golden: "
                             f"`sitectl reset --recreate {s.name}` takes golden again")
    return out


def save(target: Target, name: str, sites: list[Site], engine: Engine, named: bool = True,
         reporter: Reporter = QUIET) -> dict:
    """Save checkpoint ``name`` of ``sites`` (those with stores): what changed since golden,
    site by site, concurrently, under the instance lock; a checkpoint of that name is replaced
    (its copies first dropped where this save does not reach).

    Args:
        named: the caller named ``sites``; False leaves out the sites golden does not cover.

    Returns:
        The checkpoint's record (``{"name", "created", "sites": {site: {"stores", "marks",
        "changed", "seconds", ...}}, ...}``).

    Raises:
        UsageError: a bad name, no golden, or an interrupted reset waits (``sitectl reset``).
        NotCovered: golden does not cover a named site.
        CheckpointUnavailable, StoreError, JobsPauseFailed: from a site (nothing is recorded;
            the other sites' copies of this name are dropped).
    """
    check_snapshot_name(name, "checkpoint")
    engine.ping()
    golden = read_manifest(target, GOLDEN)
    chosen = _chosen(target, sites, golden, named)
    with instance_lock(target, f"checkpoint save {name}"):
        if read_journal(target) is not None:
            raise UsageError(f"instance {target.instance} has an interrupted reset: its sites are neither golden nor "
                             "what was written; `sitectl reset` finishes it first")
        if len(chosen) > 1 and record_path(target, name).is_file():
            # Replacing a checkpoint of several sites: every site is checked before any copy is
            # touched, so that a refusal leaves the old checkpoint whole.
            flag = f" --instance {target.instance}" if target.instance else ""
            for s in chosen:
                refuse(s, SiteStores(s, target.container(s), engine).changes(GOLDEN), flag)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
            futs = {}
            for s in chosen:
                reporter.step(s.name, f"checkpoint save {name}")
                futs[s.name] = pool.submit(save_site, target, s, name, engine)
            concurrent.futures.wait(list(futs.values()))
        failed = [f.exception() for f in futs.values() if f.exception() is not None]
        if failed:
            # A refusal comes before any copy (the old checkpoint of this name stays); any other
            # failure has overwritten copies of it: it is dropped whole.
            kept = len(chosen) == 1 and all(isinstance(e, CheckpointUnavailable) for e in failed)
            if not record_path(target, name).is_file():
                _drop_copies(target, name, chosen, engine)  # a new name: nothing of it stays
            elif not kept:
                _drop_copies(target, name, chosen, engine)
                record_path(target, name).unlink(missing_ok=True)
                failed[0].args = (f"{failed[0]}\n(the earlier checkpoint {name!r} was being replaced and is gone)",)
            e = failed[0]
            if len(failed) > 1 and isinstance(e, SitectlError):
                e.args = ("\n".join(str(x) for x in failed),)
            raise e
        old = _old_sites(target, name)
        rec = {"name": name, "format": FORMAT, "sitectl": __version__, "stack": target.stack.name,
               "instance": target.instance, "golden": {s.name: golden_id(golden, s.name) for s in chosen},
               "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
               "sites": {n: f.result() for n, f in futs.items()}}
        # A site the previous checkpoint of this name held and this one does not: its copies go.
        _drop_copies(target, name, [target.stack.sites[n] for n in old - set(rec["sites"]) if n in target.stack.sites],
                     engine)
        _write_record(target, name, rec)
    return rec


def _old_sites(target: Target, name: str) -> set[str]:
    try:
        return set(read_record(target, name)["sites"])
    except (UsageError, DamagedRecord):
        return set()


def _drop_copies(target: Target, name: str, sites: list[Site], engine: Engine) -> tuple[list[str], list[str]]:
    """Drop checkpoint ``name``'s copies in ``sites``' containers, store by store (a container
    that is gone has none). Returns the sites whose copies were all dropped, and what could not
    be dropped (``site store: error``)."""
    done, failed = [], []
    for site in sites:
        if engine.container(target.container(site)) is None:
            continue
        bad = []
        for st in SiteStores(site, target.container(site), engine):
            try:
                st.checkpoint_drop(name)
            except SitectlError as e:
                bad.append(f"{site.name} {st.label}: {str(e).splitlines()[0][:200]}")
        (failed.extend(bad) if bad else done.append(site.name))
    return done, failed


def restore_site(target: Target, site: Site, name: str, entry: dict, engine: Engine,
                 reporter: Reporter = QUIET) -> SiteReset:
    """Bring one site to checkpoint ``name`` (``entry``: its record's entry of the site): to
    golden by the reset's path, the checkpoint applied, the closing check (the marks saved).
    The site's jobs stay paused throughout.

    Returns:
        A :class:`SiteReset` with ``method`` ``"checkpoint"`` and, in ``escalations``, how the
        way to golden went (``golden: delta|full|none``).

    Raises:
        CheckpointUnavailable: the closing check found another state (the site was put back
            to golden; the message says what differed).
        StoreError, JobsPauseFailed, WrittenDuringReset: from the way to golden or the apply.
    """
    t0 = time.monotonic()
    stores = SiteStores(site, target.container(site), engine)
    res = SiteReset(site.name, "checkpoint")
    way = SiteReset(site.name, "none")
    with stores.jobs_inline():
        # The fast way, two round trips: what changed since golden; then, in one trip, its delta
        # restore, the apply, the content check, the flushes and the detection.
        first = stores.changes(GOLDEN)
        pre = None if first.needs_full else [st.restore_requests(GOLDEN, c) if c else [] for st, c in first.per_store]
        differ: list[str] = ["the way to golden takes more than one round trip"]
        if pre is not None and all(r is not None for r in pre):
            way.method = "delta" if first else "none"
            found, differ = _applied(stores, name, entry, [r for rs in pre for r in rs])
        if differ:
            # The reset's own way to golden (escalating delta -> full), the jobs held, then the apply.
            if pre is not None and all(r is not None for r in pre):
                way.escalations.append(f"one trip left {len(differ)} difference(s): {'; '.join(differ[:3])}")
            stores.hold_jobs()
            restore_stores(site, stores, GOLDEN, False, way, reporter)
            found, differ = _applied(stores, name, entry, [])
        if differ:
            back = SiteReset(site.name, "none")
            restore_stores(site, stores, GOLDEN, False, back, reporter)
            raise CheckpointUnavailable(
                f"{site.name}: checkpoint {name!r} did not come back exactly ({len(differ)} difference(s): "
                f"{'; '.join(differ[:5])}{' ...' if len(differ) > 5 else ''}); the site is back at golden. After a "
                "write while it was restored, restore it again; a copy changed or lost in the container is not used: "
                f"save the checkpoint again (`sitectl diff {site.name}` shows what differs from golden)")
    res.notes += stores.notes
    res.changed = found.items
    res.escalations = [f"golden: {way.method}", *way.escalations]
    res.seconds = round(time.monotonic() - t0, 3)
    return res


def _applied(stores: SiteStores, name: str, entry: dict, before: list) -> tuple[SiteChanges | None, list[str]]:
    """The apply of checkpoint ``name`` (after ``before``, a delta restore's requests) with its
    closing check: the detection and what differs from the save (its content, its marks)."""
    try:
        found, differ = stores.checkpoint_apply(name, GOLDEN, entry["stores"], before)
    except StoreError as e:
        return None, [f"the apply failed: {e}"]
    return found, differ + _marks_differ(entry["marks"], stores.checkpoint_marks(found))


def restore(target: Target, name: str, sites: list[Site] | None, engine: Engine, reporter: Reporter = QUIET,
            wait: bool | float = True) -> list[SiteReset]:
    """Bring ``sites`` (None: every site the checkpoint holds) to checkpoint ``name``, from any
    state, concurrently, under the instance lock and a reset journal (an interrupted restore is
    finished by the next ``sitectl reset``: golden). A pending interrupted reset is rolled
    forward first.

    Raises:
        UsageError: a bad name or no such checkpoint, or a site it does not hold.
        CheckpointUnavailable: golden was taken again since the save (its copies are relative
            to another golden), or a site's closing check failed (that site is back at golden).
        InstanceBusy: ``wait`` is False and another process holds the lock.
        StoreError, JobsPauseFailed, WrittenDuringReset: from a site.
    """
    read_record(target, name)  # bad input is refused before the wait for the lock
    engine.ping()
    with instance_lock(target, f"checkpoint restore {name}", wait):
        # Read under the lock: a save or delete of this name queued ahead has finished.
        rec = read_record(target, name)
        if rec.get("stack") != target.stack.name:
            raise UsageError(f"checkpoint {name!r} was saved on stack {rec.get('stack')!r}, not {target.stack.name!r}; "
                             "nothing was restored")
        unknown = sorted(n for n in rec["sites"] if n not in target.stack.sites)
        if unknown:
            raise DamagedRecord(f"checkpoint {name!r} names sites the stack does not have ({', '.join(unknown)}); delete it "
                                f"with `sitectl checkpoint delete {name}`")
        if sites is None:
            chosen = [target.stack.sites[n] for n in sorted(rec["sites"])]
        else:
            lacking = [s.name for s in sites if s.name not in rec["sites"]]
            if lacking:
                raise UsageError(f"checkpoint {name!r} does not hold {', '.join(lacking)} (it holds "
                                 f"{', '.join(sorted(rec['sites'])) or 'no site'}); nothing was restored")
            chosen = list(sites)
        golden = read_manifest(target, GOLDEN)
        moved = [s.name for s in chosen if golden_id(golden, s.name) != rec["golden"].get(s.name)]
        if moved:
            raise CheckpointUnavailable(
                f"golden of {', '.join(moved)} was taken again after checkpoint {name!r} was saved, so its copies are "
                f"relative to another golden; nothing was restored. Delete it (`sitectl checkpoint delete {name}`) and "
                "save it again")
        recovered = {r.site: r for r in recover(target, engine, reporter)}
        write_journal(target, {"op": "reset", "sites": [s.name for s in chosen], "snapshot": GOLDEN})
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(chosen))) as pool:
            futs = [pool.submit(restore_site, target, s, name, rec["sites"][s.name], engine, reporter) for s in chosen]
            concurrent.futures.wait(futs)
        failed = [f.exception() for f in futs if f.exception() is not None]
        if failed:
            # Every site that failed its closing check is back at golden and checked; any other
            # failure leaves the journal for the next reset.
            if all(isinstance(e, CheckpointUnavailable) for e in failed):
                clear_journal(target)
            e = failed[0]
            if len(failed) > 1 and isinstance(e, SitectlError):
                e.args = ("\n".join(str(x) for x in failed),)
            raise e
        clear_journal(target)
    rows = [f.result() for f in futs]
    for r in rows:
        if r.site in recovered:
            r.escalations = recovered.pop(r.site).escalations + r.escalations
    return rows


def delete(target: Target, name: str, engine: Engine) -> list[str]:
    """Delete checkpoint ``name``: its copies in every site's container it names (every site
    with stores when its record is damaged) and its record. Returns the sites whose copies
    were dropped.

    Raises:
        UsageError: a bad name or no such checkpoint.
    """
    check_snapshot_name(name, "checkpoint")
    p = record_path(target, name)
    if not p.is_file():
        raise UsageError(f"no checkpoint {name!r} for instance {target.instance} (checkpoints: "
                         f"{', '.join(r['name'] for r in list_checkpoints(target)) or 'none'})")
    engine.ping()
    with instance_lock(target, f"checkpoint delete {name}"):
        try:
            names = list(read_record(target, name)["sites"])
        except DamagedRecord:
            names = [s.name for s in stateful(target, list(target.stack.sites.values()))]
        done, failed = _drop_copies(target, name, [target.stack.sites[n] for n in names if n in target.stack.sites], engine)
        if failed:
            raise StoreError(f"checkpoint {name!r}: some copies could not be dropped, so its record is kept (delete it "
                             f"again once they can be): {'; '.join(failed)}")
        p.unlink(missing_ok=True)
    return done


__all__ = ["FORMAT", "delete", "list_checkpoints", "read_record", "record_path", "restore", "restore_site", "save",
           "save_site"]
