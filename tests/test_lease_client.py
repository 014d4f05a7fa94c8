"""The lease client the RL adapters share (sitectl/adapters/lease_client.py) against a real reset
server on loopback: tokens, waits for a free instance, heartbeats, an unhealthy release.

Real server and HTTP; no Docker. The pool's reset is replaced by one that counts its calls and
returns at once (stated here: these tests are about the lease protocol; the adapters' real
resets run in tests/test_rl_adapters.py)."""
from __future__ import annotations

import threading
import time

import pytest
import requests
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

import sitectl.server as srvmod
from sitectl.adapters.lease_client import LeaseClient, read_token
from sitectl.engine import DockerEngine
from sitectl.errors import LeaseError, NoInstanceFree, ServerRefused, UsageError
from sitectl.ops.pool import Pool
from sitectl.stack.target import resolve_target

TOKEN = "lease-client-token-0123456789"


@pytest.fixture
def server(monkeypatch, tmp_path):
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path))
    resets = []
    pool = Pool([resolve_target("mini", host="127.0.0.1", instance=9)], DockerEngine(),
                reset_fn=lambda *a: resets.append(a) or {"sites": [], "logins": []})
    srv = srvmod.make_server(pool, TOKEN, ("127.0.0.1", 0), log=None)
    th = threading.Thread(target=srvmod.serve, args=(srv, 0.1), daemon=True)
    th.start()
    srv.resets = resets
    yield srv
    srv.shutdown()
    th.join(10)


def token_file(tmp_path, text=TOKEN + "\n", mode=0o600):
    p = tmp_path / "token"
    p.write_text(text)
    p.chmod(mode)
    return p


def test_token_and_url_problems_are_named(tmp_path, monkeypatch):
    monkeypatch.delenv("SITECTL_TOKEN_FILE", raising=False)
    with pytest.raises(UsageError, match="no server token"):
        read_token()
    with pytest.raises(UsageError, match=r"token file .*nope: No such file"):
        read_token(token_file=tmp_path / "nope")
    with pytest.raises(UsageError, match="readable by others .*644"):
        read_token(token_file=token_file(tmp_path, mode=0o644))
    with pytest.raises(UsageError, match="is empty"):
        read_token(token_file=token_file(tmp_path, text="\n"))
    monkeypatch.setenv("SITECTL_TOKEN_FILE", str(token_file(tmp_path)))
    assert read_token() == TOKEN
    with pytest.raises(UsageError, match="give http://HOST:PORT"):
        LeaseClient("127.0.0.1:7565")


def test_a_wrong_token_is_refused_without_echoing_it(server):
    c = LeaseClient(server.public_base, token="wrong-token-abcdef")
    with pytest.raises(ServerRefused) as e:
        c.acquire(keep_alive=False)
    assert e.value.status == 401 and "wrong-token-abcdef" not in str(e.value)


def test_acquire_waits_for_a_free_instance_then_says_none_was(server):
    c = LeaseClient(server.public_base, token=TOKEN, client="first")
    lease = c.acquire(ttl=30, keep_alive=False)
    assert lease.instance == 9 and lease.urls["reddit"] == "http://127.0.0.1:10899"
    assert lease.id not in repr(lease) and lease.tag == f"i9-{lease.id[:6]}"
    t0 = time.monotonic()
    with pytest.raises(NoInstanceFree, match="no instance was free within 1 s"):
        LeaseClient(server.public_base, token=TOKEN).acquire(wait=1.0, keep_alive=False)
    assert time.monotonic() - t0 >= 0.9
    # Freed while another waits: the waiter gets it.
    got = []
    waiter = threading.Thread(target=lambda: got.append(c.acquire(wait=20, keep_alive=False)))
    waiter.start()
    time.sleep(0.7)
    assert c.release(lease) == {"released": True, "instance": 9, "state": "resetting"}
    waiter.join(30)
    assert got and got[0].instance == 9 and len(server.resets) == 1


def test_heartbeats_keep_a_lease_until_its_lifetime_ends(server):
    c = LeaseClient(server.public_base, token=TOKEN)
    kept = c.acquire(ttl=1.0)  # heartbeats every 1/3 s
    time.sleep(2.5)
    assert c.info(kept)["instance"] == 9  # alive well past its ttl
    c.release(kept)
    assert server.pool.wait(9, 10)
    short = c.acquire(ttl=1.0, lifetime=0.5)  # heartbeats stop after 0.5 s: reaped about 1 s later
    def ended() -> bool:
        try:
            c.info(short)
        except LeaseError:
            return True
        return False

    assert Retrying(stop=stop_after_delay(10), wait=wait_fixed(0.2), retry=retry_if_result(lambda x: not x))(ended)
    assert server.pool.slot(9).lease is None


