"""The elasticsearch store's in-container helper: a stdlib-only Python program (3.7 and newer)
that :mod:`sitectl.stores.elasticsearch` sends into the container as the text of ``python3 -c``
(the real images have a python3, supervisord's; research/real-images.md §1.7). It talks to the
Elasticsearch inside the container over HTTP (no proxy) with the REST API of 6.x and 7.x
(Elastic's docs: "Index APIs" create, get, delete; "Document APIs" reindex and bulk; "Search
APIs" scroll; "cat indices"; "Index stats" ``indexing.index_total`` and ``delete_total``;
"Aliases"), and prints one JSON document.

Modes (URL: the server, e.g. http://127.0.0.1:9200; PATTERNS: comma-separated index patterns;
META: the snapshot's record, a JSON file in the container):

* ``state URL PATTERNS META``: ``{"live": {INDEX: STATE}, "meta_name": NAME|null, "baseline":
  {INDEX: STATE}|null}``; STATE is the index's uuid, document count, indexing and delete
  counters, aliases and a hash of its definition (mappings and settings without the ones the
  server sets itself).
* ``snapshot URL PATTERNS NAME META``: each matching index copied into ``sitectl-NAME-INDEX``
  (same definition, ``_reindex``), its definition, aliases and state recorded in META; taken
  again when the live indices changed meanwhile (3 tries). Prints ``{INDEX: documents}``.
* ``restore URL PATTERNS NAME META [INDEX ...]``: each named index (none named: every matching
  live index and every recorded one) deleted, and a recorded one made again from its copy with
  its definition and aliases; META's state of it renewed. Prints the indices restored.
* ``digest URL PATTERNS [NAME META]``: per live index (or per recorded one, read from its copy),
  ``N docs SHA256`` over the definition, the aliases and every document (id and source, in id
  order).
* ``drop URL NAME META``: the copies and META removed.
* ``version URL PATTERNS``: the server's version and the matching indices (for ``sitectl doctor``).
* ``export URL NAME META OUT`` / ``import URL NAME META IN``: a snapshot to one JSON-lines file
  and back (META first, then one line per document of each copy).

Exit codes: 1 a failure (the message on stderr), 3 no META for NAME. Nothing here imports
sitectl: this file's text is the program.
"""
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request

#: Settings the server sets itself (read from an index, refused or meaningless when creating one).
OWN = ("uuid", "creation_date", "provided_name", "version.", "resize.", "shrink.", "history.uuid",
       "routing.allocation.initial_recovery.", "verified_before_close")
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
TRIES = 3


def fail(msg, code=1):
    sys.stderr.write("elasticsearch: %s\n" % msg)
    sys.exit(code)


def call(url, method, path, body=None, text=None, ok404=False):
    data = text.encode() if text is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/x-ndjson" if text is not None else "application/json"})
    try:
        with OPENER.open(req, timeout=600) as r:
            raw = r.read()
    except urllib.error.HTTPError as e:
        if e.code == 404 and ok404:
            return None
        fail("%s %s: HTTP %s %s" % (method, path, e.code, e.read()[:300].decode("utf-8", "replace")))
    except (OSError, ValueError) as e:
        fail("%s %s: %s (is Elasticsearch running at %s?)" % (method, path, e, url))
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        fail("%s %s: the answer is not JSON" % (method, path))


def flat(d, prefix=""):
    out = {}
    for k, v in (d or {}).items():
        if isinstance(v, dict):
            out.update(flat(v, prefix + k + "."))
        else:
            out[prefix + k] = v if isinstance(v, (str, list)) else str(v)
    return out


def definition(raw):
    """(settings without the server's own, mappings) of one index of GET /INDEX."""
    s = flat((raw.get("settings") or {}).get("index") or {})
    s = {k: v for k, v in s.items() if not any(k == o or (o.endswith(".") and k.startswith(o)) for o in OWN)}
    return s, raw.get("mappings") or {}


def defn_hash(settings, mappings):
    return hashlib.sha256(json.dumps([settings, mappings], sort_keys=True).encode()).hexdigest()


def live(url, patterns):
    """{index: {uuid, docs, index_total, delete_total, aliases, defn}} of the matching indices
    (sitectl's own copies left out)."""
    got = call(url, "GET", "/" + patterns + "?expand_wildcards=open,closed", ok404=True) or {}
    names = sorted(n for n in got if not n.startswith("sitectl-"))
    if not names:
        return {}, {}
    stats = (call(url, "GET", "/" + ",".join(names) + "/_stats/indexing,docs") or {}).get("indices") or {}
    out = {}
    for n in names:
        s, m = definition(got[n])
        p = (stats.get(n) or {}).get("primaries") or {}
        out[n] = {"uuid": str(((got[n].get("settings") or {}).get("index") or {}).get("uuid", "")),
                  "docs": int((p.get("docs") or {}).get("count", -1)),
                  "index_total": int((p.get("indexing") or {}).get("index_total", -1)),
                  "delete_total": int((p.get("indexing") or {}).get("delete_total", -1)),
                  "aliases": sorted((got[n].get("aliases") or {})), "defn": defn_hash(s, m)}
    return out, got


