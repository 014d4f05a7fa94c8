"""REST API (/rest/[store/]V1/...): tokens, orders, products, reviews, customers/me, carts and
checkout."""
import json
import re

from flask import g, make_response, request

import mage
from mage import ex, q, q1
from .checkout import active_quote, add_item
from .routing import ROUTES, route
from .web import SIGNIN_FAIL, now_s


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
