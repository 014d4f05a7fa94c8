"""The elasticsearch store's helper against the cases that would make a reset lie: a counter
reset by a restart of the server, an import whose index is gone, a damaged or hostile record,
hostile names in the server's answers, a scroll that never ends. The helper runs as it does in
the container (its text on python3), against the mini replicas' Elasticsearch test double
(stacks/replicas/magento/app/es_replica.py, NOT Elasticsearch) served on loopback by this test,
which makes the server hostile where a case needs it (answers the double would never give:
that is the mocked part). The host side is the real ElasticsearchStore."""
import importlib.util
import json
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sitectl.stores.elasticsearch import HELPER, ElasticsearchStore

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("es_replica", ROOT / "stacks/replicas/magento/app/es_replica.py")
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)


class Server:
    """The double on a free loopback port; ``hook(method, path, query) -> None | (status, body)``
    answers in its place."""

    def __init__(self, db: Path):
        R.ENGINE = R.open_engine(str(db))
        self.hook = None
        outer = self

        class H(R.Handler):
            def _go(self):
                u = urlsplit(self.path)
                got = outer.hook(self.command, u.path, parse_qs(u.query)) if outer.hook else None
                if got is None:
                    return R.Handler._go(self)
                status, body = got
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _go

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"

    def es(self, method, path, body=None):
        with R.ENGINE.lock:
            u = urlsplit(path)
            return R.dispatch(method, u.path, parse_qs(u.query), "" if body is None else json.dumps(body))


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "es.db")
    s.es("PUT", "/magento2_product_1_v1", {"settings": {"index": {"number_of_shards": "1"}},
                                           "mappings": {"properties": {"name": {"type": "text"}}},
                                           "aliases": {"magento2_product_1": {}}})
    for i in range(5):
        s.es("PUT", f"/magento2_product_1_v1/_doc/{i}", {"name": f"p{i}"})
    yield s
    s.srv.shutdown()


def helper(*args, timeout=30):
    p = subprocess.run([sys.executable, "-c", HELPER, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def changes(server, meta, name="golden"):
    store = ElasticsearchStore("shopping", None, server.url, ["magento2_*"])
    return store.parse_changes(name, [helper("state", server.url, "magento2_*", str(meta))[:2]])


def test_an_update_hidden_by_a_restart_of_the_server_is_found(server, tmp_path):
    """The indexing counters start at 0 again after a restart; the shard's sequence numbers do not."""
    meta = tmp_path / "golden.json"
    R.ENGINE.counters.clear()  # a server that just started
    assert helper("snapshot", server.url, "magento2_*", "golden", str(meta))[0] == 0
    server.es("PUT", "/magento2_product_1/_doc/1", {"name": "edited by the task"})
    R.ENGINE.counters.clear()  # the server restarts
    found = changes(server, meta)
    assert found.items == ["index magento2_product_1_v1 (max_seq_no)"]
    rc, out, err = helper("restore", server.url, "magento2_*", "golden", str(meta), "magento2_product_1_v1")
    assert rc == 0, err
    assert not changes(server, meta)
    assert helper("digest", server.url, "magento2_*")[1] == helper("digest", server.url, "magento2_*", "golden", str(meta))[1]


def test_an_imported_snapshot_whose_index_is_gone_is_restored(server, tmp_path):
    meta = tmp_path / "golden.json"
    assert helper("snapshot", server.url, "magento2_*", "golden", str(meta))[0] == 0
    assert helper("export", server.url, "golden", str(meta), str(tmp_path / "x.jsonl"))[0] == 0
    rc, _, err = helper("import", server.url, "imp", str(tmp_path / "imp.json"), str(tmp_path / "x.jsonl"))
    assert rc == 0, err
    server.es("DELETE", "/magento2_product_1_v1")
    found = changes(server, tmp_path / "imp.json", "imp")
    assert found.items == ["index magento2_product_1_v1 (not restored since the snapshot was imported)"]
    assert helper("restore", server.url, "magento2_*", "imp", str(tmp_path / "imp.json"), *found.detail["indices"])[0] == 0
    assert not changes(server, tmp_path / "imp.json", "imp")
    assert server.es("GET", "/magento2_product_1_v1/_count")["count"] == 5


def test_a_damaged_record_or_a_missing_copy_touches_nothing_live(server, tmp_path):
    meta = tmp_path / "golden.json"
    assert helper("snapshot", server.url, "magento2_*", "golden", str(meta))[0] == 0
    rec = json.loads(meta.read_text())
    bad = dict(rec)
    bad["indices"] = {"magento2_product_1_v1": {**rec["indices"]["magento2_product_1_v1"], "copy": "magento2_product_1_v1"}}
    meta.write_text(json.dumps(bad))
    for args in (("restore", server.url, "magento2_*", "golden", str(meta)), ("drop", server.url, "golden", str(meta))):
        rc, _, err = helper(*args)
        assert rc == 1 and "damaged" in err, err
    meta.write_text(json.dumps(rec))
    server.es("DELETE", "/sitectl-golden-magento2_product_1_v1")
    rc, _, err = helper("restore", server.url, "magento2_*", "golden", str(meta))
    assert rc == 1 and "is gone" in err, err
    assert server.es("GET", "/magento2_product_1_v1/_count")["count"] == 5  # nothing deleted first
    link = tmp_path / "link.json"
    link.symlink_to(meta)
    rc, _, err = helper("state", server.url, "magento2_*", str(link))
    assert rc == 1 and "symbolic link" in err


@pytest.mark.parametrize("case", ["wildcard name", "stats lie", "endless scroll", "not json", "deep json"])
def test_hostile_answers_give_one_clear_error(server, tmp_path, case):
    meta = tmp_path / "golden.json"
    assert helper("snapshot", server.url, "magento2_*", "golden", str(meta))[0] == 0
    page = json.dumps({"_scroll_id": "s", "hits": {"total": {"value": 5}, "hits": [{"_id": "same", "_source": {}}] * 3}}).encode()

    def hook(method, path, query):
        if case == "wildcard name" and method == "GET" and path == "/magento2_*":
            got = server.es("GET", "/magento2_*")
            got["*"] = got["magento2_product_1_v1"]
            return 200, json.dumps(got).encode()
        if case == "stats lie" and "_stats" in path:
            return 200, json.dumps({"_shards": {"failed": 0}, "indices": {}}).encode()
        if case == "endless scroll" and "_search" in path:
            return 200, page
        if case == "not json" and path == "/magento2_*":
            return 200, b"<html>"
        if case == "deep json" and path == "/magento2_*":
            return 200, b"[" * 100000
        return None

    server.hook = hook
    args = ("digest", server.url, "magento2_*") if case == "endless scroll" else ("restore", server.url, "magento2_*", "golden", str(meta))
    rc, out, err = helper(*args, timeout=20)
    server.hook = None
    assert rc == 1 and err.startswith("elasticsearch: ") and len(err.strip().splitlines()) == 1, (rc, err)
    assert "Traceback" not in err
    assert server.es("GET", "/magento2_product_1_v1/_count")["count"] == 5
