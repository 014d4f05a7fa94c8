"""The classifieds replica's pages: OSClass's query routing (``index.php?page=...``), PHP-style
file sessions (cookie ``osclass``, files ``/tmp/sess_<id>``), the sigma theme's page elements that
VisualWebArena's evaluators read, and VWA's ``page=reset`` controller.

Configuration as the real image's ``config.php`` has it (family-formats.md §4.2): database host
``db``, user ``root``, password ``password``, database ``osclass``, table prefix ``oc_``; the
site's absolute base URL from the environment variable ``CLASSIFIEDS`` (ending in ``/``).
"""
from __future__ import annotations

import html
import json
import math
import os
import re
import secrets
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import bcrypt
import pymysql
from flask import Flask, Response, g, redirect, request, send_from_directory

APP_ROOT = Path("/usr/src/myapp")
UPLOADS = APP_ROOT / "oc-content" / "uploads"
SESSIONS = Path("/tmp")  # PHP's default save path (session.save_path unset: the system temp dir)
DB = {"host": "db", "user": "root", "password": "password", "database": "osclass"}
PER_PAGE = 12
SID_CHARS = "0123456789abcdefghijklmnopqrstuv"  # PHP 8's default: 26 chars, 5 bits each

app = Flask(__name__, static_folder=None)


def web_path() -> str:
    return os.environ.get("CLASSIFIEDS", "http://127.0.0.1:9980/")


def url(query: dict | None = None, path: str = "index.php") -> str:
    base = web_path()
    return base + path + ("?" + urlencode(query) if query else "")


# -- text as PHP moves it: bytes in, bytes out, over a latin1 connection ---------------------
def to_db(s: str) -> str:
    return s.encode("utf-8").decode("latin1")


