"""The status page (``GET /`` of the reset server and the cluster pool, docs/monitoring.md): one
HTML document rendered on the server, no script, nothing fetched from elsewhere (the server sends
it with a Content-Security-Policy that forbids it), refreshing itself every few seconds with a
``<meta http-equiv="refresh">``. The chart is inline SVG."""
from __future__ import annotations

import time
from html import escape as _escape

from sitectl.monitor.log import redact
from sitectl.monitor.metrics import instance_state

#: Seconds between the page's own reloads.
REFRESH = 5
#: Most points the chart draws (the newest; a busy hour has thousands of resets).
MAX_POINTS = 1000


def escaper(token: str):
    """``escape(value)``: ``value`` as the page shows it, redacted as a log line is (no
    ``token``, no whole lease id), then HTML-escaped."""
    def escape(value, quote: bool = True) -> str:
        return _escape(redact(str(value), token), quote=quote)
    return escape
#: The page's Content-Security-Policy: inline styles and SVG only.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em;margin:0 0 .2em}h2{font-size:1.05em;margin:1.4em 0 .4em}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.3em .7em;text-align:left;vertical-align:top}
.state{font-weight:600;padding:.1em .5em;border-radius:.3em}
.s-idle{background:#e3f4e3}.s-leased{background:#e3ecfa}.s-resetting{background:#fff4cc}
.s-failed{background:#fbdada}.s-starting,.s-unplaced{background:#eee}
.ok{color:#1a7f37}.bad{color:#c62828}.site{display:inline-block;margin-right:.6em}
.muted{color:#777}ul{padding-left:1.2em}li{margin:.2em 0}
"""


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(at))


def _last_reset(r: dict | None, escape) -> str:
    if not r:
        return '<span class="muted">none yet</span>'
    methods = sorted({s.get("method") for s in (r.get("result") or {}).get("sites", []) if s.get("method")})
    how = "/".join(methods) or "-"
    if r["ok"]:
        return f'<span class="ok">ok</span> {escape(how)} {r["seconds"]:.2f} s <span class="muted">({escape(str(r.get("reason", "")))})</span>'
    return f'<span class="bad">failed</span> after {r["seconds"]:.2f} s: {escape(str(r.get("error", "")))}'


def _health(row: dict, escape) -> str:
    sites = row.get("sites") or {}
    if "error" in sites and isinstance(sites["error"], str):
        return f'<span class="bad">{escape(sites["error"])}</span>'
    if not sites:
        return '<span class="muted">not read yet</span>'
    out = []
    for name, h in sites.items():
        if not isinstance(h, dict):
            continue
        cls, mark = ("ok", "✓") if h.get("healthy") else ("bad", "✗")
        tip = escape(h.get("detail") or h.get("state") or "", quote=True)
        out.append(f'<span class="site {cls}" title="{tip}">{mark} {escape(name)}</span>')
    return "".join(out)


def _chart(resets: list[dict], now: float, window: float, escape) -> str:
    """An SVG scatter of the resets of the last ``window`` s: x the time, y the seconds."""
    w, h, pad = 640, 160, 34
    if not resets:
        return '<p class="muted" id="chart-empty">No reset finished in the last hour.</p>'
    every = resets
    resets = resets[-MAX_POINTS:]
    top = max(r["seconds"] for r in resets) or 1.0
    dots = []
    for r in resets:
        x = pad + (w - 2 * pad) * (1 - min(window, now - r["at"]) / window)
        y = h - pad - (h - 2 * pad) * (r["seconds"] / top)
        cls = "#1a7f37" if r["ok"] else "#c62828"
        label = f"instance {r['instance']}: {r['seconds']:.2f} s at {_clock(r['at'])} UTC" + ("" if r["ok"] else " (failed)")
        dots.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{cls}"><title>{escape(label)}</title></circle>')
    secs = sorted(r["seconds"] for r in every)
    p95 = secs[min(len(secs) - 1, int(0.95 * len(secs)))]
    return (f'<svg id="chart" role="img" width="{w}" height="{h}" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg">'
            f'<title>reset durations, last hour</title>'
            f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="#999"/>'
            f'<text x="{pad}" y="{h - 10}" font-size="11" fill="#666">60 min ago</text>'
            f'<text x="{w - pad}" y="{h - 10}" font-size="11" fill="#666" text-anchor="end">now</text>'
            f'<text x="{pad - 4}" y="{pad + 4}" font-size="11" fill="#666" text-anchor="end">{top:.1f} s</text>'
            f'<text x="{pad - 4}" y="{h - pad}" font-size="11" fill="#666" text-anchor="end">0</text>'
            + "".join(dots) + "</svg>"
            f'<p class="muted">{len(secs)} reset(s); median {secs[len(secs) // 2]:.2f} s, p95 {p95:.2f} s, '
            f'slowest {secs[-1]:.2f} s</p>')


def render(status: dict, resets: list[dict], failures: list[dict], now: float | None = None,
           window: float = 3600.0, title: str = "sitectl reset server", token: str = "") -> str:
    """The page's HTML.

    Args:
        status: ``pool.status(health=True)`` (a cluster pool's adds ``placement`` and ``nodes``).
        resets: :meth:`sitectl.monitor.history.History.resets`.
        failures: :meth:`sitectl.monitor.history.History.failures`.
        now: the wall clock (s since the epoch).
        window: the chart's span (s).
        token: the server token, taken out of every value shown (a holder may name itself
            anything; an error may quote a URL).
    """
    escape = escaper(token)
    now = time.time() if now is None else now
    rows = status["instances"]
    counts: dict[str, int] = {}
    for row in rows:
        counts[instance_state(row)] = counts.get(instance_state(row), 0) + 1
    summary = " · ".join(f"{c} {escape(s)}" for s, c in sorted(counts.items()))
    cluster = "nodes" in status
    trs = []
    for row in rows:
        state = instance_state(row)
        lease = row.get("lease")
        holder = escape(lease["client"]) if lease else '<span class="muted">-</span>'
        age = _ago(now - lease["since"]) if lease else ""
        where = ""
        if cluster:
            p = row.get("placement") or {}
            where = f"<td>{escape(p.get('node', '(unplaced)'))}</td>"
        last = row.get("last_reset") or {}
        shown = row.get("error") and row["error"] != last.get("error")  # an unhealthy release says why here
        err = f'<div class="bad">{escape(row["error"])}</div>' if shown else ""
        trs.append(f'<tr data-instance="{row["instance"]}" data-state="{escape(state)}"><td>{row["instance"]}</td>'
                   f'<td><span class="state s-{escape(state)}">{escape(state)}</span>{err}</td>{where}'
                   f'<td class="holder">{holder}</td><td>{age}</td><td>{_last_reset(row.get("last_reset"), escape)}</td>'
                   f'<td>{_health(row, escape)}</td></tr>')
    fails = "".join(f'<li><span class="muted">{_clock(f["at"])} UTC</span> <b>{escape(f["what"])}</b>: '
                    f'{escape(f["message"] or "")}</li>' for f in failures) or '<li class="muted">none</li>'
    head = "<th>instance</th><th>state</th>" + ("<th>node</th>" if cluster else "") + \
        "<th>lease holder</th><th>lease age</th><th>last reset</th><th>site health</th>"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="{REFRESH}"><title>{escape(title)}</title>'
            f'<style>{_STYLE}</style></head><body>'
            f'<h1>{escape(title)}</h1><p id="summary">{len(rows)} instance(s): {summary} '
            f'<span class="muted">· {_clock(now)} UTC, refreshes every {REFRESH} s</span></p>'
            f'<table id="instances"><thead><tr>{head}</tr></thead><tbody>{"".join(trs)}</tbody></table>'
            f'<h2>Reset durations, last hour</h2>{_chart(resets, now, window, escape)}'
            f'<h2>Recent failures</h2><ul id="failures">{fails}</ul>'
            f'<p class="muted">Metrics: <code>/metrics</code> (docs/monitoring.md)</p></body></html>')
