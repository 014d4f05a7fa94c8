"""The monitoring parts on their own (sitectl/monitor): what the page escapes, what the log
redacts in both formats, what never reaches a metric, the page's hour, a probe failing at
several readings in a row. No Docker, no HTTP: they take events and status rows as the pool
gives them (the pool and the server driving them for real: tests/test_monitor.py)."""
from __future__ import annotations

import io
import json

from prometheus_client.parser import text_string_to_metric_families

from sitectl.monitor import Monitor
from sitectl.monitor.history import History
from sitectl.monitor.log import EventLog
from sitectl.monitor.metrics import Metrics

TOKEN = "parts-token-0123456789abcdef"
LEASE = "AbCdEfGhIjKlMnOpQrStUvWx"
EVIL = f'<script>alert(1)</script> "{TOKEN}" \n/l/{LEASE}'


class FakePool:
    """The two things a Monitor reads of a pool: ``status()`` rows and ``emit``'s listeners."""

    def __init__(self, rows):
        self.rows, self.listeners = rows, []

    def status(self, health=False):
        return {"instances": self.rows}

    def emit(self, event, **fields):
        if fields.get("lease"):
            fields["lease"] = fields["lease"][:6]
        for fn in self.listeners:
            fn({"event": event, "at": 1_000.0, **fields})


def row(n, state="idle", lease=None, sites=None, error=""):
    return {"instance": n, "state": state, "lease": lease, "last_reset": None, "resets": 0, "error": error,
            "urls": {}, "sites": sites or {}}


def test_the_page_escapes_what_holders_and_errors_say_and_shows_no_secret():
    lease = {"lease": LEASE, "client": EVIL, "instance": 0, "since": 990.0}
    rows = [row(0, lease=lease), row(1, "failed", error=EVIL, sites={"re<b>ddit": {"healthy": False, "detail": EVIL}})]
    mon = Monitor(FakePool(rows))
    mon.history({"event": "reset_finished", "at": 999.0, "instance": 1, "seconds": 0.5, "ok": False, "error": EVIL})
    html = mon.page(TOKEN)
    assert "<script>" not in html and "&lt;script&gt;" in html and "re&lt;b&gt;ddit" in html
    assert 'data-state="leased"' in html and 'data-state="failed"' in html
    assert TOKEN not in html and LEASE not in html and "/l/AbCdEf..." in html  # a screenshot can be shared


def test_both_log_formats_redact_the_token_and_cut_lease_ids():
    for fmt in ("human", "json"):
        buf = io.StringIO()
        log = EventLog(buf, fmt, TOKEN)
        log({"event": "lease_released", "at": 1.0, "instance": 3, "client": EVIL, "lease": LEASE[:6],
             "healthy": False, "error": f"released as unhealthy by {EVIL}"})
        log.http("127.0.0.1", f'"GET /t/{TOKEN}/l/{LEASE}/status?token={TOKEN} HTTP/1.1" 200 -')
        log.note("serve_started", f"token is {TOKEN}")
        text = buf.getvalue()
        assert TOKEN not in text and LEASE not in text, (fmt, text)
        if fmt == "json":
            lines = [json.loads(x) for x in text.splitlines()]
            assert [x["event"] for x in lines] == ["lease_released", "http", "serve_started"]
            assert lines[0]["level"] == "error" and lines[0]["instance"] == 3 and lines[0]["lease"] == LEASE[:6]
            assert lines[1]["status"] == 200 and lines[1]["request"].startswith("GET /t/***/l/AbCdEf...")


