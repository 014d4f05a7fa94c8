"""The reset server (`sitectl serve`) and isolated instances.

Real server on a loopback port, real resets of the mini stack's instance 0 and of instance 2
(the forum only), real HTTP. BrowserGym's own client (`browsergym-webarena` 0.14.3,
unmodified, in `.venv-webarena`) resets and checks instance 0 through it."""
from __future__ import annotations

import io
import json
import os
import subprocess
import threading
import uuid

import pytest
import requests
from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

from sitectl.ops import lifecycle
from sitectl.ops.envvars import env_vars
from sitectl.ops.pool import Pool
from sitectl.progress import Reporter
from sitectl.server import make_server, serve
from sitectl.stack.target import resolve_target
from tests.actions import postmill
from tests.conftest import invoke
from tests.replicas.test_webarena_client import PY

pytestmark = pytest.mark.docker
TOKEN = "test-token-0123456789"
SECOND = 2  # instance 2 runs the forum only
MUTABLE = ["shopping", "shopping_admin", "reddit", "gitlab"]


@pytest.fixture(scope="module")
def second(engine):
    t = resolve_target("mini", host="127.0.0.1", instance=SECOND)
    lifecycle.down(t, engine)
    lifecycle.up(t, t.stack.select(["reddit"]), engine, Reporter())
    yield t
    lifecycle.down(t, engine)


@pytest.fixture
def server(mini, second, engine):
    log = io.StringIO()
    pool = Pool([mini, second], engine, sites={0: MUTABLE, SECOND: ["reddit"]})
    srv = make_server(pool, TOKEN, ("127.0.0.1", 0), reset_wait=30, log=log)
    th = threading.Thread(target=serve, args=(srv, 0.1), daemon=True)
    th.start()
    srv.base = srv.public_base
    srv.logbuf = log
    yield srv
    srv.shutdown()
    th.join(10)
    for n in pool.slots:  # leave no reset running into the next test
        pool.wait(n, 120)


def wait_until(pred, timeout: float) -> bool:
    """Poll ``pred()`` every 50 ms until it is true (tenacity); False after ``timeout`` s."""
    try:
        return Retrying(stop=stop_after_delay(timeout), wait=wait_fixed(0.05),
                        retry=retry_if_result(lambda ok: not ok))(pred)
    except RetryError:
        return False


def auth():
    return {"Authorization": f"Bearer {TOKEN}"}


def test_instances_are_isolated_and_listed(mini, second):
    # Instance 2's forum: its own container, network, port (9999 + 200) and base URL.
    assert second.url(second.stack.sites["reddit"]) == "http://127.0.0.1:10199"
    r = requests.get("http://127.0.0.1:10199/", timeout=30, allow_redirects=False)
    assert r.status_code == 200
    r = invoke(["instances", "--json"])
    assert r.exit_code == 0, r.output
    rows = {x["instance"]: x for x in json.loads(r.stdout)["instances"]}
    assert rows[SECOND]["containers"] == ["i2-forum"] and rows[SECOND]["healthy"]
    assert rows[0]["healthy"] and len(rows[0]["sites"]) == 8
    # A post on instance 2 is not on instance 0.
    url = postmill.create_post("http://127.0.0.1:10199", "sitectl_trusted", "sitectl1234", "books", "only on i2")
    assert postmill.post_exists("http://127.0.0.1:10199", url)
    assert not postmill.post_exists("http://127.0.0.1:9999", url.replace("10199", "9999"))
    assert invoke(["reset", "--instance", str(SECOND), "reddit"]).exit_code == 0
    assert not postmill.post_exists("http://127.0.0.1:10199", url)


