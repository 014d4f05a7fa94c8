"""Drivers of WebArena's three read-only sites: wikipedia (kiwix-serve), map (OpenStreetMap
frontend + tile/Nominatim/OSRM backends) and the homepage.

None of them has a login (webarena-official.md §1.5-§1.7: map tasks use ``storage_state:
null``; kiwix and the homepage have no accounts), so ``login``/``probe_logged_in``/
``login_page_renders`` keep the base class's ``NotImplementedError``. Instead each driver
declares the HTTP probes a health check should run (:func:`probe_paths`) and runs them with
:meth:`ReadOnlyDriver.check`. The probes hold against both the real images and the sitectl
contract replicas, except the ones marked ``replica_only``.

Sources: webarena-official.md §1.5 (map backend health checks, frontend success criteria),
§1.6 (kiwix healthy URL), §1.7 (homepage routes, template placeholder), §1.9 (official smoke
test incl. ``:3000/tile/0/0/0.png``); contract-postmill-gitlab-map.md §3 (map URL shapes and
DOM hooks), §4 (kiwix-serve 3.3.0 routing), §5 (probes telling booting from broken).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

import requests

from sitectl.sites.base import ProbeResult, SiteDriver, register

#: kiwix book name of WebArena's ZIM (file name without ``.zim``; contract §4).
KIWIX_BOOK = "wikipedia_en_all_maxi_2022-05"
#: WebArena's WIKIPEDIA start page (webarena-official.md §2).
KIWIX_LANDING = f"/{KIWIX_BOOK}/A/User:The_other_Kiwix_guy/Landing"
#: Where the map backends listen on the real topology (webarena-official.md §1.5). On the
#: replica every backend answers on the frontend's own port (3000) instead.
REAL_BACKEND_PORTS = {"tile": 8080, "nominatim": 8085, "osrm-car": 5000, "osrm-bike": 5001,
                      "osrm-foot": 5002}
#: The literal placeholder of the homepage template (webarena-official.md §1.7).
HOMEPAGE_PLACEHOLDER = "<your-server-hostname>"


@dataclass(frozen=True)
class Probe:
    """One HTTP health probe.

    Attributes:
        path: path + query, relative to the site's origin (or to ``backend``'s URL).
        status: expected HTTP status (redirects are not followed).
        contains: text the body must contain (``None``: no body check).
        absent: text the body must NOT contain (e.g. the homepage placeholder after post-start).
        content_type: expected prefix of the Content-Type header.
        backend: ``None`` for the site itself, else a key of :data:`REAL_BACKEND_PORTS`.
        replica_only: True when the real image is known not to pass it.
        why: one line: what the probe proves, with its source.
    """

    path: str
    status: int = 200
    contains: str | None = None
    absent: str | None = None
    content_type: str | None = None
    backend: str | None = None
    replica_only: bool = False
    why: str = ""


_ROUTE = "-79.9959,40.4406;-79.9,40.45?overview=false"

_PROBES: dict[str, list[Probe]] = {
    "kiwix": [
        Probe("/", 200, "Welcome to Kiwix Server", content_type="text/html",
              why="library home page (contract §4 routing table)"),
        Probe(KIWIX_LANDING, 200, content_type="text/html",
              why="WebArena WIKIPEDIA start URL answers 200 (webarena-official.md §1.6)"),
        Probe(f"/search?content={KIWIX_BOOK}&pattern=pittsburgh", 200, "results",
              content_type="text/html", why="full-text search endpoint (contract §4)"),
        Probe(f"/suggest?content={KIWIX_BOOK}&term=Pitt", 200, content_type="application/json",
              why="title suggestions (contract §4)"),
    ],
    "osm": [
        Probe("/", 200, "OpenStreetMap", content_type="text/html",
              why="frontend home (webarena-official.md §1.9 smoke test)"),
        Probe("/directions", 200, "routing_engines", content_type="text/html",
              why="directions form present (contract §3.5 DOM hooks)"),
        Probe("/search?query=Carnegie%20Mellon%20University", 200, content_type="text/html",
              why="frontend search URL shape used by url_match tasks (contract §3.5)"),
        Probe("/tile/0/0/0.png", 200, content_type="image/png", backend="tile",
              why="tile backend health (webarena-official.md §1.5)"),
        Probe("/search?q=test&format=json&limit=1", 200, content_type="application/json",
              backend="nominatim", why="Nominatim health (webarena-official.md §1.5)"),
        Probe(f"/route/v1/car/{_ROUTE}", 200, '"code":"Ok"', backend="osrm-car",
              why="OSRM car health (webarena-official.md §1.5)"),
        Probe(f"/route/v1/bike/{_ROUTE}", 200, '"code":"Ok"', backend="osrm-bike",
              why="OSRM bike health (webarena-official.md §1.5)"),
        Probe(f"/route/v1/foot/{_ROUTE}", 200, '"code":"Ok"', backend="osrm-foot",
              why="OSRM foot health (webarena-official.md §1.5)"),
    ],
    "homepage": [
        Probe("/", 200, ":7770", absent=HOMEPAGE_PLACEHOLDER, content_type="text/html",
              why="index rendered and post-start perl substitution applied (§1.7)"),
        Probe("/scratchpad.html", 200, content_type="text/html", why="route (§1.7)"),
        Probe("/calculator.html", 200, content_type="text/html", why="route (§1.7)"),
        Probe("/password.html", 200, "MarvelsGrantMan136", content_type="text/html",
              replica_only=True, why="accounts page; never committed upstream (§1.7, §6.9)"),
    ],
}


def probe_paths(kind: str | None = None) -> dict[str, list[Probe]] | list[Probe]:
    """HTTP probes a health check should hit, per driver kind.

    Args:
        kind: ``"kiwix"``, ``"osm"`` or ``"homepage"``; ``None`` for all of them.
    Returns:
        ``{kind: [Probe, ...]}`` when ``kind`` is None, else that kind's list.
    """
    if kind is None:
        return {k: list(v) for k, v in _PROBES.items()}
    return list(_PROBES[kind])


class ReadOnlyDriver(SiteDriver):
    """Common part: no login; health = run the kind's :class:`Probe` list."""

    def origin(self) -> str:
        """``scheme://host:port`` of ``base_url`` (WIKIPEDIA's env value is a full page URL)."""
        u = urlsplit(self.base_url)
        return f"{u.scheme}://{u.netloc}"

    def backend_base(self, backend: str | None, backends: dict[str, str] | None) -> str:
        if backend and backends and backend in backends:
            return backends[backend].rstrip("/")
        return self.origin()

    def check(self, session: requests.Session | None = None, *, real: bool = False,
              backends: dict[str, str] | None = None) -> list[ProbeResult]:
        """Run every probe of this kind; return one ProbeResult each (ok or not).

        Args:
            session: requests session (a fresh one if None).
            real: skip ``replica_only`` probes (use against the real images).
            backends: map backend key -> base URL (e.g. ``{"tile": "http://h:8080"}``) for the
                real map topology; missing keys use the site's own origin (replica layout).
        Raises:
            SiteUnhealthy: 5xx, timeout or connection error (from ``self.get``).
        """
        s = session or self.new_session()
        out = []
        for p in probe_paths(self.kind):
            if real and p.replica_only:
                continue
            url = self.backend_base(p.backend, backends) + p.path
            r = self.get(s, url, allow_redirects=False)
            why = []
            if r.status_code != p.status:
                why.append(f"HTTP {r.status_code} != {p.status}")
            ctype = r.headers.get("Content-Type", "")
            if p.content_type and not ctype.startswith(p.content_type):
                why.append(f"Content-Type {ctype!r}")
            if p.contains and p.contains not in r.text:
                why.append(f"missing {p.contains!r}")
            if p.absent and p.absent in r.text:
                why.append(f"still contains {p.absent!r}")
            out.append(ProbeResult(ok=not why, url=url, final_url=r.headers.get("Location", url),
                                   status=r.status_code, detail="; ".join(why) or p.why))
        return out

    def healthy(self, session: requests.Session | None = None, **kw) -> bool:
        """True when every probe of :meth:`check` passed."""
        return all(r.ok for r in self.check(session, **kw))


@register
class KiwixDriver(ReadOnlyDriver):
    """WebArena "wikipedia": kiwix-serve 3.3.0 on container port 80 (host 8888). No login.

    ``base_url`` may be WebArena's WIKIPEDIA value (the landing page URL) or the bare origin.
    """

    kind: ClassVar[str] = "kiwix"


@register
class OsmDriver(ReadOnlyDriver):
    """WebArena "map": openstreetmap-website frontend on 3000 (+ tile/Nominatim/OSRM). No login."""

    kind: ClassVar[str] = "osm"


@register
class HomepageDriver(ReadOnlyDriver):
    """WebArena homepage: Flask app on 4399 (WebArena's HOMEPAGE env is a dummy). No login."""

    kind: ClassVar[str] = "homepage"
