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
  {INDEX: STATE}|null}``; STATE is the index's uuid, document count, each primary shard's
  ``seq_no.max_seq_no`` (it survives a restart), the indexing and delete counters (they do not),
  the aliases with their bodies and a hash of its definition (mappings and settings without the
  ones the server sets itself); a closed index is marked closed.
* ``snapshot URL PATTERNS NAME META``: the matching indices refreshed, each copied into
  ``sitectl-NAME-INDEX`` (same definition, ``_reindex``; the copy must count what the index
  counts), its definition, aliases and state recorded in META; taken again when the live
  indices changed meanwhile (3 tries). Prints ``{INDEX: documents}``.
* ``restore URL PATTERNS NAME META [INDEX ...]``: every copy checked first; then each named
  index (none named: every matching live index and every recorded one) deleted, and a recorded
  one made again from its copy with its definition and aliases; a re-made index must hold just
  what was copied (counters, sequence numbers, count), else nothing is recorded and it fails;
  META's state of it renewed. Prints the indices restored.
* ``digest URL PATTERNS [NAME META]``: per live index (or per recorded one, read from its copy),
  ``N docs SHA256`` over the definition, the aliases and every document (id and source, in id
  order).
* ``drop URL NAME META``: the copies and META removed.
* ``version URL PATTERNS``: the server's version and the matching indices (for ``sitectl doctor``).
* ``export URL NAME META OUT`` / ``import URL NAME META IN``: a snapshot to one JSON-lines file
  and back (META first, then one line per document of each copy).

