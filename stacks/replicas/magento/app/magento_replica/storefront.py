"""Storefront layout and helpers shared by the frontend route modules: page frame, current
customer, login gate, product cards."""
from flask import g, make_response, request

from mage import q1
from .web import E, abs_url, messages_html, price_html, redirect


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


def product_card(p):
    return ('<li class="item product product-item"><div class="product-item-info"><strong class="product name product-item-name">'
            '<a class="product-item-link" href="%s">%s</a></strong><div class="price-box">%s</div></div></li>'
            % (abs_url("/%s.html" % p["url_key"]), E(p["name"]), price_html(p["price"])))
