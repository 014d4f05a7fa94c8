"""Magento 2.4 contract replica: storefront + admin (/admin) + REST (/rest) in one Flask app.

A test double of the surface WebArena and sitectl use (research/contract-magento.md,
research/webarena-official.md); not Magento. Pages are plain server-rendered HTML carrying
the form field names, labels, ids and classes that evaluators and drivers read.
"""
import html, json, re, time
from datetime import datetime
from urllib.parse import urlsplit, parse_qs, quote as urlquote

from flask import Flask, request, g, make_response, redirect as flask_redirect

import mage
from mage import q, q1, ex

app = Flask(__name__)
E = html.escape
SIGNIN_FAIL = ("The account sign-in was incorrect or your account is disabled temporarily. "
               "Please wait and try again later.")
ROUTES = []


def route(pattern, methods=("GET",), area="frontend"):
    def deco(fn):
        ROUTES.append((re.compile("^" + pattern + "$", re.I), set(methods), area, fn))
        return fn
    return deco


def now_s():
    return datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")


def base_url():
    return g.cfg.get("web/unsecure/base_url") or "http://localhost/"


def abs_url(path):
    return base_url().rstrip("/") + path


def redirect(path, code=302):
    r = flask_redirect(path if "://" in path else abs_url(path), code)
    return r


# ---------------------------------------------------------------- sessions ------------
class Sess(dict):
    def __init__(self, cookie, path):
        self.cookie, self.path, self.dirty, self.regen = cookie, path, False, False
        self.sid = request.cookies.get(cookie)
        data = mage.session_load(g.conn, self.sid)
        if data is None:
            self.sid, data = None, {}
        super().__init__(data)

    def __setitem__(self, k, v):
        self.dirty = True
        super().__setitem__(k, v)

    def pop(self, k, d=None):
        self.dirty = True
        return super().pop(k, d)

    def form_key(self):
        if "_form_key" not in self:
            self["_form_key"] = mage.new_form_key()
        return self["_form_key"]

    def flash(self, kind, text):
        self["_messages"] = self.get("_messages", []) + [[kind, text]]

    def take_messages(self):
        m = self.get("_messages", [])
        if m:
            self.pop("_messages")
        return m

    def regenerate(self):
        if self.sid:
            mage.session_delete(g.conn, self.sid)
        self.sid, self.dirty = None, True

    def save(self, resp):
        if not self.dirty:
            return
        if not self.sid:
            self.sid = mage.new_id()
        mage.session_save(g.conn, self.sid, dict(self))
        resp.set_cookie(self.cookie, self.sid, path=self.path, httponly=True, samesite="Lax")


# ------------------------------------------------------------- dispatch ---------------
def area_of(path):
    if path == "/rest" or path.startswith("/rest/"):
        return "rest"
    if path == "/admin" or path.startswith("/admin/"):
        # Backend FrontNameResolver::isHostBackend: HTTP_HOST must be a substring of base host:port
        b = urlsplit(base_url())
        if request.host.lower() in b.netloc.lower():
            return "admin"
    return "frontend"


@app.route("/", defaults={"p": ""}, methods=["GET", "POST", "PUT", "DELETE", "HEAD"])
@app.route("/<path:p>", methods=["GET", "POST", "PUT", "DELETE", "HEAD"])
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
        g.conn.close()


def match(path, area):
    p = path if path.endswith("/") else path + "/"
    for rx, methods, a, fn in ROUTES:
        if a != area:
            continue
        m = rx.match(p)
        if m and request.method.replace("HEAD", "GET") in methods:
            return fn, m.groupdict()
    return None, None


def form_key_ok():
    sent = request.form.get("form_key", "")
    return bool(sent) and sent == g.sess.form_key()


# ------------------------------------------------------------- HTML layout -------------
def messages_html():
    out = []
    for kind, text in g.sess.take_messages():
        out.append('<div class="message-%s %s message" data-ui-id="message-%s"><div>%s</div></div>' % (kind, kind, kind, E(text)))
    return '<div class="page messages"><div class="messages">%s</div></div>' % "".join(out) if out else ""


def front_page(title, body, status=200, h1=None, body_class=""):
    store = g.cfg.get("general/store_information/name", "Store")
    c = customer()
    links = ('<li class="greet welcome"><span class="logged-in">Welcome, %s %s!</span></li><li><a href="%s">My Account</a></li>'
             '<li><a href="%s">My Wish List</a></li><li class="authorization-link"><a href="%s">Sign Out</a></li>'
             % (E(c["firstname"]), E(c["lastname"]), abs_url("/customer/account/"), abs_url("/wishlist/"), abs_url("/customer/account/logout/"))
             if c else '<li class="authorization-link"><a href="%s">Sign In</a></li><li><a href="%s">Create an Account</a></li>'
             % (abs_url("/customer/account/login/"), abs_url("/customer/account/create/")))
    doc = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title><meta name="generator" content="sitectl Magento contract replica"></head>
<body class="%s">
<div class="page-wrapper"><header class="page-header"><div class="panel wrapper"><div class="panel header"><ul class="header links">%s</ul></div></div>
<div class="header content"><a class="logo" href="%s" title="%s"><strong>%s</strong></a>
<div class="minicart-wrapper"><a class="action showcart" href="%s"><span class="text">My Cart</span></a></div>
<form class="form minisearch" id="search_mini_form" action="%s" method="get"><label class="label" for="search">Search</label>
<input id="search" type="text" name="q" placeholder="Search entire store here..."><button type="submit" title="Search" class="action search">Search</button></form></div></header>
<main id="maincontent" class="page-main">%s<div class="page-title-wrapper"><h1 class="page-title"><span class="base" data-ui-id="page-title-wrapper">%s</span></h1></div>
<div class="columns"><div class="column main">%s</div></div></main>
<footer class="page-footer"><small class="copyright"><span>%s &mdash; sitectl contract replica, not Magento</span></small></footer></div></body></html>""" % (
        E(title), body_class, links, abs_url("/"), E(store), E(store), abs_url("/checkout/cart/"), abs_url("/catalogsearch/result/"),
        messages_html(), E(h1 or title), body, E(store))
    return make_response(doc, status)


def price_html(v):
    return '<span class="price-wrapper" data-price-amount="%s" data-price-type="finalPrice"><span class="price">$%s</span></span>' % (v, "{:,.2f}".format(v))


# ------------------------------------------------------------- storefront -----------------
def customer():
    if "_cust" not in g.__dict__:
        cid = g.sess.get("customer_id") if hasattr(g, "sess") else None
        g._cust = q1(g.conn, "SELECT * FROM customer_entity WHERE entity_id=%s", (cid,)) if cid else None
    return g._cust


def require_customer():
    if customer():
        return None
    g.sess["before_auth_url"] = request.url
    return redirect("/customer/account/login/")


def front_dispatch(path):
    fn, kw = match(path, "frontend")
    if fn:
        return fn(**kw)
    m = re.match(r"^/(.+)$", path)
    if m and request.method in ("GET", "HEAD"):
        rw = q1(g.conn, "SELECT * FROM url_rewrite WHERE request_path=%s AND store_id=1", (m.group(1),))
        if rw and rw["entity_type"] == "product":
            return product_view(rw["entity_id"])
        if rw and rw["redirect_type"]:
            return redirect("/" + rw["target_path"], rw["redirect_type"])
    return front_page("404 Not Found", '<div class="message info"><p>Whoops, our bad...</p></div>', 404)


def product_card(p):
    return ('<li class="item product product-item"><div class="product-item-info"><strong class="product name product-item-name">'
            '<a class="product-item-link" href="%s">%s</a></strong><div class="price-box">%s</div></div></li>'
            % (abs_url("/%s.html" % p["url_key"]), E(p["name"]), price_html(p["price"])))


@route(r"/(?:cms/index/index/)?")
def home():
    ids = [r["entity_id"] for r in q(g.conn, "SELECT entity_id FROM catalog_product_entity ORDER BY entity_id LIMIT 24")]
    cards = "".join(product_card(p) for p in mage.products(g.conn, ids))
    return front_page(g.cfg.get("design/head/default_title", "Home Page"),
                      '<div class="products wrapper grid products-grid"><ol class="products list items product-items">%s</ol></div>' % cards,
                      h1="Home Page", body_class="cms-home cms-index-index")


@route(r"/catalogsearch/result/(?:index/)?")
def search():
    term = request.args.get("q", "")
    rows = q(g.conn, "SELECT entity_id FROM catalog_product_entity_varchar FORCE INDEX (idx_cpev_attr_value) WHERE attribute_id=73 AND value LIKE %s "
                     "ORDER BY entity_id LIMIT 50", ("%" + term + "%",))
    cards = "".join(product_card(p) for p in mage.products(g.conn, [r["entity_id"] for r in rows]))
    return front_page("Search results for: '%s'" % term,
                      '<div class="products wrapper grid products-grid"><ol class="products list items product-items">%s</ol></div>' % cards)


def reviews_of(pid):
    return q(g.conn, "SELECT r.review_id, r.created_at, d.title, d.detail, d.nickname, v.percent FROM review r JOIN review_detail d USING (review_id) "
                     "LEFT JOIN rating_option_vote v ON v.review_id=r.review_id AND v.rating_id=4 WHERE r.entity_pk_value=%s AND r.status_id=1 ORDER BY r.review_id", (pid,))


@route(r"/catalog/product/view/id/(?P<pid>\d+)/(?:.*)")
def product_view(pid):
    p = mage.product(g.conn, int(pid))
    if not p or p["status"] != 1:
        return front_page("404 Not Found", "<p>Whoops, our bad...</p>", 404)
    revs = reviews_of(p["entity_id"])
    rev_items = "".join(
        '<li class="item review-item"><div class="review-title">%s</div><div class="review-ratings"><div class="rating-summary item">'
        '<span class="label rating-label"><span>Rating</span></span><div class="rating-result" title="%s%%"><span style="width:%s%%"><span>%s%%</span></span></div></div></div>'
        '<div class="review-content">%s</div><div class="review-details"><p class="review-author"><span class="review-details-label">Review by</span>'
        '<strong class="review-details-value">%s</strong></p><p class="review-date"><span class="review-details-label">Posted on</span>'
        '<time class="review-details-value">%s</time></p></div></li>'
        % (E(r["title"]), r["percent"] or 0, r["percent"] or 0, r["percent"] or 0, E(r["detail"]), E(r["nickname"]), r["created_at"].strftime("%m/%d/%Y"))
        for r in revs)
    stars = "".join('<input type="radio" name="ratings[4]" id="Rating_%d" value="%d" class="radio"><label class="rating-%d" for="Rating_%d" title="%d star%s">'
                    '<span>%d star%s</span></label>' % (v, 15 + v, v, v, v, "" if v == 1 else "s", v, "" if v == 1 else "s") for v in range(1, 6))
    fk = g.sess.form_key()
    stock = '<div class="stock available" title="Availability"><span>In stock</span></div>' if p["is_in_stock"] else \
            '<div class="stock unavailable" title="Availability"><span>Out of stock</span></div>'
    body = """<div class="product-info-main">
