#!/usr/bin/env python3
"""Elasticsearch test double of the Magento replica (a stand-in, NOT Elasticsearch).

WebArena's storefront and admin images run Elasticsearch on 127.0.0.1:9200 inside the container
(research/real-images.md §1.2; fast-reset.md §4.3: with the indexers on schedule, a product or
price edit reaches the index through cron). Debian has no Elasticsearch package, so this serves
the part of its REST API (7.x forms) that Magento's indexer, sitectl's elasticsearch store and
the tests use, over a SQLite file:

  GET /                              version
  GET /_cluster/health               green
  PUT /INDEX                         create (settings, mappings, aliases)
  GET /INDEX                         aliases, mappings, settings (with uuid, creation_date, provided_name)
  DELETE /INDEX[,INDEX|PATTERN]      delete
  PUT|POST /INDEX/_doc/ID            index a document (an alias with one index writes there)
  GET|DELETE /INDEX/_doc/ID
  POST /_bulk, /INDEX/_bulk          index and delete actions (NDJSON)
  POST /INDEX/_refresh
  GET|POST /INDEX/_search            from/size, sort ["_doc"] or [{"_id": ...}], search_after, match, ?scroll=
  POST /_search/scroll, DELETE /_search/scroll
  GET /INDEX/_stats[/...]            docs.count, indexing.index_total and delete_total per index;
                                     ?level=shards: the primary's seq_no.max_seq_no
  GET /_cat/indices[/PATTERN]?format=json
  POST /_reindex                     source.index -> dest.index, synchronous
  GET /_alias[/NAME], /INDEX/_alias, POST /_aliases (add, remove)

As in Elasticsearch, the indexing counters live in memory (a restart of the service sets them to
0) while each index's sequence numbers (every write and delete takes the next) are kept. Documents are visible at once
(no refresh interval). One process, requests serialised by a lock.
"""
import fnmatch
import json
import os
import re
import sqlite3
import sys
import threading
import time
import uuid as uuidlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

DB_PATH = os.environ.get("ES_REPLICA_DB", "/var/lib/es-replica/es.db")
VERSION = {"number": "7.17.0", "build_flavor": "default", "lucene_version": "8.11.1"}
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.+-]{0,254}$")
#: Index settings Elasticsearch fills in itself: never taken from a request.
OWN_SETTINGS = ("uuid", "creation_date", "provided_name", "version")


class EsError(Exception):
    def __init__(self, status, kind, reason):
        super().__init__(reason)
        self.status, self.kind, self.reason = status, kind, reason


def _flat(d, prefix=""):
    """{"index": {"number_of_shards": 1}} and {"index.number_of_shards": "1"} alike -> flat keys."""
    out = {}
    for k, v in (d or {}).items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(_flat(v, key + "."))
        else:
            out[key] = str(v) if not isinstance(v, (list, str)) else v
    return out


def _nest(flat):
    out = {}
    for k, v in sorted(flat.items()):
        cur = out
        parts = k.split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = v
    return out