def read_meta(path, name=None):
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except FileNotFoundError:
        if name is not None:
            fail("no snapshot %s (%s)" % (name, path), 3)
        return None
    except ValueError:
        fail("%s is not a snapshot record" % path)
    if name is not None and meta.get("name") != name:
        fail("%s records snapshot %r, not %r" % (path, meta.get("name"), name), 3)
    return meta


def write_meta(path, meta):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".new"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(meta, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def copy_name(name, index):
    c = "sitectl-%s-%s" % (name, index)
    if len(c.encode()) > 255:
        fail("index %s: its copy's name would pass Elasticsearch's 255 bytes" % index)
    return c


def make_index(url, index, settings, mappings, aliases=()):
    body = {"settings": {"index": settings}, "mappings": mappings}
    if aliases:
        body["aliases"] = {a: {} for a in aliases}
    call(url, "PUT", "/" + index, body)


def reindex(url, src, dest):
    """Copy every document of ``src`` into ``dest``; returns how many."""
    r = call(url, "POST", "/_reindex?refresh=true&wait_for_completion=true", {"source": {"index": src}, "dest": {"index": dest}})
    if (r or {}).get("failures"):
        fail("reindex %s -> %s: %s" % (src, dest, json.dumps(r["failures"])[:300]))
    call(url, "POST", "/" + dest + "/_refresh")
    return int((r or {}).get("total", -1))


def snapshot(url, patterns, name, meta_path):
    for _ in range(TRIES):
        before, got = live(url, patterns)
        old = read_meta(meta_path)
        if old:  # the previous copies of this name
            for rec in (old.get("indices") or {}).values():
                call(url, "DELETE", "/" + rec["copy"], ok404=True)
        meta = {"name": name, "patterns": patterns, "indices": {}}
        for n in sorted(before):
            s, m = definition(got[n])
            c = copy_name(name, n)
            call(url, "DELETE", "/" + c, ok404=True)
            make_index(url, c, s, m)
            reindex(url, n, c)
            meta["indices"][n] = {"copy": c, "settings": s, "mappings": m, "aliases": before[n]["aliases"]}
        after, _ = live(url, patterns)
        if after == before:
            for n in after:
                meta["indices"][n]["baseline"] = after[n]
            write_meta(meta_path, meta)
            return {n: after[n]["docs"] for n in after}
    fail("the indices kept changing while they were copied (%d tries); stop what writes to them" % TRIES)


def restore(url, patterns, name, meta_path, only):
    meta = read_meta(meta_path, name)
    now, _ = live(url, patterns)
    golden = meta.get("indices") or {}
    todo = sorted(set(only) if only else set(now) | set(golden))
    copied = {}
    for n in todo:
        if n in now:
            call(url, "DELETE", "/" + n)
    for n in todo:
        rec = golden.get(n)
        if rec is None:
            continue
        make_index(url, n, rec["settings"], rec["mappings"], rec["aliases"])
        copied[n] = reindex(url, rec["copy"], n)
    fresh, _ = live(url, patterns)
    # A re-made index has written exactly what was copied into it and deleted nothing: anything
    # else was written meanwhile, and recording it as golden would hide it from every reset.
    meddled = sorted(n for n in copied if (fresh.get(n) or {}).get("index_total") != copied[n]
                     or (fresh.get(n) or {}).get("delete_total") != 0 or (fresh.get(n) or {}).get("docs") != copied[n])
    if meddled:
        fail("%s written while restored (stop what writes to them, then reset again)" % ", ".join(meddled))
    for n in todo:
        if n in golden:
            golden[n]["baseline"] = fresh.get(n)
    write_meta(meta_path, meta)
    return todo


def docs_digest(url, index):
    """(count, sha256) over every document of ``index``: id and canonical source, in id order."""
    seen = []
    r = call(url, "POST", "/" + index + "/_search?scroll=2m", {"size": 1000, "sort": ["_doc"]})
    sid = (r or {}).get("_scroll_id")
    while True:
        hits = ((r or {}).get("hits") or {}).get("hits") or []
        if not hits:
            break
        for h in hits:
            seen.append((str(h.get("_id")), hashlib.sha256(json.dumps(h.get("_source"), sort_keys=True).encode()).hexdigest()))
        r = call(url, "POST", "/_search/scroll", {"scroll": "2m", "scroll_id": sid})
        sid = (r or {}).get("_scroll_id", sid)
    if sid:
        call(url, "DELETE", "/_search/scroll", {"scroll_id": [sid]}, ok404=True)
    seen.sort()
    h = hashlib.sha256()
    for i, d in seen:
        h.update(i.encode() + b"\0" + d.encode() + b"\n")
    return len(seen), h.hexdigest()


def digest(url, patterns, name=None, meta_path=None):
    out = {}
    if name is None:
        now, got = live(url, patterns)
        for n in sorted(now):
            s, m = definition(got[n])
            count, d = docs_digest(url, n)
            out[n] = "%d docs %s" % (count, hashlib.sha256((defn_hash(s, m) + json.dumps(now[n]["aliases"]) + d).encode()).hexdigest())
        return out
    meta = read_meta(meta_path, name)
    for n, rec in sorted((meta.get("indices") or {}).items()):
        count, d = docs_digest(url, rec["copy"])
        out[n] = "%d docs %s" % (count, hashlib.sha256((defn_hash(rec["settings"], rec["mappings"]) + json.dumps(sorted(rec["aliases"]))
                                                        + d).encode()).hexdigest())
    return out


def drop(url, name, meta_path):
    meta = read_meta(meta_path)
    if meta and meta.get("name") == name:
        for rec in (meta.get("indices") or {}).values():
            call(url, "DELETE", "/" + rec["copy"], ok404=True)
    if meta is not None:
        os.remove(meta_path)


def export(url, name, meta_path, out):
    meta = read_meta(meta_path, name)
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps(meta, sort_keys=True) + "\n")
        for n, rec in sorted((meta.get("indices") or {}).items()):
            r = call(url, "POST", "/" + rec["copy"] + "/_search?scroll=2m", {"size": 1000, "sort": ["_doc"]})
            sid = (r or {}).get("_scroll_id")
            while ((r or {}).get("hits") or {}).get("hits"):
                for h in r["hits"]["hits"]:
                    f.write(json.dumps({"i": n, "id": h["_id"], "s": h.get("_source")}, sort_keys=True) + "\n")
                r = call(url, "POST", "/_search/scroll", {"scroll": "2m", "scroll_id": sid})
            if sid:
                call(url, "DELETE", "/_search/scroll", {"scroll_id": [sid]}, ok404=True)
    return {"file": out}