<div class="product-info-price"><div class="price-box price-final_price" data-product-id="{id}">{price}</div>
<div class="product-info-stock-sku">{stock}<div class="product attribute sku"><strong class="type">SKU</strong><div class="value" itemprop="sku">{sku}</div></div></div></div>
<div class="product-add-form"><form action="{add}" method="post" id="product_addtocart_form"><input type="hidden" name="product" value="{id}">
<input name="form_key" type="hidden" value="{fk}"><div class="field qty"><label class="label" for="qty"><span>Qty</span></label>
<input type="number" name="qty" id="qty" value="1" title="Qty" class="input-text qty"></div>
<button type="submit" title="Add to Cart" class="action primary tocart" id="product-addtocart-button"><span>Add to Cart</span></button></form></div>
<div class="product attribute overview"><div class="value" itemprop="description">{short}</div></div></div>
<div class="product info detailed"><div class="product data items">
<div class="data item title" id="tab-label-description"><a class="data switch" href="#description">Details</a></div>
<div class="data item content" id="description"><div class="product attribute description"><div class="value">{desc}</div></div></div>
<div class="data item title" id="tab-label-reviews"><a class="data switch" href="#reviews">Reviews <span class="counter">{n}</span></a></div>
<div class="data item content" id="reviews"><div id="product-review-container"><div class="block review-list" id="customer-reviews">
<div class="block-title"><strong>Customer Reviews</strong></div><div class="block-content"><ol class="items review-items">{revs}</ol></div></div></div>
<div class="block review-add"><div class="block-title"><strong>Write Your Own Review</strong></div><div class="block-content">
<form action="{post}" class="review-form" method="post" id="review-form"><input name="form_key" type="hidden" value="{fk}">
<fieldset class="fieldset review-fieldset"><legend class="legend review-legend"><span>You're reviewing:</span><strong>{name}</strong></legend>
<span id="input-message-box"></span><fieldset class="field required review-field-ratings"><legend class="label"><span>Your Rating</span></legend>
<div class="control"><div class="nested" id="product-review-table"><div class="field choice review-field-rating"><label class="label" id="Rating_rating_label"><span>Rating</span></label>
<div class="control review-control-vote">{stars}</div></div></div></div></fieldset>
<div class="field review-field-nickname required"><label for="nickname_field" class="label"><span>Nickname</span></label><div class="control"><input type="text" name="nickname" id="nickname_field" class="input-text" value="{nick}"></div></div>
<div class="field review-field-summary required"><label for="summary_field" class="label"><span>Summary</span></label><div class="control"><input type="text" name="title" id="summary_field" class="input-text"></div></div>
<div class="field review-field-text required"><label for="review_field" class="label"><span>Review</span></label><div class="control"><textarea name="detail" id="review_field" cols="5" rows="3"></textarea></div></div>
</fieldset><div class="actions-toolbar review-form-actions"><div class="primary actions-primary"><button type="submit" class="action submit primary"><span>Submit Review</span></button></div></div>
</form></div></div></div></div></div>""".format(
        id=p["entity_id"], price=price_html(p["price"]), stock=stock, sku=E(p["sku"]), add=abs_url("/checkout/cart/add/product/%d/" % p["entity_id"]),
        fk=fk, short=p["short_description"] or "", desc=p["description"] or "", n=len(revs), revs=rev_items,
        post=abs_url("/review/product/post/id/%d/" % p["entity_id"]), name=E(p["name"]), stars=stars,
        nick=E(customer()["firstname"]) if customer() else "")
    return front_page(p["name"], body, body_class="catalog-product-view product-%s page-product-%s" % (p["url_key"], p["type_id"]))


# -- customer login (Customer/view/frontend/templates/form/login.phtml shape, contract-magento.md §1.1)
@route(r"/customer/account/login/(?:.*)", ("GET", "POST"))
def login_page():
    if customer():
        return redirect("/customer/account/")
    fk = g.sess.form_key()
    body = """<div class="login-container"><div class="block block-customer-login"><div class="block-title"><strong id="block-customer-login-heading" role="heading" aria-level="2">Registered Customers</strong></div>
