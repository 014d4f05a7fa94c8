"""What operators look at (docs/monitoring.md): the status page in Debian's Chromium, /metrics
read by prometheus-client's own parser, linted by `promtool check metrics` and scraped by a real
Prometheus with the sample config of docs/monitoring/, the alert rules unit-tested by
`promtool test rules`, and the JSON log.

A real `sitectl serve` (in this process) over the mini stack's instance 0 (its pool resets the
forum) and instance 13, which is not up: its reset fails for real (no golden snapshot), the
failure the page and the metrics must show. Prometheus and promtool are Debian's (`make test`
installs the `prometheus` package)."""
from __future__ import annotations

import io
import json
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest
import requests
import yaml
from prometheus_client.parser import text_string_to_metric_families
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from sitectl.ops.pool import Pool
from sitectl.server import make_server, serve
from sitectl.stack.target import resolve_target

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "monitoring"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
TOKEN = "monitor-test-token-0123456789"
DOWN = 13  # an instance that is not up: its reset fails for real


@pytest.fixture
def server(mini, engine):
    log = io.StringIO()
    pool = Pool([mini, resolve_target("mini", host="127.0.0.1", instance=DOWN)], engine,
                sites={0: ["reddit"], DOWN: ["reddit"]})
    srv = make_server(pool, TOKEN, ("127.0.0.1", 0), reset_wait=30, log=log, log_format="json", probe_every=0)
    th = threading.Thread(target=serve, args=(srv, 0.1), daemon=True)
    th.start()
    srv.logbuf = log
    yield srv
    srv.shutdown()
    th.join(10)
    for n in pool.slots:
        pool.wait(n, 120)


def auth():
    return {"Authorization": f"Bearer {TOKEN}"}


