"""Storefront catalog routes: home page, search results, product pages."""
from flask import g, request

import mage
from mage import q
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
