"""Read-back helpers for the read-only sites: wikipedia (kiwix-serve), map, homepage.

These sites have no state a task changes (webarena-official.md §1.5-§1.7, §5.1: map and
wikipedia are never reset), so the "actions" are the reads an agent or evaluator does, over
the sites' own HTTP endpoints, exactly as a browser or API client would. They work against
the real images and the sitectl replicas alike, except where a docstring says otherwise.

URL conventions (webarena-official.md §2): ``wiki_url`` is the kiwix origin
(``http://<host>:8888``; WebArena's full WIKIPEDIA landing URL is accepted too),
``map_url`` the frontend (``http://<host>:3000``), ``homepage_url`` ``http://<host>:4399``.
Backends: on the replica every backend answers on ``map_url``; on the real topology pass
``nominatim_url=http://<backend>:8085`` and ``osrm_url=http://<backend>:5000`` (car),
``:5001`` (bike), ``:5002`` (foot).
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import quote, urlencode, urlsplit

import requests

KIWIX_BOOK = "wikipedia_en_all_maxi_2022-05"
TIMEOUT = 15
ENGINES = ["fossgis_osrm_bike", "fossgis_osrm_car", "fossgis_osrm_foot"]   # label order
ENGINE_PROFILE = {"fossgis_osrm_bike": "bike", "fossgis_osrm_car": "car",
                  "fossgis_osrm_foot": "foot"}


def _origin(url: str) -> str:
    u = urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


def _text(html_s: str) -> str:
    s = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html_s)
    s = re.sub(r"(?s)<[^>]+>", " ", s)
    from html import unescape
    return re.sub(r"\s+", " ", unescape(s)).strip()


# ------------------------------------------------------------------ wikipedia (kiwix-serve)
def fetch_article(wiki_url: str, title: str, book: str = KIWIX_BOOK) -> dict:
    """GET ``/<book>/A/<Title_with_underscores>`` from kiwix-serve (redirects followed).

    Args:
        wiki_url: kiwix origin (or any URL on it, e.g. WebArena's WIKIPEDIA landing URL).
        title: article title, e.g. ``"Christopher Nolan"``.
    Returns:
        ``{"status": int, "url": final URL, "title": <title> text, "text": visible text}``.
    """
    path = quote("A/" + title.replace(" ", "_"), safe="/:,()'")
    r = requests.get(f"{_origin(wiki_url)}/{book}/{path}", timeout=TIMEOUT)
    m = re.search(r"(?is)<title>(.*?)</title>", r.text)
    return {"status": r.status_code, "url": r.url, "title": _text(m.group(1)) if m else "",
            "text": _text(r.text)}


def search_wiki(wiki_url: str, pattern: str, book: str = KIWIX_BOOK) -> list[dict]:
    """Full-text search ``/search?content=<book>&pattern=<q>`` (kiwix-serve 3.3.0).

    Returns:
        ``[{"title": str, "href": "/<book>/A/..."}]`` in result order (first page).
    """
    r = requests.get(f"{_origin(wiki_url)}/search",
                     params={"content": book, "pattern": pattern}, timeout=TIMEOUT)
    r.raise_for_status()
    block = r.text.split('<div class="results">', 1)[-1]
    return [{"href": h, "title": _text(t)} for h, t in
            re.findall(r'(?s)<a href="(/' + re.escape(book) + r'/[^"]+)">(.*?)</a>', block)]


def suggest_wiki(wiki_url: str, term: str, book: str = KIWIX_BOOK) -> list[dict]:
    """Title suggestions ``/suggest?content=<book>&term=<t>`` → kiwix's JSON list."""
    r = requests.get(f"{_origin(wiki_url)}/suggest", params={"content": book, "term": term},
                     timeout=TIMEOUT)
    r.raise_for_status()
    return r.json()


# ------------------------------------------------------------------ map backends
def geocode(map_url: str, query: str, limit: int = 5, nominatim_url: str | None = None) -> list[dict]:
    """Nominatim ``search?q=<query>&format=json&limit=<n>`` (the directions form's call).

    Args:
        map_url: replica origin (its Nominatim answers on the same port).
        nominatim_url: real Nominatim base (``http://<backend>:8085``); overrides map_url.
    Returns:
        Nominatim JSON places; ``lat``/``lon`` are strings, ``display_name`` the full label.
    """
    base = (nominatim_url or map_url).rstrip("/")
    r = requests.get(f"{base}/search", params={"q": query, "format": "json", "limit": limit},
                     timeout=TIMEOUT)
    r.raise_for_status()
    return r.json()


def reverse_geocode(map_url: str, lat: float, lon: float,
                    nominatim_url: str | None = None) -> dict:
    """Nominatim ``reverse?lat=&lon=&format=json`` → one place dict (``{"error":..}`` if none)."""
    base = (nominatim_url or map_url).rstrip("/")
    r = requests.get(f"{base}/reverse", params={"lat": lat, "lon": lon, "format": "json"},
                     timeout=TIMEOUT)
    r.raise_for_status()
    return r.json()


def route(map_url: str, profile: str, start: tuple[float, float], end: tuple[float, float],
          osrm_url: str | None = None, steps: bool = False) -> dict:
    """OSRM v5 ``/route/v1/<profile>/<lon>,<lat>;<lon>,<lat>``.

    Args:
        profile: ``car``, ``bike`` or ``foot`` (the real osrm-routed ignores it; pick the
            engine by ``osrm_url``'s port 5000/5001/5002).
        start, end: ``(lat, lon)`` pairs (this function swaps them to OSRM's lon,lat order).
    Returns:
        ``{"code", "distance" (m), "duration" (s), "raw": full JSON}``.
    """
    base = (osrm_url or map_url).rstrip("/")
    coords = f"{start[1]},{start[0]};{end[1]},{end[0]}"
    r = requests.get(f"{base}/route/v1/{profile}/{coords}",
                     params={"overview": "false", "steps": "true" if steps else "false"},
                     timeout=TIMEOUT)
    j = r.json()
    out = {"code": j.get("code"), "raw": j, "distance": None, "duration": None}
    if j.get("code") == "Ok":
        out.update(distance=j["routes"][0]["distance"], duration=j["routes"][0]["duration"])
    return out


def tile(map_url: str, z: int, x: int, y: int, tile_url: str | None = None) -> bytes:
    """GET ``/tile/{z}/{x}/{y}.png``; returns the PNG bytes (raises on non-200)."""
    r = requests.get(f"{(tile_url or map_url).rstrip('/')}/tile/{z}/{x}/{y}.png", timeout=TIMEOUT)
    r.raise_for_status()
    assert r.content[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return r.content


# ------------------------------------------------------------------ map frontend
def format_distance(m: float) -> str:
    """The frontend's distance text (contract §3.5): ``748m``, ``1.7km``, ``914km``."""
    if m < 1000:
        return f"{round(m)}m"
    return f"{m / 1000:.1f}km" if m < 10000 else f"{round(m / 1000)}km"


def format_time(s: float) -> str:
    """The frontend's time text (contract §3.5): minutes rounded, ``H:MM``."""
    m = round(s / 60)
    return f"{m // 60}:{m % 60:02d}"


def plan_directions(map_url: str, route_from: str, route_to: str,
                    engine: str = "fossgis_osrm_car", nominatim_url: str | None = None,
                    osrm_url: str | None = None) -> dict:
    """Do what the directions form's JS does: geocode both ends, route, build the URL.

    Returns:
        ``{"url": "<map_url>/directions?engine=..&route=lat,lon;lat,lon", "route_from":
        display_name, "route_to": display_name, "selected_index": int, "summary":
        "Distance: X. Time: H:MM."}``; raises LookupError when a place is not found.
    """
    a, b = geocode(map_url, route_from, 1, nominatim_url), geocode(map_url, route_to, 1, nominatim_url)
    if not a or not b:
        raise LookupError(f"not found: {route_from if not a else route_to!r}")
    pa, pb = (float(a[0]["lat"]), float(a[0]["lon"])), (float(b[0]["lat"]), float(b[0]["lon"]))
    rt = route(map_url, ENGINE_PROFILE[engine], pa, pb, osrm_url)

    def r4(v):
        return f"{v:.4f}".rstrip("0").rstrip(".")
    q = urlencode({"engine": engine, "route": f"{r4(pa[0])},{r4(pa[1])};{r4(pb[0])},{r4(pb[1])}"},
                  safe=",;")
    return {"url": f"{map_url.rstrip('/')}/directions?{q}", "route_from": a[0]["display_name"],
            "route_to": b[0]["display_name"], "selected_index": ENGINES.index(engine),
            "summary": f"Distance: {format_distance(rt['distance'])}. Time: {format_time(rt['duration'])}."}


class _Dom(HTMLParser):
    """Collects the DOM hooks WebArena's map evaluators read (contract §3.5)."""

    def __init__(self):
        super().__init__()
        self.inputs: dict[str, str] = {}          # first match per name (querySelector)
        self.in_content = self.in_select = False
        self.depth_content = 0
        self.options: list[bool] = []
        self.selected_index = -1
        self.sidebar_depth = 0
        self.sidebar_text: list[str] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("input", "br", "img", "meta", "link", "hr"):
            self._stack.append(tag)
        if tag == "div" and a.get("id") == "content" and not self.in_content:
            self.in_content, self.depth_content = True, len(self._stack)
        if tag == "input" and a.get("name") in ("route_from", "route_to", "query"):
            self.inputs.setdefault(a["name"], a.get("value") or "")
        if tag == "select" and self.in_content and "routing_engines" in (a.get("class") or "").split() \
                and self.selected_index < 0 and not self.options:
            self.in_select = True
        if tag == "option" and self.in_select:
            self.options.append("selected" in a)
        if tag == "div" and a.get("id") == "sidebar_content" and not self.sidebar_depth:
            self.sidebar_depth = len(self._stack)

    def handle_endtag(self, tag):
        if tag == "select" and self.in_select:
            self.in_select = False
            self.selected_index = self.options.index(True) if True in self.options else 0
        if self._stack:
            if self.sidebar_depth and len(self._stack) == self.sidebar_depth and tag == "div":
                self.sidebar_depth = -1
            if self.in_content and len(self._stack) == self.depth_content and tag == "div":
                self.in_content = False
            self._stack.pop()

    def handle_data(self, data):
        if self.sidebar_depth > 0:
            self.sidebar_text.append(data)


def read_map_page(url: str) -> dict:
    """GET a map frontend page and read the evaluator hooks from its HTML.

    Replica only for JS-built state: the real frontend fills these with JavaScript, so
    against the real site use a browser (the values here would be the empty form).
    Returns:
        ``{"status", "url", "route_from", "route_to", "query", "selected_index"
        (div#content select.routing_engines), "sidebar_text" (#sidebar_content text)}``.
    """
    r = requests.get(url, timeout=TIMEOUT)
    d = _Dom()
    d.feed(r.text)
    return {"status": r.status_code, "url": r.url, "route_from": d.inputs.get("route_from", ""),
            "route_to": d.inputs.get("route_to", ""), "query": d.inputs.get("query", ""),
            "selected_index": d.selected_index,
            "sidebar_text": re.sub(r"\s+", " ", " ".join(d.sidebar_text)).strip()}


def submit_directions(map_url: str, route_from: str, route_to: str,
                      engine: str = "fossgis_osrm_car") -> dict:
    """Submit the directions form without JS (replica only) and read the result page.

    The replica answers the form GET with a 302 to ``/directions?engine=..&route=..`` (the
    URL the real JS writes) and server-renders the hooks. Returns :func:`read_map_page`'s
    dict of the final page.
    """
    q = urlencode({"route_from": route_from, "route_to": route_to, "routing_engines": engine})
    return read_map_page(f"{map_url.rstrip('/')}/directions?{q}")


def search_page(map_url: str, query: str) -> dict:
    """Open ``/search?query=<q>`` (the URL shape url_match tasks expect) and read it.

    Returns :func:`read_map_page`'s dict plus ``"links"``: browse links ``/node|way|relation/<id>``
    in the sidebar (server-rendered on the replica; JS-loaded on the real frontend).
    """
    url = f"{map_url.rstrip('/')}/search?query={quote(query)}"
    out = read_map_page(url)
    r = requests.get(url, timeout=TIMEOUT)
    out["links"] = re.findall(r'href="(/(?:node|way|relation)/\d+)"', r.text)
    return out


# ------------------------------------------------------------------ homepage
def homepage_links(homepage_url: str) -> list[str]:
    """All ``href`` values of the homepage (after post-start: ``http://<host>:7770`` etc.)."""
    r = requests.get(homepage_url.rstrip("/") + "/", timeout=TIMEOUT)
    r.raise_for_status()
    return re.findall(r'href="([^"]*)"', r.text)


def homepage_accounts(homepage_url: str) -> list[dict]:
    """Rows of ``/password.html`` as ``{"site", "username", "password"}`` (replica page;
    the official homepage never committed it, webarena-official.md §1.7)."""
    r = requests.get(homepage_url.rstrip("/") + "/password.html", timeout=TIMEOUT)
    r.raise_for_status()
    rows = re.findall(r'(?s)<tr data-site="([^"]+)"><td>.*?</td><td>(.*?)</td><td>(.*?)</td></tr>', r.text)
    return [{"site": s, "username": u, "password": p} for s, u, p in rows]
