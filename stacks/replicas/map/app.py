"""sitectl contract replica of WebArena's map site, all on one port (3000).

Real topology (contract-postmill-gitlab-map.md §3, webarena-official.md §1.5): an
openstreetmap-website (Rails) frontend on :3000, a tile server on :8080, Nominatim 4.2 on
:8085 and three osrm-routed processes on :5000/:5001/:5002. This replica serves the
frontend contract (server-rendered, no JS needed) and the three backends' URL shapes from
one Flask app behind nginx:

* frontend  ``/``, ``/directions``, ``/search?query=``, ``/node|way|relation/<id>``
* tiles     ``/tile/{z}/{x}/{y}.png`` (real 256x256 PNGs built with zlib+struct)
* Nominatim ``/nominatim/{search,reverse,status}``; also bare ``/search`` when the request
  carries Nominatim's ``q`` or ``format`` parameter and no ``query`` (the health check
  ``/search?q=test&format=json&limit=1``), bare ``/reverse`` and ``/status``
* OSRM      ``/route/v1/{profile}/{lon,lat;lon,lat}`` (profile car|driving, bike|bicycle|
  cycling, foot|walking; anything else = car) and ``/osrm/routed-{car,bike,foot}/route/v1/...``
  (WebArena-Verified's proxy layout).

Routes are synthetic (great-circle distance x detour factor, fixed speeds); the response
JSON shape follows OSRM v5.
"""
from __future__ import annotations

import functools
import html
import json
import math
import os
import re
import struct
import unicodedata
import zlib
from urllib.parse import quote, urlencode
from xml.sax.saxutils import quoteattr

from flask import Flask, Response, jsonify, make_response, redirect, request

app = Flask(__name__)
GAZ_PATH = os.environ.get("MAP_GAZETTEER", "/srv/map/gazetteer.json")
PLACES: list[dict] = json.load(open(GAZ_PATH, encoding="utf-8"))
BY_OSM = {(p["osm_type"], p["osm_id"]): p for p in PLACES}
LICENCE = "Data © OpenStreetMap contributors, ODbL 1.0. https://osm.org/copyright"

# Engines in label order, as the real frontend sorts them (contract §3.5): index 0 bike,
# 1 car, 2 foot.
ENGINES = [("fossgis_osrm_bike", "Bicycle (OSRM)", "bike"),
           ("fossgis_osrm_car", "Car (OSRM)", "car"),
           ("fossgis_osrm_foot", "Foot (OSRM)", "foot")]
ENGINE_PROFILE = {e[0]: e[2] for e in ENGINES}
PROFILE_ALIASES = {"car": "car", "driving": "car", "bike": "bike", "bicycle": "bike",
                   "cycling": "bike", "foot": "foot", "walking": "foot"}
DETOUR = {"car": 1.3, "bike": 1.25, "foot": 1.2}
STOP = {"the", "of", "in", "at", "on", "a", "an", "and", "near", "pa", "usa"}


# ---------------------------------------------------------------- geometry / text helpers
def haversine(lat1, lon1, lat2, lon2) -> float:
    r = 6371008.8
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


def norm(s: str) -> str:
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()
    s = s.replace("&", " and ")
    return re.sub(r"[^a-z0-9]+", " ", s).strip()


