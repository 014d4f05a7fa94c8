"""Storefront catalog routes: home page, search results, category pages, product pages."""
import re
from urllib.parse import urlencode

from flask import g, request

import mage
from mage import q, q1
from .routing import route
from .storefront import customer, front_page, product_card
from .web import E, abs_url, price_html


@route(r"/(?:cms/index/index/)?")
def home():
    ids = [r["entity_id"] for r in q(g.conn, "SELECT entity_id FROM catalog_product_entity ORDER BY entity_id LIMIT 24")]
    cards = "".join(product_card(p) for p in mage.products(g.conn, ids))
    return front_page(g.cfg.get("design/head/default_title", "Home Page"),
                      '<div class="products wrapper grid products-grid"><ol class="products list items product-items">%s</ol></div>' % cards,
                      h1="Home Page", body_class="cms-home cms-index-index")


# ---------------------------------------------------------------- product lists -------------
# Magento's list toolbar (Magento\Catalog\Block\Product\ProductList\Toolbar): the query parameters
# p, product_list_mode (grid|list), product_list_limit (grid 12/24/36, default 12; list
# 5/10/15/20/25, default 10), product_list_order, product_list_dir (asc|desc); a page beyond the
# last shows the last page; price=FROM-TO is the layered navigation's price filter (FROM <= price < TO).
LIMITS = {"grid": (12, 24, 36), "list": (5, 10, 15, 20, 25)}
NAME_INDEX = "REPLICA_CATALOG_PRODUCT_ENTITY_VARCHAR_ATTRIBUTE_ID_VALUE"   # app/replica-indexes.sql


def _int(v, default):
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _price_filter():
    m = re.fullmatch(r"(\d*(?:\.\d+)?)-(\d*(?:\.\d+)?)", request.args.get("price", ""))
    if not m or not (m.group(1) or m.group(2)):
        return "", ()
    sql, args = "", []
    if m.group(1):
        sql, args = sql + " AND pr.value >= %s", args + [float(m.group(1))]
    if m.group(2):
        sql, args = sql + " AND pr.value < %s", args + [float(m.group(2))]
    return sql, tuple(args)


