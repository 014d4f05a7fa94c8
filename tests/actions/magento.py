"""Realistic mutations of a Magento 2 store, through its own HTTP endpoints, plus read-backs.

Everything here uses only what a browser or a real API client uses on the real WebArena
images (research/contract-magento.md §1–§3, research/webarena-official.md §4.5), so the same
functions run against the real `shopping`/`shopping_admin` images and the sitectl replicas.

``base_url`` is the storefront origin, e.g. ``http://localhost:7770`` (no trailing slash);
``admin_url`` is the admin base, e.g. ``http://localhost:7780/admin``.
"""
from __future__ import annotations

import re
from urllib.parse import quote

import requests

from sitectl.sites.base import Account
from sitectl.sites.magento import MagentoAdmin, MagentoStorefront, form_key

TIMEOUT = 30
ADMIN = ("admin", "admin1234")               # WebArena shopping_site_admin / shopping_admin
CUSTOMER = ("emma.lopez@gmail.com", "Password.123")


def _json(r: requests.Response):
    if r.status_code >= 400:
        raise RuntimeError("%s %s -> HTTP %s: %s" % (r.request.method, r.url, r.status_code, r.text[:300]))
    return r.json()


def admin_token(base_url: str, username: str = ADMIN[0], password: str = ADMIN[1]) -> str:
    """POST /rest/default/V1/integration/admin/token -> bearer token (str)."""
    return _json(requests.post(base_url + "/rest/default/V1/integration/admin/token",
                               json={"username": username, "password": password}, timeout=TIMEOUT))


def customer_token(base_url: str, email: str = CUSTOMER[0], password: str = CUSTOMER[1]) -> str:
    """POST /rest/default/V1/integration/customer/token -> bearer token (str)."""
    return _json(requests.post(base_url + "/rest/default/V1/integration/customer/token",
                               json={"username": email, "password": password}, timeout=TIMEOUT))


def _bearer(token: str) -> dict:
    return {"Authorization": "Bearer " + token, "Content-Type": "application/json"}


def place_order(base_url: str, email: str = CUSTOMER[0], password: str = CUSTOMER[1],
                sku: str | None = None, qty: float = 1) -> str:
    """Place an order as a customer through the REST checkout a headless client uses.

    Steps: customer token; POST /V1/carts/mine (cart id); POST /V1/carts/mine/items
    {cartItem: {sku, qty, quote_id}}; POST /V1/carts/mine/payment-information
    {paymentMethod: {method: "checkmo"}} -> order entity id.  ``sku`` defaults to the first
    product of GET /V1/products (admin token).  Note: the real checkout also wants
    shipping-information first; the replica uses the customer's default address.

    Returns: the new order's ``increment_id`` (str, e.g. ``"000000175"``), read back through
    GET /V1/orders/{entity_id} with an admin token.
    """
    tok = customer_token(base_url, email, password)
    if sku is None:
        items = _json(requests.get(base_url + "/rest/V1/products?searchCriteria[pageSize]=1",
                                   headers=_bearer(admin_token(base_url)), timeout=TIMEOUT))["items"]
        sku = items[0]["sku"]
    cart_id = _json(requests.post(base_url + "/rest/default/V1/carts/mine", headers=_bearer(tok), timeout=TIMEOUT))
    _json(requests.post(base_url + "/rest/default/V1/carts/mine/items", headers=_bearer(tok), timeout=TIMEOUT,
                        json={"cartItem": {"sku": sku, "qty": qty, "quote_id": str(cart_id)}}))
    oid = _json(requests.post(base_url + "/rest/default/V1/carts/mine/payment-information", headers=_bearer(tok), timeout=TIMEOUT,
                              json={"paymentMethod": {"method": "checkmo"}}))
    order = _json(requests.get(base_url + "/rest/V1/orders/%s" % int(oid), headers=_bearer(admin_token(base_url)), timeout=TIMEOUT))
    return order["increment_id"]