def test_an_unhealthy_release_marks_the_instance_failed_with_its_reason(server):
    c = LeaseClient(server.public_base, token=TOKEN, client="rollout-7")
    lease = c.acquire(ttl=30, keep_alive=False)
    answer = c.release(lease, healthy=False, reason="checkout\npage hangs")
    assert answer == {"released": True, "instance": 9, "state": "failed"}
    assert server.resets == []  # no reset: the instance keeps what the episode left
    st = requests.get(f"{server.public_base}/i/9/status", timeout=10)
    assert st.status_code == 500 and st.text == ("Reset failed: released as unhealthy by its holder "
                                                 "(GET /api/status with the token says why)")
    full = requests.get(f"{server.public_base}/api/status", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert full.json()["instances"][0]["error"] == "released as unhealthy by rollout-7: checkout page hangs"
    with pytest.raises(NoInstanceFree):
        c.acquire(wait=0.3, keep_alive=False)
    with pytest.raises(LeaseError):
        c.release(lease)  # ended already
    r = requests.post(f"{server.public_base}/api/reset", json={"instance": 9},
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert r.status_code == 200 and r.json()["ok"]
    assert c.acquire(keep_alive=False).instance == 9


def test_checkpoint_names_and_ops_are_checked_before_any_request(server):
    c = LeaseClient(server.public_base, token=TOKEN)
    lease = c.acquire(ttl=30, keep_alive=False)
    for bad in ("", "../x", "a b", "x" * 65, "é"):
        with pytest.raises(UsageError, match="checkpoint name"):
            c.checkpoint(lease, "save", bad)
    with pytest.raises(UsageError, match="checkpoint operation"):
        c.checkpoint(lease, "rename", "x")


def test_an_unhealthy_reason_stays_behind_the_token_and_healthy_is_read_strictly(server):
    c = LeaseClient(server.public_base, token=TOKEN, client="holder-x")
    b = server.public_base
    lease = c.acquire(ttl=30, keep_alive=False)
    for bad in ("maybe", "0&healthy=1"):
        r = requests.delete(f"{b}/api/leases/{lease.id}?healthy={bad}", headers={"Authorization": f"Bearer {TOKEN}"},
                            timeout=10)
        assert r.status_code == 400 and "'healthy'" in r.json()["error"]
    r = requests.delete(f"{b}/api/leases/{lease.id}?healthy=false&reason=see+/t/{TOKEN}/reset",
                        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert r.status_code == 200 and r.json()["state"] == "failed"
    st = requests.get(f"{b}/i/9/status", timeout=10)  # open to anyone: neither the holder's name nor its words
    assert st.status_code == 500 and "holder-x" not in st.text and TOKEN not in st.text and "/api/status" in st.text
    full = requests.get(f"{b}/api/status", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30).json()
    assert "holder-x" in full["instances"][0]["error"]


def test_a_reset_result_of_another_shape_never_leaves_the_instance_resetting(monkeypatch, tmp_path):
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path))
    for odd in ({"sites": ["reddit"]}, {"sites": None}, ["reddit"], {"sites": [{"site": 1, "method": None}]}):
        pool = Pool([resolve_target("mini", host="127.0.0.1", instance=9)], DockerEngine(), reset_fn=lambda *a, r=odd: r)
        pool.listeners.append(lambda e: None)
        assert pool.start_reset(9) and pool.wait(9, 10)
        assert pool.slot(9).state == "idle"


def test_answers_that_are_not_a_sitectl_servers_give_one_clear_error(tmp_path):
    import http.server

    class Odd(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the stdlib's name
            body = b"<html><body>\n<h1>502 Bad Gateway</h1>\n</body></html>" if "x" in self.path else b"[1, 2]"
            self.send_response(502 if "x" in self.path else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Odd)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{srv.server_address[1]}"
        with pytest.raises(ServerRefused, match="no JSON object of the expected shape") as e:
            LeaseClient(base, token=TOKEN).acquire(keep_alive=False)
        assert "\n" not in str(e.value)
        with pytest.raises(ServerRefused, match="answered 502: <html><body> <h1>502 Bad Gateway</h1>") as e:
            LeaseClient(base + "/x", token=TOKEN).acquire(keep_alive=False)
        assert "\n" not in str(e.value)
    finally:
        srv.shutdown()


def test_odd_token_files_are_refused_by_name(tmp_path):
    (tmp_path / "dir").mkdir(mode=0o700)
    with pytest.raises(UsageError, match="not a regular file"):
        read_token(token_file=tmp_path / "dir")
    raw = tmp_path / "latin1"
    raw.write_bytes(b"caf\xe9-token\n")
    raw.chmod(0o600)
    with pytest.raises(UsageError, match="not UTF-8"):
        read_token(token_file=raw)
    with pytest.raises(UsageError, match="spaces or control characters"):
        read_token(token_file=token_file(tmp_path, text="two words\n"))
    with pytest.raises(UsageError, match="a token is one short line"):
        read_token(token_file=token_file(tmp_path, text="x" * 5000))
