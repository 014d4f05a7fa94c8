"""VisualWebArena's Classifieds (OSClass) mutations and read-backs through the site's own HTTP
forms, the way a browser (and VWA's agents) drive them: GET the page, take its ``octoken``, POST
the form. Form fields and routes: research/family-formats.md §4.5 (login), §4.7 (post an ad,
edit, delete, comment), §4.8 (the fine-uploader's ``ajax_upload``). Works against the real
image and the sitectl replica alike.
"""
from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import requests

UA = "Mozilla/5.0 (X11; Linux x86_64) sitectl-actions"


class ActionError(RuntimeError):
    """The site refused an action or answered without the form."""


def _token(page: str) -> str:
    m = re.search(r'name="octoken" value="([^"]*)"', page)
    if not m:
        raise ActionError("no octoken on the page")
    return unescape(m.group(1))


def session(base: str, email: str | None = None, password: str | None = None) -> requests.Session:
    """A browser-like session, logged in when ``email`` is given."""
    s = requests.Session()
    s.headers["User-Agent"] = UA
    if email:
        page = s.get(f"{base}/index.php?page=login", timeout=30)
        r = s.post(f"{base}/index.php", data={"page": "login", "action": "login_post", "octoken": _token(page.text),
                                              "email": email, "password": password}, timeout=60)
        if "My listings" not in r.text:
            raise ActionError(f"login of {email} did not reach My listings ({r.url})")
    return s


def item_page(s: requests.Session, base: str, item_id: int) -> requests.Response:
    return s.get(f"{base}/index.php?page=item&id={item_id}", timeout=30)


def text_of(page: str, css_class: str) -> str:
    """The text of the first element whose class list starts with ``css_class`` (as
    ``document.querySelector('.<class>').textContent`` reads it, tags dropped)."""
    m = re.search(rf'<(\w+) class="{re.escape(css_class)}[" ][^>]*>(.*?)</\1>', page, re.S)
    return re.sub(r"<[^>]+>", "", unescape(m.group(2))).strip() if m else ""


def comment(s: requests.Session, base: str, item_id: int, title: str, body: str, rating: int = 0,
            author: tuple[str, str] | None = None) -> None:
    """Post a comment; ``author`` (name, e-mail) for a visitor who is not logged in."""
    page = item_page(s, base, item_id).text
    who = {"authorName": author[0], "authorEmail": author[1]} if author else {}
    r = s.post(f"{base}/index.php", data={"page": "item", "action": "add_comment", "id": str(item_id), "replyId": "",
                                          "octoken": _token(page), "title": title, "body": body,
                                          "rating": str(rating) if rating else "", **who}, timeout=30)
    if title not in r.text:
        raise ActionError(f"comment {title!r} is not on item {item_id} after posting")


def upload(s: requests.Session, base: str, name: str, data: bytes) -> str:
    """The fine-uploader's AJAX upload; returns the temporary name the form then sends."""
    r = s.post(f"{base}/index.php?page=ajax&action=ajax_upload", files={"qqfile": (name, data, "image/png")}, timeout=30)
    got = r.json()
    if not got.get("success"):
        raise ActionError(f"upload refused: {got}")
    return got["uploadName"]


def post_ad(s: requests.Session, base: str, title: str, description: str, price: str, category: int,
            photos: list[str]) -> int:
    """Publish a listing (``#item-post``); returns its id."""
    form = s.get(f"{base}/index.php?page=item&action=item_add", timeout=30).text
    fields = {"page": "item", "action": "item_add_post", "octoken": _token(form), "catId": str(category),
              "title[en_US]": title, "description[en_US]": description, "price": price, "currency": "USD",
              "regionId": "", "city": "Pittsburgh", "ajax_photos[]": photos}
    r = s.post(f"{base}/index.php", data=fields, timeout=30)
    q = parse_qs(urlsplit(r.url).query)
    if q.get("page") != ["item"] or "id" not in q:
        raise ActionError(f"the ad was not published ({r.url})")
    return int(q["id"][0])


def edit_ad(s: requests.Session, base: str, item_id: int, **changes: str) -> None:
    """Edit an own listing: the edit form's values with ``changes`` (``title``, ``description``,
    ``price``) put in."""
    page = item_page(s, base, item_id).text
    m = re.search(r'href="([^"]*action=item_edit[^"]*)"', page)
    if not m:
        raise ActionError(f"item {item_id} has no edit link for this user")
    form = s.get(unescape(m.group(1)), timeout=30).text
    value = {k: unescape(v) for k, v in re.findall(r'<input type="(?:hidden|text)" name="([^"]+)"[^>]*value="([^"]*)"', form)}
    desc = re.search(r'<textarea name="description\[en_US\]"[^>]*>(.*?)</textarea>', form, re.S)
    cat = re.search(r'<option value="(\d+)" selected>', form)
    data = {**value, "catId": cat.group(1) if cat else "2", "description[en_US]": unescape(desc.group(1)) if desc else ""}
    for k, v in changes.items():
        data[{"title": "title[en_US]", "description": "description[en_US]", "price": "price"}[k]] = v
    s.post(f"{base}/index.php", data=data, timeout=30)


def delete_ad(s: requests.Session, base: str, item_id: int) -> None:
    page = item_page(s, base, item_id).text
    m = re.search(r'class="delete" href="([^"]*)"', page)
    if not m:
        raise ActionError(f"item {item_id} has no delete link for this user")
    s.get(unescape(m.group(1)), timeout=30)