def latest_order(base_url: str) -> dict:
    """Read-back, exactly WebArena's shopping_get_latest_order_url query:
    GET /rest/V1/orders?searchCriteria[sortOrders][0][field]=created_at&...[direction]=DESC&...[pageSize]=1
    with an admin token. Returns ``items[0]`` (dict with ``entity_id``, ``increment_id``, ``items``...)."""
    r = requests.get(base_url + "/rest/V1/orders?searchCriteria[sortOrders][0][field]=created_at"
                     "&searchCriteria[sortOrders][0][direction]=DESC&searchCriteria[pageSize]=1",
                     headers=_bearer(admin_token(base_url)), timeout=TIMEOUT)
    return _json(r)["items"][0]


def storefront_session(base_url: str, email: str = CUSTOMER[0], password: str = CUSTOMER[1]) -> requests.Session:
    """A requests.Session logged in through the HTML form (driver MagentoStorefront.login)."""
    d = MagentoStorefront(base_url)
    s = d.new_session()
    d.login(s, Account("default", email, password))
    return s


def order_items_text(base_url: str, session: requests.Session, entity_id: int) -> str:
    """Read-back: HTML of the customer's /sales/order/view/order_id/{entity_id}/ page section
    ``.order-details-items.ordered`` (what WebArena's order evaluators read), '' if absent."""
    r = session.get(base_url + "/sales/order/view/order_id/%d/" % entity_id, timeout=TIMEOUT)
    m = re.search(r'<div class="order-details-items ordered">(.*?)</table>', r.text, re.S)
    return m.group(1) if m else ""


def add_to_cart(base_url: str, session: requests.Session, url_key: str, qty: int = 1) -> int:
    """Browser-style add to cart: GET /<url_key>.html, POST its #product_addtocart_form
    (form_key, product, qty). Returns the product entity id. Read back with cart_skus()."""
    r = session.get(base_url + "/%s.html" % url_key, timeout=TIMEOUT)
    m = re.search(r'<form[^>]+action="([^"]+)"[^>]*id="product_addtocart_form"', r.text)
    pid = re.search(r'name="product" value="(\d+)"', r.text)
    if not m or not pid:
        raise RuntimeError("no add-to-cart form on %s" % r.url)
    session.post(m.group(1), data={"form_key": form_key(r.text), "product": pid.group(1), "qty": qty}, timeout=TIMEOUT)
    return int(pid.group(1))


def cart_product_names(base_url: str, session: requests.Session) -> list[str]:
    """Read-back: product names listed on /checkout/cart/."""
    r = session.get(base_url + "/checkout/cart/", timeout=TIMEOUT)
    return [re.sub(r"<[^>]+>", "", n) for n in re.findall(r'<strong class="product-item-name">(.*?)</strong>', r.text, re.S)]


def write_review(base_url: str, session: requests.Session, url_key: str, nickname: str, stars: int,
                 title: str = "Review", detail: str = "Written by sitectl tests.") -> None:
    """Browser-style review: GET /<url_key>.html, POST #review-form to /review/product/post/id/{id}/
    with form_key, ratings[<rating_id>]=<option_id of the chosen star>, nickname, title, detail.
    The star's option id is read from the form (input id ``Rating_<stars>``). Read back with
    latest_review(base_url, sku)."""
    r = session.get(base_url + "/%s.html" % url_key, timeout=TIMEOUT)
    action = re.search(r'<form action="([^"]+)"[^>]*id="review-form"', r.text)
    star = re.search(r'<input[^>]*name="(ratings\[\d+\])"[^>]*id="Rating_%d"[^>]*value="(\d+)"' % stars, r.text) or \
        re.search(r'<input[^>]*name="(ratings\[\d+\])"[^>]*value="(\d+)"[^>]*id="Rating_%d"' % stars, r.text)
    if not action or not star:
        raise RuntimeError("no review form on %s" % r.url)
    session.post(action.group(1), data={"form_key": form_key(r.text), star.group(1): star.group(2), "nickname": nickname,
                                        "title": title, "detail": detail}, timeout=TIMEOUT)