def samples(text: str) -> dict[tuple, float]:
    """``{(name, (label, value), ...): value}`` as prometheus-client's own parser reads it."""
    return {(s.name, *sorted(s.labels.items())): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def until(pred, timeout: float):
    return Retrying(stop=stop_after_delay(timeout), wait=wait_fixed(0.2), retry=retry_if_result(lambda v: not v))(pred)


def test_status_page_metrics_and_json_log_show_a_lease_and_a_failed_reset(server, tmp_path):
    b = server.public_base
    lease = requests.post(f"{b}/api/leases", json={"client": "ops-test-holder", "ttl": 300}, headers=auth(), timeout=30)
    assert lease.status_code == 200 and lease.json()["instance"] == 0
    lease_id = lease.json()["lease"]
    failed = requests.post(f"{b}/api/reset", json={"instance": DOWN}, headers=auth(), timeout=60)
    assert failed.status_code == 500 and "no golden snapshot" in failed.json()["error"]
    assert server.monitor.probe_once() >= 1  # instance 13's sites have no container

    # /metrics: open by default, counts only.
    m = requests.get(f"{b}/metrics", timeout=30)
    assert m.status_code == 200 and m.headers["Content-Type"].startswith("text/plain; version=")
    got = samples(m.text)
    assert got[("sitectl_resets_total", ("outcome", "failed"))] == 1
    assert got[("sitectl_reset_duration_seconds_count", ("outcome", "failed"))] == 1
    assert got[("sitectl_lease_events_total", ("event", "granted"))] == 1
    assert got[("sitectl_instances", ("state", "leased"))] == 1 and got[("sitectl_instances", ("state", "failed"))] == 1
    assert got[("sitectl_instance_state", ("sitectl_instance", str(DOWN)), ("state", "failed"))] == 1
    assert got[("sitectl_instance_state", ("sitectl_instance", "0"), ("state", "leased"))] == 1
    assert got[("sitectl_leases_active",)] == 1
    assert got[("sitectl_probe_failures_total", ("probe", "container"), ("site", "reddit"))] >= 1
    assert "ops-test-holder" not in m.text and lease_id[:6] not in m.text and "golden" not in m.text
    lint = subprocess.run(["promtool", "check", "metrics"], input=m.text, capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    server.open_metrics = False  # --private-metrics
    assert requests.get(f"{b}/metrics", timeout=30).status_code == 401
    assert requests.get(f"{b}/metrics", headers=auth(), timeout=30).status_code == 200
    server.open_metrics = True

    # The status page: behind the token; in Chromium with JavaScript off.
    assert requests.get(f"{b}/", timeout=30).status_code == 401
    from playwright.sync_api import sync_playwright

    assert shutil.which(CHROMIUM), "Debian's chromium is installed by `make test` (apt-get install chromium)"
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "status-page.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            ctx = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
            page = ctx.new_page()
            asked: list[str] = []
            page.on("request", lambda r: asked.append(r.url))
            page.goto(f"{b}/t/{TOKEN}/")
            row0, row13 = page.locator('tr[data-instance="0"]'), page.locator(f'tr[data-instance="{DOWN}"]')
            assert row0.get_attribute("data-state") == "leased"
            assert row0.locator(".holder").inner_text() == "ops-test-holder"
            assert row13.get_attribute("data-state") == "failed"
            assert "no golden snapshot" in row13.inner_text()
            assert "reset of instance 13" in page.locator("#failures").inner_text()
            assert page.locator("#chart").is_visible()  # the failed reset is in the last hour
            assert "✗ reddit" in row13.inner_text()  # its site health
            page.screenshot(path=str(shot), full_page=True)
            # It refreshes itself without any script: a second load of the same URL.
            with page.expect_navigation(timeout=15000):
                pass
            assert page.locator('tr[data-instance="0"]').get_attribute("data-state") == "leased"
            ctx.close()
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    assert asked and all(u.startswith(b) for u in asked), asked  # nothing fetched from elsewhere

    # The release resets instance 0 for real: per-site metrics by method.
    assert requests.delete(f"{b}/api/leases/{lease_id}", headers=auth(), timeout=60).status_code == 200
    assert server.pool.wait(0, 300) and server.pool.slot(0).last_reset["ok"]
    got = samples(requests.get(f"{b}/metrics", timeout=30).text)
    assert got[("sitectl_resets_total", ("outcome", "ok"))] == 1
    methods = [k for k in got if k[0] == "sitectl_site_resets_total" and ("site", "reddit") in k]
    assert methods and all(dict(k[1:])["method"] in ("none", "delta", "full", "recreate") for k in methods)
    assert got[("sitectl_lease_events_total", ("event", "released"))] == 1

    # The JSON log: one object a line, no token, no whole lease id.
    text = server.logbuf.getvalue()
    assert TOKEN not in text and lease_id not in text
    lines = [json.loads(x) for x in text.splitlines()]
    assert all({"time", "level", "event"} <= set(x) for x in lines)
    kinds = {x["event"] for x in lines}
    assert {"lease_granted", "reset_started", "reset_finished", "probe_failed", "lease_released", "http"} <= kinds
    fail = next(x for x in lines if x["event"] == "reset_finished" and not x["ok"])
    assert fail["level"] == "error" and fail["instance"] == DOWN and "no golden snapshot" in fail["message"]
    done = next(x for x in lines if x["event"] == "reset_finished" and x["ok"])
    assert done["instance"] == 0 and done["duration"] > 0 and done["sites"][0]["site"] == "reddit"
    assert all(len(x["lease"]) == 6 for x in lines if "lease" in x)


def test_prometheus_scrapes_with_the_sample_config_and_the_alert_rules_hold(server, tmp_path):
    for cmd in (["promtool", "check", "rules", "sitectl-alerts.yml"], ["promtool", "test", "rules", "sitectl-alerts.test.yml"]):
        r = subprocess.run(cmd, cwd=DOCS, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
    # The sample config as shipped, pointed at this server, with the token (--private-metrics).
    server.open_metrics = False
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    cfg = yaml.safe_load((DOCS / "prometheus.yml").read_text())
    cfg["global"]["scrape_interval"] = "1s"
    job = cfg["scrape_configs"][0]
    job["static_configs"][0]["targets"] = [server.public_base.removeprefix("http://")]
    assert "authorization" not in job and "#   credentials_file:" in (DOCS / "prometheus.yml").read_text()
    job["authorization"] = {"type": "Bearer", "credentials_file": str(token)}  # the commented block, filled in
    cfg["rule_files"] = [str(DOCS / "sitectl-alerts.yml")]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(cfg))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    prom = subprocess.Popen(["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        def query(q: str):
            try:
                r = requests.get(f"http://127.0.0.1:{port}/api/v1/query", params={"query": q}, timeout=5)
                return r.json()["data"]["result"]
            except (requests.RequestException, ValueError, KeyError):
                return None

        up = until(lambda: query('up{job="sitectl"}'), 60)
        assert up[0]["value"][1] == "1"  # scraped, with the token
        states = until(lambda: query('sitectl_instance_state{job="sitectl"} == 1'), 30)
        assert {(x["metric"]["sitectl_instance"], x["metric"]["state"]) for x in states} == {("0", "idle"), (str(DOWN), "idle")}
        rules = requests.get(f"http://127.0.0.1:{port}/api/v1/rules", timeout=5).json()["data"]["groups"]
        assert sorted(r["name"] for g in rules for r in g["rules"]) == ["SitectlInstanceFailed", "SitectlResetP95High",
                                                                         "SitectlServerDown"]
        assert all(r["health"] in ("ok", "unknown") for g in rules for r in g["rules"])
    finally:
        prom.terminate()
        prom.wait(30)
