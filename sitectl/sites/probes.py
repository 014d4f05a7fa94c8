"""Run the health probes of ``healthchecks/<kind>.yaml`` against one site."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from urllib.parse import urljoin, urlsplit

import requests

from sitectl import http
from sitectl.engine import Engine
from sitectl.errors import LoginError, SitectlError, SiteUnhealthy
from sitectl.sites import driver_for
from sitectl.stack import Probe, Site
from sitectl.stack.loader import health_ref, load_health
from sitectl.stack.target import Target


@dataclass
class ProbeOutcome:
    """Result of one probe.

    Attributes:
        site, probe: names.
        ok: passed or not.
        detail: the last response in one line (status, redirect target, error), for humans.
    """

    site: str
    probe: str
    ok: bool
    detail: str

    def as_dict(self) -> dict:
        return asdict(self)


def probes_of(target: Target, site: Site, level: str | None = None) -> list[Probe]:
    """The probes of ``site`` (its ``health`` file, or the file of its kind); all levels when None."""
    spec = load_health(health_ref(target.stack, site))
    return [p for p in spec.probes if level is None or p.level == level]


def _origin(url: str) -> str:
    s = urlsplit(url)
    return f"{s.scheme}://{s.netloc}"


def http_probe(url: str, probe: Probe, timeout: float = 10.0) -> tuple[bool, str]:
    """GET ``url`` without following redirects and judge it by ``probe``.

    A redirect to another origin always fails: Magento answers a request for a host that is
    not its configured base URL with a redirect to that base URL (contract-magento.md §6),
    so ``localhost`` against a site configured for ``127.0.0.1`` shows up here.
    """
    try:
        r = http.new_session().get(url, allow_redirects=False, timeout=timeout,
                                   headers={"User-Agent": "sitectl-probe"})
    except requests.RequestException as e:
        return False, f"GET {url}: {type(e).__name__}"
    if r.is_redirect:
        loc = urljoin(url, r.headers.get("Location", ""))
        if _origin(loc) != _origin(url):
            return False, (
                f"GET {url} redirects to another origin: {loc}. The site's base URL says "
                f"{_origin(loc)} but the host in use is {_origin(url)}; use the same host "
                "everywhere (`--host`), or re-run the post-start steps with `sitectl reset SITE`"
            )
    if r.status_code not in probe.status:
        where = f" to {r.headers.get('Location')}" if r.is_redirect else ""
        return False, f"GET {url}: HTTP {r.status_code}{where} (expected {probe.status})"
    if probe.contains and probe.contains not in r.text:
        return False, f"GET {url}: HTTP {r.status_code} without {probe.contains!r}"
    if probe.absent and probe.absent in r.text:
        return False, f"GET {url}: HTTP {r.status_code} still contains {probe.absent!r}"
    if probe.content_type:
        got = r.headers.get("Content-Type", "")
        media, want = got.split(";", 1)[0].strip().lower(), probe.content_type.lower()
        if not (media == want or (want.endswith("/") and media.startswith(want))):
            return False, f"GET {url}: HTTP {r.status_code} with Content-Type {got or 'none'!r} (expected {probe.content_type})"
        if probe.content_type.lower() == "image/png" and not r.content.startswith(PNG_SIGNATURE):
            return False, f"GET {url}: HTTP {r.status_code} labelled image/png but not a PNG ({len(r.content)} bytes)"
    if probe.json_nonempty:
        why = _json_nonempty(r, probe.json_nonempty)
        if why:
            return False, f"GET {url}: HTTP {r.status_code} {why}"
    return True, f"GET {url}: HTTP {r.status_code}"


#: The first 8 bytes of every PNG file (RFC 2083 §3.1).
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _json_nonempty(r, path: str) -> str:
    """"" when the JSON value at dotted ``path`` of the body is a non-empty list or object, else why not."""
    try:
        v = r.json()
    except (ValueError, RecursionError):  # a hostile body nested too deeply is not JSON either
        return "is not JSON"
    for part in [p for p in path.split(".") if p]:
        if isinstance(v, list) and part.isdigit() and int(part) < len(v):
            v = v[int(part)]
        elif isinstance(v, dict) and part in v:
            v = v[part]
        else:
            return f"has no {path!r} in its JSON"
    if not isinstance(v, (list, dict)) or not v:
        return f"has {json.dumps(v)[:60]} at {path!r} (expected results)"
    return ""


#: A probe that fails is tried this many times in all by ``verify``, :data:`RETRY_GAP` seconds
#: apart, to tell a site that is down (every try fails) from one whose probe flaps (some pass).
VERIFY_TRIES = 3
RETRY_GAP = 0.5


def run_probe_checked(target: Target, site: Site, probe: Probe, engine: Engine | None,
                      tries: int = VERIFY_TRIES, gap: float = RETRY_GAP) -> ProbeOutcome:
    """Run one probe; when it fails, try it again (``tries`` in all, ``gap`` seconds apart).

    A probe that passes at once passes. A failed one is reported failed either way, and its
    detail says which: ``failed N of N tries`` (down) or ``flaps: passed K of N tries`` (up and
    down: a restarting worker, a 502 from a proxy in front), with the last failure and the
    next step. One pass is taken at its word, so a site that flaps can pass one ``verify`` when
    each probe's single try happens to pass; ``up`` and the readiness wait after a re-create
    need passes in a row (:data:`sitectl.sites.containers.SETTLE_PASSES`)."""

    first = run_probe(target, site, probe, engine)
    if first.ok or tries <= 1:
        return first
    outs = [first]
    for _ in range(tries - 1):
        time.sleep(gap)
        outs.append(run_probe(target, site, probe, engine))
    passed = sum(o.ok for o in outs)
    last_bad = next(o for o in reversed(outs) if not o.ok)
    if passed:
        detail = (f"flaps: passed {passed} of {tries} tries; last failure: {last_bad.detail}; "
                  f"next step: `docker logs {target.container(site)}`, then `sitectl reset --recreate {site.name}` "
                  "if it does not settle")
    else:
        detail = f"{last_bad.detail} (failed {tries} of {tries} tries, {gap:g} s apart)"
    return ProbeOutcome(site.name, probe.name, False, detail)


def run_probe(target: Target, site: Site, probe: Probe, engine: Engine | None) -> ProbeOutcome:
    """Run one probe once (no retry) and return its outcome; never raises for a failing site."""
    base = target.origin(site) if probe.from_origin else target.url(site)
    try:
        if probe.type == "http":
            if probe.fill:  # this instance's values: e.g. the homepage's link to its own shop
                probe = probe.model_copy(update={k: target.fill(v, site) for k in ("contains", "absent")
                                                 if (v := getattr(probe, k))})
            ok, detail = http_probe(base + probe.path, probe)
        elif probe.type == "exec":
            if engine is None:
                return ProbeOutcome(site.name, probe.name, False, "no engine to exec in")
            rc, out = engine.exec(target.container(site), [target.fill(a, site) for a in probe.argv], timeout=30)
            ok = rc == 0
            detail = "exit code 0" if ok else f"exit code {rc}: {out.strip()[-300:]}"
        elif probe.type == "login_page":
            drv = driver_for(site.kind.value, base)
            res = drv.login_page_renders(drv.new_session())
            ok, detail = res.ok, res.detail or f"GET {res.url}: HTTP {res.status}"
        else:  # login
            drv = driver_for(site.kind.value, base)
            account = site.account(probe.role)
            session = drv.new_session()
            drv.login(session, account)
            res = drv.probe_logged_in(session, account)
            ok = res.ok
            detail = res.detail or f"{res.url} -> {res.final_url} (HTTP {res.status})"
    except LoginError as e:
        ok, detail = False, str(e)
    except SiteUnhealthy as e:
        ok, detail = False, e.detail
    except (SitectlError, KeyError) as e:
        ok, detail = False, str(e).strip("'\"")
    return ProbeOutcome(site.name, probe.name, ok, detail)