<div class="block-content" aria-labelledby="block-customer-login-heading">
<form class="form form-login" action="{action}" method="post" id="login-form" novalidate="novalidate"><input name="form_key" type="hidden" value="{fk}">
<fieldset class="fieldset login" data-hasrequired="* Required Fields"><div class="field note">If you have an account, sign in with your email address.</div>
<div class="field email required"><label class="label" for="email"><span>Email</span></label><div class="control">
<input name="login[username]" value="{user}" autocomplete="off" id="email" type="email" class="input-text" title="Email"></div></div>
<div class="field password required"><label for="pass" class="label"><span>Password</span></label><div class="control">
<input name="login[password]" type="password" autocomplete="off" class="input-text" id="pass" title="Password"></div></div>
<div class="field choice" data-bind="scope: 'showPassword'"><input type="checkbox" name="show-password" id="show-password" class="checkbox"><label class="label" for="show-password"><span>Show Password</span></label></div>
<div class="actions-toolbar"><div class="primary"><button type="submit" class="action login primary" name="send" id="send2"><span>Sign In</span></button></div>
<div class="secondary"><a class="action remind" href="{forgot}"><span>Forgot Your Password?</span></a></div></div></fieldset></form></div></div>
<div class="block block-new-customer"><div class="block-title"><strong>New Customers</strong></div></div></div>""".format(
        action=abs_url("/customer/account/loginPost/"), fk=fk, user=E(g.sess.get("login_username", "")), forgot=abs_url("/customer/account/forgotpassword/"))
    r = front_page("Customer Login", body, body_class="customer-account-login")
    r.headers["Login-Required"] = "true"
    return r


@route(r"/customer/account/loginpost/(?:.*)", ("POST",))
def login_post():
    if customer() or not form_key_ok():
        return redirect("/customer/account/")
    user, pw = request.form.get("login[username]", ""), request.form.get("login[password]", "")
    if not user or not pw:
        g.sess.flash("error", "A login and a password are required.")
        return redirect("/customer/account/login/")
    c = q1(g.conn, "SELECT * FROM customer_entity WHERE email=%s AND website_id=1", (user,))
    locked = c and c["lock_expires"] and c["lock_expires"] > datetime.utcnow()
    if not c or locked or not c["is_active"] or not mage.verify_password(pw, c["password_hash"]):
        if c and not locked:
            ex(g.conn, "UPDATE customer_entity SET failures_num=failures_num+1, first_failure=COALESCE(first_failure, UTC_TIMESTAMP()), "
                       "lock_expires=IF(failures_num>=10, UTC_TIMESTAMP() + INTERVAL 10 MINUTE, NULL) WHERE entity_id=%s", (c["entity_id"],))
        g.sess["login_username"] = user
        g.sess.flash("error", SIGNIN_FAIL)
        return redirect("/customer/account/login/")
    ex(g.conn, "UPDATE customer_entity SET failures_num=0, first_failure=NULL, lock_expires=NULL WHERE entity_id=%s", (c["entity_id"],))
    target = g.sess.get("before_auth_url")
    data = {k: v for k, v in g.sess.items() if k in ("quote_id",)}
    g.sess.regenerate()
    g.sess.clear()
    g.sess.update(data)
    g.sess["customer_id"] = c["entity_id"]
    g.sess["_form_key"] = request.form.get("form_key")
    r = redirect(target or "/customer/account/")
    r.delete_cookie("mage-cache-sessid", path="/")
    r.set_cookie("X-Magento-Vary", mage.new_id(40), path="/", httponly=True)
    return r


@route(r"/customer/account/logout/(?:.*)")
def logout():
    g.sess.regenerate()
    g.sess.clear()
    r = redirect("/customer/account/logoutSuccess/")
    r.delete_cookie("X-Magento-Vary", path="/")
    return r


@route(r"/customer/account/logoutsuccess/")
def logout_success():
    return front_page("You are signed out", "<p>You have signed out and will go to our homepage in 5 seconds.</p>")


@route(r"/customer/account/(?:index/)?")
def account():
    need = require_customer()
    if need:
        return need
    c = customer()
    return front_page("My Account", '<div class="block block-dashboard-info"><div class="block-title"><strong>Account Information</strong></div>'
                      '<div class="box box-information"><div class="box-content"><p>%s %s<br>%s</p></div></div></div>'
                      % (E(c["firstname"]), E(c["lastname"]), E(c["email"])), body_class="account customer-account-index")


@route(r"/customer/address/(?:index/)?")
def addresses():
    need = require_customer()
    if need:
        return need
    c = customer()
    def box(aid, cls, title):
        a = q1(g.conn, "SELECT * FROM customer_address_entity WHERE entity_id=%s", (aid,))
        txt = ("%s %s<br>%s<br>%s, %s, %s<br>United States<br>T: <a href='tel:%s'>%s</a>" % tuple(map(E, (a["firstname"], a["lastname"], a["street"], a["city"], a["region"], a["postcode"], a["telephone"], a["telephone"])))) if a else "You have not set a default address."
        return '<div class="box %s"><strong class="box-title"><span>%s</span></strong><div class="box-content"><address>%s</address></div></div>' % (cls, title, txt)
    return front_page("Address Book", '<div class="block block-addresses-default"><div class="block-content">%s%s</div></div>'
                      % (box(c["default_billing"], "box-address-billing", "Default Billing Address"), box(c["default_shipping"], "box-address-shipping", "Default Shipping Address")))


@route(r"/newsletter/manage/(?:index/)?")
def newsletter():
    need = require_customer()
    if need:
        return need
    s = q1(g.conn, "SELECT subscriber_status FROM newsletter_subscriber WHERE customer_id=%s", (customer()["entity_id"],))
    checked = " checked" if s and s["subscriber_status"] == 1 else ""
    return front_page("Newsletter Subscription", '<form class="form form-newsletter-manage" action="%s" method="post" id="form-validate"><input name="form_key" type="hidden" value="%s">'
                      '<fieldset class="fieldset"><div class="field choice"><input type="checkbox" name="is_subscribed" id="subscription" value="1" title="General Subscription" class="checkbox"%s>'
                      '<label for="subscription" class="label"><span>General Subscription</span></label></div></fieldset>'
                      '<button type="submit" title="Save" class="action save primary"><span>Save</span></button></form>'
                      % (abs_url("/newsletter/manage/save/"), g.sess.form_key(), checked))


@route(r"/newsletter/manage/save/", ("POST",))
def newsletter_save():
    need = require_customer()
    if need or not form_key_ok():
        return need or redirect("/newsletter/manage/")
    ex(g.conn, "UPDATE newsletter_subscriber SET subscriber_status=%s, change_status_at=UTC_TIMESTAMP() WHERE customer_id=%s",
       (1 if request.form.get("is_subscribed") else 3, customer()["entity_id"]))
    g.sess.flash("success", "We have saved your subscription.")
    return redirect("/customer/account/")


# -- wishlist (Wishlist/Controller/Index/Plugin: guest -> login redirect; contract-magento.md §1.5)
@route(r"/wishlist/(?:index/(?:index/)?)?(?:wishlist_id/\d+/)?")
def wishlist():
    if g.cfg.get("wishlist/general/active", "1") == "0":
        return front_page("404 Not Found", "<p>Whoops, our bad...</p>", 404)
    need = require_customer()
    if need:
        return need
    rows = q(g.conn, "SELECT i.product_id FROM wishlist w JOIN wishlist_item i USING (wishlist_id) WHERE w.customer_id=%s ORDER BY i.wishlist_item_id",
             (customer()["entity_id"],))
    cards = "".join(product_card(mage.product(g.conn, r["product_id"])) for r in rows) or '<div class="message info empty"><span>You have no items in your wish list.</span></div>'
    return front_page("My Wish List", '<form class="form-wishlist-items" id="wishlist-view-form"><div class="products-grid wishlist"><ol class="product-items">%s</ol></div></form>' % cards,
                      body_class="wishlist-index-index account")


# -- cart
def active_quote(create=True, cid=None):
    cid = cid if cid is not None else (customer() or {}).get("entity_id")
    if cid:
        qrow = q1(g.conn, "SELECT * FROM quote WHERE customer_id=%s AND is_active=1 ORDER BY entity_id DESC LIMIT 1", (cid,))
    else:
        qid = g.sess.get("quote_id") if hasattr(g, "sess") else None
        qrow = qid and q1(g.conn, "SELECT * FROM quote WHERE entity_id=%s AND is_active=1", (qid,))
    if qrow or not create:
        return qrow
    c = cid and q1(g.conn, "SELECT * FROM customer_entity WHERE entity_id=%s", (cid,))
    qid = ex(g.conn, "INSERT INTO quote (store_id, is_active, customer_id, customer_email, customer_firstname, customer_lastname, customer_is_guest) VALUES (1,1,%s,%s,%s,%s,%s)",
             (cid or None, c["email"] if c else None, c["firstname"] if c else None, c["lastname"] if c else None, 0 if c else 1))
    if not cid:
        g.sess["quote_id"] = qid
    return q1(g.conn, "SELECT * FROM quote WHERE entity_id=%s", (qid,))


def recalc(qid):
    ex(g.conn, "UPDATE quote SET items_count=(SELECT COUNT(*) FROM quote_item WHERE quote_id=%s), items_qty=(SELECT COALESCE(SUM(qty),0) FROM quote_item WHERE quote_id=%s), "
               "subtotal=(SELECT COALESCE(SUM(row_total),0) FROM quote_item WHERE quote_id=%s), grand_total=subtotal, updated_at=UTC_TIMESTAMP() WHERE entity_id=%s", (qid, qid, qid, qid))


def add_item(qrow, p, qty):
    if not p["is_in_stock"]:
        raise ValueError("Product that you are trying to add is not available.")
    it = q1(g.conn, "SELECT * FROM quote_item WHERE quote_id=%s AND product_id=%s", (qrow["entity_id"], p["entity_id"]))
    if it:
        ex(g.conn, "UPDATE quote_item SET qty=qty+%s, row_total=(qty)*price, updated_at=UTC_TIMESTAMP() WHERE item_id=%s", (qty, it["item_id"]))
        iid = it["item_id"]
    else:
        iid = ex(g.conn, "INSERT INTO quote_item (quote_id, product_id, store_id, sku, name, qty, price, row_total, product_type) VALUES (%s,%s,1,%s,%s,%s,%s,%s,%s)",
                 (qrow["entity_id"], p["entity_id"], p["sku"], p["name"], qty, p["price"], p["price"] * qty, p["type_id"]))
    recalc(qrow["entity_id"])
    return q1(g.conn, "SELECT * FROM quote_item WHERE item_id=%s", (iid,))


@route(r"/checkout/cart/add/(?:.*/)?product/(?P<pid>\d+)/(?:.*)", ("POST",))
@route(r"/checkout/cart/add/(?:.*)", ("POST",))
def cart_add(pid=None):
    if not form_key_ok():
        g.sess.flash("error", "Invalid Form Key. Please refresh the page.")
        return redirect("/checkout/cart/")
    p = mage.product(g.conn, int(pid or request.form.get("product", 0)))
    if not p:
        return redirect("/checkout/cart/")
    try:
        add_item(active_quote(), p, float(request.form.get("qty") or 1))
    except ValueError as e:
        g.sess.flash("error", str(e))
        return redirect("/%s.html" % p["url_key"])
    g.sess.flash("success", "You added %s to your shopping cart." % p["name"])
    return redirect("/checkout/cart/")


@route(r"/checkout/cart/(?:index/)?")
def cart():
    qrow = active_quote(create=False)
    items = q(g.conn, "SELECT * FROM quote_item WHERE quote_id=%s ORDER BY item_id", (qrow["entity_id"],)) if qrow else []
    if not items:
        return front_page("Shopping Cart", '<div class="cart-empty"><p>You have no items in your shopping cart.</p></div>', body_class="checkout-cart-index")
    rows = "".join('<tbody class="cart item"><tr class="item-info"><td class="col item"><strong class="product-item-name"><a href="%s">%s</a></strong></td>'
                   '<td class="col price">%s</td><td class="col qty"><input class="input-text qty" name="cart[%d][qty]" value="%g" title="Qty"></td><td class="col subtotal">%s</td></tr></tbody>'
                   % (abs_url("/catalog/product/view/id/%d/" % i["product_id"]), E(i["name"]), price_html(float(i["price"])), i["item_id"], float(i["qty"]), price_html(float(i["row_total"])))
                   for i in items)
    return front_page("Shopping Cart", '<form id="form-validate" class="form form-cart"><div class="cart table-wrapper"><table id="shopping-cart-table" class="cart items data table">'
                      '<thead><tr><th class="col item">Item</th><th class="col price">Price</th><th class="col qty">Qty</th><th class="col subtotal">Subtotal</th></tr></thead>%s</table></div></form>'
                      '<div class="cart-summary"><strong class="summary title">Summary</strong><div class="grand totals">Order Total %s</div></div>' % (rows, price_html(float(qrow["grand_total"]))),
                      body_class="checkout-cart-index")


# -- reviews (Review/Controller/Product/Post: new reviews are Pending)
@route(r"/review/product/post/id/(?P<pid>\d+)/(?:.*)", ("POST",))
def review_post(pid):
    p = mage.product(g.conn, int(pid))
    if not p or not form_key_ok():
        return redirect("/")
    nick, title, detail = (request.form.get(k, "").strip() for k in ("nickname", "title", "detail"))
    votes = {k[8:-1]: v for k, v in request.form.items() if k.startswith("ratings[")}
    if not (nick and title and detail) or not votes:
        g.sess.flash("error", "We can't post your review right now.")
        return redirect("/%s.html" % p["url_key"])
    cid = customer()["entity_id"] if customer() else None
    save_review(p["entity_id"], nick, title, detail, votes, cid, 2)
    g.sess.flash("success", "You submitted your review for moderation.")
    return redirect("/%s.html" % p["url_key"])


def save_review(pid, nick, title, detail, votes, cid, status):
    rid = ex(g.conn, "INSERT INTO review (created_at, entity_id, entity_pk_value, status_id) VALUES (UTC_TIMESTAMP(),1,%s,%s)", (pid, status))
    ex(g.conn, "INSERT INTO review_detail (review_id, store_id, title, detail, nickname, customer_id) VALUES (%s,1,%s,%s,%s,%s)", (rid, title, detail, nick, cid))
    ex(g.conn, "INSERT INTO review_store VALUES (%s,0),(%s,1)", (rid, rid))
    for rating_id, option_id in votes.items():
        opt = q1(g.conn, "SELECT * FROM rating_option WHERE option_id=%s AND rating_id=%s", (option_id, rating_id))
        if opt:
            ex(g.conn, "INSERT INTO rating_option_vote (option_id, remote_ip, remote_ip_long, customer_id, entity_pk_value, rating_id, review_id, percent, value) "
                       "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)", (opt["option_id"], request.remote_addr, b"", cid, pid, opt["rating_id"], rid, opt["value"] * 20, opt["value"]))
    return rid


# -- orders (customer side)
@route(r"/sales/order/history/")
def order_history():
    need = require_customer()
    if need:
        return need
    rows = q(g.conn, "SELECT * FROM sales_order WHERE customer_id=%s ORDER BY created_at DESC", (customer()["entity_id"],))
    trs = "".join('<tr><td data-th="Order #" class="col id">%s</td><td data-th="Date" class="col date">%s</td><td data-th="Order Total" class="col total">%s</td>'
                  '<td data-th="Status" class="col status">%s</td><td class="col actions"><a href="%s" class="action view"><span>View Order</span></a></td></tr>'
                  % (o["increment_id"], o["created_at"].strftime("%m/%d/%y"), price_html(float(o["grand_total"])), o["status"].capitalize(),
                     abs_url("/sales/order/view/order_id/%d/" % o["entity_id"])) for o in rows)
    return front_page("My Orders", '<div class="table-wrapper orders-history"><table class="data table table-order-items history" id="my-orders-table"><thead><tr>'
                      '<th class="col id">Order #</th><th class="col date">Date</th><th class="col total">Order Total</th><th class="col status">Status</th><th class="col actions">Action</th></tr></thead><tbody>%s</tbody></table></div>' % trs)


@route(r"/sales/order/view/order_id/(?P<oid>\d+)/(?:.*)")
def order_view(oid):
    need = require_customer()
    if need:
        return need
    o = q1(g.conn, "SELECT * FROM sales_order WHERE entity_id=%s AND customer_id=%s", (oid, customer()["entity_id"]))
    if not o:
        return redirect("/sales/order/history/")
    items = q(g.conn, "SELECT * FROM sales_order_item WHERE order_id=%s AND parent_item_id IS NULL ORDER BY item_id", (oid,))
    trs = "".join('<tbody><tr id="order-item-row-%d"><td class="col name" data-th="Product Name"><strong class="product name product-item-name">%s</strong></td>'
                  '<td class="col sku" data-th="SKU">%s</td><td class="col price" data-th="Price">%s</td><td class="col qty" data-th="Qty"><ul class="items-qty">'
                  '<li class="item"><span class="title">Ordered</span><span class="content">%g</span></li></ul></td><td class="col subtotal" data-th="Subtotal">%s</td></tr></tbody>'
                  % (i["item_id"], E(i["name"]), E(i["sku"]), price_html(float(i["price"])), float(i["qty_ordered"]), price_html(float(i["row_total"]))) for i in items)
    body = ('<div class="order-status">%s</div><div class="order-date"><span class="label">Order Date:</span> <date>%s</date></div>'
            '<div class="order-details-items ordered"><div class="order-title"><strong>Items Ordered</strong></div><div class="table-wrapper order-items">'
            '<table class="data table table-order-items" id="my-orders-table" summary="Items Ordered"><caption class="table-caption">Items Ordered</caption>'
            '<thead><tr><th class="col name">Product Name</th><th class="col sku">SKU</th><th class="col price">Price</th><th class="col qty">Qty</th><th class="col subtotal">Subtotal</th></tr></thead>'
            '%s<tfoot><tr class="grand_total"><th colspan="4" class="mark" scope="row"><strong>Grand Total</strong></th><td class="amount" data-th="Grand Total"><strong>%s</strong></td></tr></tfoot></table></div></div>'
            % (o["status"].capitalize(), o["created_at"].strftime("%B %-d, %Y"), trs, price_html(float(o["grand_total"]))))
    return front_page("Order # %s" % o["increment_id"], body, body_class="account sales-order-view")


# ================================================================ admin (/admin) ==========
ADMIN_MENU = [("Dashboard", "/admin/admin/dashboard/"), ("Sales", "/admin/sales/order/"), ("Catalog", "/admin/catalog/product/"),
              ("Customers", "/admin/customer/index/"), ("Marketing", "/admin/review/product/"), ("Content", "/admin/cms/page/"),
              ("Reports", "/admin/reports/"), ("Stores", "/admin/admin/system_config/"), ("System", "/admin/admin/system_account/index/")]


def admin_user():
    uid = g.sess.get("admin_user_id")
    return uid and q1(g.conn, "SELECT * FROM admin_user WHERE user_id=%s AND is_active=1", (uid,))


def admin_page(title, body, status=200, body_class=""):
    menu = "".join('<li class="level-0"><a href="%s"><span>%s</span></a></li>' % (abs_url(h), t) for t, h in ADMIN_MENU)
    u = admin_user()
    doc = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s / Magento Admin</title><meta name="generator" content="sitectl Magento contract replica"></head>
<body class="adminhtml %s" data-container="body"><div class="page-wrapper"><aside class="page-wrapper-sidebar"><nav class="admin__menu" id="nav"><ul id="nav" role="menubar">%s</ul></nav></aside>
<div class="page-header"><div class="admin-user admin__action-dropdown-wrap"><span class="admin__action-dropdown-text"><span class="admin-user-account-text">%s</span></span>
<a href="%s" class="account-signout" title="Sign Out">Sign Out</a></div></div>
<main id="anchor-content" class="page-content"><div class="page-title-wrapper"><h1 class="page-title">%s</h1></div>%s<div class="admin__scope-old">%s</div></main>
<footer class="page-footer"><p class="magento-version"><strong>sitectl contract replica</strong> of Magento ver. 2.4.6</p></footer></div></body></html>""" % (
        E(title), body_class, menu, E(u["username"]) if u else "", abs_url("/admin/admin/auth/logout/"), E(title), messages_html(), body)
    return make_response(doc, status)