def latest_review(base_url: str, sku: str) -> dict | None:
    """Read-back as WebArena's review helpers: GET /rest/V1/products/{sku}/reviews (admin token),
    returns the last element (dict with nickname, ratings[0].rating_name/percent) or None."""
    revs = _json(requests.get(base_url + "/rest/V1/products/%s/reviews" % quote(sku, safe=""),
                              headers=_bearer(admin_token(base_url)), timeout=TIMEOUT))
    return revs[-1] if revs else None


def admin_session(admin_url: str, username: str = ADMIN[0], password: str = ADMIN[1]) -> requests.Session:
    """A requests.Session logged in to the admin (driver MagentoAdmin.login)."""
    d = MagentoAdmin(admin_url)
    s = d.new_session()
    d.login(s, Account("admin", username, password))
    return s


def admin_set_price_and_stock(admin_url: str, session: requests.Session, product_id: int, price: float,
                              qty: float | None = None, in_stock: bool | None = None) -> None:
    """Admin form save: GET {admin}/catalog/product/edit/id/{id}/, POST its #product_form with
    form_key, product[price], product[quantity_and_stock_status][qty|is_in_stock] (other fields
    as rendered). On the real image the edit form is a JS UI component; this posts the same
    field names the save controller reads. Read back with product_edit_values() or product_rest()."""
    r = session.get(admin_url + "/catalog/product/edit/id/%d/" % product_id, timeout=TIMEOUT)
    action = re.search(r'<form id="product_form" method="post" action="([^"]+)"', r.text)
    if not action:
        raise RuntimeError("no product form at %s" % r.url)
    data = {"form_key": form_key(r.text), "product[price]": "%.2f" % price}
    if qty is not None:
        data["product[quantity_and_stock_status][qty]"] = "%g" % qty
    if in_stock is not None:
        data["product[quantity_and_stock_status][is_in_stock]"] = "1" if in_stock else "0"
    session.post(action.group(1), data=data, timeout=TIMEOUT)


def product_edit_values(admin_url: str, session: requests.Session, product_id: int) -> dict:
    """Read-back: the values of the admin edit page inputs the evaluators read
    ([name="product[price]"], [...][qty], [...][is_in_stock], product[status])."""
    t = session.get(admin_url + "/catalog/product/edit/id/%d/" % product_id, timeout=TIMEOUT).text
    out = {}
    for key in ("product[price]", "product[quantity_and_stock_status][qty]", "product[sku]"):
        m = re.search(r'name="%s"[^>]*value="([^"]*)"' % re.escape(key), t)
        out[key] = m.group(1) if m else None
    for key in ("product[quantity_and_stock_status][is_in_stock]", "product[status]"):
        m = re.search(r'name="%s"[^>]*>(.*?)</select>' % re.escape(key), t, re.S)
        sel = m and re.search(r'<option value="([^"]*)" selected', m.group(1))
        out[key] = sel.group(1) if sel else None
    return out


def set_price_rest(base_url: str, sku: str, price: float, qty: float | None = None) -> dict:
    """PUT /rest/default/V1/products/{sku} {product: {sku, price[, extension_attributes.stock_item.qty]}}
    with an admin token. Returns the product JSON."""
    prod = {"sku": sku, "price": price}
    if qty is not None:
        prod["extension_attributes"] = {"stock_item": {"qty": qty, "is_in_stock": qty > 0}}
    return _json(requests.put(base_url + "/rest/default/V1/products/%s" % quote(sku, safe=""), json={"product": prod},
                              headers=_bearer(admin_token(base_url)), timeout=TIMEOUT))


def product_rest(base_url: str, sku: str) -> dict:
    """Read-back: GET /rest/V1/products/{sku} (admin token) -> product JSON (price, stock_item...)."""
    return _json(requests.get(base_url + "/rest/V1/products/%s" % quote(sku, safe=""),
                              headers=_bearer(admin_token(base_url)), timeout=TIMEOUT))
