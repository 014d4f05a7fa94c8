"""Elasticsearch store (the Magento images' catalog search index): the matching indices back to
the snapshot's, found changed by their indexing counters and definitions, restored from copies
in the same server (research/fast-reset.md §4.3: with cron running and the indexers on
schedule, a product or price edit reaches the index through the changelog, so restoring MySQL
alone leaves the index holding the task's changes; "detect ES writes cheaply via ``_stats``
indexing counters").

Snapshot ``NAME`` copies each index matching the store's patterns into ``sitectl-NAME-INDEX``
with the same mappings and settings (``_reindex``) and records, in ``/var/lib/sitectl/
elasticsearch/NAME.json`` inside the container, each index's definition, aliases and state: its
uuid, document count, each primary shard's ``seq_no.max_seq_no`` (every write and delete takes
the shard's next sequence number, and it survives a restart of the server), the indexing
counters ``index_total`` and ``delete_total`` (kept in memory by the server: a restart changes
them, and the index then reads as written) and the aliases with their filters and routing. A
detection compares the live state with the record: a written, deleted, created, closed or
re-made index, changed aliases or mappings are named. A restore deletes the named indices and makes the recorded ones again from their copies
(their record's state renewed). ``verify --deep`` compares a digest of every document (id and
source), the definition and the aliases of each live index with the same digest read from its
copy.

Everything runs inside the container through :mod:`sitectl.stores.es_helper` (stdlib Python, on
the container's python3; no ``curl`` needed), one ``docker exec`` per step.
"""
from __future__ import annotations

import json
from pathlib import Path

from sitectl.errors import StoreError
from sitectl.stores import es_helper
from sitectl.stores.base import LIST_NAMES_SH, Changes, DiffLimits, Store, valid_names
from sitectl.stores.files import PYTHON_SH, STUB_PY
from sitectl.stores.transport import Command, ExecTransport

#: Where the snapshot records live inside the container.
ROOT = "/var/lib/sitectl/snapshots/elasticsearch"
#: Where checkpoint records live; a checkpoint's copies are named ``sitectl-ck.NAME-INDEX`` (a
#: snapshot's ``sitectl-NAME-INDEX``; no snapshot name holds a dot).
CKPT_ROOT = "/var/lib/sitectl/checkpoints/elasticsearch"
#: An index pattern that matches nothing the helper looks at (sitectl's own copies are left out).
_NOTHING = "sitectl-none-*"
#: The helper program's text (stdlib only; see its docstring).
HELPER = Path(es_helper.__file__).read_text(encoding="utf-8")
#: Exit code of the helper when the snapshot has no record.
NO_RECORD = 3
NO_PYTHON_SH = ('echo "sitectl\'s elasticsearch store needs python3 (3.7 or newer) in this container; install it '
                '(Alpine: apk add python3), or run sitectl doctor for what the container offers" >&2\nexit 5\n')


def helper_argv(mode: str, *args: str) -> list[str]:
    """The argv that runs the helper's ``mode`` with ``args`` on the container's python3."""
    return ["sh", "-c", PYTHON_SH + NO_PYTHON_SH, "sh", STUB_PY, HELPER, mode, *args]