def admin_login_form(status=200):
    """Backend/view/adminhtml/templates/admin/login.phtml shape (contract-magento.md §2)."""
    fk = g.sess.form_key()
    doc = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Magento Admin</title><meta name="generator" content="sitectl Magento contract replica"></head>
<body id="html-body" class="adminhtml-auth-login page-layout-admin-login"><section class="page-wrapper"><div class="login-header">%s</div>
<form method="post" action="" id="login-form" autocomplete="off"><fieldset class="admin__fieldset"><legend class="admin__legend"><span>Welcome, please sign in</span></legend><br>
<input name="form_key" type="hidden" value="%s">
<div class="admin__field _required field-username"><label for="username" class="admin__field-label"><span>Username</span></label><div class="admin__field-control">
<input id="username" class="admin__control-text" type="text" name="login[username]" autofocus value="" placeholder="user name" autocomplete="off"></div></div>
<div class="admin__field _required field-password"><label for="login" class="admin__field-label"><span>Password</span></label><div class="admin__field-control">
<input id="login" class="admin__control-text" type="password" name="login[password]" placeholder="password" autocomplete="off"></div></div>
<div class="form-actions"><div class="actions"><button class="action-login action-primary"><span>Sign in</span></button></div>
<div class="links"><a class="action-forgotpassword" href="%s">Forgot your password?</a></div></div></fieldset></form>
<footer class="login-footer"><span>sitectl contract replica of the Magento admin</span></footer></section></body></html>""" % (
        messages_html(), fk, abs_url("/admin/admin/auth/forgotpassword/"))
    return make_response(doc, status)


def admin_dispatch(path):
    if not admin_user():
        if request.method == "POST" and "login[username]" in request.form:
            if not form_key_ok():
                g.sess.flash("error", "Invalid Form Key. Please refresh the page.")
                return redirect(request.full_path.rstrip("?"))
            u = q1(g.conn, "SELECT * FROM admin_user WHERE username=%s", (request.form.get("login[username]", ""),))
            locked = u and u["lock_expires"] and u["lock_expires"] > datetime.utcnow()
            if u and u["is_active"] and not locked and mage.verify_password(request.form.get("login[password]", ""), u["password"]):
                ex(g.conn, "UPDATE admin_user SET logdate=UTC_TIMESTAMP(), lognum=lognum+1, failures_num=0, first_failure=NULL, lock_expires=NULL WHERE user_id=%s", (u["user_id"],))
                fk = g.sess.form_key()
                g.sess.regenerate()
                g.sess.clear()
                g.sess.update({"admin_user_id": u["user_id"], "_form_key": fk})
                life = float(g.cfg.get("admin/security/password_lifetime") or 0)
                last = q1(g.conn, "SELECT last_updated FROM admin_passwords WHERE user_id=%s ORDER BY password_id DESC LIMIT 1", (u["user_id"],))
                if life and last and last["last_updated"] + life * 86400 < time.time():
                    g.sess["pw_expired"] = 1
                    g.sess.flash("notice", "It's time to change your password.")
                return redirect(request.full_path.rstrip("?"))
            if u and not locked:
                ex(g.conn, "UPDATE admin_user SET failures_num=failures_num+1, first_failure=COALESCE(first_failure, UTC_TIMESTAMP()), "
                           "lock_expires=IF(failures_num>=6, UTC_TIMESTAMP() + INTERVAL 30 MINUTE, NULL) WHERE user_id=%s", (u["user_id"],))
            g.sess.flash("error", SIGNIN_FAIL)
        return admin_login_form()
    if g.sess.get("pw_expired") and g.cfg.get("admin/security/password_is_forced", "1") == "1" \
            and float(g.cfg.get("admin/security/password_lifetime") or 0) and not re.match(r"^/admin/admin/(system_account|auth/logout)", path):
        return redirect("/admin/admin/system_account/index/")
    fn, kw = match(path, "admin")
    if fn:
        if request.method == "POST" and not form_key_ok():
            g.sess.flash("error", "Invalid Form Key. Please refresh the page.")
            return redirect("/admin/admin/dashboard/")
        return fn(**kw)
    # Backend no-route handler: 404 page inside the admin layout (menu contains "Dashboard")
    return admin_page("404 Error", "<h2>Page not found.</h2>", 404, "adminhtml-noroute-index")


@route(r"/admin/(?:admin/)?(?:index/(?:index/)?)?", area="admin")
def admin_root():
    return redirect("/admin/admin/dashboard/")


@route(r"/admin/admin/dashboard/(?:index/)?(?:.*)", area="admin")
def admin_dashboard():
    n_orders = q1(g.conn, "SELECT COUNT(*) n, COALESCE(SUM(grand_total),0) s FROM sales_order")
    last = q(g.conn, "SELECT * FROM sales_order ORDER BY created_at DESC LIMIT 5")
    rows = "".join("<tr><td>%s %s</td><td>%g</td><td>%s</td></tr>" % (E(o["customer_firstname"] or ""), E(o["customer_lastname"] or ""), float(o["total_qty_ordered"] or 0),
                                                                      price_html(float(o["grand_total"]))) for o in last)
    return admin_page("Dashboard", '<div class="dashboard-container"><div class="dashboard-totals"><ul class="dashboard-totals-list"><li class="dashboard-totals-item">'
                      '<span class="dashboard-totals-label">Revenue</span><strong class="dashboard-totals-value">%s</strong></li><li class="dashboard-totals-item">'
                      '<span class="dashboard-totals-label">Orders</span><strong class="dashboard-totals-value">%d</strong></li></ul></div>'
                      '<div class="dashboard-item"><div class="dashboard-item-title">Last Orders</div><table class="admin__table-primary dashboard-data"><thead><tr><th>Customer</th><th>Items</th><th>Total</th></tr></thead><tbody>%s</tbody></table></div></div>'
                      % (price_html(float(n_orders["s"])), n_orders["n"], rows), body_class="adminhtml-dashboard-index")


@route(r"/admin/admin/system_account/(?:index/)?", area="admin")
def admin_account():
    u = admin_user()
    return admin_page("Account Setting", '<form id="edit_form" method="post" action="%s"><input name="form_key" type="hidden" value="%s"><fieldset class="fieldset admin__fieldset">'
                      '<input name="username" id="username" value="%s"><input name="password" id="password" type="password"><input name="current_password" id="current_password" type="password">'
                      '</fieldset></form>' % (abs_url("/admin/admin/system_account/save/"), g.sess.form_key(), E(u["username"])))


@route(r"/admin/admin/auth/logout/(?:.*)", area="admin")
def admin_logout():
    g.sess.regenerate()
    g.sess.clear()
    g.sess.flash("success", "You have logged out.")
    return redirect("/admin/")


@route(r"/admin/catalog/product/(?:index/)?", area="admin")
def admin_products():
    rows = q(g.conn, "SELECT entity_id FROM catalog_product_entity ORDER BY entity_id LIMIT 200")
    trs = []
    for p in mage.products(g.conn, [r["entity_id"] for r in rows]):
        trs.append('<tr class="data-row"><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%g</td><td>%s</td><td><a class="action-menu-item" href="%s">Edit</a></td></tr>'
                   % (p["entity_id"], E(p["name"] or ""), p["type_id"], E(p["sku"]), price_html(p["price"]), p["qty"], "Enabled" if p["status"] == 1 else "Disabled",
                      abs_url("/admin/catalog/product/edit/id/%d/" % p["entity_id"])))
    return admin_page("Products", '<table class="data-grid"><thead><tr><th>ID</th><th>Name</th><th>Type</th><th>SKU</th><th>Price</th><th>Quantity</th><th>Status</th><th>Action</th></tr></thead><tbody>%s</tbody></table>' % "".join(trs),
                      body_class="catalog-product-index")


@route(r"/admin/catalog/product/edit/id/(?P<pid>\d+)/(?:.*)", area="admin")
def admin_product_edit(pid):
    p = mage.product(g.conn, int(pid))
    if not p:
        g.sess.flash("error", "This product doesn't exist.")
        return redirect("/admin/catalog/product/")
    sel = lambda cur, opts: "".join('<option value="%s"%s>%s</option>' % (v, " selected" if str(cur) == str(v) else "", t) for v, t in opts)
    conf = ('<div class="fieldset-wrapper admin__collapsible-block-wrapper" data-index="configurable"><div class="fieldset-wrapper-title"><strong class="admin__collapsible-title"><span>Configurations</span></strong></div>'
            '<div class="admin__fieldset-wrapper-content"><p>Configurable product: options Size (XS, S, M, L, XL) and Color.</p></div></div>') if p["type_id"] == "configurable" else ""
    body = """<form id="product_form" method="post" action="{action}" data-form="edit-product"><input name="form_key" type="hidden" value="{fk}">