def test_tokens_are_required_and_never_logged(server):
    b = server.base
    assert requests.get(f"{b}/reset", timeout=10).status_code == 401
    assert requests.get(f"{b}/t/wrong-token/reset", timeout=10).status_code == 401
    assert requests.get(f"{b}/reset", headers={"Authorization": "Bearer nope"}, timeout=10).status_code == 401
    assert requests.get(f"{b}/reset?token={TOKEN}", timeout=10).status_code == 401  # not a way in, and not logged
    assert requests.post(f"{b}/api/leases", json={"client": "x"}, timeout=10).status_code == 401
    assert requests.delete(f"{b}/api/leases/abc", timeout=10).status_code == 401
    assert requests.get(f"{b}/api/status", timeout=10).status_code == 401
    import socket

    with socket.create_connection(server.server_address[:2], timeout=10) as c:  # a negative body length
        c.sendall(f"POST /api/reset HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                  "Content-Length: -1\r\n\r\n".encode())
        assert c.recv(100).startswith(b"HTTP/1.1 400")
    assert requests.get(f"{b}/status", timeout=10).text in ("Ready for duty!", "Reset ongoing")  # read-only: open
    assert requests.get(f"{b}/t/{TOKEN}/i/{SECOND}/reset", timeout=60).status_code == 200
    assert TOKEN not in server.logbuf.getvalue() and "/t/***/i/2/reset" in server.logbuf.getvalue()


def test_reset_during_reset_answers_418_and_starts_nothing(server):
    pool = server.pool
    server.reset_wait = 0  # answer at once, while the reset runs
    before = pool.slot(0).resets
    first = requests.get(f"{server.base}/t/{TOKEN}/reset", timeout=30)
    second = requests.get(f"{server.base}/t/{TOKEN}/reset", timeout=30)
    assert (first.status_code, second.status_code) == (200, 418), (first.text, second.text)
    assert requests.get(f"{server.base}/status", timeout=10).text == "Reset ongoing"
    assert pool.wait(0, 120)
    assert pool.slot(0).resets == before + 1 and pool.slot(0).last_reset["ok"], pool.slot(0).last_reset
    assert requests.get(f"{server.base}/status", timeout=10).text == "Ready for duty!"


def test_failed_reset_reports_500_then_recovers(server, engine, second):
    import socket

    name = second.container(second.stack.sites["reddit"])
    # A stopped container: the reset starts it again (its state kept), resets it, and it is back.
    engine.docker.container.stop(name)
    assert requests.get(f"{server.base}/t/{TOKEN}/i/{SECOND}/reset", timeout=300).status_code == 200
    assert requests.get(f"{server.base}/i/{SECOND}/status", timeout=10).text == "Ready for duty!"
    row = server.pool.slot(SECOND).last_reset["result"]["sites"][0]
    assert row["method"] in ("none", "delta") and any("started it again" in e for e in row["escalations"]), row
    # A real failure no layer can fix: stopped, and its host port taken by someone else.
    engine.docker.container.stop(name)
    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    blocker.bind(("127.0.0.1", 10199))
    blocker.listen(1)
    try:
        assert requests.get(f"{server.base}/t/{TOKEN}/i/{SECOND}/reset", timeout=300).status_code == 200
        st = requests.get(f"{server.base}/i/{SECOND}/status", timeout=10)
        assert st.status_code == 500 and st.text.startswith("Reset failed") and "10199" in st.text, st.text
        granted = []
        for _ in range(2):  # the failed instance is never leased
            r = requests.post(f"{server.base}/api/leases", json={"client": "c"}, headers=auth(), timeout=10)
            granted.append(r.json().get("instance"))
        assert SECOND not in granted
    finally:
        blocker.close()
    assert requests.get(f"{server.base}/t/{TOKEN}/i/{SECOND}/reset", timeout=300).status_code == 200
    assert requests.get(f"{server.base}/i/{SECOND}/status", timeout=10).text == "Ready for duty!"


def test_two_clients_leasing_at_once_never_share_an_instance(server):
    results, barrier = [], threading.Barrier(3)

    def client(i):
        barrier.wait()
        r = requests.post(f"{server.base}/api/leases", json={"client": f"c{i}", "ttl": 120}, headers=auth(), timeout=30)
        results.append((r.status_code, r.json()))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    granted = [b for code, b in results if code == 200]
    assert sorted(b["instance"] for b in granted) == [0, SECOND]
    assert [code for code, _ in results].count(503) == 1
    mine = next(b for b in granted if b["instance"] == SECOND)
    assert mine["env"]["REDDIT"] == "http://127.0.0.1:10199"
    # The holder resets its instance through its lease; the server token is never handed out,
    # and no one else resets a leased instance.
    assert all(TOKEN not in json.dumps(b) for b in granted)
    assert mine["browsergym_env"]["WA_FULL_RESET"] == f"{server.base}/l/{mine['lease']}"
    assert requests.get(f"{server.base}/t/{TOKEN}/i/{SECOND}/reset", timeout=30).status_code == 409
    assert requests.post(f"{server.base}/api/reset", json={"instance": SECOND}, headers=auth(), timeout=30).status_code == 409
    assert requests.get(f"{mine['reset_url']}/reset", timeout=120).status_code == 200
    assert requests.get(f"{mine['reset_url']}/status", timeout=10).text == "Ready for duty!"
    # From a shell too: `sitectl reset` of the leased instance is refused, naming the lease;
    # --force resets it, and the server's status says so.
    r = invoke(["reset", "--instance", str(SECOND), "reddit", "--json"])
    assert r.exit_code == 10 and "leased to 'c" in r.output and f"lease {mine['lease'][:6]}..." in r.output, r.output
    assert mine["lease"] not in r.output
    r = invoke(["reset", "--instance", str(SECOND), "reddit", "--force", "--json"])
    assert r.exit_code == 0, r.output
    st = requests.get(f"{server.base}/api/status", headers=auth(), timeout=30).json()
    row = next(x for x in st["instances"] if x["instance"] == SECOND)
    assert len(row["lease"]["forced_resets"]) == 1 and "reset forced by pid" in row["lease"]["forced_resets"][0]
    # The log names a lease by its first 6 characters only (the id is the holder's credential).
    assert f"/l/{mine['lease'][:6]}.../reset" in server.logbuf.getvalue() and mine["lease"] not in server.logbuf.getvalue()
    # Heartbeat keeps it; release resets the instance before it is leased again.
    assert requests.post(f"{server.base}/api/leases/{mine['lease']}/heartbeat", headers=auth(), timeout=10).status_code == 200
    url = postmill.create_post("http://127.0.0.1:10199", "sitectl_trusted", "sitectl1234", "books", "leased work")
    r = requests.delete(f"{server.base}/api/leases/{mine['lease']}", headers=auth(), timeout=10)
    assert r.status_code == 200 and r.json()["state"] == "resetting"
    assert requests.post(f"{server.base}/api/leases/{mine['lease']}/heartbeat", headers=auth(), timeout=10).status_code == 404
    assert server.pool.wait(SECOND, 120) and not postmill.post_exists("http://127.0.0.1:10199", url)
    again = requests.post(f"{server.base}/api/leases", json={"client": "next"}, headers=auth(), timeout=10)
    assert again.status_code == 200 and again.json()["instance"] == SECOND
    # Every endpoint the lease went through (reset, status, heartbeat, release): logged, never in full.
    log = server.logbuf.getvalue()
    assert f"/api/leases/{mine['lease'][:6]}.../heartbeat" in log and mine["lease"] not in log and TOKEN not in log


def test_a_lease_reads_what_its_episode_changed_and_gets_it_on_release(server):
    """`GET /l/<lease>/diff` (the lease id is the credential) and `DELETE /api/leases/<id>?diff=1`
    give what changed in the leased instance since golden (docs/diff.md), read before the reset."""
    leases = [requests.post(f"{server.base}/api/leases", json={"client": f"d{i}", "ttl": 120}, headers=auth(),
                            timeout=30).json() for i in range(2)]
    mine = next(b for b in leases if b["instance"] == SECOND)
    other = next(b for b in leases if b["instance"] != SECOND)
    title = "episode " + uuid.uuid4().hex[:8]
    postmill.create_post("http://127.0.0.1:10199", "sitectl_trusted", "sitectl1234", "books", title)

    def titles(d: dict) -> list[str]:
        (site,) = d["sites"]
        return [row["values"]["title"] for st in site["stores"] for t in st.get("tables", [])
                if t["table"] == "public.submissions" for row in t["inserted"]]

    r = requests.get(f"{mine['reset_url']}/diff", timeout=60)
    assert r.status_code == 200 and r.json()["since"] == "golden" and titles(r.json()) == [title], r.text
    r = requests.delete(f"{server.base}/api/leases/{mine['lease']}?diff=1", headers=auth(), timeout=60)
    assert r.status_code == 200 and r.json()["state"] == "resetting" and titles(r.json()["diff"]) == [title], r.text
    assert requests.get(f"{mine['reset_url']}/diff", timeout=10).status_code == 404
    assert requests.delete(f"{server.base}/api/leases/{other['lease']}", headers=auth(), timeout=10).status_code == 200
    assert server.pool.wait(SECOND, 120)
    log = server.logbuf.getvalue()
    assert f"/l/{mine['lease'][:6]}.../diff" in log and mine["lease"] not in log


def test_a_lease_saves_restores_and_deletes_checkpoints_of_its_instance(server):
    """`/l/<lease>/checkpoints[/<name>[/restore]]` (the lease id is the credential): a post saved
    as checkpoint `mid`, gone after a later edit is undone by restoring it, the checkpoints listed
    and deleted; unknown names answer 404, bad ones 400; a lease's checkpoints are deleted when
    it ends; another lease's id cannot reach them."""
    leases = [requests.post(f"{server.base}/api/leases", json={"client": f"c{i}", "ttl": 120}, headers=auth(),
                            timeout=30).json() for i in range(2)]
    mine = next(b for b in leases if b["instance"] == SECOND)
    other = next(b for b in leases if b["instance"] != SECOND)
    base = "http://127.0.0.1:10199"
    first = postmill.create_post(base, "sitectl_trusted", "sitectl1234", "books", "kept " + uuid.uuid4().hex[:8])
    r = requests.post(f"{mine['reset_url']}/checkpoints/mid", timeout=120)
    assert r.status_code == 200 and [s["site"] for s in r.json()["sites"]] == ["reddit"], r.text
    second_post = postmill.create_post(base, "sitectl_trusted", "sitectl1234", "books", "later " + uuid.uuid4().hex[:8])
    r = requests.post(f"{mine['reset_url']}/checkpoints/mid/restore", timeout=120)
    assert r.status_code == 200 and r.json()["sites"][0]["method"] == "checkpoint", r.text
    assert postmill.post_exists(base, first) and not postmill.post_exists(base, second_post)
    r = requests.get(f"{mine['reset_url']}/checkpoints", timeout=30)
    assert r.status_code == 200 and [c["name"] for c in r.json()["checkpoints"]] == ["mid"], r.text
    assert requests.post(f"{mine['reset_url']}/checkpoints/nosuch/restore", timeout=30).status_code == 404
    assert requests.post(f"{mine['reset_url']}/checkpoints/Bad_Name", timeout=30).status_code == 400
    assert requests.post(f"{server.base}/l/{'x' * 20}/checkpoints/mid", timeout=30).status_code == 404
    # The other lease's id names its own instance: it holds no checkpoint of mine.
    r = requests.get(f"{other['reset_url']}/checkpoints", timeout=30)
    assert r.status_code == 200 and r.json()["checkpoints"] == [], r.text
    r = requests.post(f"{mine['reset_url']}/checkpoints/gone", timeout=120)
    assert r.status_code == 200
    r = requests.delete(f"{mine['reset_url']}/checkpoints/gone", timeout=60)
    assert r.status_code == 200 and r.json()["dropped"] == ["reddit"], r.text
    assert requests.delete(f"{mine['reset_url']}/checkpoints/gone", timeout=60).status_code == 404
    # The release resets the instance and deletes the lease's checkpoints.
    assert requests.delete(f"{server.base}/api/leases/{mine['lease']}", headers=auth(), timeout=10).status_code == 200
    assert requests.delete(f"{server.base}/api/leases/{other['lease']}", headers=auth(), timeout=10).status_code == 200
    assert server.pool.wait(SECOND, 120)
    assert not postmill.post_exists(base, first)
    r = invoke(["checkpoint", "list", "--instance", str(SECOND), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["checkpoints"] == [], r.output
    log = server.logbuf.getvalue()
    assert f"/l/{mine['lease'][:6]}.../checkpoints/mid/restore" in log and mine["lease"] not in log


def test_missed_heartbeat_resets_and_returns_the_instance(server):
    pool = server.pool  # its reaper runs every 0.1 s (fixture)
    r = requests.post(f"{server.base}/api/leases", json={"client": "sleepy", "ttl": 0.5}, headers=auth(), timeout=10)
    lease = r.json()
    url = postmill.create_post(lease["urls"]["reddit"], "sitectl_trusted", "sitectl1234", "books", "abandoned work")
    assert wait_until(lambda: pool.slot(lease["instance"]).lease is None, 10)
    assert pool.wait(lease["instance"], 120)
    assert "missed heartbeat of sleepy" in pool.slot(lease["instance"]).last_reset["reason"]
    assert not postmill.post_exists(lease["urls"]["reddit"], url)
    assert requests.post(f"{server.base}/api/leases/{lease['lease']}/heartbeat", headers=auth(), timeout=10).status_code == 404


def test_json_reset_and_status(server):
    r = requests.post(f"{server.base}/api/reset", json={"instance": SECOND, "sites": ["reddit"]}, headers=auth(), timeout=120)
    assert r.status_code == 200 and r.json()["ok"] and r.json()["result"]["sites"][0]["site"] == "reddit"
    assert requests.post(f"{server.base}/api/reset", json={"instance": "x"}, headers=auth(), timeout=10).status_code == 400
    assert requests.post(f"{server.base}/api/reset", json={"instance": 0, "sites": ["nope"]}, headers=auth(),
                         timeout=10).status_code == 400
    assert requests.post(f"{server.base}/api/reset", data="[1", headers=auth(), timeout=10).status_code == 400
    st = requests.get(f"{server.base}/api/status", headers=auth(), timeout=60).json()
    rows = {x["instance"]: x for x in st["instances"]}
    assert rows[SECOND]["last_reset"]["ok"] and rows[SECOND]["sites"]["reddit"]["healthy"]
    assert rows[0]["urls"]["shopping"] == "http://127.0.0.1:7770"


def test_browsergym_client_resets_through_the_server(server, mini):
    assert PY.exists()
    url = postmill.create_post("http://127.0.0.1:9999", "sitectl_trusted", "sitectl1234", "books", "before full_reset")
    # NLTK_DATA: the punkt_tab `make webarena-client` trains (browsergym.webarena needs one on import).
    env = {**os.environ, **env_vars(mini, "browsergym"), "WA_FULL_RESET": f"{server.base}/t/{TOKEN}",
           "NLTK_DATA": str(PY.parents[2] / ".cache/nltk_data")}
    code = ("import logging, time\nlogging.basicConfig(level=logging.INFO)\n"
            "from browsergym.webarena.instance import WebArenaInstance\n"
            "inst = WebArenaInstance()\nt0 = time.time()\ninst.full_reset()\ninst.check_status()\n"
            "print('full_reset done in %.1f s' % (time.time() - t0))\n")
    p = subprocess.run([str(PY), "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "full_reset done" in p.stdout and "Reset started" in p.stderr
    assert not postmill.post_exists("http://127.0.0.1:9999", url)
    assert server.pool.slot(0).last_reset["reason"] == "GET /reset"


def test_sitectl_serve_command(mini, tmp_path):
    import socket
    import stat


    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    tok = tmp_path / "token"
    sitectl = str(PY.parents[2] / ".venv/bin/sitectl")
    p = subprocess.Popen([sitectl, "serve", "--bind", f"127.0.0.1:{port}", "--token-file", str(tok),
                          "--no-initial-reset"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def ready():
            try:
                return requests.get(f"http://127.0.0.1:{port}/status", timeout=2).text == "Ready for duty!"
            except requests.ConnectionError:
                return False
        assert wait_until(ready, 60), p.stderr.read() if p.poll() is not None else "no answer"
        assert stat.S_IMODE(tok.stat().st_mode) == 0o600
        token = tok.read_text().strip()
        assert len(token) >= 32
        assert requests.get(f"http://127.0.0.1:{port}/reset", timeout=10).status_code == 401
        assert requests.get(f"http://127.0.0.1:{port}/t/{token}/reset", timeout=120).status_code == 200
    finally:
        p.terminate()
        _, err = p.communicate(timeout=30)
    assert token not in err and f"WA_FULL_RESET=http://127.0.0.1:{port}/t/$(cat {tok})" in err
    # Bad input: an address without a port, and a token file others can read.
    r = invoke(["serve", "--bind", "127.0.0.1"])
    assert r.exit_code == 2 and "ADDRESS:PORT" in r.output
    tok.chmod(0o644)
    r = invoke(["serve", "--bind", f"127.0.0.1:{port}", "--token-file", str(tok)])
    assert r.exit_code == 2 and "readable by others" in r.output


def test_a_crowd_of_a_thousand_clients_each_gets_an_answer_and_resets_never_overlap(mini, engine):
    """Issue 18, item 4: 1,000 loopback clients connect at once (a barrier releases them), each
    sends one request (three in four BrowserGym's ``GET /reset`` with the token, the rest ``GET
    /status``) and reads the answer. Every client gets an HTTP answer of the protocol (no refused
    or reset connection, no timeout), the resets of the instance never overlap (the pool's real
    reset, wrapped to count how many run at once), and each 200 of ``/reset`` is one reset run."""
    import http.client
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    from sitectl.ops.pool import default_reset

    running, seen = [0], {"most": 0, "runs": 0}
    lock = threading.Lock()

    def counted_reset(*args):
        with lock:
            running[0] += 1
            seen["runs"] += 1
            seen["most"] = max(seen["most"], running[0])
        try:
            return default_reset(*args)
        finally:
            with lock:
                running[0] -= 1

    pool = Pool([mini], engine, reset_fn=counted_reset, sites={mini.instance: ["reddit"]})
    srv = make_server(pool, TOKEN, ("127.0.0.1", 0), reset_wait=30, log=None)
    th = threading.Thread(target=serve, args=(srv, 0.1), daemon=True)
    th.start()
    port = srv.server_address[1]
    n = 1000
    answers, errors = [], []
    gate = threading.Barrier(n)

    def client(i: int) -> None:
        path = "/status" if i % 4 == 3 else f"/t/{TOKEN}/reset"
        gate.wait()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            c.close()
            with lock:
                answers.append((path.rsplit("/", 1)[1], r.status))
        except Exception as e:  # noqa: BLE001 - every failure is what this test counts
            with lock:
                errors.append(f"{type(e).__name__}: {e}")

    old = threading.stack_size(256 * 1024)
    clients = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
    threading.stack_size(old)
    try:
        for t in clients:
            t.start()
        for t in clients:
            t.join(180)
        assert not any(t.is_alive() for t in clients), "clients still waiting after 180 s"
        pool.wait(mini.instance, 120)
    finally:
        srv.shutdown()
        th.join(10)
    assert errors == [], errors[:5]
    assert len(answers) == n
    by = {(p, s) for p, s in answers}
    assert by <= {("reset", 200), ("reset", 418), ("reset", 429), ("reset", 503), ("status", 200)}, by
    assert seen["most"] == 1, seen
    assert sum(1 for a in answers if a == ("reset", 200)) == seen["runs"] >= 1, seen
    assert pool.slot(mini.instance).last_reset["ok"], pool.slot(mini.instance).last_reset