def product_list(where, args, orders, default_order, default_dir="asc"):
    """(cards html, toolbar html) of the enabled products matching ``where`` (SQL on e = the
    product entity, n = its name, pr = its price), paged and sorted as Magento's toolbar does."""
    mode = request.args.get("product_list_mode", "grid")
    mode = mode if mode in LIMITS else "grid"
    limit = _int(request.args.get("product_list_limit"), 0)
    limit = limit if limit in LIMITS[mode] else LIMITS[mode][0 if mode == "grid" else 1]
    order = request.args.get("product_list_order", default_order)
    order = order if order in orders else default_order
    direction = request.args.get("product_list_dir", default_dir if order == default_order else "asc").lower()
    direction = direction if direction in ("asc", "desc") else "asc"
    psql, pargs = _price_filter()
    rows = q(g.conn, "SELECT e.entity_id, n.value AS name, pr.value AS price FROM catalog_product_entity e "
                     "LEFT JOIN catalog_product_entity_varchar n ON n.entity_id=e.entity_id AND n.attribute_id=73 AND n.store_id=0 "
                     "LEFT JOIN catalog_product_entity_decimal pr ON pr.entity_id=e.entity_id AND pr.attribute_id=77 AND pr.store_id=0 "
                     "LEFT JOIN catalog_product_entity_int st ON st.entity_id=e.entity_id AND st.attribute_id=97 AND st.store_id=0 "
                     "WHERE COALESCE(st.value, 1)=1 AND " + where + psql, args + pargs)
    key = orders[order]
    rows = sorted(rows, key=lambda r: (key(r), r["entity_id"]), reverse=(direction == "desc" and order != default_order))
    total = len(rows)
    last = max(1, -(-total // limit))
    page = min(max(_int(request.args.get("p"), 1), 1), last)
    shown = rows[(page - 1) * limit: page * limit]
    cards = "".join(product_card(p) for p in mage.products(g.conn, [r["entity_id"] for r in shown]))
    if not total:
        body = '<div class="message info empty"><div>We can\'t find products matching the selection.</div></div>'
        return body, ""

    def url(**kw):
        a = request.args.to_dict()
        a.update({k: str(v) for k, v in kw.items()})
        if a.get("p") == "1":
            a.pop("p")
        return E(abs_url(request.path) + "?" + urlencode(a))
    amount = ('<p class="toolbar-amount" id="toolbar-amount">Items <span class="toolbar-number">%d</span>-<span class="toolbar-number">%d</span> '
              'of <span class="toolbar-number">%d</span></p>' % ((page - 1) * limit + 1, (page - 1) * limit + len(shown), total))
    sorter = ('<div class="toolbar-sorter sorter"><label class="sorter-label" for="sorter">Sort By</label><select id="sorter" data-role="sorter" class="sorter-options">%s</select>'
              '<a title="Set %s Direction" href="%s" class="action sorter-action sort-%s"><span>Set %s Direction</span></a></div>'
              % ("".join('<option value="%s"%s>%s</option>' % (o, " selected" if o == order else "", o.title()) for o in orders),
                 "Descending" if direction == "asc" else "Ascending", url(product_list_dir="desc" if direction == "asc" else "asc"),
                 "asc" if direction == "asc" else "desc", "Descending" if direction == "asc" else "Ascending"))
    pages = "".join('<li class="item%s"><a class="page" href="%s"><span>%d</span></a></li>' % (" current" if n == page else "", url(p=n), n)
                    for n in range(max(1, page - 2), min(last, page + 2) + 1))
    if page < last:
        pages += '<li class="item pages-item-next"><a class="action next" href="%s" title="Next"><span>Next</span></a></li>' % url(p=page + 1)
    if page > 1:
        pages = '<li class="item pages-item-previous"><a class="action previous" href="%s" title="Previous"><span>Previous</span></a></li>' % url(p=page - 1) + pages
    limiter = ('<div class="field limiter"><label class="label" for="limiter"><span>Show</span></label><select id="limiter" data-role="limiter" class="limiter-options">%s</select>'
               '<span class="limiter-text">per page</span></div>'
               % "".join('<option value="%d"%s>%d</option>' % (n, " selected" if n == limit else "", n) for n in LIMITS[mode]))
    toolbar = ('<div class="toolbar toolbar-products"><div class="modes"><strong class="modes-mode%s mode-grid"><span>Grid</span></strong>'
               '<strong class="modes-mode%s mode-list"><span>List</span></strong></div>%s%s<div class="pages"><ul class="items pages-items">%s</ul></div>%s</div>'
               % (" active" if mode == "grid" else "", " active" if mode == "list" else "", amount, sorter, pages, limiter))
    body = '<div class="products wrapper %s products-%s"><ol class="products list items product-items">%s</ol></div>' % (mode, mode, cards)
    return toolbar + body + toolbar, toolbar


BY_NAME = lambda r: (r["name"] or "").lower()          # noqa: E731
BY_PRICE = lambda r: float(r["price"] or 0)            # noqa: E731


@route(r"/catalogsearch/result/(?:index/)?")
def search():
    term = request.args.get("q", "").strip()
    words = [w for w in term.split() if w][:10] or [""]
    where = " AND ".join("EXISTS (SELECT 1 FROM catalog_product_entity_varchar v FORCE INDEX (%s) WHERE v.attribute_id=73 AND v.entity_id=e.entity_id "
                         "AND v.value LIKE %%s)" % NAME_INDEX for _ in words)
    like = tuple("%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words)
    body, _ = product_list(where, like, {"relevance": lambda r: 0, "name": BY_NAME, "price": BY_PRICE}, "relevance", "desc")
    return front_page("Search results for: '%s'" % term, body, body_class="page-products catalogsearch-result-index")


@route(r"/catalog/category/view/id/(?P<cid>\d+)/(?:.*)")
def category_view(cid):
    c = q1(g.conn, "SELECT e.entity_id, e.path, e.level, n.value AS name, k.value AS url_key FROM catalog_category_entity e "
                   "LEFT JOIN catalog_category_entity_varchar n ON n.entity_id=e.entity_id AND n.attribute_id=45 AND n.store_id=0 "
                   "LEFT JOIN catalog_category_entity_varchar k ON k.entity_id=e.entity_id AND k.attribute_id=119 AND k.store_id=0 "
                   "WHERE e.entity_id=%s", (int(cid),))
    if not c or c["level"] < 2:
        return front_page("404 Not Found", "<p>Whoops, our bad...</p>", 404)
    # an anchor category lists the products of its subcategories too
    where = ("e.entity_id IN (SELECT ccp.product_id FROM catalog_category_product ccp JOIN catalog_category_entity ce ON ce.entity_id=ccp.category_id "
             "WHERE ce.entity_id=%s OR ce.path LIKE %s)")
    body, _ = product_list(where, (c["entity_id"], c["path"] + "/%"), {"position": lambda r: 0, "name": BY_NAME, "price": BY_PRICE}, "position")
    crumbs = q(g.conn, "SELECT e.entity_id, n.value AS name, u.request_path FROM catalog_category_entity e "
                       "LEFT JOIN catalog_category_entity_varchar n ON n.entity_id=e.entity_id AND n.attribute_id=45 AND n.store_id=0 "
                       "LEFT JOIN url_rewrite u ON u.entity_type='category' AND u.entity_id=e.entity_id AND u.store_id=1 AND u.redirect_type=0 "
                       "WHERE e.entity_id IN (%s) AND e.level >= 2 ORDER BY e.level" % ",".join(str(int(x)) for x in c["path"].split("/")))
    trail = ['<li class="item home"><a href="%s" title="Go to Home Page">Home</a></li>' % abs_url("/")]
    for b in crumbs:
        if b["entity_id"] == c["entity_id"]:
            trail.append('<li class="item category%d"><strong>%s</strong></li>' % (b["entity_id"], E(b["name"] or "")))
        else:
            trail.append('<li class="item category%d"><a href="%s">%s</a></li>' % (b["entity_id"], abs_url("/" + (b["request_path"] or "")), E(b["name"] or "")))
    body = '<div class="breadcrumbs"><ul class="items">%s</ul></div>' % "".join(trail) + body
    return front_page(c["name"] or "", body, body_class="page-products categorypath-%s category-%s catalog-category-view"
                      % (E((c["url_key"] or "")), E(c["url_key"] or "")))


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
