#!/usr/bin/env python3
"""Write the kiwix replica's ZIM file (sitectl contract replica, not the real dump).

Usage: gen_zim.py OUT.zim [--seed N] [--scale tiny|full]

Deterministic content from ``articles.json`` (facts derived from WebArena's wikipedia tasks)
plus filler articles drawn with ``random.Random(seed)``. libzim (python3-libzim 2.1 /
libzim 8) writes a *new-namespace* ZIM: every entry lives in namespace ``C``. We store
article paths that literally begin with ``A/`` (``A/User:The_other_Kiwix_guy/Landing``), so
kiwix-serve 3.3.0 resolves WebArena's URL ``/<book>/A/<title>`` by a direct path hit and
the main-page redirect of ``/<book>/`` also carries ``/A/`` (contract-postmill-gitlab-map.md §4).
The ZIM's UUID is random (libzim picks it); everything else is deterministic.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import random
import struct
import zlib
from urllib.parse import quote

from libzim.writer import Creator, Hint, Item, StringProvider

HERE = os.path.dirname(os.path.abspath(__file__))
LANDING = "A/User:The_other_Kiwix_guy/Landing"
WORDS = ("river bridge valley county museum library railway harbor market college theater "
         "park avenue hill island lake street tower station festival garden").split()


def png_rgb(w: int, h: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour RGB PNG built with zlib+struct."""
    def chunk(t: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data))
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def path_of(title: str) -> str:
    return "A/" + title.replace(" ", "_")


def href(from_path: str, to_path: str) -> str:
    """Relative link from one entry to another (both under ``A/``), URL-quoted."""
    depth = from_path.count("/") - 1            # directories below A/
    rel = "../" * depth + to_path[2:]
    return ("./" if depth == 0 else "") + quote(rel, safe="/:,()'")


def page(title: str, path: str, paragraphs, facts=(), links=()) -> str:
    body = [f'<h1 id="firstHeading" class="firstHeading">{html.escape(title)}</h1>',
            '<div id="mw-content-text">']
    if facts:
        body.append('<table class="infobox">')
        body += [f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in facts]
        body.append("</table>")
    body += [f"<p>{html.escape(p)}</p>" for p in paragraphs]
    if links:
        body.append('<h2 id="See_also">See also</h2><ul>')
        body += [f'<li><a href="{html.escape(href(path, path_of(t)))}" title="{html.escape(t)}">'
                 f"{html.escape(t)}</a></li>" for t in links]
        body.append("</ul>")
    body.append("</div>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title></head>\n<body class=\"mediawiki\">"
            + "\n".join(body) + "</body></html>\n")


#: A 1x1 lossless WebP (RIFF "WEBP", chunk VP8L; Google's WebP container specification).
WEBP_1PX = bytes.fromhex("524946461a000000574542505650384c0d0000002f0000001007101111888" "8fe0700")


class Blob(Item):
    """A file entry (an image) of the ZIM at ``path`` with ``mimetype``."""

    def __init__(self, path, mimetype, data):
        super().__init__()
        self.path, self.mimetype, self.data = path, mimetype, data

    def get_path(self): return self.path
    def get_title(self): return ""
    def get_mimetype(self): return self.mimetype
    def get_contentprovider(self): return StringProvider(self.data)
    def get_hints(self): return {Hint.FRONT_ARTICLE: False}


class Article(Item):
    def __init__(self, path: str, title: str, content: str):
        super().__init__()
        self._path, self._title, self._content = path, title, content

    def get_path(self): return self._path
    def get_title(self): return self._title
    def get_mimetype(self): return "text/html"
    def get_contentprovider(self): return StringProvider(self._content)
    def get_hints(self): return {Hint.FRONT_ARTICLE: True}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", default="tiny", choices=["tiny", "full"])
    a = ap.parse_args()
    data = json.load(open(os.path.join(HERE, "articles.json"), encoding="utf-8"))
    rng = random.Random(a.seed)
    arts = list(data["articles"])
    for i in range(1, (12 if a.scale == "tiny" else 2000) + 1):      # seeded filler
        w = rng.sample(WORDS, 2)
        t = f"Replica {w[0].title()} {w[1].title()} {i}"
        arts.append({"title": t, "paragraphs": [
            f"{t} is a filler article of the sitectl kiwix replica (seed {a.seed}).",
            " ".join(rng.choice(WORDS) for _ in range(30)) + "."], "links": ["Pittsburgh"]})
    for t in data.get("vwa_articles", []):  # paths VisualWebArena's tasks open; the replica's own text
        arts.append({"title": t, "paragraphs": [
            f"{t}: an article of the sitectl kiwix replica, at the path VisualWebArena's tasks open.",
            " ".join(rng.choice(WORDS) for _ in range(30)) + "."], "links": ["Pittsburgh"]})
    titles = [x["title"] for x in data["articles"]]
    land = data["landing"]
    if os.path.exists(a.out):
        os.unlink(a.out)
    with Creator(a.out).config_indexing(True, "eng").config_nbworkers(1) as c:
        c.set_mainpath(LANDING)
        c.add_item(Article(LANDING, land["title"],
                           page(land["title"], LANDING, land["paragraphs"], links=titles)))
        for x in arts:
            p = path_of(x["title"])
            c.add_item(Article(p, x["title"], page(x["title"], p, x["paragraphs"],
                                                   x.get("facts", ()), x.get("links", ()))))
        c.add_redirection("A/Main_Page", "Main Page", LANDING, {Hint.FRONT_ARTICLE: False})
        c.add_redirection("A/CMU", "CMU", path_of("Carnegie Mellon University"),
                          {Hint.FRONT_ARTICLE: False})
        c.add_redirection("A/MIT", "MIT", path_of("Massachusetts Institute of Technology"),
                          {Hint.FRONT_ARTICLE: False})
        for k, v in [("Name", "wikipedia_en_all"), ("Title", "Wikipedia"),
                     ("Description", "sitectl contract replica of wikipedia_en_all_maxi_2022-05"),
                     ("LongDescription", "A tiny deterministic ZIM written by sitectl's kiwix "
                      "replica build; it stands in for the real 2022-05 Wikipedia dump."),
                     ("Language", "eng"), ("Creator", "Wikipedia"), ("Publisher", "sitectl replica"),
                     ("Date", "2022-05-01"), ("Flavour", "maxi"), ("Tags", "wikipedia;_category:wikipedia;_pictures:yes"),
                     ("Source", f"sitectl seed={a.seed} scale={a.scale}")]:
            c.add_metadata(k, v)
        for img in data.get("vwa_images", []):
            c.add_item(Blob(img["path"], img["mimetype"], WEBP_1PX))
        c.add_illustration(48, png_rgb(48, 48, (51, 102, 204)))
    print(f"wrote {a.out}: {len(arts) + 1} articles")


if __name__ == "__main__":
    main()