def test_no_client_name_lease_or_message_reaches_a_metric():
    pool = FakePool([row(0, lease={"lease": LEASE, "client": EVIL, "instance": 0, "since": 1.0})])
    m = Metrics(pool)
    m({"event": "lease_granted", "client": EVIL, "lease": LEASE[:6], "instance": 0})
    m({"event": "reset_finished", "ok": False, "seconds": 2.0, "error": EVIL, "sites": []})
    m({"event": "reset_finished", "ok": True, "seconds": 0.4,
       "sites": [{"site": "reddit", "method": "full", "seconds": 0.4, "escalated": True}]})
    m({"event": "checkpoint", "op": "save", "ok": False, "seconds": 0.1, "error": EVIL})
    text = m.exposition().decode()
    assert "script" not in text and LEASE[:6] not in text and TOKEN not in text
    got = {(s.name, *sorted(s.labels.items())): s.value for f in text_string_to_metric_families(text) for s in f.samples}
    assert got[("sitectl_site_resets_total", ("method", "full"), ("outcome", "escalated"), ("site", "reddit"))] == 1
    assert got[("sitectl_state_calls_total", ("call", "checkpoint_save"), ("outcome", "failed"))] == 1
    assert got[("sitectl_instances", ("state", "leased"))] == 1 and got[("sitectl_instances", ("state", "unplaced"))] == 0


def test_the_history_keeps_an_hour_of_resets():
    now = [10_000.0]
    h = History(clock=lambda: now[0])
    h({"event": "reset_finished", "at": 10_000.0 - 3_700, "instance": 0, "seconds": 1.0, "ok": True, "sites": []})
    h({"event": "reset_finished", "at": 10_000.0 - 60, "instance": 0, "seconds": 0.5, "ok": False, "error": "boom",
       "sites": [{"site": "reddit", "method": "delta", "seconds": 0.5}]})
    assert [r["seconds"] for r in h.resets()] == [0.5]
    assert h.failures()[0]["message"] == "boom"
    now[0] += 3_600
    assert h.resets() == []


def test_a_probe_failing_at_readings_in_a_row_is_counted_each_time_and_told_once():
    sick = {"reddit": {"healthy": False, "detail": "login: 502", "failed": ["login"]}}
    pool = FakePool([row(0, sites=sick)])
    buf = io.StringIO()
    mon = Monitor(pool, EventLog(buf, "json", TOKEN))
    assert mon.probe_once() == 1 and mon.probe_once() == 1
    text = mon.metrics.exposition().decode()
    assert 'sitectl_probe_failures_total{probe="login",site="reddit"} 2.0' in text
    assert [json.loads(x)["event"] for x in buf.getvalue().splitlines()] == ["probe_failed"]
    assert len(mon.history.failures()) == 1
    pool.rows = [row(0, sites={"reddit": {"healthy": True, "detail": "", "failed": []}})]
    assert mon.probe_once() == 0
    pool.rows = [row(0, sites=sick)]
    mon.probe_once()  # failing again after a good reading: told again
    assert len(buf.getvalue().splitlines()) == 2 and len(mon.history.failures()) == 2


def test_what_a_client_sends_cannot_break_a_json_line_a_human_line_or_the_page():
    buf, human = io.StringIO(), io.StringIO()
    log, hlog = EventLog(buf, "json", TOKEN), EventLog(human, "human", TOKEN)
    for lg in (log, hlog):
        lg.http("10.0.0.1", '"GET /?a=b\\" HTTP/1.1" 400 -')
        lg.http("10.0.0.1", '"GET /\x1b[2J\x1b[31m HTTP/1.1" 404 -')
        lg({"event": "lease_granted", "at": 1.0, "instance": 0, "client": 'bob?x=1"\n[serve] forged', "lease": "abcdef"})
    lines = [json.loads(x) for x in buf.getvalue().splitlines()]  # every line parses
    assert [x["status"] for x in lines[:2]] == [400, 404]
    assert len(human.getvalue().splitlines()) == 3  # no forged line
    assert "\x1b" not in human.getvalue() and "\\x1b[2J" in human.getvalue()
    pool = FakePool([row(0, lease={"lease": LEASE, "client": "x?a=b", "instance": 0, "since": 1.0})])
    html = Monitor(pool).page(TOKEN)
    cells = html.split('<tr data-instance="0"')[1].split("</tr>")[0].count("<td")
    assert cells == 6 and "x?a=***" in html
