"""The lease loop bench/serve.py and bench/cluster.py share: N clients, each leasing an
instance from a pool server, making a task-sized change (a forum post through the site's own
HTTP) and releasing it (the server resets the instance before leasing it again)."""
from __future__ import annotations

import threading
import time
import uuid

import requests

from tests.actions import postmill


def forum_post(lease: dict) -> None:
    """A task-sized change: a post in the forum of the leased instance."""
    postmill.create_post(lease["urls"]["reddit"], "sitectl_trusted", "sitectl1234", "books",
                         f"bench {uuid.uuid4().hex[:8]}")


def run_lease_loop(base: str, headers: dict, clients: int, seconds: float, name: str = "c",
                   mutate=forum_post) -> dict:
    """``clients`` threads loop for ``seconds``: lease (retrying every 50 ms while none is
    free), ``mutate(lease)``, release. Returns ``{"done": [monotonic end of each lease],
    "waits": [seconds waited for each lease], "errors": [text], "elapsed": seconds}``."""
    done, waits, errors = [], [], []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client(i: int) -> None:
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            while True:  # wait for a free instance
                r = requests.post(f"{base}/api/leases", json={"client": f"{name}{i}", "ttl": 300}, headers=headers,
                                  timeout=60)
                if r.status_code == 200:
                    break
                if time.monotonic() > stop_at + 600:
                    with lock:
                        errors.append("no lease within 10 min")
                    return
                time.sleep(0.05)
            lease = r.json()
            with lock:
                waits.append(time.monotonic() - t0)
            try:
                mutate(lease)
            except Exception as e:  # noqa: BLE001 - counted, the lease is still released
                with lock:
                    errors.append(f"mutate: {e}")
            requests.delete(f"{base}/api/leases/{lease['lease']}", headers=headers, timeout=60)
            with lock:
                done.append(time.monotonic())

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"done": done, "waits": waits, "errors": errors, "elapsed": time.monotonic() - t0}