<div class="page-actions"><button id="save-button" title="Save" type="submit" class="action-default scalable save primary"><span>Save</span></button></div>
<div class="fieldset-wrapper" data-index="product-details"><fieldset class="admin__fieldset">
<div class="admin__field" data-index="status"><label class="admin__field-label" for="product_status"><span>Enable Product</span></label><div class="admin__field-control">
<select class="admin__control-select" name="product[status]" id="product_status">{status}</select></div></div>
<div class="admin__field" data-index="name"><label class="admin__field-label" for="product_name"><span>Product Name</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[name]" id="product_name" value="{name}"></div></div>
<div class="admin__field" data-index="sku"><label class="admin__field-label" for="product_sku"><span>SKU</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[sku]" id="product_sku" value="{sku}"></div></div>
<div class="admin__field" data-index="price"><label class="admin__field-label" for="product_price"><span>Price</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[price]" id="product_price" value="{price}"></div></div>
<div class="admin__field" data-index="qty"><label class="admin__field-label" for="product_qty"><span>Quantity</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[quantity_and_stock_status][qty]" id="product_qty" value="{qty}"></div></div>
<div class="admin__field" data-index="quantity_and_stock_status"><label class="admin__field-label" for="product_stock"><span>Stock Status</span></label><div class="admin__field-control">
<select class="admin__control-select" name="product[quantity_and_stock_status][is_in_stock]" id="product_stock">{stock}</select></div></div>
<div class="admin__field" data-index="url_key"><label class="admin__field-label" for="product_url_key"><span>URL Key</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[url_key]" id="product_url_key" value="{url_key}"></div></div>
</fieldset></div>{conf}
<div class="fieldset-wrapper" data-index="content"><textarea name="product[description]" id="product_description">{desc}</textarea></div></form>""".format(
        action=abs_url("/admin/catalog/product/save/id/%d/type/%s/store/0/set/%d/back/edit/" % (p["entity_id"], p["type_id"], p["attribute_set_id"])),
        fk=g.sess.form_key(), status=sel(p["status"], [(1, "Yes"), (2, "No")]), name=E(p["name"] or ""), sku=E(p["sku"]),
        price="%.2f" % p["price"], qty="%g" % p["qty"], stock=sel(p["is_in_stock"], [(1, "In Stock"), (0, "Out of Stock")]), url_key=E(p["url_key"] or ""),
        conf=conf, desc=E(p["description"] or ""))
    return admin_page(p["name"] or "Product", body, body_class="catalog-product-edit")


@route(r"/admin/catalog/product/save/(?:id/(?P<pid>\d+)/)?(?:.*)", ("POST",), area="admin")
def admin_product_save(pid=None):
    f = request.form
    if not pid:
        return redirect("/admin/catalog/product/")
    pid = int(pid)
    if not mage.product(g.conn, pid):
        return redirect("/admin/catalog/product/")
    for code, key in (("name", "product[name]"), ("price", "product[price]"), ("status", "product[status]"), ("url_key", "product[url_key]"), ("description", "product[description]")):
        if key in f:
            mage.set_attr(g.conn, pid, code, f[key])
    if "product[sku]" in f:
        ex(g.conn, "UPDATE catalog_product_entity SET sku=%s WHERE entity_id=%s", (f["product[sku]"], pid))
    qty, st = f.get("product[quantity_and_stock_status][qty]"), f.get("product[quantity_and_stock_status][is_in_stock]")
    mage.set_stock(g.conn, pid, float(qty) if qty not in (None, "") else None, int(st) if st not in (None, "") else None)
    ex(g.conn, "UPDATE catalog_product_entity SET updated_at=UTC_TIMESTAMP() WHERE entity_id=%s", (pid,))
    g.sess.flash("success", "You saved the product.")
    return redirect("/admin/catalog/product/edit/id/%d/" % pid)


STATUS_LABEL = {"pending": "Pending", "processing": "Processing", "complete": "Complete", "canceled": "Canceled", "holded": "On Hold", "closed": "Closed"}


@route(r"/admin/sales/order/(?:index/)?", area="admin")
def admin_orders():
    rows = q(g.conn, "SELECT * FROM sales_order_grid ORDER BY created_at DESC LIMIT 200")
    trs = "".join('<tr class="data-row"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td><a href="%s">View</a></td></tr>'
                  % (r["increment_id"], r["created_at"], E(r["billing_name"] or ""), price_html(float(r["grand_total"])), STATUS_LABEL.get(r["status"], r["status"]),
                     abs_url("/admin/sales/order/view/order_id/%d/" % r["entity_id"])) for r in rows)
    return admin_page("Orders", '<table class="data-grid"><thead><tr><th>ID</th><th>Purchase Date</th><th>Bill-to Name</th><th>Grand Total (Purchased)</th><th>Status</th><th>Action</th></tr></thead><tbody>%s</tbody></table>' % trs)


def history_html(oid):
    hs = q(g.conn, "SELECT * FROM sales_order_status_history WHERE parent_id=%s ORDER BY created_at DESC, entity_id DESC", (oid,))
    return '<ul class="note-list">%s</ul>' % "".join(
        '<li class="note-list-item"><span class="note-list-date">%s</span> <span class="note-list-status">%s</span> <div class="note-list-comment">%s</div></li>'
        % (h["created_at"], STATUS_LABEL.get(h["status"], h["status"] or ""), E(h["comment"] or "")) for h in hs)


@route(r"/admin/sales/order/view/order_id/(?P<oid>\d+)/(?:.*)", area="admin")
def admin_order_view(oid):
    o = q1(g.conn, "SELECT * FROM sales_order WHERE entity_id=%s", (oid,))
    if not o:
        g.sess.flash("error", "This order no longer exists.")
        return redirect("/admin/sales/order/")
    items = q(g.conn, "SELECT * FROM sales_order_item WHERE order_id=%s", (oid,))
    trs = "".join("<tr><td><div class=\"product-title\">%s</div><div class=\"product-sku-block\"><span>SKU:</span> %s</div></td><td>%s</td><td>Ordered %g</td><td>%s</td></tr>"
                  % (E(i["name"]), E(i["sku"]), price_html(float(i["price"])), float(i["qty_ordered"]), price_html(float(i["row_total"]))) for i in items)
    opts = "".join('<option value="%s"%s>%s</option>' % (k, " selected" if k == o["status"] else "", v) for k, v in STATUS_LABEL.items())
    body = """<section class="admin__page-section order-view-account-information"><div class="admin__page-section-item order-information">