def from_db(v):
    if isinstance(v, str):
        try:
            return v.encode("latin1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            return v
    return v


def db():
    if "db" not in g:
        g.db = pymysql.connect(charset="latin1", autocommit=True, **DB)
        # MySQL's latin1 maps all 256 bytes; pymysql's codec for it is cp1252, which has no
        # character for 5 of them: every byte goes through as PHP sends it.
        g.db.encoding = "latin1"
    return g.db


def rows(sql: str, args=()) -> list[dict]:
    with db().cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(sql, args)
        return [{k: from_db(v) for k, v in r.items()} for r in cur.fetchall()]


def run(sql: str, args=()) -> int:
    with db().cursor() as cur:
        cur.execute(sql, args)
        return cur.lastrowid


@app.teardown_request
def _close(_exc):
    conn = g.pop("db", None)
    if conn is not None:
        conn.close()


# -- sessions ---------------------------------------------------------------------------------
def _session_path(sid: str) -> Path | None:
    return SESSIONS / f"sess_{sid}" if re.fullmatch(r"[0-9a-v]{26}", sid or "") else None


@app.before_request
def _session_start():
    base = urlsplit(web_path())
    # OSClass builds every link from WEB_PATH and sends a request for another host there.
    if request.host != base.netloc:
        return redirect(web_path().rstrip("/") + request.full_path.rstrip("?"), 302)
    sid = request.cookies.get("osclass", "")
    path = _session_path(sid)
    data = None
    if path is not None and path.is_file():
        try:
            data = json.loads(path.read_text() or "{}")
        except ValueError:
            data = {}
    g.new_sid = data is None
    if data is None:
        sid = "".join(secrets.choice(SID_CHARS) for _ in range(26))
        data = {}
    g.sid, g.session, g.session_before = sid, data, json.dumps(data, sort_keys=True)
    return None


@app.after_request
def _session_write(resp: Response) -> Response:
    if not hasattr(g, "sid"):
        return resp
    now = json.dumps(g.session, sort_keys=True)
    path = _session_path(g.sid)
    if g.new_sid or now != g.session_before:  # PHP's lazy_write: unchanged data is not written
        path.write_text(now)
    if g.new_sid:
        resp.set_cookie("osclass", g.sid, path="/", httponly=True)
    resp.headers.setdefault("Cache-Control", "no-store, no-cache, must-revalidate")
    return resp


def user() -> dict | None:
    uid = g.session.get("userId")
    if not uid:
        return None
    found = rows("SELECT * FROM oc_t_user WHERE pk_i_id=%s", (uid,))
    return found[0] if found else None


def token() -> str:
    if "octoken" not in g.session:
        g.session["octoken"] = "CSRF" + secrets.token_hex(8) + "_" + secrets.token_hex(8)
    return g.session["octoken"]


def csrf_ok() -> bool:
    return bool(request.form.get("octoken")) and request.form.get("octoken") == g.session.get("octoken")


def flash(kind: str, text: str) -> None:
    g.session["flash"] = [kind, text]


# -- page frame (sigma's structure) -----------------------------------------------------------
E = html.escape


def page(title: str, body: str, status: int = 200) -> Response:
    u = user()
    fl = g.session.pop("flash", None)
    account = (f'<a href="{E(url({"page": "user", "action": "items"}))}">My account</a> '
               f'<a href="{E(url({"page": "main", "action": "logout"}))}">Logout</a>' if u else
               f'<a id="login_open" href="{E(url({"page": "login"}))}">Login</a> '
               f'<a href="{E(url({"page": "register", "action": "register"}))}">Register for a free account</a>')
    cats = rows("SELECT c.pk_i_id, d.s_name FROM oc_t_category c JOIN oc_t_category_description d "
                "ON d.fk_i_category_id=c.pk_i_id AND d.fk_c_locale_code='en_US' WHERE c.b_enabled=1 ORDER BY c.i_position")
    options = "".join(f'<option value="{c["pk_i_id"]}">{E(c["s_name"])}</option>' for c in cats)
    text = f"""<!DOCTYPE html>
<html lang="en-US"><head><meta charset="utf-8"><title>{E(title)}</title>
<link href="{E(web_path())}oc-content/themes/sigma/css/main.css" rel="stylesheet" type="text/css"></head>
<body><header><div class="wrapper"><div id="logo"><a href="{E(web_path())}">Classifieds</a></div>
<ul class="nav"><li>{account}</li>
<li class="publish"><a href="{E(url({"page": "item", "action": "item_add"}))}">Publish your ad for free</a></li></ul></div>
<form action="{E(url())}" method="get" class="search nocsrf"><input type="hidden" name="page" value="search">
<input type="text" name="sPattern" class="input-text" placeholder="Search" value="">
<select name="sCategory" id="sCategory"><option value="">Select a category</option>{options}</select>
<button class="ui-button ui-button-big js-submit">Search</button></form></header>
{f'<div id="flashmessage" class="flashmessage flashmessage-{fl[0]}">{E(fl[1])}</div>' if fl else ''}
<div class="content">{body}</div><footer><a href="{E(web_path())}">Classifieds</a></footer></body></html>"""
    return Response(text, status=status, mimetype="text/html")


def price_text(i_price) -> str:
    """Sigma's price: 2 decimals, no thousands separator, trailing symbol (§4.9)."""
    if i_price is None:
        return "Check with seller"
    return f"{i_price / 1_000_000:.2f} $"


def thumb(item: dict) -> str:
    res = rows("SELECT * FROM oc_t_item_resource WHERE fk_i_item_id=%s ORDER BY pk_i_id LIMIT 1", (item["pk_i_id"],))
    if not res:
        return '<img src="' + E(web_path()) + 'oc-content/themes/sigma/images/no_photo.gif" alt="">'
    r = res[0]
    return f'<img src="{E(web_path() + r["s_path"] + str(r["pk_i_id"]) + "_thumbnail." + r["s_extension"])}" alt="{E(item["s_title"])}">'


def listing(items: list[dict], gallery: bool) -> str:
    cls = "listing-card-list listing-grid" if gallery else "listing-card-list listing-list"
    cards = []
    for it in items:
        link = E(url({"page": "item", "id": it["pk_i_id"]}))
        cards.append(f"""<li class="listing-card"><a class="listing-thumb" href="{link}" title="{E(it['s_title'])}">{thumb(it)}</a>
<div class="listing-detail"><div class="listing-cell"><div class="listing-data"><div class="listing-basicinfo">
<a href="{link}" class="title" title="{E(it['s_title'])}">{E(it['s_title'])}</a>
<div class="listing-attributes"><span class="category">{E(it['s_category'])}</span> -
<span class="location">{E(it['s_city'] or '')} ({E(it['s_region'] or '')})</span> - <span class="g-hide">{it['dt_pub_date']:%m/%d/%Y}</span></div>
<span class="currency-value">{E(price_text(it['i_price']))}</span></div></div></div></div></li>""")
    return f'<ul class="{cls}">{"".join(cards)}</ul>'


ITEM_COLUMNS = ("SELECT i.*, d.s_title, d.s_description, l.s_city, l.s_region, l.fk_i_region_id, cd.s_name AS s_category "
                "FROM oc_t_item i JOIN oc_t_item_description d ON d.fk_i_item_id=i.pk_i_id AND d.fk_c_locale_code='en_US' "
                "LEFT JOIN oc_t_item_location l ON l.fk_i_item_id=i.pk_i_id "
                "LEFT JOIN oc_t_category_description cd ON cd.fk_i_category_id=i.fk_i_category_id AND cd.fk_c_locale_code='en_US' ")
VISIBLE = "i.b_enabled=1 AND i.b_active=1 AND i.b_spam=0"


INT_MAX = 2**31 - 1  # the replica's columns and pages stop there


def int_prefix(v: str | None, default: int = 0) -> int:
    """PHP's (int) of a query value: its leading digits, else ``default``; at most
    :data:`INT_MAX`."""
    m = re.match(r"\s*(\d+)", v or "")
    return min(int(m.group(1)[:12]), INT_MAX) if m else default


# -- routing ----------------------------------------------------------------------------------
@app.route("/oc-content/uploads/<path:name>")
def uploads(name: str):
    return send_from_directory(UPLOADS, name)


@app.route("/oc-content/themes/sigma/css/main.css")
def css():
    return Response("body{font-family:sans-serif} .price{font-weight:bold} .listing-grid li{display:inline-block;width:30%}",
                    mimetype="text/css")


@app.route("/", methods=["GET", "POST"])
@app.route("/index.php", methods=["GET", "POST"])
def index():
    p = request.values.get("page", "")
    handler = {"": home, "main": main, "search": search, "item": item, "login": login, "user": user_page,
               "ajax": ajax, "reset": reset, "register": register}.get(p)
    if handler is None:
        return page("Classifieds", "<h1>404</h1><p>Page not found</p>", 404)
    return handler()


@app.route("/<path:other>", methods=["GET", "POST"])
def other(other: str):
    # Not a file: PHP's built-in server answers through index.php, which OSClass sends on to the
    # canonical URL (family-formats.md §1.9: /php?page=search answers 301 to index.php?...).
    return redirect(url(dict(request.args)) if request.args else web_path(), 301)


def home():
    items = rows(ITEM_COLUMNS + f"WHERE {VISIBLE} ORDER BY i.dt_pub_date DESC, i.pk_i_id DESC LIMIT {PER_PAGE}")
    cats = rows("SELECT d.fk_i_category_id AS id, d.s_name, (SELECT COUNT(*) FROM oc_t_item i WHERE i.fk_i_category_id=d.fk_i_category_id "
                f"AND {VISIBLE}) AS n FROM oc_t_category_description d WHERE d.fk_c_locale_code='en_US' ORDER BY d.fk_i_category_id")
    clist = "".join(f'<li><a href="{E(url({"page": "search", "sCategory": c["id"]}))}">{E(c["s_name"])}</a> <span>({c["n"]})</span></li>'
                    for c in cats)
    return page("Classifieds", f'<div class="home"><ul class="categories">{clist}</ul><h1>Latest Listings</h1>'
                               f'{listing(items, True)}</div>')


def main():
    if request.args.get("action") == "logout":
        g.session.pop("userId", None)
        return redirect(web_path(), 302)
    return home()


def search():
    a = request.args
    where, args = [VISIBLE], []
    cat = int_prefix(a.get("sCategory"))
    if cat:
        where.append("i.fk_i_category_id=%s")
        args.append(cat)
    region = int_prefix(a.get("sRegion"))
    if region:
        where.append("l.fk_i_region_id=%s")
        args.append(region)
    pattern = (a.get("sPattern") or "").strip()
    if pattern:
        # OSClass: boolean-mode FULLTEXT, any of the words (§4.7).
        where.append("MATCH(d.s_description, d.s_title) AGAINST (%s IN BOOLEAN MODE)")
        args.append(to_db(pattern))
    order = "i.i_price" if a.get("sOrder") == "i_price" else "i.dt_pub_date"
    direction = "ASC" if a.get("iOrderType") == "asc" else "DESC"
    pg = max(1, min(int_prefix(a.get("iPage"), 1), 10**8))
    total = rows("SELECT COUNT(*) AS n FROM oc_t_item i JOIN oc_t_item_description d ON d.fk_i_item_id=i.pk_i_id "
                 "LEFT JOIN oc_t_item_location l ON l.fk_i_item_id=i.pk_i_id WHERE " + " AND ".join(where), args)[0]["n"]
    items = rows(ITEM_COLUMNS + "WHERE " + " AND ".join(where) + f" ORDER BY {order} {direction}, i.pk_i_id {direction} "
                 f"LIMIT {PER_PAGE} OFFSET {(pg - 1) * PER_PAGE}", args)
    pages = max(1, math.ceil(total / PER_PAGE))
    keep = {k: v for k, v in a.items() if k != "iPage"}
    nav = "".join(f'<a href="{E(url({**keep, "iPage": n}))}" class="{"searchPaginationSelected" if n == pg else ""}">{n}</a>'
                  for n in range(max(1, pg - 3), min(pages, pg + 3) + 1))
    found = f"{total} listings" if total else "There are no results matching"
    return page("Search results", f'<div id="main" class="search-results"><p class="counter-search">{found}</p>'
                                  f'{listing(items, a.get("sShowAs") == "gallery")}<div class="paginate">{nav}</div></div>')


def item():
    action = request.values.get("action", "")
    if action == "item_add":
        return item_form(None)
    if action == "item_add_post":
        return item_post(None)
    if action in ("item_edit", "item_edit_post", "item_delete"):
        it = owned_item()
        if it is None:
            flash("error", "You don't have permissions to access this page")
            return redirect(web_path(), 302)
        if action == "item_edit":
            return item_form(it)
        if action == "item_edit_post":
            return item_post(it)
        return item_delete(it)
    if action == "add_comment":
        return add_comment()
    iid = int_prefix(request.args.get("id"))
    found = rows(ITEM_COLUMNS + f"WHERE i.pk_i_id=%s AND {VISIBLE}", (iid,))
    if not found:
        return page("404", '<div class="error404"><h1>404</h1><p>Sorry but the page you are looking for does not exist</p></div>', 410)
    it = found[0]
    u = user()
    photos = rows("SELECT * FROM oc_t_item_resource WHERE fk_i_item_id=%s ORDER BY pk_i_id", (iid,))
    imgs = "".join(f'<li><img src="{E(web_path() + r["s_path"] + str(r["pk_i_id"]) + "." + r["s_extension"])}" '
                   f'alt="{E(it["s_title"])}"></li>' for r in photos)
    comments = rows("SELECT * FROM oc_t_item_comment WHERE fk_i_item_id=%s AND b_enabled=1 AND b_active=1 ORDER BY pk_i_id", (iid,))
    clist = "".join(f"""<div class="comment" id="comment-{c['pk_i_id']}"><h3><strong>{E(c['s_title'])}</strong> <em>by {E(c['s_author_name'])}:</em></h3>
{f'<div class="rating-value">{c["i_rating"]} of 5</div>' if c['i_rating'] else ''}<p>{E(c['s_body'])}</p>
<a href="#" class="comment-reply" data-id="{c['pk_i_id']}">Reply</a></div>""" for c in comments)
    owner = u is not None and it["fk_i_user_id"] == u["pk_i_id"]
    tools = (f'<div id="edit_item_view"><a href="{E(url({"page": "item", "action": "item_edit", "id": iid, "secret": it["s_secret"]}))}">Edit item</a> '
             f'<a class="delete" href="{E(url({"page": "item", "action": "item_delete", "id": iid, "secret": it["s_secret"]}))}">Delete</a></div>'
             if owner else "")
    who = ("" if u else '<label for="authorName">Your name</label><input type="text" name="authorName" id="authorName" value="">'
           '<label for="authorEmail">Your e-mail</label><input type="text" name="authorEmail" id="authorEmail" value="">')
    body = f"""<div id="item-content" class="item"><h1>{E(it['s_title'])}</h1>
<div class="price price-alt isMobile">{E(price_text(it['i_price']))}</div>{tools}
<div class="item-photos"><ul class="photos">{imgs}</ul></div>
<div class="price">{E(price_text(it['i_price']))}</div>
<div class="desc">{E(it['s_description'])}</div>
<div class="item-details"><span class="category">{E(it['s_category'])}</span> <span class="location">{E(it['s_city'] or '')}, {E(it['s_region'] or '')}</span>
<span class="publish">Published on {it['dt_pub_date']:%m/%d/%Y}</span></div>
<div id="seller" class="seller"><strong class="name">{E(it['s_contact_name'] or '')}</strong>
{f'<span class="email">{E(it["s_contact_email"])}</span>' if it['b_show_email'] else ''}</div>
<div id="comments"><h2>Comments</h2><div class="comments_list">{clist}</div>
<form action="{E(url())}" method="post" name="comment_form" id="comment_form">
<input type="hidden" name="octoken" value="{E(token())}"><input type="hidden" name="action" value="add_comment">
<input type="hidden" name="page" value="item"><input type="hidden" name="id" value="{iid}"><input type="hidden" name="replyId" value="">
<input type="hidden" name="rating" value="" id="comment-rating">{who}
<label for="title">Title</label><input type="text" name="title" id="title" value="">
<label for="body">Comment</label><textarea name="body" id="body"></textarea>
<button type="submit" class="ui-button">Send</button></form></div></div>"""
    run("UPDATE oc_t_item_stats SET i_num_views=i_num_views+1 WHERE fk_i_item_id=%s ORDER BY dt_date DESC LIMIT 1", (iid,))
    return page(it["s_title"], body)


def owned_item() -> dict | None:
    iid = int_prefix(request.values.get("id"))
    found = rows(ITEM_COLUMNS + "WHERE i.pk_i_id=%s", (iid,))
    if not found:
        return None
    it, u = found[0], user()
    if (u is not None and it["fk_i_user_id"] == u["pk_i_id"]) or (request.values.get("secret") and request.values.get("secret") == it["s_secret"]):
        return it
    return None


def item_form(it: dict | None) -> Response:
    cats = rows("SELECT fk_i_category_id AS id, s_name FROM oc_t_category_description WHERE fk_c_locale_code='en_US' ORDER BY 1")
    regions = rows("SELECT pk_i_id, s_name FROM oc_t_region ORDER BY s_name")
    v = it or {}
    opt = "".join(f'<option value="{c["id"]}"{" selected" if v.get("fk_i_category_id") == c["id"] else ""}>{E(c["s_name"])}</option>' for c in cats)
    ropt = "".join(f'<option value="{r["pk_i_id"]}"{" selected" if v.get("fk_i_region_id") == r["pk_i_id"] else ""}>{E(r["s_name"])}</option>'
                   for r in regions)
    price = "" if v.get("i_price") is None else f"{v['i_price'] / 1_000_000:g}"
    action = "item_edit_post" if it else "item_add_post"
    extra = (f'<input type="hidden" name="id" value="{it["pk_i_id"]}"><input type="hidden" name="secret" value="{E(it["s_secret"])}">'
             if it else "")
    body = f"""<h1>{"Edit listing" if it else "Publish a listing"}</h1>
<form name="item" action="{E(url())}" method="post" enctype="multipart/form-data" id="item-post">
<input type="hidden" name="octoken" value="{E(token())}"><input type="hidden" name="action" value="{action}"><input type="hidden" name="page" value="item">{extra}
<label for="catId">Category</label><select name="catId" id="catId"><option value="">Select a category</option>{opt}</select>
<label for="titleen_US">Title</label><input type="text" name="title[en_US]" id="titleen_US" value="{E(v.get('s_title', ''))}">
<label for="descriptionen_US">Description</label><textarea name="description[en_US]" id="descriptionen_US">{E(v.get('s_description', ''))}</textarea>
<label for="price">Price</label><input type="text" name="price" id="price" value="{E(price)}"><select name="currency"><option value="USD">$</option></select>
<div class="qq-uploader" id="restricted-fine-uploader"><input type="file" name="qqfile" accept="image/*"></div>
<label for="regionId">Region</label><select name="regionId" id="regionId"><option value="">Select a region</option>{ropt}</select>
<label for="city">City</label><input type="text" name="city" id="city" value="{E(v.get('s_city') or '')}">
<label for="contactName">Name</label><input type="text" name="contactName" id="contactName" value="{E(v.get('s_contact_name') or '')}">
<label for="contactEmail">E-mail</label><input type="text" name="contactEmail" id="contactEmail" value="{E(v.get('s_contact_email') or '')}">
<button type="submit" class="ui-button">{"Update" if it else "Publish"}</button></form>"""
    return page("Publish", body)


def item_post(it: dict | None) -> Response:
    f = request.form
    if not csrf_ok():
        flash("error", "Invalid CSRF token.")
        return redirect(url({"page": "item", "action": "item_add"} if it is None else
                            {"page": "item", "action": "item_edit", "id": it["pk_i_id"], "secret": it["s_secret"]}), 302)
    title, desc = f.get("title[en_US]", "").strip(), f.get("description[en_US]", "").strip()
    cat = int_prefix(f.get("catId"))
    back = (url({"page": "item", "action": "item_add"}) if it is None else
            url({"page": "item", "action": "item_edit", "id": it["pk_i_id"], "secret": it["s_secret"]}))
    problem = None
    if not title or not desc or not cat:
        problem = "Title, description and category are required"
    elif len(to_db(title)) > 100:
        problem = "Title too long (100 characters at most)"
    elif not rows("SELECT 1 FROM oc_t_category WHERE pk_i_id=%s AND b_enabled=1", (cat,)):
        problem = "The category is not valid"
    price = None
    if not problem and f.get("price", "").strip():
        try:
            dollars = float(f["price"].replace(",", ""))
            if not 0 <= dollars < 10**12:
                raise ValueError
            price = int(round(dollars * 1_000_000))
        except ValueError:
            problem = "The price is not valid"
    if problem:
        flash("error", problem)
        return redirect(back, 302)
    now = time.strftime("%Y-%m-%d %H:%M:%S")
    u = user()
    region = int_prefix(f.get("regionId"))
    rname = rows("SELECT s_name FROM oc_t_region WHERE pk_i_id=%s", (region,))
    if it is None:
        iid = run("INSERT INTO oc_t_item (fk_i_user_id, fk_i_category_id, dt_pub_date, dt_mod_date, i_price, fk_c_currency_code, "
                  "s_contact_name, s_contact_email, s_ip, b_enabled, b_active, s_secret, b_show_email, dt_expiration) "
                  "VALUES (%s,%s,%s,%s,%s,'USD',%s,%s,%s,1,1,%s,0,'9999-12-31 23:59:59')",
                  (u["pk_i_id"] if u else None, cat, now, now, price, to_db(u["s_name"] if u else f.get("contactName", "")),
                   to_db(u["s_email"] if u else f.get("contactEmail", "")), request.remote_addr or "",
                   "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))))
        run("INSERT INTO oc_t_item_description VALUES (%s,'en_US',%s,%s)", (iid, to_db(title), to_db(desc)))
        run("INSERT INTO oc_t_item_location (fk_i_item_id, fk_c_country_code, s_country, fk_i_region_id, s_region, s_city) "
            "VALUES (%s,'US','United States',%s,%s,%s)", (iid, region or None, rname[0]["s_name"] if rname else None, to_db(f.get("city", ""))))
        run("INSERT INTO oc_t_item_stats (fk_i_item_id, dt_date) VALUES (%s, CURDATE())", (iid,))
        if u:
            run("UPDATE oc_t_user SET i_items=i_items+1 WHERE pk_i_id=%s", (u["pk_i_id"],))
    else:
        iid = it["pk_i_id"]
        run("UPDATE oc_t_item SET fk_i_category_id=%s, i_price=%s, dt_mod_date=%s WHERE pk_i_id=%s", (cat, price, now, iid))
        run("UPDATE oc_t_item_description SET s_title=%s, s_description=%s WHERE fk_i_item_id=%s", (to_db(title), to_db(desc), iid))
        if region:
            run("UPDATE oc_t_item_location SET fk_i_region_id=%s, s_region=%s WHERE fk_i_item_id=%s",
                (region, rname[0]["s_name"] if rname else None, iid))
    # Pictures: the fine-uploader's temporary names (ajax_photos[]) or a file sent with the form.
    pictures = [n for n in f.getlist("ajax_photos[]") if re.fullmatch(r"[A-Za-z0-9_-]{1,64}\.(png|gif|jpe?g)", n)]
    temp = UPLOADS / "temp"
    sent = request.files.get("qqfile")
    if sent is not None and sent.filename:
        name = _save_temp(sent)
        if name:
            pictures.append(name)
    for name in pictures:
        src = temp / name
        if not src.is_file():
            continue
        ext = name.rsplit(".", 1)[1].lower()
        folder = f"oc-content/uploads/{iid // 100}/"
        rid = run("INSERT INTO oc_t_item_resource (fk_i_item_id, s_name, s_extension, s_content_type, s_path) VALUES (%s,%s,%s,%s,%s)",
                  (iid, "", ext, f"image/{'jpeg' if ext in ('jpg', 'jpeg') else ext}", folder))
        run("UPDATE oc_t_item_resource SET s_name=%s WHERE pk_i_id=%s", (str(rid), rid))
        dest = APP_ROOT / folder
        dest.mkdir(parents=True, exist_ok=True)
        for variant in ("", "_preview", "_thumbnail", "_original"):
            shutil.copyfile(src, dest / f"{rid}{variant}.{ext}")
        src.unlink()
    flash("ok", "Your listing has been published" if it is None else "Great! We've just updated your listing")
    return redirect(url({"page": "item", "id": iid}), 302)


def _save_temp(f) -> str | None:
    ext = (f.filename.rsplit(".", 1)[-1] if "." in f.filename else "").lower()
    if ext not in ("png", "gif", "jpg", "jpeg"):
        return None
    name = f"qqfile_{secrets.token_hex(8)}.{ext}"
    (UPLOADS / "temp").mkdir(parents=True, exist_ok=True)
    f.save(UPLOADS / "temp" / name)
    return name


def item_delete(it: dict) -> Response:
    iid = it["pk_i_id"]
    for r in rows("SELECT * FROM oc_t_item_resource WHERE fk_i_item_id=%s", (iid,)):
        for variant in ("", "_preview", "_thumbnail", "_original"):
            p = APP_ROOT / r["s_path"] / f"{r['pk_i_id']}{variant}.{r['s_extension']}"
            if p.is_file():
                p.unlink()
    for tbl in ("oc_t_item_comment", "oc_t_item_resource", "oc_t_item_location", "oc_t_item_stats", "oc_t_item_description"):
        run(f"DELETE FROM {tbl} WHERE fk_i_item_id=%s", (iid,))
    run("DELETE FROM oc_t_item WHERE pk_i_id=%s", (iid,))
    if it["fk_i_user_id"]:
        run("UPDATE oc_t_user SET i_items=GREATEST(i_items,1)-1 WHERE pk_i_id=%s", (it["fk_i_user_id"],))
    flash("ok", "Your listing has been deleted")
    return redirect(url({"page": "user", "action": "items"}), 302)


def add_comment() -> Response:
    f = request.form
    iid = int_prefix(f.get("id"))
    back = url({"page": "item", "id": iid})
    if not csrf_ok():
        flash("error", "Invalid CSRF token.")
        return redirect(back, 302)
    if not rows(f"SELECT pk_i_id FROM oc_t_item i WHERE pk_i_id=%s AND {VISIBLE}", (iid,)):
        return redirect(web_path(), 302)
    u = user()
    name = u["s_name"] if u else f.get("authorName", "").strip()
    email = u["s_email"] if u else f.get("authorEmail", "").strip()
    body = f.get("body", "").strip()
    if not body or not name or not email:
        flash("error", "Please fill in the required fields")
        return redirect(back, 302)
    title = f.get("title", "").strip()
    if len(to_db(title)) > 200 or len(to_db(name)) > 100 or len(to_db(email)) > 100:
        flash("error", "A field is too long")
        return redirect(back, 302)
    rating = int_prefix(f.get("rating"))
    reply = int_prefix(f.get("replyId")) or None
    if reply and not rows("SELECT 1 FROM oc_t_item_comment WHERE pk_i_id=%s AND fk_i_item_id=%s", (reply, iid)):
        reply = None
    run("INSERT INTO oc_t_item_comment (fk_i_item_id, dt_pub_date, s_title, s_author_name, s_author_email, s_body, i_rating, "
        "b_enabled, b_active, b_spam, fk_i_user_id, fk_i_reply_id) VALUES (%s,NOW(),%s,%s,%s,%s,%s,1,1,0,%s,%s)",
        (iid, to_db(title), to_db(name), to_db(email), to_db(body), min(rating, 5),
         u["pk_i_id"] if u else None, reply))
    if u:
        run("UPDATE oc_t_user SET i_comments=i_comments+1 WHERE pk_i_id=%s", (u["pk_i_id"],))
    flash("ok", "Your comment has been approved")
    return redirect(back, 302)


def login():
    if request.method == "POST" and request.form.get("action") == "login_post":
        f = request.form
        back = url({"page": "login"})
        if not csrf_ok():
            flash("error", "Invalid CSRF token.")
            return redirect(back, 302)
        found = rows("SELECT * FROM oc_t_user WHERE s_email=%s", (to_db(f.get("email", "").strip()),))
        if not found:
            flash("error", "The user doesn't exist")
            return redirect(back, 302)
        u = found[0]
        stored = (u["s_password"] or "").replace("$2y$", "$2b$", 1).encode()
        try:
            good = bcrypt.checkpw(f.get("password", "").encode(), stored)
        except ValueError:
            good = False
        if not good:
            run("UPDATE oc_t_user SET i_login_fails=i_login_fails+1, dt_login_fail_date=NOW() WHERE pk_i_id=%s", (u["pk_i_id"],))
            flash("error", "The password is incorrect")
            return redirect(back, 302)
        if not u["b_enabled"] or not u["b_active"]:
            flash("error", "The user has not been validated yet")
            return redirect(back, 302)
        g.session["userId"] = u["pk_i_id"]
        g.session["userName"] = u["s_name"]
        run("UPDATE oc_t_user SET dt_access_date=NOW(), s_access_ip=%s, i_login_fails=0 WHERE pk_i_id=%s",
            (request.remote_addr or "", u["pk_i_id"]))
        return redirect(url({"page": "user", "action": "dashboard"}), 302)
    if user() is not None:
        return redirect(url({"page": "user", "action": "dashboard"}), 302)
    body = f"""<div class="form-container"><h1>Access to your account</h1>
<form action="{E(url())}" method="post"><input type="hidden" name="octoken" value="{E(token())}">
<input type="hidden" name="page" value="login"><input type="hidden" name="action" value="login_post">
<label for="email">E-mail</label><input id="email" type="text" name="email" value="">
<label for="password">Password</label><input id="password" type="password" name="password" value="" autocomplete="off">
<input type="checkbox" name="remember" id="remember" value="1"><label for="remember">Remember me</label>
<button type="submit">Log in</button></form>
<a href="{E(url({"page": "register", "action": "register"}))}">Register for a free account</a></div>"""
    return page("Login", body)


def register():
    return page("Register", '<h1>Register an account for free</h1><p>Registrations are closed.</p>')


def user_page():
    u = user()
    if u is None:
        flash("error", "You need to login first")
        return redirect(url({"page": "login"}), 302)
    if request.args.get("action") != "items":
        return redirect(url({"page": "user", "action": "items"}), 302)
    items = rows(ITEM_COLUMNS + "WHERE i.fk_i_user_id=%s ORDER BY i.dt_pub_date DESC, i.pk_i_id DESC", (u["pk_i_id"],))
    return page("My listings", f'<div class="user-items"><h1>My listings</h1>{listing(items, False)}</div>')


def ajax():
    if request.args.get("action") != "ajax_upload" or request.method != "POST":
        return Response("{}", mimetype="application/json")
    f = request.files.get("qqfile")
    name = _save_temp(f) if f is not None and f.filename else None
    out = {"success": True, "uploadName": name} if name else {"error": "File type not allowed"}
    return Response(json.dumps(out), mimetype="application/json")


def reset():
    """VWA's ``page=reset`` controller (family-formats.md §4.4): 200 whatever happens; the body
    says what it ran (with the database password) and whether it worked."""
    if request.method != "POST":
        return Response("<h1>Error: This page only handles POST requests</h1>", mimetype="text/html")
    if request.form.get("token") != os.environ.get("RESET_TOKEN"):
        return Response("Error: Invalid token", mimetype="text/html")
    command = (f"mysql -h {DB['host']} -u {DB['user']} --password='{DB['password']}' {DB['database']} "
               f"< {APP_ROOT}/classifieds_restore.sql")
    with open(APP_ROOT / "classifieds_restore.sql", "rb") as sql:
        done = subprocess.run(["mysql", "-h", DB["host"], "-u", DB["user"], f"--password={DB['password']}", DB["database"]],
                              stdin=sql, capture_output=True, timeout=300, check=False)
    outcome = ("SQL file executed successfully." if done.returncode == 0
               else f"Error occurred: {done.stderr.decode('utf-8', 'replace').strip()}")
    return Response(f"Command: {html.escape(command)}<br>{html.escape(outcome)}", mimetype="text/html")


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=9980)
