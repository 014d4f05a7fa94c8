"""The replica's catalog search index in its Elasticsearch test double (es_replica.py), written
the way Magento 2.4 writes it (a stand-in, not Magento's indexer):

* index ``magento2_product_1_v<N>`` behind the alias ``magento2_product_1`` (Magento's
  ``catalog/search/elasticsearch7_index_prefix`` ``magento2``, entity ``product``, store 1);
* ``bin/magento indexer:reindex catalogsearch_fulltext`` builds the next version, moves the
  alias to it and deletes the old one;
* with the indexer on "Update by Schedule", cron's ``indexer_update_all_views`` re-indexes the
  products named in ``catalogsearch_fulltext_cl`` since the view's ``version_id`` (a product
  gone from the catalogue is deleted from the index).
"""
import json
import urllib.error
import urllib.request

import mage

ALIAS = "magento2_product_1"
VIEW = "catalogsearch_fulltext"
SETTINGS = {"index": {"number_of_shards": "1", "number_of_replicas": "0", "max_result_window": "100000",
                      "mapping": {"total_fields": {"limit": "20000"}}}}
MAPPINGS = {"properties": {"entity_id": {"type": "integer"}, "sku": {"type": "keyword"}, "name": {"type": "text"},
                           "price": {"type": "double"}, "status": {"type": "integer"}, "visibility": {"type": "integer"},
                           "qty": {"type": "double"}, "is_in_stock": {"type": "integer"}, "store_id": {"type": "integer"}}}
BATCH = 1000


class Http:
    """The double over HTTP on 127.0.0.1:9200 (no proxy)."""

    def __init__(self, url="http://127.0.0.1:9200"):
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def call(self, method, path, body=None, text=None):
        data = text.encode() if text is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/x-ndjson" if text is not None else "application/json"})
        with self.opener.open(req, timeout=60) as r:
            return json.loads(r.read() or b"null")


class InProcess:
    """The double's engine in this process (build time, when no server runs)."""

    def __init__(self, path=None):
        import es_replica
        self.es = es_replica
        es_replica.ENGINE = es_replica.open_engine(path or es_replica.DB_PATH)

    def call(self, method, path, body=None, text=None):
        from urllib.parse import parse_qs, urlsplit
        u = urlsplit(path)
        with self.es.ENGINE.lock:
            return self.es.dispatch(method, u.path, parse_qs(u.query), text if text is not None else
                                    (json.dumps(body) if body is not None else ""))


def doc(p):
    """A product's document (what the replica's storefront search needs of it)."""
    return {"entity_id": int(p["entity_id"]), "sku": p.get("sku"), "name": p.get("name"), "price": float(p.get("price") or 0),
            "status": int(p.get("status") or 0), "visibility": int(p.get("visibility") or 0), "qty": float(p.get("qty") or 0),
            "is_in_stock": int(p.get("is_in_stock") or 0), "store_id": 1}


def _bulk(es, index, conn, ids):
    lines = []
    found = {int(p["entity_id"]) for p in mage.products(conn, ids) if p}
    for p in mage.products(conn, sorted(found)):
        lines += [json.dumps({"index": {"_index": index, "_id": str(p["entity_id"])}}), json.dumps(doc(p), sort_keys=True)]
    for gone in sorted(set(int(i) for i in ids) - found):
        lines.append(json.dumps({"delete": {"_index": index, "_id": str(gone)}}))
    if lines:
        es.call("POST", "/_bulk", text="\n".join(lines) + "\n")


def reindex_all(conn, es):
    """``indexer:reindex catalogsearch_fulltext``: a new version of the index, the alias moved to
    it, the old version deleted. Returns the new index's name."""
    current = sorted(es.call("GET", "/_alias/" + ALIAS) or {}) if _exists(es) else []
    n = 1 + max([int(c.rsplit("_v", 1)[1]) for c in current if c.rsplit("_v", 1)[-1].isdigit()] or [0])
    new = "%s_v%d" % (ALIAS, n)
    es.call("PUT", "/" + new, {"settings": SETTINGS, "mappings": MAPPINGS})
    ids = [r["entity_id"] for r in mage.q(conn, "SELECT entity_id FROM catalog_product_entity ORDER BY entity_id")]
    for i in range(0, len(ids), BATCH):
        _bulk(es, new, conn, ids[i:i + BATCH])
    es.call("POST", "/_aliases", {"actions": [{"add": {"index": new, "alias": ALIAS}}] +
                                  [{"remove_index": {"index": c}} for c in current]})
    return new


def _exists(es):
    try:
        return bool(es.call("GET", "/_alias/" + ALIAS))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return False
        raise


def update_from_changelog(conn, es, from_version, to_version):
    """Cron's ``indexer_update_all_views`` for the search view: the products in the changelog
    between the two versions re-indexed (deleted when gone). Returns how many."""
    ids = [r["entity_id"] for r in mage.q(conn, "SELECT DISTINCT entity_id FROM `%s_cl` WHERE version_id > %%s AND version_id <= %%s"
                                            % VIEW, (from_version, to_version))]
    for i in range(0, len(ids), BATCH):
        _bulk(es, ALIAS, conn, ids[i:i + BATCH])
    return len(ids)