def import_(url, name, meta_path, src):
    with open(src, encoding="utf-8") as f:
        meta = json.loads(f.readline())
        if not isinstance(meta, dict) or not isinstance(meta.get("indices"), dict):
            fail("%s: not an elasticsearch snapshot export" % src)
        drop(url, name, meta_path)
        meta["name"] = name
        for n, rec in sorted(meta["indices"].items()):
            rec["copy"] = copy_name(name, n)
            call(url, "DELETE", "/" + rec["copy"], ok404=True)
            make_index(url, rec["copy"], rec["settings"], rec["mappings"])
        batch = []
        for line in f:
            d = json.loads(line)
            if d.get("i") not in meta["indices"]:
                fail("%s: a document of an index the export does not record" % src)
            batch += [json.dumps({"index": {"_index": meta["indices"][d["i"]]["copy"], "_id": str(d["id"])}}),
                      json.dumps(d.get("s"))]
            if len(batch) >= 2000:
                call(url, "POST", "/_bulk?refresh=true", text="\n".join(batch) + "\n")
                batch = []
        if batch:
            call(url, "POST", "/_bulk?refresh=true", text="\n".join(batch) + "\n")
        for rec in meta["indices"].values():
            rec["baseline"] = None  # the live indices are another's: the first reset restores them all
    write_meta(meta_path, meta)
    return {"indices": sorted(meta["indices"])}


def main(argv):
    mode, url = argv[0], argv[1].rstrip("/")
    if mode == "version":
        now, _ = live(url, argv[2])
        return {"version": str(((call(url, "GET", "/") or {}).get("version") or {}).get("number", "?")), "indices": sorted(now)}
    if mode == "state":
        now, _ = live(url, argv[2])
        meta = read_meta(argv[3])
        base = None if meta is None else {n: r.get("baseline") for n, r in (meta.get("indices") or {}).items()}
        return {"live": now, "meta_name": None if meta is None else meta.get("name"), "baseline": base}
    if mode == "snapshot":
        return snapshot(url, argv[2], argv[3], argv[4])
    if mode == "restore":
        return restore(url, argv[2], argv[3], argv[4], argv[5:])
    if mode == "digest":
        return digest(url, argv[2], *(argv[3:5] if len(argv) > 3 else ()))
    if mode == "drop":
        return drop(url, argv[2], argv[3])
    if mode == "export":
        return export(url, argv[2], argv[3], argv[4])
    if mode == "import":
        return import_(url, argv[2], argv[3], argv[4])
    fail("unknown mode %r" % mode)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), sort_keys=True))
