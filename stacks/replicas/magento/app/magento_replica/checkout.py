"""Shopping cart: the active quote, adding items (storefront form and REST share it), cart page."""
from flask import g, request

import mage
from mage import ex, q, q1
from .routing import route
from .storefront import customer, front_page
from .web import E, abs_url, form_key_ok, price_html, redirect


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