class Engine:
    """The indices, documents and aliases (SQLite), and the per-index counters (memory)."""

    def __init__(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS indices (name TEXT PRIMARY KEY, uuid TEXT, created INTEGER, settings TEXT, mappings TEXT,"
            " seq INTEGER NOT NULL DEFAULT 0);"
            "CREATE TABLE IF NOT EXISTS docs (idx TEXT, id TEXT, source TEXT, PRIMARY KEY (idx, id));"
            "CREATE TABLE IF NOT EXISTS aliases (alias TEXT, idx TEXT, PRIMARY KEY (alias, idx));")
        self.lock = threading.RLock()
        self.counters = {}  # uuid -> [index_total, delete_total]
        self.scrolls = {}

    # -- names ----------------------------------------------------------------------------
    def names(self):
        return [r[0] for r in self.db.execute("SELECT name FROM indices ORDER BY name")]

    def resolve(self, expr, missing_ok=False):
        """Index names of an expression: comma-separated names, aliases or wildcards."""
        out = []
        have = self.names()
        for part in [p for p in unquote(expr).split(",") if p]:
            if part in ("_all", "*"):
                out += have
            elif "*" in part or "?" in part:
                out += [n for n in have if fnmatch.fnmatchcase(n, part)]
            elif part in have:
                out.append(part)
            else:
                via = [r[0] for r in self.db.execute("SELECT idx FROM aliases WHERE alias=? ORDER BY idx", (part,))]
                if not via and not missing_ok:
                    raise EsError(404, "index_not_found_exception", f"no such index [{part}]")
                out += via
        return sorted(set(out))

    def write_index(self, expr):
        names = self.resolve(expr, missing_ok=True)
        if len(names) > 1:
            raise EsError(400, "illegal_argument_exception", f"no write index is defined for alias [{expr}]")
        if names:
            return names[0]
        self.create(expr, {})  # auto-create, as Elasticsearch does on the first document
        return expr

    def info(self, name):
        r = self.db.execute("SELECT uuid, created, settings, mappings FROM indices WHERE name=?", (name,)).fetchone()
        if r is None:
            raise EsError(404, "index_not_found_exception", f"no such index [{name}]")
        return r

    # -- indices --------------------------------------------------------------------------
    def create(self, name, body):
        if not NAME_RE.match(name) or name.startswith(("_", "-", "+")):
            raise EsError(400, "invalid_index_name_exception", f"Invalid index name [{name}]")
        if self.db.execute("SELECT 1 FROM indices WHERE name=?", (name,)).fetchone():
            raise EsError(400, "resource_already_exists_exception", f"index [{name}] already exists")
        settings = {k: v for k, v in _flat((body or {}).get("settings") or {}).items()}
        settings = {(k if k.startswith("index.") else "index." + k): v for k, v in settings.items()}
        for k in list(settings):
            if k[len("index."):] in OWN_SETTINGS:
                del settings[k]
        settings.setdefault("index.number_of_shards", "1")
        settings.setdefault("index.number_of_replicas", "1")
        uid = uuidlib.uuid4().hex[:22]
        self.db.execute("INSERT INTO indices (name, uuid, created, settings, mappings) VALUES (?,?,?,?,?)",
                        (name, uid, int(time.time() * 1000),
                                                                   json.dumps(settings, sort_keys=True),
                                                                   json.dumps((body or {}).get("mappings") or {}, sort_keys=True)))
        for alias in ((body or {}).get("aliases") or {}):
            self.db.execute("INSERT OR IGNORE INTO aliases VALUES (?,?)", (alias, name))
        self.counters[uid] = [0, 0]
        return {"acknowledged": True, "shards_acknowledged": True, "index": name}

    def delete(self, expr):
        names = self.resolve(expr)
        for n in names:
            self.db.execute("DELETE FROM docs WHERE idx=?", (n,))
            self.db.execute("DELETE FROM aliases WHERE idx=?", (n,))
            self.db.execute("DELETE FROM indices WHERE name=?", (n,))
        return {"acknowledged": True}

    def get(self, expr):
        out = {}
        for n in self.resolve(expr):
            uid, created, settings, mappings = self.info(n)
            s = json.loads(settings)
            s.update({"index.uuid": uid, "index.creation_date": str(created), "index.provided_name": n,
                      "index.version.created": "7170099"})
            out[n] = {"aliases": {a: {} for (a,) in self.db.execute("SELECT alias FROM aliases WHERE idx=? ORDER BY alias", (n,))},
                      "mappings": json.loads(mappings), "settings": _nest(s)}
        return out

    # -- documents ------------------------------------------------------------------------
    def index_doc(self, expr, doc_id, source):
        n = self.write_index(expr)
        uid = self.info(n)[0]
        self.db.execute("INSERT OR REPLACE INTO docs VALUES (?,?,?)", (n, str(doc_id), json.dumps(source, sort_keys=True)))
        self.db.execute("UPDATE indices SET seq = seq + 1 WHERE name=?", (n,))
        self.counters.setdefault(uid, [0, 0])[0] += 1
        return {"_index": n, "_id": str(doc_id), "result": "created", "_shards": {"total": 1, "successful": 1, "failed": 0}}

    def delete_doc(self, expr, doc_id):
        n = self.write_index(expr)
        uid = self.info(n)[0]
        cur = self.db.execute("DELETE FROM docs WHERE idx=? AND id=?", (n, str(doc_id)))
        self.db.execute("UPDATE indices SET seq = seq + 1 WHERE name=?", (n,))  # a delete takes a sequence number too
        self.counters.setdefault(uid, [0, 0])[1] += 1
        return {"_index": n, "_id": str(doc_id), "result": "deleted" if cur.rowcount else "not_found"}

    def get_doc(self, expr, doc_id):
        n = self.write_index(expr)
        r = self.db.execute("SELECT source FROM docs WHERE idx=? AND id=?", (n, str(doc_id))).fetchone()
        if r is None:
            raise EsError(404, "not_found", f"document [{doc_id}] not found")
        return {"_index": n, "_id": str(doc_id), "found": True, "_source": json.loads(r[0])}

    def bulk(self, text, default_index=None):
        lines = [ln for ln in text.split("\n") if ln.strip()]
        items, i = [], 0
        while i < len(lines):
            action = json.loads(lines[i])
            (op, meta), = action.items()
            idx = meta.get("_index") or default_index
            if op in ("index", "create"):
                items.append({op: self.index_doc(idx, meta["_id"], json.loads(lines[i + 1]))})
                i += 2
            elif op == "delete":
                items.append({op: self.delete_doc(idx, meta["_id"])})
                i += 1
            else:
                raise EsError(400, "illegal_argument_exception", f"Malformed action/metadata line [{i + 1}]")
        return {"took": 1, "errors": False, "items": items}

    # -- search ---------------------------------------------------------------------------
    def _hits(self, names, body):
        rows = []
        for n in names:
            rows += [(n, i, s) for i, s in self.db.execute("SELECT id, source FROM docs WHERE idx=? ORDER BY rowid", (n,))]
        match = ((body.get("query") or {}).get("match") or {})
        for field, want in match.items():
            want = (want.get("query") if isinstance(want, dict) else want) or ""
            words = str(want).lower().split()
            rows = [r for r in rows if all(w in str(json.loads(r[2]).get(field, "")).lower() for w in words)]
        sort = body.get("sort") or []
        if any((s == "_id" or (isinstance(s, dict) and "_id" in s)) for s in sort):
            rows.sort(key=lambda r: r[1])
            after = body.get("search_after")
            if after:
                rows = [r for r in rows if r[1] > str(after[0])]
        return rows

    @staticmethod
    def _doc(n, i, s):
        return {"_index": n, "_id": i, "_score": None, "_source": json.loads(s), "sort": [i]}

    def search(self, expr, body, params):
        names = self.resolve(expr or "_all")
        rows = self._hits(names, body or {})
        size = int(params.get("size", [(body or {}).get("size", 10)])[0])
        start = int(params.get("from", [(body or {}).get("from", 0)])[0])
        out = {"took": 1, "timed_out": False, "hits": {"total": {"value": len(rows), "relation": "eq"},
                                                      "hits": [self._doc(*r) for r in rows[start:start + size]]}}
        if "scroll" in params:
            sid = uuidlib.uuid4().hex
            self.scrolls[sid] = (rows, start + size, size)
            out["_scroll_id"] = sid
        return out

    def scroll(self, body):
        sid = (body or {}).get("scroll_id")
        if sid not in self.scrolls:
            raise EsError(404, "search_context_missing_exception", "No search context found")
        rows, at, size = self.scrolls[sid]
        self.scrolls[sid] = (rows, at + size, size)
        return {"_scroll_id": sid, "hits": {"total": {"value": len(rows), "relation": "eq"},
                                            "hits": [self._doc(*r) for r in rows[at:at + size]]}}

    # -- stats, cat, reindex, aliases -------------------------------------------------------
    def _count(self, n):
        return self.db.execute("SELECT COUNT(*) FROM docs WHERE idx=?", (n,)).fetchone()[0]

    def stats(self, expr, shards=False):
        out = {}
        for n in self.resolve(expr or "_all"):
            uid = self.info(n)[0]
            it, dt = self.counters.setdefault(uid, [0, 0])
            part = {"docs": {"count": self._count(n), "deleted": 0}, "indexing": {"index_total": it, "delete_total": dt}}
            out[n] = {"uuid": uid, "primaries": part, "total": part}
            if shards:  # one primary shard; its sequence numbers survive a restart (SQLite), as Lucene's do
                seq = self.db.execute("SELECT seq FROM indices WHERE name=?", (n,)).fetchone()[0]
                out[n]["shards"] = {"0": [{"routing": {"state": "STARTED", "primary": True}, **part,
                                           "seq_no": {"max_seq_no": seq - 1, "local_checkpoint": seq - 1, "global_checkpoint": seq - 1}}]}
        return {"_shards": {"total": len(out), "successful": len(out), "failed": 0}, "indices": out}

    def cat(self, expr):
        return [{"health": "yellow", "status": "open", "index": n, "uuid": self.info(n)[0], "docs.count": str(self._count(n))}
                for n in self.resolve(expr or "_all", missing_ok=True)]

    def reindex(self, body):
        src, dest = body["source"]["index"], body["dest"]["index"]
        names = self.resolve(src)
        dn = self.write_index(dest)
        n = 0
        for s in names:
            for i, source in self.db.execute("SELECT id, source FROM docs WHERE idx=? ORDER BY rowid", (s,)).fetchall():
                self.index_doc(dn, i, json.loads(source))
                n += 1
        return {"took": 1, "timed_out": False, "total": n, "created": n, "updated": 0, "failures": []}

    def get_alias(self, expr=None, name=None):
        names = self.resolve(expr or "_all", missing_ok=True)
        out = {}
        for n in names:
            al = [a for (a,) in self.db.execute("SELECT alias FROM aliases WHERE idx=? ORDER BY alias", (n,))
                  if name is None or fnmatch.fnmatchcase(a, name)]
            if al or name is None:
                out[n] = {"aliases": {a: {} for a in al}}
        return out

    def aliases(self, body):
        for act in (body or {}).get("actions", []):
            (op, a), = act.items()
            idxs = self.resolve(a.get("index") or ",".join(a.get("indices", [])))
            for n in idxs:
                if op == "add":
                    self.db.execute("INSERT OR IGNORE INTO aliases VALUES (?,?)", (a["alias"], n))
                elif op == "remove":
                    self.db.execute("DELETE FROM aliases WHERE alias=? AND idx=?", (a["alias"], n))
                elif op == "remove_index":
                    self.delete(n)
        return {"acknowledged": True}


ENGINE = None


def dispatch(method, path, params, body_text):
    e = ENGINE
    parts = [p for p in path.split("/") if p]
    body = None
    if body_text and not (parts and parts[-1] == "_bulk"):
        try:
            body = json.loads(body_text)
        except ValueError:
            raise EsError(400, "parse_exception", "request body is required to be JSON") from None
    if not parts:
        return {"name": "replica", "cluster_name": "sitectl-replica", "version": VERSION,
                "tagline": "You Know, for Search (a test double)"}
    head = parts[0]
    if head == "_cluster" and parts[1:2] == ["health"]:
        return {"cluster_name": "sitectl-replica", "status": "green", "number_of_nodes": 1}
    if head == "_bulk":
        return e.bulk(body_text or "")
    if head == "_reindex":
        return e.reindex(body or {})
    if head == "_aliases":
        return e.aliases(body)
    if head == "_alias":
        return e.get_alias(None, parts[1] if len(parts) > 1 else None)
    if head == "_cat" and parts[1:2] == ["indices"]:
        return e.cat(parts[2] if len(parts) > 2 else None)
    if head == "_search" and parts[1:2] == ["scroll"]:
        if method == "DELETE":  # one id or a list of them, as Elasticsearch takes
            ids = (body or {}).get("scroll_id")
            for sid in (ids if isinstance(ids, list) else [ids]):
                e.scrolls.pop(sid, None)
            return {"succeeded": True, "num_freed": 1}
        return e.scroll(body)
    if head == "_search":
        return e.search(None, body, params)
    if head == "_stats":
        return e.stats(None, params.get("level") == ["shards"])
    idx = head
    if len(parts) == 1:
        if method == "PUT":
            return e.create(idx, body)
        if method == "DELETE":
            return e.delete(idx)
        if method in ("GET", "HEAD"):
            return e.get(idx)
    op = parts[1]
    if op == "_doc" and len(parts) == 3:
        if method in ("PUT", "POST"):
            return e.index_doc(idx, parts[2], body or {})
        if method == "DELETE":
            return e.delete_doc(idx, parts[2])
        return e.get_doc(idx, parts[2])
    if op == "_bulk":
        return e.bulk(body_text or "", default_index=idx)
    if op == "_refresh":
        e.resolve(idx)
        return {"_shards": {"total": 1, "successful": 1, "failed": 0}}
    if op == "_search":
        return e.search(idx, body, params)
    if op == "_stats":
        return e.stats(idx, params.get("level") == ["shards"])
    if op == "_alias":
        return e.get_alias(idx, parts[2] if len(parts) > 2 else None)
    if op == "_count":
        return {"count": len(e._hits(e.resolve(idx), body or {}))}
    raise EsError(400, "illegal_argument_exception", f"no handler for [{method} {path}] in the test double")


class Handler(BaseHTTPRequestHandler):
    server_version = "es-replica"

    def _go(self):
        url = urlsplit(self.path)
        n = int(self.headers.get("Content-Length") or 0)
        text = self.rfile.read(n).decode("utf-8") if n else ""
        try:
            with ENGINE.lock:
                out, status = dispatch(self.command, url.path, parse_qs(url.query), text), 200
                if self.command == "PUT" and isinstance(out, dict) and out.get("result") == "created":
                    status = 201
        except EsError as err:
            out, status = {"error": {"type": err.kind, "reason": err.reason}, "status": err.status}, err.status
        except (KeyError, ValueError, TypeError) as err:
            out, status = {"error": {"type": "illegal_argument_exception", "reason": str(err)}, "status": 400}, 400
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _go

    def log_message(self, *a):
        pass


def open_engine(path=DB_PATH):
    """The engine over ``path`` (build-time seeding writes through it without the server)."""
    return Engine(path)


def main():
    global ENGINE
    ENGINE = open_engine()
    srv = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("ES_REPLICA_PORT", "9200"))), Handler)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
