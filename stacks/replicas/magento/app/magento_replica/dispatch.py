"""The one Flask blueprint: a catch-all rule that picks the area (REST, admin, storefront), applies
the base-URL redirect, runs the area's route table and saves the session."""
import re
from urllib.parse import urlsplit

from flask import Blueprint, g, make_response, request

import mage
from mage import q1
from .admin import admin_dispatch
from .catalog import category_view, product_view
from .rest import rest_dispatch
from .routing import match
from .storefront import front_page
from .web import Sess, base_url, redirect

bp = Blueprint("dispatch", __name__)


def area_of(path):
    if path == "/rest" or path.startswith("/rest/"):
        return "rest"
    if path == "/admin" or path.startswith("/admin/"):
        # Backend FrontNameResolver::isHostBackend: HTTP_HOST must be a substring of base host:port
        b = urlsplit(base_url())
        if request.host.lower() in b.netloc.lower():
            return "admin"
    return "frontend"


@bp.route("/", defaults={"p": ""}, methods=["GET", "POST", "PUT", "DELETE", "HEAD"])
@bp.route("/<path:p>", methods=["GET", "POST", "PUT", "DELETE", "HEAD"])
def dispatch(p):
    g.conn = mage.connect()
    try:
        g.cfg = mage.load_config(g.conn)
        path = "/" + p
        area = area_of(path)
        if area == "rest":
            return rest_dispatch(path)
        if area == "frontend" and request.method in ("GET", "HEAD") and g.cfg.get("web/url/redirect_to_base", "1") not in ("0", ""):
            # Store RequestPreprocessor + BaseUrlChecker: scheme and host must equal the base URL's
            b = urlsplit(base_url())
            if b.scheme != request.scheme or (b.hostname or "") != request.host.split(":")[0].lower():
                qs = request.query_string.decode()
                r = redirect(base_url().rstrip("/") + path + ("?" + qs if qs else ""),
                             301 if g.cfg.get("web/url/redirect_to_base") == "301" else 302)
                r.headers["Cache-Control"] = "no-store, no-cache, must-revalidate, max-age=0"
                return r
        if area == "admin":
            g.sess = Sess("admin", "/admin")
            resp = admin_dispatch(path)
        else:
            g.sess = Sess("PHPSESSID", "/")
            resp = front_dispatch(path)
        resp = make_response(resp)
        g.sess.save(resp)
        if request.method == "POST":
            resp.set_cookie("private_content_version", mage.new_id(32), max_age=315360000, path="/")
        if request.cookies.get("form_key") and area == "frontend":
            resp.set_cookie("form_key", request.cookies["form_key"], path="/", max_age=86400)
        return resp
    finally:
        sess = g.get("sess")
        if sess is not None:
            sess.close()
        g.conn.close()


def front_dispatch(path):
    fn, kw = match(path, "frontend")
    if fn:
        return fn(**kw)
    m = re.match(r"^/(.+)$", path)
    if m and request.method in ("GET", "HEAD"):
        rw = q1(g.conn, "SELECT * FROM url_rewrite WHERE request_path=%s AND store_id=1", (m.group(1),))
        if rw and rw["entity_type"] == "product":
            return product_view(rw["entity_id"])
        if rw and rw["entity_type"] == "category" and not rw["redirect_type"]:
            return category_view(rw["entity_id"])
        if rw and rw["redirect_type"]:
            return redirect("/" + rw["target_path"], rw["redirect_type"])
    return front_page("404 Not Found", '<div class="message info"><p>Whoops, our bad...</p></div>', 404)