def singular(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def haystack(p: dict) -> set[str]:
    words = set(norm(" ".join([p["display_name"], p["class"], p["type"].replace("_", " ")]
                              + p["aliases"])).split())
    return words | {singular(w) for w in words}


def match_score(p: dict, q: str) -> float:
    nq = norm(q)
    if not nq:
        return 0.0
    names = [norm(p["name"])] + [norm(a) for a in p["aliases"]]
    if nq in names:
        return 3.0 + p["importance"]
    if norm(p["display_name"]).startswith(nq):
        return 2.5 + p["importance"]
    toks = [singular(t) for t in nq.split() if t not in STOP]
    hay = haystack(p)
    if toks and all(t in hay for t in toks):
        return 1.0 + p["importance"]
    return 0.0


def geocode(q: str, limit: int = 10) -> list[dict]:
    """Nominatim-like free-text search over the gazetteer; supports '<what> near <place>'."""
    m = re.match(r"^(.*?)\s+near\s+(.+)$", q.strip(), re.I)
    if m:
        anchors = geocode(m.group(2), 1)
        if anchors:
            a = anchors[0]
            what = [singular(t) for t in norm(m.group(1)).split() if t not in STOP]
            hits = [p for p in PLACES if p is not a and what and all(t in haystack(p) for t in what)
                    and haversine(a["lat"], a["lon"], p["lat"], p["lon"]) < 3000]
            hits.sort(key=lambda p: haversine(a["lat"], a["lon"], p["lat"], p["lon"]))
            return hits[:limit]
    scored = [(match_score(p, q), -p["place_id"], p) for p in PLACES]
    scored = [s for s in scored if s[0] > 0]
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    return [s[2] for s in scored[:limit]]


def nearest(lat: float, lon: float, max_m: float = 1e12) -> dict | None:
    best = min(PLACES, key=lambda p: haversine(lat, lon, p["lat"], p["lon"]))
    return best if haversine(lat, lon, best["lat"], best["lon"]) <= max_m else None


def polyline(points, precision=5) -> str:
    """Google encoded polyline of [(lat, lon), ...] (what OSRM returns by default)."""
    out, plat, plon, f = [], 0, 0, 10 ** precision
    for lat, lon in points:
        ilat, ilon = round(lat * f), round(lon * f)
        for d in (ilat - plat, ilon - plon):
            v = ~(d << 1) if d < 0 else d << 1
            while v >= 0x20:
                out.append(chr((0x20 | (v & 0x1f)) + 63))
                v >>= 5
            out.append(chr(v + 63))
        plat, plon = ilat, ilon
    return "".join(out)


def speed(profile: str, dist: float) -> float:
    if profile == "foot":
        return 1.39
    if profile == "bike":
        return 4.4
    return 8.3 if dist < 5000 else (13.9 if dist < 30000 else 24.0)


def compute_route(profile: str, a: tuple[float, float], b: tuple[float, float]) -> dict:
    """Synthetic OSRM v5 route between (lat, lon) points: one leg, depart+turn+arrive."""
    dist = round(haversine(a[0], a[1], b[0], b[1]) * DETOUR[profile], 1)
    dur = round(dist / speed(profile, dist), 1)
    mid = (a[0], b[1])
    na, nb = nearest(*a, max_m=300), nearest(*b, max_m=300)
    road_a = (na or {}).get("address", {}).get("road", "")
    road_b = (nb or {}).get("address", {}).get("road", "")
    d1 = round(dist * 0.5, 1)

    def step(kind, loc, dd, tt, name, modifier=None):
        man = {"type": kind, "location": [loc[1], loc[0]], "bearing_before": 0, "bearing_after": 90}
        if modifier:
            man["modifier"] = modifier
        return {"distance": dd, "duration": tt, "weight": tt, "name": name, "mode": "driving"
                if profile == "car" else ("cycling" if profile == "bike" else "walking"),
                "geometry": polyline([loc] if kind == "arrive" else [loc, mid if kind == "depart" else b]),
                "maneuver": man, "driving_side": "right",
                "intersections": [{"location": [loc[1], loc[0]], "bearings": [90], "entry": [True]}]}
    steps = [step("depart", a, d1, round(dur * 0.5, 1), road_a),
             step("turn", mid, round(dist - d1, 1), round(dur - round(dur * 0.5, 1), 1), road_b, "left"),
             step("arrive", b, 0, 0, road_b)]
    leg = {"distance": dist, "duration": dur, "weight": dur,
           "summary": ", ".join(x for x in dict.fromkeys([road_a, road_b]) if x), "steps": steps}
    return {"route": {"distance": dist, "duration": dur, "weight": dur, "weight_name": "routability",
                      "geometry": polyline([a, mid, b]), "legs": [leg]},
            "waypoints": [{"hint": f"replica{(na or {}).get('place_id', 0)}", "distance": 0.0,
                           "name": road_a, "location": [a[1], a[0]]},
                          {"hint": f"replica{(nb or {}).get('place_id', 0)}", "distance": 0.0,
                           "name": road_b, "location": [b[1], b[0]]}]}


# ---------------------------------------------------------------- tiles
def _png(w: int, h: int, rows: list[bytes]) -> bytes:
    def chunk(t, data):
        return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data))
    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


@functools.lru_cache(maxsize=512)
def tile_png(z: int, x: int, y: int) -> bytes:
    """256x256 RGB tile: land colour varying by tile, a 1-px border and a street grid."""
    h = zlib.crc32(f"{z}/{x}/{y}".encode())
    land = bytes((236 + (h & 7), 232 + ((h >> 3) & 7), 220 + ((h >> 6) & 7)))
    road, edge = b"\xff\xff\xff", b"\xc8\xc8\xc8"
    step = 64 if z >= 12 else 128
    plain = bytearray(land * 256)
    for c in range(0, 256, step):
        plain[c * 3:c * 3 + 3] = road
    plain[0:3] = edge
    plain = bytes(plain)
    rows = [edge * 256 if r == 0 else (road * 256 if r % step == 0 else plain) for r in range(256)]
    return _png(256, 256, rows)


