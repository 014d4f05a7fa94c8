#!/usr/bin/env python3
"""Build the map replica's gazetteer (sitectl contract replica) at image build time.

Usage: gen_gazetteer.py OUT.json [--seed N] [--scale tiny|full]

Input: places.json (facts from WebArena's map tasks). Output: one JSON list of places with
Nominatim-like fields (place_id, osm_type, osm_id, class, type, lat, lon, display_name,
boundingbox, importance, address, extratags, aliases). Filler POIs around Pittsburgh are
drawn with random.Random(seed); everything is deterministic from (seed, scale).
"""
from __future__ import annotations

import argparse
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
FILLER = [("amenity", "cafe", "Cafe"), ("amenity", "restaurant", "Restaurant"),
          ("amenity", "bar", "Bar"), ("tourism", "hotel", "Hotel"),
          ("amenity", "parking", "Parking"), ("shop", "supermarket", "Market")]
STREETS = ["Forbes Avenue", "Fifth Avenue", "Craig Street", "Murray Avenue", "Walnut Street",
           "Penn Avenue", "Liberty Avenue", "Butler Street"]
SUBURBS = ["North Oakland", "Central Oakland", "Shadyside", "Squirrel Hill North", "Bloomfield"]
BASE_OSM_ID = {"node": 1000000, "way": 2000000, "relation": 3000000}
BOX = {"node": 0.0005, "way": 0.002, "relation": 0.05}


def build(seed: int, scale: str) -> list[dict]:
    src = json.load(open(os.path.join(HERE, "places.json"), encoding="utf-8"))
    cols, country = src["columns"], src["country"]
    rows = [dict(zip(cols, r)) for r in src["rows"]]
    rng = random.Random(seed)
    for i in range(1, (40 if scale == "tiny" else 5000) + 1):
        cls, typ, label = rng.choice(FILLER)
        rows.append({"osm_type": "node", "class": cls, "type": typ,
                     "name": f"Replica {label} {i}", "housenumber": str(rng.randint(100, 6999)),
                     "road": rng.choice(STREETS), "suburb": rng.choice(SUBURBS),
                     "city": "Pittsburgh", "county": "Allegheny County", "state": "Pennsylvania",
                     "postcode": "15213", "lat": round(40.43 + rng.random() * 0.04, 6),
                     "lon": round(-79.97 + rng.random() * 0.06, 6), "aliases": [],
                     "extratags": {}})
    out, counters = [], {"node": 0, "way": 0, "relation": 0}
    for i, r in enumerate(rows):
        counters[r["osm_type"]] += 1
        parts = [r["name"], r["housenumber"], r["road"], r["suburb"], r["city"], r["county"],
                 r["state"], r["postcode"], country]
        d = BOX[r["osm_type"]]
        address = {k: r[k] for k in ("housenumber", "road", "suburb", "city", "county",
                                     "state", "postcode") if r[k]}
        address.update(country=country, country_code="us")
        out.append({
            "place_id": 100000 + i,
            "osm_type": r["osm_type"],
            "osm_id": BASE_OSM_ID[r["osm_type"]] + counters[r["osm_type"]] * 7,
            "class": r["class"], "type": r["type"], "name": r["name"],
            "lat": r["lat"], "lon": r["lon"],
            "display_name": ", ".join(p for p in parts if p),
            "boundingbox": [round(r["lat"] - d, 7), round(r["lat"] + d, 7),
                            round(r["lon"] - d, 7), round(r["lon"] + d, 7)],
            "importance": round(0.75 - 0.002 * i if not r["name"].startswith("Replica ")
                                else 0.1, 6),
            "address": address, "extratags": r["extratags"], "aliases": r["aliases"],
        })
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", default="tiny", choices=["tiny", "full"])
    a = ap.parse_args()
    places = build(a.seed, a.scale)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(places, f, ensure_ascii=False, indent=0, sort_keys=True)
    print(f"wrote {a.out}: {len(places)} places")


if __name__ == "__main__":
    main()
