"""The Magento sites' search index back to golden (issue 17 item 4), on the mini stack's
replicas, whose Elasticsearch is a test double (stacks/replicas/magento/app/es_replica.py: the
part of Elasticsearch's REST API Magento's indexer and sitectl use, NOT Elasticsearch; Debian
has no Elasticsearch package). Real Docker, real HTTP inside the container.

Changes are made the application's way (an admin price edit that cron's
``indexer_update_all_views`` carries into the index; ``bin/magento indexer:reindex``, which
makes the next index version and moves the alias) and straight through the REST API (documents
written and deleted, an index created or deleted). After each: ``verify --deep`` names the
index, ``sitectl reset`` restores it as a delta, and the proof is a dump read by this test's
own script inside the container (indices, aliases, mappings, settings, every document in id
order), which shares no code with the store or its helper, compared with the dump taken at
golden."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitectl import snapshots
from sitectl.stack.model import StateStore
from tests.actions import magento

pytestmark = pytest.mark.docker

ES = "http://127.0.0.1:9200"

# The test's own reader (not the store's helper): everything of the magento2_* indices.
DUMP_PY = r"""
import json, urllib.request
op = urllib.request.build_opener(urllib.request.ProxyHandler({}))
def get(path, body=None):
    req = urllib.request.Request("http://127.0.0.1:9200" + path, method="POST" if body is not None else "GET",
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.loads(op.open(req).read())
out = {}
for row in get("/_cat/indices/magento2_*?format=json"):
    name = row["index"]
    if name.startswith("sitectl-"):
        continue
    info = get("/" + name)[name]
    s = dict(info["settings"]["index"])
    for k in ("uuid", "creation_date", "provided_name", "version"):
        s.pop(k, None)
    docs, frm = [], 0
    while True:
        hits = get("/" + name + "/_search", {"from": frm, "size": 500, "sort": [{"_id": "asc"}]})["hits"]["hits"]
        if not hits:
            break
        docs += [[h["_id"], h["_source"]] for h in hits]
        frm += len(hits)
    out[name] = {"aliases": sorted(info["aliases"]), "mappings": info["mappings"], "settings": s,
                 "docs": sorted(docs, key=lambda d: d[0])}
print(json.dumps(out, sort_keys=True))
"""


def dump(engine, container):
    rc, out = engine.exec(container, ["python3", "-c", DUMP_PY])
    assert rc == 0, out
    return json.loads(out)


def es(engine, container, method, path, body=None):
    script = ("import json, sys, urllib.request\n"
              "op = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
              "d = sys.argv[3]\n"
              "req = urllib.request.Request('http://127.0.0.1:9200' + sys.argv[2], method=sys.argv[1],"
              " data=d.encode() if d else None, headers={'Content-Type': 'application/json'})\n"
              "print(op.open(req).read().decode())\n")
    rc, out = engine.exec(container, ["python3", "-c", script, method, path, "" if body is None else json.dumps(body)])
    assert rc == 0, out
    return json.loads(out)


def magento_cli(engine, container, *args):
    rc, out = engine.exec(container, ["chpst", "-u", "www-data", "/var/www/magento2/bin/magento", *args])
    assert rc == 0, out
    return out


@pytest.fixture(scope="module")
def golden(mini, engine):
    out = {}
    for site in ("shopping", "shopping_admin"):
        c = mini.container(mini.stack.sites[site])
        (r,) = snapshots.reset(mini, [mini.stack.sites[site]], engine)  # whatever earlier tests left
        out[site] = dump(engine, c)
        assert "magento2_product_1_v1" in out[site] and out[site]["magento2_product_1_v1"]["docs"], out[site].keys()
        assert out[site]["magento2_product_1_v1"]["aliases"] == ["magento2_product_1"]
    return out


def _reset_and_prove(mini, engine, golden, site, expect_item):
    s = mini.stack.sites[site]
    c = mini.container(s)
    deep = snapshots.verify_deep(mini, [s], engine)
    es_rows = [d for d in deep if d["store"].startswith("elasticsearch")]
    assert es_rows and not es_rows[0]["ok"], deep
    assert any(expect_item in x for x in es_rows[0]["differs"]), es_rows
    (r,) = snapshots.reset(mini, [s], engine)
    assert r.method == "delta" and not r.escalations, r
    assert any(i.startswith("index ") for i in r.changed), r.changed
    assert dump(engine, c) == golden[site]
    assert all(d["ok"] for d in snapshots.verify_deep(mini, [s], engine))


def test_an_admin_price_edit_reaches_the_index_through_cron_and_is_reset(mini, engine, golden):
    admin_url = mini.url(mini.stack.sites["shopping_admin"])
    c = mini.container(mini.stack.sites["shopping_admin"])
    before = es(engine, c, "GET", "/magento2_product_1/_doc/1481")["_source"]
    magento.admin_set_price_and_stock(admin_url, magento.admin_session(admin_url), 1481, 77.77, qty=3, in_stock=True)
    magento_cli(engine, c, "cron:run")
    magento_cli(engine, c, "cron:run")  # the first run may only schedule the job (Magento's way)
    after = es(engine, c, "GET", "/magento2_product_1/_doc/1481")["_source"]
    assert after["price"] == 77.77 and after != before
    _reset_and_prove(mini, engine, golden, "shopping_admin", "magento2_product_1_v1")


def test_a_full_reindex_makes_a_new_version_and_is_reset(mini, engine, golden):
    c = mini.container(mini.stack.sites["shopping"])
    magento_cli(engine, c, "indexer:reindex", "catalogsearch_fulltext")
    now = dump(engine, c)
    assert sorted(now) == ["magento2_product_1_v2"] and now["magento2_product_1_v2"]["aliases"] == ["magento2_product_1"]
    _reset_and_prove(mini, engine, golden, "shopping", "magento2_product_1_v")


OPS = st.lists(st.sampled_from(["write", "overwrite", "delete", "extra_index", "drop_index", "alias_off"]), min_size=1, max_size=4)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, n=st.integers(min_value=0, max_value=10_000))
def test_random_writes_through_the_rest_api_are_reset(mini, engine, golden, ops, n):
    c = mini.container(mini.stack.sites["shopping"])
    snapshots.reset(mini, [mini.stack.sites["shopping"]], engine)  # an example that failed half-way leaves nothing behind
    for k, op in enumerate(ops):
        if op == "write":
            es(engine, c, "PUT", f"/magento2_product_1/_doc/new-{n}", {"name": f"agent product {n}", "price": 1.5})
        elif op == "overwrite":
            doc = golden["shopping"]["magento2_product_1_v1"]["docs"][n % len(golden["shopping"]["magento2_product_1_v1"]["docs"])]
            es(engine, c, "PUT", f"/magento2_product_1/_doc/{doc[0]}", {**doc[1], "name": "changed"})
        elif op == "delete":
            doc = golden["shopping"]["magento2_product_1_v1"]["docs"][n % len(golden["shopping"]["magento2_product_1_v1"]["docs"])]
            es(engine, c, "DELETE", f"/magento2_product_1_v1/_doc/{doc[0]}")
        elif op == "extra_index":
            es(engine, c, "PUT", f"/magento2_extra_{n}_{k}", {"mappings": {"properties": {"x": {"type": "keyword"}}}})
        elif op == "drop_index":
            es(engine, c, "DELETE", "/magento2_product_1_v1")
        elif op == "alias_off":
            es(engine, c, "POST", "/_aliases", {"actions": [{"remove": {"index": "magento2_product_1_v1", "alias": "magento2_product_1"}}]})
        if op in ("drop_index", "alias_off"):
            break  # the alias is gone: later writes through it would make a new index (as Elasticsearch does)
    (r,) = snapshots.reset(mini, [mini.stack.sites["shopping"]], engine)
    assert r.method == "delta" and not r.escalations, (ops, r)
    assert dump(engine, c) == golden["shopping"], ops


def test_nothing_changed_is_nothing(mini, engine, golden):
    s = mini.stack.sites["shopping"]
    (r,) = snapshots.reset(mini, [s], engine)
    (r,) = snapshots.reset(mini, [s], engine)
    assert not [i for i in r.changed if i.startswith("index ")], r.changed


def test_a_restart_of_the_server_reads_as_written_and_is_restored(mini, engine, golden):
    """Elasticsearch keeps its indexing counters in memory: after a restart every index reads as
    written (never as golden by accident), and the reset makes it golden again."""
    c = mini.container(mini.stack.sites["shopping"])
    rc, out = engine.exec(c, ["sv", "restart", "/etc/service/elasticsearch"])
    assert rc == 0, out
    for _ in range(50):
        rc, _ = engine.exec(c, ["python3", "-c", "import urllib.request as u; u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:9200/')"])
        if rc == 0:
            break
    (r,) = snapshots.reset(mini, [mini.stack.sites["shopping"]], engine)
    assert any(i.startswith("index magento2_product_1_v1") for i in r.changed) or r.method == "none", r
    assert dump(engine, c) == golden["shopping"]


@pytest.mark.parametrize("entry, message", [
    ({"kind": "elasticsearch"}, "needs indices"),
    ({"kind": "elasticsearch", "indices": ["sitectl-golden-x"]}, "not starting with sitectl-"),
    ({"kind": "elasticsearch", "indices": ["Magento2_*"]}, "lower-case"),
    ({"kind": "elasticsearch", "indices": ["a,b"]}, "lower-case"),
    ({"kind": "elasticsearch", "indices": ["m*"], "url": "http://x; rm -rf /"}, "http://HOST"),
    ({"kind": "redis", "indices": ["m*"]}, "only elasticsearch"),
])
def test_stack_file_entries_are_checked(entry, message):
    with pytest.raises(ValueError, match=message):
        StateStore(**entry)