@app.route("/tile/<int:z>/<int:x>/<int:y>.png")
def tile(z, x, y):
    if z > 19 or x >= 2 ** z or y >= 2 ** z:
        return Response("Not Found\n", 404, mimetype="text/plain")
    r = Response(tile_png(z, x, y), mimetype="image/png")
    r.headers["Cache-Control"] = "max-age=86400"
    r.headers["Access-Control-Allow-Origin"] = "*"
    return r


# ---------------------------------------------------------------- Nominatim
def place_json(p: dict, v2: bool = False, details: bool = False, extratags: bool = False) -> dict:
    d = {"place_id": p["place_id"], "licence": LICENCE, "osm_type": p["osm_type"],
         "osm_id": p["osm_id"], "boundingbox": [str(v) for v in p["boundingbox"]],
         "lat": f"{p['lat']:.7f}", "lon": f"{p['lon']:.7f}", "display_name": p["display_name"]}
    if v2:
        d.update(category=p["class"], type=p["type"], place_rank=30, importance=p["importance"],
                 addresstype=p["type"], name=p["name"])
    else:
        d.update({"class": p["class"], "type": p["type"], "importance": p["importance"]})
    if details:
        d["address"] = p["address"]
    if extratags:
        d["extratags"] = p["extratags"]
    return d


def place_xml(p: dict, tag: str = "place") -> str:
    bb = ",".join(str(v) for v in p["boundingbox"])
    attrs = (f'place_id="{p["place_id"]}" osm_type="{p["osm_type"]}" osm_id="{p["osm_id"]}" '
             f'lat="{p["lat"]:.7f}" lon="{p["lon"]:.7f}" boundingbox="{bb}" ')
    if tag == "place":
        attrs += (f'place_rank="30" address_rank="30" display_name={quoteattr(p["display_name"])} '
                  f'class="{p["class"]}" type="{p["type"]}" importance="{p["importance"]}"')
        tags = "".join(f"<tag key={quoteattr(k)} value={quoteattr(str(v))}/>"
                       for k, v in p["extratags"].items())
        return f"<place {attrs}><extratags>{tags}</extratags></place>"
    return f"<result {attrs}>{html.escape(p['display_name'])}</result>"


def _nominatim_out(items, single=False):
    fmt = request.args.get("format", "xml")
    details = request.args.get("addressdetails") == "1"
    extra = request.args.get("extratags") == "1"
    if fmt in ("json", "jsonv2"):
        if single:
            if not items:
                return jsonify({"error": "Unable to geocode"})
            return _cors(jsonify(place_json(items[0], fmt == "jsonv2", True, extra)))
        return _cors(jsonify([place_json(p, fmt == "jsonv2", details, extra) for p in items]))
    if single:
        body = (place_xml(items[0], "result") if items else "<error>Unable to geocode</error>")
        xml = (f'<?xml version="1.0" encoding="UTF-8" ?>\n<reversegeocode timestamp="2023-05-25T00:00:00+00:00" '
               f'attribution={quoteattr(LICENCE)} querystring={quoteattr(request.query_string.decode())}>'
               f"{body}</reversegeocode>")
    else:
        q = request.args.get("q", "")
        more = "/search?" + urlencode({"q": q, "format": "xml"})
        xml = (f'<?xml version="1.0" encoding="UTF-8" ?>\n<searchresults timestamp="2023-05-25T00:00:00+00:00" '
               f'attribution={quoteattr(LICENCE)} querystring={quoteattr(q)} '
               f'exclude_place_ids={quoteattr(",".join(str(p["place_id"]) for p in items))} '
               f'more_url={quoteattr(more)}>' + "".join(place_xml(p) for p in items)
               + "</searchresults>")
    return _cors(Response(xml, mimetype="text/xml"))


def _cors(r):
    r.headers["Access-Control-Allow-Origin"] = "*"
    return r


def nominatim_search():
    q = request.args.get("q", "")
    try:
        limit = max(1, min(50, int(request.args.get("limit", 10))))
    except ValueError:
        limit = 10
    return _nominatim_out(geocode(q, limit))