Every answer is checked for its shape, every index name against Elasticsearch's grammar, and
each record's copy name against the snapshot's; a scroll stops at a repeated id or past its
total. Exit codes: 1 a failure (one line on stderr), 3 no META for NAME. Nothing here imports
sitectl: this file's text is the program.
"""
import hashlib
import http.client
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

#: Settings the server sets itself (read from an index, refused or meaningless when creating one).
OWN = ("uuid", "creation_date", "provided_name", "version.", "resize.", "shrink.", "history.uuid",
       "routing.allocation.initial_recovery.", "verified_before_close")
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
TRIES = 3
#: Elasticsearch's index names (lower case, no wildcards, commas, slashes or spaces).
INDEX_RE = re.compile(r"^[a-z0-9][a-z0-9_.+-]{0,254}$")
#: Bytes one answer may have (a page of documents, an index's definition).
ANSWER_LIMIT = 256 << 20


def fail(msg, code=1):
    sys.stderr.write("elasticsearch: %s\n" % msg)
    sys.exit(code)


def index_name(n, what="index"):
    if not isinstance(n, str) or not INDEX_RE.match(n):
        fail("%s name %r is not an Elasticsearch index name" % (what, n))
    return n


def q(n):
    """An index name (or several, comma-joined) as a URL path part."""
    return urllib.parse.quote(n, safe=",*")


def call(url, method, path, body=None, text=None, ok404=False):
    data = text.encode() if text is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/x-ndjson" if text is not None else "application/json"})
    try:
        with OPENER.open(req, timeout=600) as r:
            raw = r.read(ANSWER_LIMIT + 1)
    except urllib.error.HTTPError as e:
        if e.code == 404 and ok404:
            return None
        fail("%s %s: HTTP %s %s" % (method, path, e.code, e.read(300).decode("utf-8", "replace")))
    except (OSError, ValueError, http.client.HTTPException) as e:
        fail("%s %s: %s: %s (is Elasticsearch running at %s?)" % (method, path, type(e).__name__, e, url))
    if len(raw) > ANSWER_LIMIT:
        fail("%s %s: the answer is over %d bytes" % (method, path, ANSWER_LIMIT))
    try:
        return json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        fail("%s %s: the answer is not JSON" % (method, path))


def obj(x, what):
    if not isinstance(x, dict):
        fail("%s: unexpected answer (%s)" % (what, type(x).__name__))
    return x


def num(x, what):
    if type(x) is int:
        return x
    if isinstance(x, str) and re.fullmatch(r"-?[0-9]{1,19}", x):
        return int(x)
    fail("%s: %r is not a count" % (what, x))


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
    s = flat(obj(obj(raw.get("settings") or {}, "settings").get("index") or {}, "settings.index"))
    s = {k: v for k, v in s.items() if not any(k == o or (o.endswith(".") and k.startswith(o)) for o in OWN)}
    return s, obj(raw.get("mappings") or {}, "mappings")


def defn_hash(settings, mappings):
    return hashlib.sha256(json.dumps([settings, mappings], sort_keys=True).encode()).hexdigest()


def live(url, patterns):
    """{index: STATE} of the matching indices (sitectl's own copies left out), and GET's answer.

    STATE: uuid, document count, the indexing counters, the per-shard ``max_seq_no`` (every
    write and delete takes the next sequence number of its shard, and it survives a restart of
    the server, where the counters do not), the aliases with their bodies (filters, routing,
    write index) and the definition's hash; a closed index is ``{"closed": true, ...}``."""
    got = obj(call(url, "GET", "/" + q(patterns) + "?expand_wildcards=open,closed", ok404=True) or {}, "GET indices")
    names = sorted(index_name(n) for n in got if not n.startswith("sitectl-"))
    if not names:
        return {}, {}
    cat = call(url, "GET", "/_cat/indices/" + q(",".join(names)) + "?format=json&h=index,status&expand_wildcards=open,closed") or []
    closed = {r.get("index") for r in cat if isinstance(r, dict) and r.get("status") == "close"}
    opened = [n for n in names if n not in closed]
    stats = {}
    if opened:
        st = obj(call(url, "GET", "/" + q(",".join(opened)) + "/_stats?level=shards"), "stats")
        if num(obj(st.get("_shards") or {}, "stats._shards").get("failed", 0), "stats._shards.failed"):
            fail("index stats: some shards failed (%s); is the cluster red?" % json.dumps(st.get("_shards"))[:200])
        stats = obj(st.get("indices") or {}, "stats.indices")
    out = {}
    for n in names:
        raw = obj(got[n], "index " + n)
        s, m = definition(raw)
        aliases = obj(raw.get("aliases") or {}, "aliases of " + n)
        state = {"uuid": str(obj(obj(raw.get("settings") or {}, "settings").get("index") or {}, "settings").get("uuid", "")),
                 "aliases": {a: aliases[a] for a in sorted(aliases)}, "defn": defn_hash(s, m)}
        if n in closed:
            state["closed"] = True
        else:
            i = stats.get(n)
            if not isinstance(i, dict) or not isinstance(i.get("primaries"), dict):
                fail("index %s: the server's stats do not cover it" % n)
            p = i["primaries"]
            seq = {}
            for shard, copies in sorted(obj(i.get("shards") or {}, "shards of " + n).items()):
                for c in copies if isinstance(copies, list) else []:
                    if isinstance(c, dict) and (c.get("routing") or {}).get("primary"):
                        seq[shard] = num(obj(c.get("seq_no") or {}, "seq_no of " + n).get("max_seq_no"), "max_seq_no of " + n)
            if not seq:
                fail("index %s: its stats carry no seq_no.max_seq_no (Elasticsearch 6.0 or newer reports it)" % n)
            state.update({"docs": num(obj(p.get("docs"), "docs").get("count"), "docs.count of " + n),
                          "index_total": num(obj(p.get("indexing"), "indexing").get("index_total"), "index_total of " + n),
                          "delete_total": num(obj(p.get("indexing"), "indexing").get("delete_total"), "delete_total of " + n),
                          "max_seq_no": [seq[k] for k in sorted(seq)]})
        out[n] = state
    return out, got


def read_meta(path, name=None):
    try:
        if os.path.islink(path):
            fail("%s is a symbolic link, not a snapshot record" % path)
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except FileNotFoundError:
        if name is not None:
            fail("no snapshot %s (%s)" % (name, path), 3)
        return None
    except (OSError, ValueError, RecursionError) as e:
        fail("%s is not a snapshot record (%s)" % (path, type(e).__name__))
    if not isinstance(meta, dict) or not isinstance(meta.get("indices"), dict):
        fail("%s is not a snapshot record" % path)
    for n, rec in meta["indices"].items():
        index_name(n)
        if not isinstance(rec, dict) or not isinstance(rec.get("settings"), dict) or not isinstance(rec.get("mappings"), dict) \
                or not isinstance(rec.get("aliases"), dict) or rec.get("copy") != copy_name(str(meta.get("name")), n):
            fail("%s: the record of index %s is damaged; take the snapshot again" % (path, n))
    if name is not None and meta.get("name") != name:
        fail("%s records snapshot %r, not %r" % (path, meta.get("name"), name), 3)
    return meta


def write_meta(path, meta):
    folder = os.path.dirname(path)
    if folder.startswith("/var/lib/sitectl/"):
        os.makedirs("/var/lib/sitectl", 0o755, exist_ok=True)
    os.makedirs(folder, 0o700, exist_ok=True)
    while folder == "/var/lib/sitectl" or folder.startswith("/var/lib/sitectl/"):
        # the snapshots' folders root's alone (0700): the application's users can neither read
        # nor change the records; /var/lib/sitectl writable by root only (its stage is read by others)
        if os.path.islink(folder) or not os.path.isdir(folder):
            fail("%s is not a folder (a symlink or a file where sitectl's folder belongs)" % folder)
        os.chmod(folder, 0o755 if folder == "/var/lib/sitectl" else 0o700)
        folder = os.path.dirname(folder)
    tmp = path + ".new"
    try:
        os.unlink(tmp)  # a leftover (or a planted link) is removed, never followed
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(meta, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def copy_name(name, index):
    c = "sitectl-%s-%s" % (name, index)
    if len(c.encode()) > 255:
        fail("index %s: its copy's name would pass Elasticsearch's 255 bytes" % index)
    return c


def make_index(url, index, settings, mappings, aliases=None):
    body = {"settings": {"index": settings}, "mappings": mappings}
    if aliases:
        body["aliases"] = aliases
    call(url, "PUT", "/" + q(index), body)


def count(url, index):
    return num(obj(call(url, "GET", "/" + q(index) + "/_count"), "count").get("count"), "count of " + index)


def reindex(url, src, dest):
    """Copy every document of ``src`` into ``dest``; returns how many."""
    r = obj(call(url, "POST", "/_reindex?refresh=true&wait_for_completion=true", {"source": {"index": src}, "dest": {"index": dest}}),
            "reindex")
    if r.get("failures"):
        fail("reindex %s -> %s: %s" % (src, dest, json.dumps(r["failures"])[:300]))
    call(url, "POST", "/" + q(dest) + "/_refresh")
    return num(r.get("total", -1), "reindex total")


def refresh(url, names):
    if names:
        call(url, "POST", "/" + q(",".join(names)) + "/_refresh")


def snapshot(url, patterns, name, meta_path):
    for _ in range(TRIES):
        pre, _ = live(url, patterns)
        if any(st.get("closed") for st in pre.values()):
            fail("a matching index is closed (%s); open it before a snapshot" % ", ".join(n for n in pre if pre[n].get("closed")))
        refresh(url, sorted(pre))  # what was written before is searchable, so _reindex copies it
        before, got = live(url, patterns)
        # The previous copies of this name, found by name (a damaged record does not stop a new
        # snapshot; snapshot names hold no '-', so no other snapshot's copies match).
        for c in sorted(obj(call(url, "GET", "/" + q(copy_name(name, "*")) + "?expand_wildcards=open,closed", ok404=True)
                            or {}, "GET copies")):
            call(url, "DELETE", "/" + q(index_name(c, "copy")), ok404=True)
        meta = {"name": name, "patterns": patterns, "indices": {}}
        for n in sorted(before):
            s, m = definition(got[n])
            c = copy_name(name, n)
            call(url, "DELETE", "/" + q(c), ok404=True)
            make_index(url, c, s, m)
            copied = reindex(url, n, c)
            if count(url, c) != copied or copied != count(url, n):
                break
            meta["indices"][n] = {"copy": c, "settings": s, "mappings": m, "aliases": before[n]["aliases"]}
        after, _ = live(url, patterns)
        if after == before and len(meta["indices"]) == len(before):
            for n in after:
                meta["indices"][n]["baseline"] = after[n]
            write_meta(meta_path, meta)
            return {n: after[n]["docs"] for n in after}
    fail("the indices kept changing while they were copied (%d tries); stop what writes to them" % TRIES)


def restore(url, patterns, name, meta_path, only):
    meta = read_meta(meta_path, name)
    golden = meta["indices"]
    for rec in golden.values():  # every copy there before anything live is touched
        if call(url, "GET", "/" + q(rec["copy"]), ok404=True) is None:
            fail("the copy %s of snapshot %s is gone; take the snapshot again (sitectl reset --recreate)" % (rec["copy"], name))
    now, _ = live(url, patterns)
    todo = sorted(set(index_name(n) for n in only) if only else set(now) | set(golden))
    copied = {}
    for n in todo:
        if n in now:
            call(url, "DELETE", "/" + q(n))
    for n in todo:
        rec = golden.get(n)
        if rec is None:
            continue
        make_index(url, n, rec["settings"], rec["mappings"], rec["aliases"])
        copied[n] = reindex(url, rec["copy"], n)
    fresh, _ = live(url, patterns)
    # A re-made index has written exactly what was copied into it (one sequence number each)
    # and deleted nothing: anything else was written meanwhile, and recording it as golden
    # would hide it from every reset.
    meddled = sorted(n for n in copied if n not in fresh or fresh[n].get("closed") or fresh[n]["index_total"] != copied[n]
                     or fresh[n]["delete_total"] != 0 or sum(x + 1 for x in fresh[n]["max_seq_no"]) != copied[n]
                     or count(url, n) != copied[n])
    if meddled:
        fail("%s written while restored (stop what writes to them, then reset again)" % ", ".join(meddled))
    for n in todo:
        if n in golden:
            golden[n]["baseline"] = fresh.get(n)
    write_meta(meta_path, meta)
    return todo


def scroll(url, index):
    """Every document of ``index`` as (id, source), each id once; stops at a repeated id or past
    the total the search announced (a server that pages for ever)."""
    r = obj(call(url, "POST", "/" + q(index) + "/_search?scroll=2m", {"size": 1000, "sort": ["_doc"]}), "search")
    total = (r.get("hits") or {}).get("total")
    total = num(total.get("value") if isinstance(total, dict) else total, "hits.total of " + index)
    sid, seen = r.get("_scroll_id"), set()
    try:
        while True:
            hits = (r.get("hits") or {}).get("hits") or []
            if not hits:
                break
            for h in hits:
                i = str(obj(h, "hit").get("_id"))
                if i in seen:
                    fail("index %s: the scroll gave document %r twice" % (index, i))
                seen.add(i)
                if len(seen) > total:
                    fail("index %s: the scroll gave more documents than its total (%d)" % (index, total))
                yield i, h.get("_source")
            if not sid:
                fail("index %s: the search gave no scroll id" % index)
            r = obj(call(url, "POST", "/_search/scroll", {"scroll": "2m", "scroll_id": sid}), "scroll")
            sid = r.get("_scroll_id") or sid
    finally:
        if sid:
            call(url, "DELETE", "/_search/scroll", {"scroll_id": [sid]}, ok404=True)
    if len(seen) != total:
        fail("index %s: the scroll gave %d documents of %d" % (index, len(seen), total))


def docs_digest(url, index):
    """(count, sha256) over every document of ``index``: id and canonical source, in id order."""
    seen = sorted((i, hashlib.sha256(json.dumps(src, sort_keys=True).encode()).hexdigest()) for i, src in scroll(url, index))
    h = hashlib.sha256()
    for i, d in seen:
        h.update(i.encode() + b"\0" + d.encode() + b"\n")
    return len(seen), h.hexdigest()


def digest(url, patterns, name=None, meta_path=None):
    out = {}
    if name is None:
        now, got = live(url, patterns)
        refresh(url, [n for n in sorted(now) if not now[n].get("closed")])
        for n in sorted(now):
            if now[n].get("closed"):
                out[n] = "closed"
                continue
            s, m = definition(got[n])
            c, d = docs_digest(url, n)
            out[n] = "%d docs %s" % (c, hashlib.sha256((defn_hash(s, m) + json.dumps(now[n]["aliases"], sort_keys=True)
                                                        + d).encode()).hexdigest())
        return out
    meta = read_meta(meta_path, name)
    for n, rec in sorted(meta["indices"].items()):
        c, d = docs_digest(url, rec["copy"])
        out[n] = "%d docs %s" % (c, hashlib.sha256((defn_hash(rec["settings"], rec["mappings"]) + json.dumps(rec["aliases"], sort_keys=True)
                                                    + d).encode()).hexdigest())
    return out


def copies(url, name=None):
    """The copy indices on the server (``sitectl-NAME-INDEX``), of snapshot ``name`` or of any:
    also those a snapshot made before it failed or was killed, which no record names."""
    got = obj(call(url, "GET", "/" + q("sitectl-%s-*" % name if name else "sitectl-*") + "?expand_wildcards=open,closed",
                   ok404=True) or {}, "GET copies")
    return sorted(n for n in got if isinstance(n, str) and n.startswith("sitectl-"))


def held(url):
    """The snapshot names of the copy indices on the server (a name holds no ``-``)."""
    return {"names": sorted({n[len("sitectl-"):].split("-", 1)[0] for n in copies(url) if "-" in n[len("sitectl-"):]})}


def drop(url, name, meta_path):
    if os.path.exists(meta_path) or os.path.islink(meta_path):
        meta = read_meta(meta_path)
        if meta.get("name") == name:
            for rec in meta["indices"].values():
                call(url, "DELETE", "/" + q(rec["copy"]), ok404=True)
        os.remove(meta_path)
    for n in copies(url, name):  # a failed or killed snapshot's copies, which no record names
        call(url, "DELETE", "/" + q(n), ok404=True)
    return None


def export(url, name, meta_path, out):
    meta = read_meta(meta_path, name)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(meta, sort_keys=True) + "\n")
        for n, rec in sorted(meta["indices"].items()):
            for i, src in scroll(url, rec["copy"]):
                f.write(json.dumps({"i": n, "id": i, "s": src}, sort_keys=True) + "\n")
    return {"file": out}


def import_(url, name, meta_path, src):
    with open(src, encoding="utf-8") as f:
        try:
            meta = json.loads(f.readline())
        except (ValueError, RecursionError):
            meta = None
        if not isinstance(meta, dict) or not isinstance(meta.get("indices"), dict):
            fail("%s: not an elasticsearch snapshot export" % src)
        drop(url, name, meta_path)
        meta["name"] = name
        for n, rec in sorted(meta["indices"].items()):
            index_name(n)
            if not isinstance(rec, dict) or not isinstance(rec.get("settings"), dict) or not isinstance(rec.get("mappings"), dict) \
                    or not isinstance(rec.get("aliases"), dict):
                fail("%s: the record of index %s is damaged" % (src, n))
            rec["copy"] = copy_name(name, n)
            call(url, "DELETE", "/" + q(rec["copy"]), ok404=True)
            make_index(url, rec["copy"], rec["settings"], rec["mappings"])
        batch, lines = [], 1

        def flush():
            r = obj(call(url, "POST", "/_bulk?refresh=true", text="\n".join(batch) + "\n"), "bulk")
            if r.get("errors"):
                fail("%s: Elasticsearch refused documents of the import: %s" % (src, json.dumps(r.get("items"))[:300]))

        for line in f:
            lines += 1
            try:
                d = json.loads(line)
            except (ValueError, RecursionError):
                fail("%s: line %d is not JSON" % (src, lines))
            if not isinstance(d, dict) or d.get("i") not in meta["indices"]:
                fail("%s: line %d is a document of an index the export does not record" % (src, lines))
            batch += [json.dumps({"index": {"_index": meta["indices"][d["i"]]["copy"], "_id": str(d.get("id"))}}),
                      json.dumps(d.get("s"))]
            if len(batch) >= 2000:
                flush()
                batch = []
        if batch:
            flush()
        for rec in meta["indices"].values():
            rec["baseline"] = None  # the live indices are another's: the first reset restores them all
    write_meta(meta_path, meta)
    return {"indices": sorted(meta["indices"])}


def main(argv):
    mode, url = argv[0], argv[1].rstrip("/")
    if mode == "version":
        now, _ = live(url, argv[2])
        root = obj(call(url, "GET", "/") or {}, "GET /")
        return {"version": str(obj(root.get("version") or {}, "version").get("number", "?")),
                "tagline": str(root.get("tagline", ""))[:200], "indices": sorted(now)}
    if mode == "state":
        now, _ = live(url, argv[2])
        meta = read_meta(argv[3]) if os.path.exists(argv[3]) or os.path.islink(argv[3]) else None
        base = None if meta is None else {n: r.get("baseline") for n, r in meta["indices"].items()}
        return {"live": now, "meta_name": None if meta is None else meta.get("name"), "baseline": base}
    if mode == "snapshot":
        return snapshot(url, argv[2], argv[3], argv[4])
    if mode == "restore":
        return restore(url, argv[2], argv[3], argv[4], argv[5:])
    if mode == "digest":
        return digest(url, argv[2], *(argv[3:5] if len(argv) > 3 else ()))
    if mode == "drop":
        return drop(url, argv[2], argv[3])
    if mode == "held":
        return held(url)
    if mode == "export":
        return export(url, argv[2], argv[3], argv[4])
    if mode == "import":
        return import_(url, argv[2], argv[3], argv[4])
    fail("unknown mode %r" % mode)


if __name__ == "__main__":
    try:
        result = main(sys.argv[1:])
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError, RecursionError) as e:
        fail("unexpected answer from the server or a damaged record (%s: %s)" % (type(e).__name__, str(e)[:200]))
    print(json.dumps(result, sort_keys=True))