<table class="admin__table-secondary order-information-table"><tr><th>Order Date</th><td>{date}</td></tr><tr><th>Order Status</th><td><span id="order_status">{status}</span></td></tr></table></div>
<div class="admin__page-section-item order-account-information"><table class="admin__table-secondary"><tr><th>Customer Name</th><td>{name}</td></tr><tr><th>Email</th><td>{email}</td></tr></table></div></section>
<section class="admin__page-section"><div class="admin__page-section-title"><span class="title">Items Ordered</span></div><table class="data-table admin__table-primary edit-order-table"><thead><tr><th>Product</th><th>Original Price</th><th>Qty</th><th>Row Total</th></tr></thead><tbody>{items}</tbody></table></section>
<section class="admin__page-section"><div class="admin__page-section-title"><span class="title">Order Total</span></div><div id="order_history_block" class="edit-order-comments">
<form method="post" action="{action}"><input name="form_key" type="hidden" value="{fk}"><select name="history[status]" id="history_status">{opts}</select>
<textarea name="history[comment]" id="history_comment"></textarea><button type="submit" class="action-save action-secondary"><span>Submit Comment</span></button></form>{hist}</div>
<table class="data-table admin__table-secondary order-subtotal-table"><tfoot><tr class="col-0"><td class="label"><strong>Grand Total</strong></td><td><strong>{total}</strong></td></tr></tfoot></table></section>""".format(
        date=o["created_at"], status=STATUS_LABEL.get(o["status"], o["status"]), name=E("%s %s" % (o["customer_firstname"], o["customer_lastname"])), email=E(o["customer_email"]),
        items=trs, action=abs_url("/admin/sales/order/addComment/order_id/%d/" % o["entity_id"]), fk=g.sess.form_key(), opts=opts, hist=history_html(o["entity_id"]),
        total=price_html(float(o["grand_total"])))
    return admin_page("# %s" % o["increment_id"], body, body_class="sales-order-view")


@route(r"/admin/sales/order/commentshistory/order_id/(?P<oid>\d+)/(?:.*)", area="admin")
def admin_order_comments(oid):
    return make_response('<div class="edit-order-comments-block">%s</div>' % history_html(int(oid)))


@route(r"/admin/sales/order/addcomment/order_id/(?P<oid>\d+)/(?:.*)", ("POST",), area="admin")
def admin_order_add_comment(oid):
    o = q1(g.conn, "SELECT * FROM sales_order WHERE entity_id=%s", (oid,))
    if o:
        st = request.form.get("history[status]") or o["status"]
        ex(g.conn, "INSERT INTO sales_order_status_history (parent_id, is_customer_notified, is_visible_on_front, comment, status, created_at, entity_name) VALUES (%s,0,0,%s,%s,UTC_TIMESTAMP(),'order')",
           (o["entity_id"], request.form.get("history[comment]", ""), st))
        ex(g.conn, "UPDATE sales_order SET status=%s, updated_at=UTC_TIMESTAMP() WHERE entity_id=%s", (st, o["entity_id"]))
        ex(g.conn, "UPDATE sales_order_grid SET status=%s WHERE entity_id=%s", (st, o["entity_id"]))
    return redirect("/admin/sales/order/view/order_id/%s/" % oid)


@route(r"/admin/review/product/(?:index/)?", area="admin")
def admin_reviews():
    rows = q(g.conn, "SELECT r.review_id, r.created_at, r.status_id, d.title, d.nickname FROM review r JOIN review_detail d USING (review_id) ORDER BY r.review_id DESC LIMIT 200")
    trs = "".join('<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td><a href="%s">Edit</a></td></tr>' % (
        r["review_id"], r["created_at"], {1: "Approved", 2: "Pending", 3: "Not Approved"}[r["status_id"]], E(r["title"]), E(r["nickname"]),
        abs_url("/admin/review/product/edit/id/%d/" % r["review_id"])) for r in rows)
    return admin_page("Reviews", '<table class="data-grid"><thead><tr><th>ID</th><th>Created</th><th>Status</th><th>Title</th><th>Nickname</th><th>Action</th></tr></thead><tbody>%s</tbody></table>' % trs)


@route(r"/admin/review/product/edit/id/(?P<rid>\d+)/(?:.*)", area="admin")
def admin_review_edit(rid):
    r = q1(g.conn, "SELECT * FROM review r JOIN review_detail d USING (review_id) WHERE r.review_id=%s", (rid,))
    if not r:
        g.sess.flash("error", "The review was removed by another user or does not exist.")
        return redirect("/admin/review/product/")
    p = mage.product(g.conn, r["entity_pk_value"])
    opts = "".join('<option value="%d"%s>%s</option>' % (k, " selected" if k == r["status_id"] else "", v) for k, v in ((1, "Approved"), (2, "Pending"), (3, "Not Approved")))
    body = ('<form id="edit_form" method="post" action="%s"><input name="form_key" type="hidden" value="%s"><fieldset class="fieldset admin__fieldset" id="review_details">'
            '<div class="admin__field"><label class="admin__field-label">Product</label><div class="admin__field-control"><a href="%s">%s</a></div></div>'
            '<div class="admin__field"><label class="admin__field-label" for="status_id">Status</label><select id="status_id" name="status_id" class="admin__control-select">%s</select></div>'
            '<div class="admin__field"><label class="admin__field-label" for="nickname">Nickname</label><input id="nickname" name="nickname" value="%s"></div>'
            '<div class="admin__field"><label class="admin__field-label" for="title">Summary of Review</label><input id="title" name="title" value="%s"></div>'
            '<div class="admin__field"><label class="admin__field-label" for="detail">Review</label><textarea id="detail" name="detail">%s</textarea></div></fieldset>'
            '<button id="save_button" type="submit" class="action-primary"><span>Save Review</span></button></form>'
            % (abs_url("/admin/review/product/save/id/%s/" % rid), g.sess.form_key(), abs_url("/admin/catalog/product/edit/id/%d/" % p["entity_id"]) if p else "#",
               E(p["name"] if p else ""), opts, E(r["nickname"]), E(r["title"]), E(r["detail"])))
    return admin_page("Edit Review '%s'" % r["title"], body)


@route(r"/admin/review/product/save/id/(?P<rid>\d+)/(?:.*)", ("POST",), area="admin")
def admin_review_save(rid):
    f = request.form
    if "status_id" in f:
        ex(g.conn, "UPDATE review SET status_id=%s WHERE review_id=%s", (int(f["status_id"]), rid))
    for col in ("nickname", "title", "detail"):
        if col in f:
            ex(g.conn, "UPDATE review_detail SET %s=%%s WHERE review_id=%%s" % col, (f[col], rid))
    g.sess.flash("success", "You saved the review.")
    return redirect("/admin/review/product/")


@route(r"/admin/cms/page/(?:index/)?", area="admin")
def admin_cms_pages():
    rows = q(g.conn, "SELECT * FROM cms_page ORDER BY page_id")
    return admin_page("Pages", '<table class="data-grid"><tbody>%s</tbody></table>' % "".join(
        '<tr><td>%d</td><td>%s</td><td>%s</td><td><a href="%s">Edit</a></td></tr>' % (r["page_id"], E(r["title"]), E(r["identifier"]), abs_url("/admin/cms/page/edit/page_id/%d/" % r["page_id"])) for r in rows))


@route(r"/admin/cms/page/edit/page_id/(?P<pid>\d+)/(?:.*)", area="admin")
def admin_cms_edit(pid):
    r = q1(g.conn, "SELECT * FROM cms_page WHERE page_id=%s", (pid,))
    if not r:
        return redirect("/admin/cms/page/")
    return admin_page(r["title"], '<form id="cms_page_form" method="post" action="%s"><input name="form_key" type="hidden" value="%s"><input type="hidden" name="page_id" value="%d">'
                      '<div class="admin__field" data-index="title"><label class="admin__field-label">Page Title</label><input class="admin__control-text" type="text" name="title" value="%s"></div>'
                      '<div class="admin__field" data-index="identifier"><label class="admin__field-label">URL Key</label><input class="admin__control-text" type="text" name="identifier" value="%s"></div>'
                      '<textarea name="content">%s</textarea><button type="submit" id="save" class="action-primary">Save</button></form>'
                      % (abs_url("/admin/cms/page/save/"), g.sess.form_key(), r["page_id"], E(r["title"]), E(r["identifier"]), E(r["content"] or "")))


@route(r"/admin/cms/page/save/", ("POST",), area="admin")
def admin_cms_save():
    f = request.form
    ex(g.conn, "UPDATE cms_page SET title=%s, identifier=%s, content=%s, update_time=UTC_TIMESTAMP() WHERE page_id=%s",
       (f.get("title"), f.get("identifier"), f.get("content"), int(f.get("page_id", 0))))
    g.sess.flash("success", "You saved the page.")
    return redirect("/admin/cms/page/")


@route(r"/admin/customer/index/(?:index/)?", area="admin")
def admin_customers():
    rows = q(g.conn, "SELECT * FROM customer_entity ORDER BY entity_id")
    return admin_page("Customers", '<table class="data-grid"><tbody>%s</tbody></table>' % "".join(
        '<tr><td>%d</td><td>%s %s</td><td>%s</td></tr>' % (r["entity_id"], E(r["firstname"]), E(r["lastname"]), E(r["email"])) for r in rows))


# ================================================================ REST (/rest) ============
class RestError(Exception):
    def __init__(self, code, message, parameters=None, errors=None):
        self.code, self.message, self.parameters, self.errors = code, message, parameters, errors


def jresp(obj, status=200):
    return make_response(json.dumps(obj), status, {"Content-Type": "application/json; charset=utf-8"})


def body():
    try:
        return json.loads(request.get_data() or b"{}")
    except ValueError:
        raise RestError(400, "Decoding error: \nSyntax error")


def auth(kind):
    h = request.headers.get("Authorization", "")
    who = mage.read_token(g.conn, h[7:].strip()) if h.lower().startswith("bearer ") else None
    need = {"admin": 2, "customer": 3}[kind]
    if not who or who[1] != need:
        if kind == "customer" and who is None:
            raise RestError(401, "The consumer isn't authorized to access %resources.", {"resources": "self"})
        raise RestError(401, "The consumer isn't authorized to access %resources.", {"resources": "Magento_Backend::admin" if kind == "admin" else "self"})
    return who[0]


def rest_dispatch(path):
    m = re.match(r"^/rest/(?:(?P<store>[a-z0-9_]+)/)?V1/(?P<rest>.*)$", path)
    if m and m.group("store") == "V1":
        m = None
    if not m:
        return jresp({"message": "Request does not match any route."}, 404)
    g.store_id = {"all": 0, "default": 1, None: 1}.get(m.group("store"), 1)
    sub = "/" + m.group("rest").rstrip("/")
    try:
        for rx, methods, a, fn in ROUTES:
            if a != "rest":
                continue
            mm = rx.match(sub)
            if mm and request.method in methods:
                return fn(**mm.groupdict())
        return jresp({"message": "Request does not match any route."}, 404)
    except RestError as e:
        out = {"message": e.message}
        if e.parameters:
            out["parameters"] = e.parameters
        if e.errors:
            out["errors"] = e.errors
        return jresp(out, e.code)


@route(r"/integration/admin/token", ("POST",), area="rest")
def rest_admin_token():
    b = body()
    missing = [k for k in ("username", "password") if not b.get(k)]
    if missing:
        raise RestError(400, "One or more input exceptions have occurred.", errors=[{"message": '"%fieldName" is required. Enter and try again.',
                                                                                    "parameters": {"fieldName": k}} for k in missing])
    u = q1(g.conn, "SELECT * FROM admin_user WHERE username=%s", (b["username"],))
    if not u or not u["is_active"] or not mage.verify_password(b["password"], u["password"]):
        raise RestError(401, SIGNIN_FAIL)
    return jresp(mage.issue_token(u["user_id"], 2, 4 * 3600))


@route(r"/integration/customer/token", ("POST",), area="rest")
def rest_customer_token():
    b = body()
    c = q1(g.conn, "SELECT * FROM customer_entity WHERE email=%s AND website_id=1", (b.get("username", ""),))
    if not c or not c["is_active"] or not mage.verify_password(b.get("password", ""), c["password_hash"]):
        raise RestError(401, SIGNIN_FAIL)
    return jresp(mage.issue_token(c["entity_id"], 3, 3600))


def dt(v):
    return v.strftime("%Y-%m-%d %H:%M:%S") if v else None


def num(v):
    return None if v is None else float(v)


def order_json(o):
    items = q(g.conn, "SELECT * FROM sales_order_item WHERE order_id=%s ORDER BY item_id", (o["entity_id"],))
    addr = q(g.conn, "SELECT * FROM sales_order_address WHERE parent_id=%s", (o["entity_id"],))
    hist = q(g.conn, "SELECT * FROM sales_order_status_history WHERE parent_id=%s ORDER BY entity_id DESC", (o["entity_id"],))
    bill = next((a for a in addr if a["address_type"] == "billing"), None)
    out = {"base_currency_code": "USD", "base_grand_total": num(o["base_grand_total"]), "base_subtotal": num(o["subtotal"]),
           "created_at": dt(o["created_at"]), "customer_email": o["customer_email"], "customer_firstname": o["customer_firstname"],
           "customer_group_id": o["customer_group_id"], "customer_id": o["customer_id"], "customer_is_guest": o["customer_is_guest"],
           "customer_lastname": o["customer_lastname"], "discount_amount": num(o["discount_amount"]) or 0, "entity_id": o["entity_id"],
           "grand_total": num(o["grand_total"]), "increment_id": o["increment_id"], "order_currency_code": o["order_currency_code"],
           "quote_id": o["quote_id"], "shipping_amount": num(o["shipping_amount"]), "shipping_description": o["shipping_description"],
           "state": o["state"], "status": o["status"], "store_id": o["store_id"], "store_name": o["store_name"], "subtotal": num(o["subtotal"]),
           "tax_amount": num(o["tax_amount"]) or 0, "total_item_count": o["total_item_count"], "total_paid": num(o["total_paid"]),
           "total_qty_ordered": num(o["total_qty_ordered"]), "updated_at": dt(o["updated_at"]),
           "items": [{"item_id": i["item_id"], "order_id": i["order_id"], "sku": i["sku"], "name": i["name"], "product_id": i["product_id"],
                      "product_type": i["product_type"], "qty_ordered": num(i["qty_ordered"]), "qty_canceled": num(i["qty_canceled"]),
                      "price": num(i["price"]), "base_price": num(i["base_price"]), "original_price": num(i["original_price"]),
                      "row_total": num(i["row_total"]), "store_id": i["store_id"], "created_at": dt(i["created_at"]), "updated_at": dt(i["updated_at"])} for i in items],
           "billing_address": bill and {"address_type": "billing", "city": bill["city"], "country_id": bill["country_id"], "email": bill["email"],
                                        "entity_id": bill["entity_id"], "firstname": bill["firstname"], "lastname": bill["lastname"], "parent_id": bill["parent_id"],
                                        "postcode": bill["postcode"], "region": bill["region"], "street": [bill["street"]], "telephone": bill["telephone"]},
           "payment": {"method": "checkmo", "amount_ordered": num(o["grand_total"]), "additional_information": ["Check / Money order"]},
           "status_histories": [{"comment": h["comment"], "created_at": dt(h["created_at"]), "entity_id": h["entity_id"], "entity_name": "order",
                                 "is_customer_notified": h["is_customer_notified"], "is_visible_on_front": h["is_visible_on_front"],
                                 "parent_id": h["parent_id"], "status": h["status"]} for h in hist],
           "extension_attributes": {"shipping_assignments": []}}
    return {k: v for k, v in out.items() if v is not None}


def search_criteria(allowed):
    """Parse searchCriteria[...] query params (Magento's bracket syntax)."""
    args = request.args
    sorts, filters, i = [], [], 0
    while "searchCriteria[sortOrders][%d][field]" % i in args:
        sorts.append({"field": args["searchCriteria[sortOrders][%d][field]" % i],
                      "direction": args.get("searchCriteria[sortOrders][%d][direction]" % i, "ASC").upper()})
        i += 1
    gi = 0
    while "searchCriteria[filter_groups][%d][filters][0][field]" % gi in args:
        grp, fi = [], 0
        while "searchCriteria[filter_groups][%d][filters][%d][field]" % (gi, fi) in args:
            pre = "searchCriteria[filter_groups][%d][filters][%d]" % (gi, fi)
            grp.append({"field": args[pre + "[field]"], "value": args.get(pre + "[value]", ""), "condition_type": args.get(pre + "[condition_type]", "eq")})
            fi += 1
        filters.append({"filters": grp})
        gi += 1
    where, params = [], []
    ops = {"eq": "=", "neq": "<>", "gt": ">", "gteq": ">=", "lt": "<", "lteq": "<=", "like": "LIKE"}
    for grp in filters:
        ors = []
        for f in grp["filters"]:
            if f["field"] not in allowed or f["condition_type"] not in ops and f["condition_type"] != "in":
                raise RestError(400, '"%s" is not a valid filter.' % f["field"] if f["field"] not in allowed else "Invalid condition type.")
            if f["condition_type"] == "in":
                vals = f["value"].split(",")
                ors.append("`%s` IN (%s)" % (f["field"], ",".join(["%s"] * len(vals))))
                params += vals
            else:
                ors.append("`%s` %s %%s" % (f["field"], ops[f["condition_type"]]))
                params.append(f["value"])
        where.append("(" + " OR ".join(ors) + ")")
    for s in sorts:
        if s["field"] not in allowed:
            raise RestError(400, 'Invalid sort field "%s".' % s["field"])
    size = args.get("searchCriteria[pageSize]")
    page = args.get("searchCriteria[currentPage]")
    crit = {"filter_groups": filters}
    if sorts:
        crit["sort_orders"] = sorts
    if size:
        crit["page_size"] = int(size)
    if page:
        crit["current_page"] = int(page)
    order = ", ".join("`%s` %s" % (s["field"], "DESC" if s["direction"] == "DESC" else "ASC") for s in sorts) or None
    return crit, (" WHERE " + " AND ".join(where) if where else ""), params, order, int(size) if size else None, int(page or 1)


ORDER_FIELDS = {"entity_id", "increment_id", "created_at", "updated_at", "status", "state", "customer_email", "customer_id", "grand_total", "store_id"}


@route(r"/orders", area="rest")
def rest_orders():
    auth("admin")
    crit, where, params, order, size, page = search_criteria(ORDER_FIELDS)
    total = q1(g.conn, "SELECT COUNT(*) n FROM sales_order" + where, params)["n"]
    sql = "SELECT * FROM sales_order" + where + (" ORDER BY " + order if order else "")
    if size:
        sql += " LIMIT %d OFFSET %d" % (size, (page - 1) * size)
    return jresp({"items": [order_json(o) for o in q(g.conn, sql, params)], "search_criteria": crit, "total_count": total})


@route(r"/orders/(?P<oid>\d+)", area="rest")
def rest_order(oid):
    auth("admin")
    o = q1(g.conn, "SELECT * FROM sales_order WHERE entity_id=%s", (oid,))
    if not o:
        raise RestError(404, "The entity that was requested doesn't exist. Verify the entity and try again.")
    return jresp(order_json(o))


def product_json(p):
    stock = q1(g.conn, "SELECT * FROM cataloginventory_stock_item WHERE product_id=%s AND stock_id=1", (p["entity_id"],))
    custom = [{"attribute_code": c, "value": p[c]} for c in ("url_key", "description", "short_description") if p.get(c) is not None]
    custom.append({"attribute_code": "category_ids", "value": [str(r["category_id"]) for r in q(g.conn, "SELECT category_id FROM catalog_category_product WHERE product_id=%s", (p["entity_id"],))]})
    return {"id": p["entity_id"], "sku": p["sku"], "name": p["name"], "attribute_set_id": p["attribute_set_id"], "price": p["price"],
            "status": p["status"], "visibility": p["visibility"], "type_id": p["type_id"], "created_at": dt(p["created_at"]), "updated_at": dt(p["updated_at"]),
            "extension_attributes": {"website_ids": [1], "category_links": [],
                                     "stock_item": {"item_id": stock["item_id"], "product_id": p["entity_id"], "stock_id": 1, "qty": num(stock["qty"]),
                                                    "is_in_stock": bool(stock["is_in_stock"]), "is_qty_decimal": False, "manage_stock": True,
                                                    "min_sale_qty": num(stock["min_sale_qty"]), "max_sale_qty": num(stock["max_sale_qty"])} if stock else None},
            "product_links": [], "options": [], "media_gallery_entries": [], "tier_prices": [], "custom_attributes": custom}


def product_by_sku(sku):
    p = mage.product(g.conn, sku=sku, store_id=g.store_id)
    if not p:
        raise RestError(404, "The product that was requested doesn't exist. Verify the product and try again.")
    return p


@route(r"/products/(?P<sku>[^/]+)", ("GET",), area="rest")
def rest_product(sku):
    auth("admin")
    from urllib.parse import unquote
    return jresp(product_json(product_by_sku(unquote(sku))))


@route(r"/products/(?P<sku>[^/]+)", ("PUT",), area="rest")
def rest_product_put(sku):
    auth("admin")
    from urllib.parse import unquote
    p = product_by_sku(unquote(sku))
    d = body().get("product") or {}
    for code in ("name", "price", "status", "visibility"):
        if code in d:
            mage.set_attr(g.conn, p["entity_id"], code, d[code])
    for ca in d.get("custom_attributes") or []:
        if ca.get("attribute_code") in mage.ATTR:
            mage.set_attr(g.conn, p["entity_id"], ca["attribute_code"], ca.get("value"))
    st = (d.get("extension_attributes") or {}).get("stock_item") or {}
    mage.set_stock(g.conn, p["entity_id"], st.get("qty"), st.get("is_in_stock"))
    ex(g.conn, "UPDATE catalog_product_entity SET updated_at=UTC_TIMESTAMP() WHERE entity_id=%s", (p["entity_id"],))
    return jresp(product_json(mage.product(g.conn, p["entity_id"])))


@route(r"/products", ("GET",), area="rest")
def rest_products():
    auth("admin")
    size = int(request.args.get("searchCriteria[pageSize]") or 0)
    page = max(int(request.args.get("searchCriteria[currentPage]") or 1), 1)
    total = q1(g.conn, "SELECT COUNT(*) n FROM catalog_product_entity")["n"]
    rows = q(g.conn, "SELECT entity_id FROM catalog_product_entity ORDER BY entity_id" + (" LIMIT %d OFFSET %d" % (size, (page - 1) * size) if size else ""))
    items = [product_json(p) for p in mage.products(g.conn, [r["entity_id"] for r in rows])]
    return jresp({"items": items, "search_criteria": {"filter_groups": []}, "total_count": total})


@route(r"/products/(?P<sku>[^/]+)/reviews", ("GET",), area="rest")
def rest_product_reviews(sku):
    """divante/magento2-review-api GetProductReviews shape (contract-magento.md §3.4)."""
    auth("admin")
    from urllib.parse import unquote
    p = mage.product(g.conn, sku=unquote(sku))
    if not p:
        return jresp([])
    out = []
    for r in q(g.conn, "SELECT * FROM review r JOIN review_detail d USING (review_id) WHERE r.entity_pk_value=%s ORDER BY r.review_id", (p["entity_id"],)):
        votes = q(g.conn, "SELECT v.vote_id, v.rating_id, ra.rating_code, v.percent, v.value FROM rating_option_vote v JOIN rating ra USING (rating_id) "
                          "JOIN rating_store rs ON rs.rating_id=ra.rating_id AND rs.store_id=%s WHERE v.review_id=%s ORDER BY ra.position, ra.rating_id",
                  (r["store_id"], r["review_id"]))
        item = {"id": r["review_id"], "title": r["title"], "detail": r["detail"], "nickname": r["nickname"]}
        if r["customer_id"]:
            item["customer_id"] = r["customer_id"]
        item.update({"ratings": [{"vote_id": v["vote_id"], "rating_id": v["rating_id"], "rating_name": v["rating_code"], "percent": v["percent"], "value": v["value"]} for v in votes],
                     "review_entity": "product", "review_type": 1 if r["customer_id"] else (3 if r["store_id"] == 0 else 2),
                     "review_status": r["status_id"], "created_at": dt(r["created_at"]), "entity_pk_value": r["entity_pk_value"], "store_id": r["store_id"],
                     "stores": [s["store_id"] for s in q(g.conn, "SELECT store_id FROM review_store WHERE review_id=%s ORDER BY store_id", (r["review_id"],))]})
        out.append(item)
    return jresp(out)


@route(r"/customers/me", ("GET",), area="rest")
def rest_me():
    cid = auth("customer")
    c = q1(g.conn, "SELECT * FROM customer_entity WHERE entity_id=%s", (cid,))
    return jresp({"id": c["entity_id"], "group_id": c["group_id"], "default_billing": str(c["default_billing"]), "default_shipping": str(c["default_shipping"]),
                  "created_at": dt(c["created_at"]), "updated_at": dt(c["updated_at"]), "created_in": c["created_in"], "email": c["email"],
                  "firstname": c["firstname"], "lastname": c["lastname"], "store_id": c["store_id"], "website_id": c["website_id"], "addresses": []})


def cart_json(qrow):
    items = q(g.conn, "SELECT * FROM quote_item WHERE quote_id=%s ORDER BY item_id", (qrow["entity_id"],))
    return {"id": qrow["entity_id"], "created_at": dt(qrow["created_at"]), "updated_at": dt(qrow["updated_at"]), "is_active": bool(qrow["is_active"]),
            "is_virtual": False, "items": [item_json(i) for i in items], "items_count": qrow["items_count"], "items_qty": num(qrow["items_qty"]),
            "customer": {"id": qrow["customer_id"], "email": qrow["customer_email"], "firstname": qrow["customer_firstname"], "lastname": qrow["customer_lastname"]},
            "currency": {"base_currency_code": "USD", "quote_currency_code": "USD"}, "customer_is_guest": bool(qrow["customer_is_guest"])}


def item_json(i):
    return {"item_id": i["item_id"], "sku": i["sku"], "qty": num(i["qty"]), "name": i["name"], "price": num(i["price"]), "product_type": i["product_type"], "quote_id": str(i["quote_id"])}


@route(r"/carts/mine", ("POST",), area="rest")
def rest_cart_create():
    cid = auth("customer")
    return jresp(active_quote(cid=cid)["entity_id"])


@route(r"/carts/mine", ("GET",), area="rest")
def rest_cart_get():
    cid = auth("customer")
    qrow = active_quote(create=False, cid=cid)
    if not qrow:
        raise RestError(404, "No such entity with %fieldName = %fieldValue", {"fieldName": "customerId", "fieldValue": cid})
    return jresp(cart_json(qrow))


@route(r"/carts/mine/items", ("POST",), area="rest")
def rest_cart_add():
    cid = auth("customer")
    ci = body().get("cartItem") or {}
    qrow = active_quote(create=False, cid=cid)
    if not qrow:
        raise RestError(404, "No such entity with %fieldName = %fieldValue", {"fieldName": "cartId", "fieldValue": ci.get("quote_id")})
    p = mage.product(g.conn, sku=ci.get("sku", ""))
    if not p:
        raise RestError(404, "The product that was requested doesn't exist. Verify the product and try again.")
    try:
        return jresp(item_json(add_item(qrow, p, float(ci.get("qty") or 1))))
    except ValueError as e:
        raise RestError(400, str(e))


@route(r"/carts/mine/items", ("GET",), area="rest")
def rest_cart_items():
    cid = auth("customer")
    qrow = active_quote(create=False, cid=cid)
    return jresp([item_json(i) for i in q(g.conn, "SELECT * FROM quote_item WHERE quote_id=%s", (qrow["entity_id"],))] if qrow else [])


@route(r"/carts/mine/shipping-information", ("POST",), area="rest")
def rest_cart_shipping():
    cid = auth("customer")
    qrow = active_quote(create=False, cid=cid)
    if not qrow:
        raise RestError(404, "No such entity with %fieldName = %fieldValue", {"fieldName": "cartId", "fieldValue": ""})
    return jresp({"payment_methods": [{"code": "checkmo", "title": "Check / Money order"}],
                  "totals": {"grand_total": num(qrow["grand_total"]) + 5 * num(qrow["items_qty"]), "subtotal": num(qrow["subtotal"]), "items_qty": num(qrow["items_qty"])}})


def place_order(cid):
    qrow = active_quote(create=False, cid=cid)
    items = q(g.conn, "SELECT * FROM quote_item WHERE quote_id=%s", (qrow["entity_id"],)) if qrow else []
    if not items:
        raise RestError(400, "The shipping address is missing. Set the address and try again." if qrow else "No such entity")
    c = q1(g.conn, "SELECT * FROM customer_entity WHERE entity_id=%s", (cid,))
    inc = mage.next_increment_id(g.conn, 1)
    subtotal, qty = float(qrow["subtotal"]), float(qrow["items_qty"])
    ship = 5.0 * qty
    t = now_s()
    oid = ex(g.conn, "INSERT INTO sales_order (state, status, increment_id, store_id, customer_id, customer_email, customer_firstname, customer_lastname, customer_group_id, "
                     "grand_total, base_grand_total, subtotal, shipping_amount, tax_amount, discount_amount, total_qty_ordered, total_paid, quote_id, shipping_method, "
                     "shipping_description, store_name, remote_ip, created_at, updated_at, total_item_count) "
                     "VALUES ('new','pending',%s,1,%s,%s,%s,%s,1,%s,%s,%s,%s,0,0,%s,0,%s,'flatrate_flatrate','Flat Rate - Fixed',%s,%s,%s,%s,%s)",
             (inc, cid, c["email"], c["firstname"], c["lastname"], subtotal + ship, subtotal + ship, subtotal, ship, qty, qrow["entity_id"],
              "Main Website\nMain Website Store\nDefault Store View", request.remote_addr, t, t, len(items)))
    for i in items:
        p = mage.product(g.conn, i["product_id"])
        ex(g.conn, "INSERT INTO sales_order_item (order_id, quote_item_id, store_id, created_at, updated_at, product_id, product_type, sku, name, qty_ordered, price, base_price, original_price, row_total) "
                   "VALUES (%s,%s,1,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", (oid, i["item_id"], t, t, i["product_id"], i["product_type"], i["sku"], i["name"], i["qty"], i["price"], i["price"], p["price"] if p else i["price"], i["row_total"]))
        ex(g.conn, "UPDATE cataloginventory_stock_item SET qty=qty-%s WHERE product_id=%s AND stock_id=1", (i["qty"], i["product_id"]))
    a = q1(g.conn, "SELECT * FROM customer_address_entity WHERE entity_id=%s", (c["default_billing"],))
    if a:
        for typ in ("billing", "shipping"):
            ex(g.conn, "INSERT INTO sales_order_address (parent_id, address_type, firstname, lastname, street, city, region, postcode, country_id, telephone, email) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
               (oid, typ, a["firstname"], a["lastname"], a["street"], a["city"], a["region"], a["postcode"], a["country_id"], a["telephone"], c["email"]))
    ex(g.conn, "INSERT INTO sales_order_payment (parent_id, method, amount_ordered) VALUES (%s,'checkmo',%s)", (oid, subtotal + ship))
    ex(g.conn, "UPDATE quote SET is_active=0, reserved_order_id=%s, updated_at=UTC_TIMESTAMP() WHERE entity_id=%s", (inc, qrow["entity_id"]))
    mage.sync_grid(g.conn, oid)
    return oid


@route(r"/carts/mine/payment-information", ("POST",), area="rest")
def rest_payment_information():
    cid = auth("customer")
    m = (body().get("paymentMethod") or {}).get("method")
    if m not in ("checkmo", "free", "cashondelivery", "banktransfer"):
        raise RestError(400, "The requested Payment Method is not available.")
    return jresp(str(place_order(cid)))


@route(r"/carts/mine/order", ("PUT",), area="rest")
def rest_cart_order():
    cid = auth("customer")
    return jresp(place_order(cid))