@app.route("/nominatim/search")
@app.route("/nominatim/search.php")
def nominatim_search_route():
    return nominatim_search()


@app.route("/reverse")
@app.route("/nominatim/reverse")
@app.route("/nominatim/reverse.php")
def nominatim_reverse():
    try:
        lat, lon = float(request.args["lat"]), float(request.args["lon"])
    except (KeyError, ValueError):
        return _cors(jsonify({"error": {"code": 400, "message": "Need coordinates or OSM object to lookup."}})), 400
    p = nearest(lat, lon, max_m=5000)
    return _nominatim_out([p] if p else [], single=True)


@app.route("/status")
@app.route("/nominatim/status")
@app.route("/nominatim/status.php")
def nominatim_status():
    if request.args.get("format") == "json":
        return jsonify({"status": 0, "message": "OK", "data_updated": "2023-05-25T00:00:00+00:00",
                        "software_version": "4.2.0-replica", "database_version": "4.2.0-0"})
    return Response("OK", mimetype="text/plain")


# ---------------------------------------------------------------- OSRM
def osrm(profile: str, coords: str):
    prof = PROFILE_ALIASES.get(profile, "car")
    pts = []
    for c in coords.removesuffix(".json").split(";"):
        try:
            lon, lat = (float(v) for v in c.split(","))
        except ValueError:
            return jsonify({"code": "InvalidUrl", "message": f"URL string malformed close to position {len(pts)}"}), 400
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            return jsonify({"code": "InvalidValue", "message": "Invalid coordinate value."}), 400
        pts.append((lat, lon))
    if len(pts) < 2:
        return jsonify({"code": "InvalidOptions", "message": "Number of coordinates needs to be at least two."}), 400
    legs, wps, dist, dur = [], [], 0.0, 0.0
    for a, b in zip(pts, pts[1:]):
        r = compute_route(prof, a, b)
        legs += r["route"]["legs"]
        wps = wps[:-1] + r["waypoints"] if wps else r["waypoints"]
        dist, dur = dist + r["route"]["distance"], dur + r["route"]["duration"]
    route = {"distance": round(dist, 1), "duration": round(dur, 1), "weight": round(dur, 1),
             "weight_name": "routability", "legs": legs}
    if request.args.get("steps", "false") != "true":
        for leg in legs:
            leg["steps"] = []
    if request.args.get("overview", "simplified") != "false":
        route["geometry"] = polyline(pts)
    return _cors(jsonify({"code": "Ok", "routes": [route], "waypoints": wps}))


@app.route("/route/v1/<profile>/<path:coords>")
def osrm_route(profile, coords):
    return osrm(profile, coords)


@app.route("/osrm/routed-<engine>/route/v1/<profile>/<path:coords>")
def osrm_proxied(engine, profile, coords):
    if engine not in ("car", "bike", "foot"):
        return jsonify({"code": "InvalidUrl", "message": "unknown routed engine"}), 400
    return osrm(engine, coords)


# ---------------------------------------------------------------- frontend (HTML)
def fmt_distance(m: float) -> str:
    if m < 1000:
        return f"{round(m)}m"
    if m < 10000:
        return f"{m / 1000:.1f}km"
    return f"{round(m / 1000)}km"


def fmt_time(s: float) -> str:
    m = round(s / 60)
    return f"{m // 60}:{m % 60:02d}"


def search_partial(query="", route_from="", route_to="", engine="fossgis_osrm_car",
                   directions=False, from_err=False, to_err=False) -> str:
    """The search/directions partial (rendered twice: header and #sidebar, as upstream)."""
    e = html.escape
    opts = "".join(f'<option value="{eid}"{" selected" if eid == engine else ""}>{label}</option>'
                   for eid, label, _ in ENGINES)
    return f"""
<div class="search_forms">
  <form method="GET" action="/search" class="search_form"{' style="display:none"' if directions else ''}>
    <input type="text" name="query" id="query" value="{e(query)}" placeholder="Search" autocomplete="on" tabindex="1">
    <input type="submit" name="commit" value="Go" class="btn btn-primary">
    <a class="switch_link" href="/directions" title="Find directions between two points">Find directions between two points</a>
  </form>
  <form method="GET" action="/directions" class="directions_form"{'' if directions else ' style="display:none"'}>
    <input type="text" name="route_from" id="route_from" value="{e(route_from)}" placeholder="From" class="{'error' if from_err else ''}">
    <input type="text" name="route_to" id="route_to" value="{e(route_to)}" placeholder="To" class="{'error' if to_err else ''}">
    <select class="routing_engines" name="routing_engines">{opts}</select>
    <input type="submit" name="routing_go" value="Go" class="routing_go btn btn-primary">
    <button type="button" class="reverse_directions" title="Reverse Directions">Reverse Directions</button>
    <a class="btn-close" href="/">Close</a>
  </form>
</div>"""