class ElasticsearchStore(Store):
    """The indices of one Elasticsearch server inside the container that match ``indices``.

    Args:
        site: the site's name.
        transport: the site's ``docker exec`` transport.
        url: the server as seen inside the container (``http://127.0.0.1:9200``).
        indices: index patterns (``magento2_*``); sitectl's own ``sitectl-*`` copies never match.
    """

    kind = "elasticsearch"

    def __init__(self, site: str, transport: ExecTransport, url: str, indices: list[str]):
        super().__init__(site, "elasticsearch:" + ",".join(indices))
        self.transport = transport
        self.url = url
        self.patterns = ",".join(indices)

    def _meta(self, name: str) -> str:
        return f"{ROOT}/{name}.json"

    def _run(self, mode: str, *args: str, what: str) -> object:
        rc, out = self.transport.engine.exec(self.transport.container, helper_argv(mode, self.url, *args))
        return self._parse(rc, out, what)

    def _parse(self, rc: int, out: str, what: str) -> object:
        if rc != 0:
            raise StoreError(f"{self.site}: elasticsearch {what} failed (exit code {rc}): {out.strip()[-800:]}")
        try:
            return json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise StoreError(f"{self.site}: elasticsearch {what}: the helper's answer is not JSON: {out.strip()[-300:]}") from None

    # -- snapshots --------------------------------------------------------------------------
    def snapshot(self, name: str) -> dict:
        docs = self._run("snapshot", self.patterns, name, self._meta(name), what=f"snapshot {name}")
        if not isinstance(docs, dict):
            raise StoreError(f"{self.site}: elasticsearch snapshot {name}: unexpected answer")
        return {"fingerprint": self.fingerprint(name), "size": 0, "indices": len(docs),
                "documents": sum(int(v) for v in docs.values() if isinstance(v, int))}

    def exists(self, name: str) -> bool:
        rc, _ = self.transport.engine.exec(self.transport.container, ["test", "-f", self._meta(name)])
        return rc == 0

    def drop(self, name: str) -> None:
        self._run("drop", name, self._meta(name), what=f"drop {name}")

    def held(self) -> set[str]:
        # The records, and the copy indices on the server (a snapshot that failed or was killed
        # before its record was written leaves copies that no record names).
        out = self.transport.run(["sh", "-c", LIST_NAMES_SH, "sh", ROOT, ".json"], "list snapshot copies")
        got = self._run("held", what="list snapshot copies")
        names = got.get("names", []) if isinstance(got, dict) else []
        return valid_names(out.splitlines()) | valid_names(names)

    # -- detection --------------------------------------------------------------------------
    def detect_requests(self, name: str) -> list:
        return [Command(helper_argv("state", self.url, self.patterns, self._meta(name)))]

    def parse_changes(self, name: str, results: list[tuple[int, str]]) -> Changes:
        (rc, out), = results
        state = self._parse(rc, out, "state")
        if not isinstance(state, dict) or not isinstance(state.get("live"), dict):
            raise StoreError(f"{self.site}: elasticsearch state: unexpected answer")
        live, base = state["live"], state.get("baseline")
        if state.get("meta_name") != name or not isinstance(base, dict):
            return Changes([f"{self.label}: no record of snapshot {name!r}"], {"full": True, "indices": []})
        items, names = [], []
        for n in sorted(set(live) | set(base)):
            now, then = live.get(n), base.get(n)
            if n not in base:
                why = "created"
            elif then is None:  # an imported snapshot: the live index is another's until restored
                why = "not restored since the snapshot was imported"
            elif now is None:
                why = "deleted"
            elif not isinstance(now, dict) or not isinstance(then, dict) or now.get("closed") or then.get("closed"):
                why = "closed" if isinstance(now, dict) and now.get("closed") else "changed"
            elif now == then:
                continue
            else:
                what = [k for k in ("uuid", "defn", "aliases", "docs", "max_seq_no", "index_total", "delete_total")
                        if now.get(k) != then.get(k)]
                why = "re-made" if "uuid" in what else ", ".join(what) or "changed"
            names.append(n)
            items.append(f"index {n} ({why})")
        return Changes(items, {"indices": names})

    # -- restore ----------------------------------------------------------------------------
    def _restore_argv(self, name: str, changes: Changes | None) -> list[str]:
        only = [] if changes is None or changes.detail.get("full") else list(changes.detail.get("indices") or [])
        return helper_argv("restore", self.url, self.patterns, name, self._meta(name), *only)

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        if changes is not None and not changes:
            return []
        rc, out = self.transport.engine.exec(self.transport.container, self._restore_argv(name, changes))
        done = self._parse(rc, out, f"restore {name}")
        return [f"index {n}" for n in done] if isinstance(done, list) else []

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if not changes:
            return []
        return [Command(self._restore_argv(name, changes))]

    # -- checkpoints (docs/checkpoints.md) --------------------------------------------------
    def _ckpt_meta(self, ckpt: str) -> str:
        return f"{CKPT_ROOT}/{ckpt}.json"

    def checkpoint_refusal(self, changes: Changes) -> str:
        return "" if self.diffable(changes) else "no record of golden (" + "; ".join(changes.items[:2]) + ")"

    def checkpoint_save(self, ckpt: str, golden: str, changes: Changes) -> dict:
        """Checkpoint ``ckpt``: the indices changed since golden that exist now, copied whole
        (``sitectl-ck.CKPT-INDEX``, the snapshot's way: an index is this store's unit) with
        their record in ``/var/lib/sitectl/checkpoints/elasticsearch/CKPT.json``; the names of
        the changed ones kept in the checkpoint record (those gone are deleted by the apply)."""
        names = list(changes.detail.get("indices") or [])
        gone = sorted(n for n in names if f"index {n} (deleted)" in changes.items)
        kept = sorted(n for n in names if n not in gone)
        self._run("snapshot", ",".join(kept) or _NOTHING, f"ck.{ckpt}", self._ckpt_meta(ckpt), what=f"checkpoint {ckpt}")
        # What the restore's closing check compares: the live indices' digests, read now.
        digests = self._run("digest", ",".join(kept), what="digest") if kept else {}
        return {"indices": sorted(names), "copied": kept, "digests": digests if isinstance(digests, dict) else {}}

    def checkpoint_check_requests(self, ckpt: str, entry: dict) -> list:
        # The indices the checkpoint holds (those it deleted are in the detection's marks).
        kept = list(entry.get("copied") or [])
        return [Command(helper_argv("digest", self.url, ",".join(kept)))] if kept else []

    def checkpoint_check(self, entry: dict, results: list, detected: list) -> list[str]:
        if not results:
            return []
        (rc, out), = results
        try:
            got = self._parse(rc, out, "digest")
        except StoreError as e:
            return [str(e)]
        want = entry.get("digests") or {}
        got = got if isinstance(got, dict) else {}
        return [f"index {n}" for n in sorted(set(want) | set(got)) if want.get(n) != got.get(n)]

    def checkpoint_apply_requests(self, ckpt: str, golden: str, entry: dict) -> list:
        names = list(entry.get("indices") or [])
        if not names:
            return []
        return [Command(helper_argv("restore", self.url, self.patterns, f"ck.{ckpt}", self._ckpt_meta(ckpt), *names))]

    def checkpoint_marks(self, changes: Changes) -> list[str]:
        # The indices: a re-made index reads "re-made" where the written one read "docs, ...".
        return sorted(changes.detail.get("indices") or [])

    def diff_checkpoint(self, ckpt: str, entry: dict, golden: str, changes: Changes, limits: DiffLimits) -> dict:
        """The indices added, removed or changed since checkpoint ``ckpt``: those it holds by
        their digest (documents, definition, aliases) against the one read at the save, the
        others by the detection against golden (the checkpoint held golden's)."""
        held, want = list(entry.get("indices") or []), entry.get("digests") or {}
        gone = {n for n in changes.detail.get("indices") or [] if f"index {n} (deleted)" in changes.items}
        created = {n for n in changes.detail.get("indices") or [] if f"index {n} (created)" in changes.items}
        names = sorted(set(changes.detail.get("indices") or []) | set(held))
        live = [n for n in names if n not in gone]
        got = self._run("digest", ",".join(live), what="digest") if live else {}
        got = got if isinstance(got, dict) else {}
        out = []
        for n in names:
            if n in held:
                then, now = want.get(n), got.get(n)
                if then == now:
                    continue
                change = "added" if then is None else "removed" if now is None else "changed"
            else:
                change = "removed" if n in gone else "added" if n in created else "changed"
            out.append({"index": n, "change": change})
        return {"items": list(changes.items), "indices": out}

    def checkpoint_drop(self, ckpt: str) -> None:
        self._run("drop", f"ck.{ckpt}", self._ckpt_meta(ckpt), what=f"drop checkpoint {ckpt}")

    def checkpoint_held(self) -> set[str]:
        out = self.transport.run(["sh", "-c", LIST_NAMES_SH, "sh", CKPT_ROOT, ".json"], "list checkpoint copies")
        return valid_names(out.splitlines())

    # -- proof ------------------------------------------------------------------------------
    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        args = (self.patterns,) if name is None else (self.patterns, name, self._meta(name))
        got = self._run("digest", *args, what="digest")
        if not isinstance(got, dict):
            raise StoreError(f"{self.site}: elasticsearch digest: unexpected answer")
        return {f"index {k}": str(v) for k, v in got.items()}

    def server(self) -> dict:
        """``{"version": "7.17.0", "indices": [...]}``: the server's version and the live
        indices that match (what ``sitectl doctor`` reports).

        Raises:
            StoreError: no python3, or the server does not answer (the message says which).
        """
        got = self._run("version", self.patterns, what="version")
        if not isinstance(got, dict):
            raise StoreError(f"{self.site}: elasticsearch version: unexpected answer")
        return got

    def export_payload(self, name: str, stage: str) -> str | None:
        out = f"{stage}/elasticsearch.jsonl"
        self._run("export", name, self._meta(name), out, what=f"export {name}")
        return out

    def import_payload(self, name: str, path: str, original: str) -> None:
        self._run("import", name, self._meta(name), path, what=f"import {name}")