def page(title: str, sidebar_content: str, **partial) -> Response:
    ctr = (40.4406, -79.9959)
    z = 12
    n = 2 ** z
    tx = int((ctr[1] + 180) / 360 * n)
    ty = int((1 - math.asinh(math.tan(math.radians(ctr[0]))) / math.pi) / 2 * n)
    tiles = "".join(f'<img class="leaflet-tile" alt="" src="/tile/{z}/{tx + dx}/{ty + dy}.png" '
                    f'style="position:absolute;left:{(dx + 1) * 256}px;top:{(dy + 1) * 256}px">'
                    for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    sp = search_partial(**partial)
    body = f"""<!DOCTYPE html>
<html lang="en" dir="ltr">
<head>
<meta charset="utf-8">
<title>{html.escape(title)} | OpenStreetMap</title>
<style>
 body {{ margin: 0; font-family: sans-serif; font-size: 14px; }}
 header {{ background: #fff; border-bottom: 1px solid #ccc; padding: 6px 10px; }}
 header h1 {{ display: inline; font-size: 18px; margin-right: 1em; }}
 header .search_forms {{ display: none; }}
 #content {{ display: flex; }}
 #sidebar {{ width: 350px; border-right: 1px solid #ccc; padding: 10px; min-height: 90vh; }}
 #map {{ position: relative; flex: 1; overflow: hidden; height: 90vh; background: #ddd; }}
 input.error {{ border: 1px solid red; }}
 .search_results_error {{ color: #a00; }}
 table.browse-tag-list td, table.browse-tag-list th {{ border-bottom: 1px solid #eee; padding: 2px 6px; text-align: left; }}
</style>
</head>
<body class="map-layout">
<header class="closed">
  <h1><a href="/" title="OpenStreetMap">OpenStreetMap</a></h1>
  {sp}
  <nav class="primary"><a href="/directions">Directions</a> <a href="/search?query=">Search</a></nav>
  <span class="replica-note" style="color:#888">sitectl contract replica</span>
</header>
<div id="content">
  <div id="sidebar">
    {sp}
    <div id="sidebar_content">
{sidebar_content}
    </div>
  </div>
  <div id="map" class="leaflet-container">{tiles}</div>
</div>
</body>
</html>
"""
    return make_response(body)


def parse_route(s: str):
    pts = []
    for part in s.split(";"):
        try:
            lat, lon = (float(v) for v in part.split(","))
        except ValueError:
            return None
        pts.append((lat, lon))
    return pts if len(pts) == 2 else None


def label_for(lat: float, lon: float) -> str:
    p = nearest(lat, lon, max_m=25)
    return p["display_name"] if p else f"{lat}, {lon}"


def rounded(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".")


@app.route("/")
def index():
    return page("OpenStreetMap", """<div class="welcome"><h2>Welcome to OpenStreetMap!</h2>
<p>OpenStreetMap is a map of the world, created by people like you. This is a sitectl
contract replica of WebArena's map site (North east US map).</p></div>""")


@app.route("/directions")
def directions():
    engine = request.args.get("engine") or request.cookies.get("_osm_directions_engine") \
        or "fossgis_osrm_car"
    if engine not in ENGINE_PROFILE:
        engine = "fossgis_osrm_car"
    rf, rt = request.args.get("route_from"), request.args.get("route_to")
    if rf is not None or rt is not None:                  # the directions form was submitted
        engine = request.args.get("routing_engines", engine)
        if engine not in ENGINE_PROFILE:
            engine = "fossgis_osrm_car"
        a, b = geocode(rf or "", 1), geocode(rt or "", 1)
        if a and b:
            route = (f"{rounded(a[0]['lat'])},{rounded(a[0]['lon'])};"
                     f"{rounded(b[0]['lat'])},{rounded(b[0]['lon'])}")
            r = redirect("/directions?" + urlencode({"engine": engine, "route": route}, safe=",;"))
            r.set_cookie("_osm_directions_engine", engine, max_age=10 * 365 * 86400)
            return r
        missing = rf if not a else rt
        err = (f'<h2>Directions</h2><p class="search_results_error">Sorry - couldn\'t find '
               f'\'{html.escape(missing or "")}\'.</p>')
        return page("Directions", err, route_from=rf or "", route_to=rt or "", engine=engine,
                    directions=True, from_err=not a, to_err=not b)
    pts = parse_route(request.args.get("route", ""))
    if pts is None:
        f, t = request.args.get("from", ""), request.args.get("to", "")
        return page("Directions", "", route_from=f, route_to=t, engine=engine, directions=True)
    (la, loa), (lb, lob) = pts
    r = compute_route(ENGINE_PROFILE[engine], (la, loa), (lb, lob))["route"]
    rows = "".join(
        f'<tr class="turn"><td class="direction">{i + 1}.</td><td class="instruction">'
        f'{html.escape({"depart": "Start on", "turn": "Turn left onto", "arrive": "Reach destination on"}[s["maneuver"]["type"]])} '
        f'{html.escape(s["name"] or "unnamed road")}</td><td class="distance">'
        f'{fmt_distance(s["distance"]) if s["distance"] else ""}</td></tr>'
        for i, s in enumerate(r["legs"][0]["steps"]))
    side = (f'<h2>Directions</h2>\n<p id="routing_summary">Distance: {fmt_distance(r["distance"])}. '
            f'Time: {fmt_time(r["duration"])}.</p>\n<table id="turnbyturn" class="table table-hover">'
            f'{rows}</table>\n<p id="routing_credit" class="text-center">Directions courtesy of '
            f'<a href="/">OSRM (FOSSGIS)</a> (replica)</p>')
    resp = page("Directions", side, route_from=label_for(la, loa), route_to=label_for(lb, lob),
                engine=engine, directions=True)
    if request.args.get("engine"):
        resp.set_cookie("_osm_directions_engine", engine, max_age=10 * 365 * 86400)
    return resp


@app.route("/search")
def search():
    if "query" not in request.args and ("q" in request.args or "format" in request.args):
        return nominatim_search()                          # Nominatim API shape on :3000
    q = request.args.get("query", "")
    items = geocode(q, 20) if q.strip() else []
    if items:
        lis = "".join(
            f'<li class="search_results_entry"><p>{html.escape(p["type"].replace("_", " ").title())} '
            f'<a class="set_position" data-lat="{p["lat"]}" data-lon="{p["lon"]}" '
            f'href="/{p["osm_type"]}/{p["osm_id"]}">{html.escape(p["display_name"])}</a></p></li>'
            for p in items)
        res = f'<ul class="results-list list-group list-group-flush">{lis}</ul>'
    else:
        res = '<p class="search_results_error">No results found</p>'
    side = (f'<h2>Search Results</h2>\n<h4>Results from <a href="https://nominatim.openstreetmap.org/">'
            f'OpenStreetMap Nominatim</a></h4>\n<div class="search_results_entry">{res}</div>')
    return page(f"Search results for {q}", side, query=q)


def browse(osm_type: str, osm_id: int):
    p = BY_OSM.get((osm_type, osm_id))
    if p is None:
        return page("Not found", f'<h2>{osm_type.title()} not found</h2>'
                                 f'<p>Sorry, {osm_type} #{osm_id} could not be found.</p>'), 404
    tags = {"name": p["name"], p["class"]: p["type"]}
    for k in ("housenumber", "street", "suburb", "city", "county", "state", "postcode"):
        v = p["address"].get("road" if k == "street" else k)
        if v and k != "county":
            tags[f"addr:{k}"] = v
    tags.update(p["extratags"])
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in tags.items() if v)
    side = (f'<h2>{osm_type.title()}: {html.escape(p["name"] or p["display_name"])} ({osm_id})</h2>\n'
            f'<div class="browse-section"><p class="details">{html.escape(p["display_name"])}</p>'
            f'<p>Version #1 · Changeset #1</p><p>Location: <a href="/#map=18/{p["lat"]}/{p["lon"]}">'
            f'{p["lat"]:.7f}, {p["lon"]:.7f}</a></p></div>\n<h4>Tags</h4>'
            f'<table class="browse-tag-list">{rows}</table>')
    return page(f"{osm_type.title()}: {p['name']}", side)


@app.route("/node/<int:osm_id>")
def node(osm_id):
    return browse("node", osm_id)


@app.route("/way/<int:osm_id>")
def way(osm_id):
    return browse("way", osm_id)


@app.route("/relation/<int:osm_id>")
def relation(osm_id):
    return browse("relation", osm_id)
