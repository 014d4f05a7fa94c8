"""Seed the replica's magentodb at image build time (deterministic from SEED, SCALE, STORE).

Usage: python3 seed.py <schema.sql> <fixtures.json>   (env STORE=shopping|shopping_admin, SEED, SCALE)
"""
import json, os, random, sys
from datetime import datetime, timedelta

import mage
from mage import ex, set_attr, ATTR

STORE = os.environ.get("STORE", "shopping")
SEED = int(os.environ.get("SEED", "0"))
SCALE = os.environ.get("SCALE", "tiny")
if SCALE not in ("tiny", "full"):
    raise SystemExit("SCALE must be tiny or full, not %r" % SCALE)
R = random.Random(SEED)
BASE_TS = datetime(2023, 4, 18, 12, 0, 0)          # fixed base timestamp (never now())
ORIGIN = {"shopping": "http://metis.lti.cs.cmu.edu:7770/", "shopping_admin": "http://metis.lti.cs.cmu.edu:7780/"}[STORE]


def ts(days_ago, rnd=True):
    return (BASE_TS - timedelta(days=days_ago, minutes=R.randint(0, 1439) if rnd else 0)).strftime("%Y-%m-%d %H:%M:%S")


def title_from_key(key):
    small = {"for", "with", "and", "of", "to", "the", "in", "a"}
    words = key.split("-")
    return " ".join(w if (w in small and i) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def slug(name):
    import re
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def main():
    schema, fixtures = sys.argv[1], json.load(open(sys.argv[2]))
    conn = mage.connect()
    for stmt in open(schema).read().split(";\n"):
        if stmt.strip():
            ex(conn, stmt)
    store_name = "One Stop Market" if STORE == "shopping" else "Luma"
    ex(conn, "INSERT INTO store_website VALUES (0,'admin','Admin',0,0),(1,'base','Main Website',1,1)")
    ex(conn, "INSERT INTO store VALUES (0,'admin',0,0,'Admin',0,1),(1,'default',1,1,'Default Store View',0,1)")
    cfg = {"web/unsecure/base_url": ORIGIN, "web/secure/base_url": ORIGIN, "web/secure/use_in_frontend": "0",
           "web/secure/use_in_adminhtml": "0", "web/seo/use_rewrites": "1", "web/url/redirect_to_base": "1",
           "web/cookie/cookie_domain": None, "admin/security/use_form_key": "0",
           "admin/security/password_is_forced": "1", "admin/security/password_lifetime": "90",
           "customer/startup/redirect_dashboard": "1", "general/store_information/name": store_name,
           "design/head/default_title": store_name, "catalog/seo/product_url_suffix": ".html",
           "wishlist/general/active": "1", "twofactorauth/general/enable": "0"}
    for k, v in cfg.items():
        mage.set_config(conn, k, v)
    ex(conn, "INSERT INTO eav_entity_type VALUES (1,'customer'),(2,'customer_address'),(3,'catalog_category'),(4,'catalog_product'),(5,'order')")
    for code, (aid, typ) in ATTR.items():
        ex(conn, "INSERT INTO eav_attribute (attribute_id, entity_type_id, attribute_code, backend_type, frontend_label) VALUES (%s,4,%s,%s,%s)",
           (aid, code, typ, code.replace("_", " ").title()))
    ex(conn, "INSERT INTO eav_attribute (attribute_id, entity_type_id, attribute_code, backend_type, frontend_label) VALUES (74,4,'sku','static','SKU')")
    # admins (WebArena account admin/admin1234 + one extra, see docs/contracts/magento.md)
    for uid, (user, pw, first, last) in enumerate([("admin", "admin1234", "Admin", "User"), ("admin2", "admin2345", "Second", "Admin")], 1):
        h = mage.hash_password(pw, "%032x" % R.getrandbits(128))
        ex(conn, "INSERT INTO admin_user (user_id, firstname, lastname, email, username, password, created, is_active) VALUES (%s,%s,%s,%s,%s,%s,%s,1)",
           (uid, first, last, "%s@example.com" % user, user, h, ts(400, False)))
        ex(conn, "INSERT INTO admin_passwords (user_id, password_hash, last_updated) VALUES (%s,%s,%s)",
           (uid, h, int((BASE_TS - timedelta(days=300)).timestamp())))   # older than 90 days: expired policy
    # customers
    customers = [("emma.lopez@gmail.com", "Password.123", "Emma", "Lopez"), ("alex.martin@example.com", "Password.123", "Alex", "Martin"),
                 ("olivia.jackson@example.com", "Password.123", "Olivia", "Jackson")]
    for cid, (email, pw, first, last) in enumerate(customers, 1):
        ex(conn, "INSERT INTO customer_entity (entity_id, website_id, email, group_id, store_id, created_at, updated_at, firstname, lastname, password_hash, created_in, default_billing, default_shipping) "
                 "VALUES (%s,1,%s,1,1,%s,%s,%s,%s,%s,'Default Store View',%s,%s)",
           (cid, email, ts(500 - cid), ts(500 - cid), first, last, mage.hash_password(pw, "%032x" % R.getrandbits(128)), cid, cid))
        ex(conn, "INSERT INTO customer_address_entity (entity_id, parent_id, city, country_id, firstname, lastname, postcode, region, street, telephone) VALUES (%s,%s,%s,'US',%s,%s,%s,%s,%s,%s)",
           (cid, cid, ["Pittsburgh", "Boston", "Austin"][cid - 1], first, last, ["15213", "02108", "73301"][cid - 1], ["Pennsylvania", "Massachusetts", "Texas"][cid - 1],
            ["101 S San Mateo Dr", "12 Beacon St", "500 Congress Ave"][cid - 1], "6505551212"))
        ex(conn, "INSERT INTO newsletter_subscriber (customer_id, subscriber_email, subscriber_status) VALUES (%s,%s,%s)", (cid, email, 1 if cid == 1 else 3))
        ex(conn, "INSERT INTO wishlist (wishlist_id, customer_id, sharing_code, updated_at) VALUES (%s,%s,%s,%s)", (cid, cid, "%032x" % R.getrandbits(128), ts(30)))
    # reviews/ratings reference data ("Rating" = id 4 as in WebArena/divante sample data)
    ex(conn, "INSERT INTO review_entity VALUES (1,'product'),(2,'customer'),(3,'category')")
    ex(conn, "INSERT INTO review_status VALUES (1,'Approved'),(2,'Pending'),(3,'Not Approved')")
    ex(conn, "INSERT INTO rating_entity VALUES (1,'product'),(2,'product_review'),(3,'review')")
    for rid, code in enumerate(["Quality", "Value", "Price", "Rating"], 1):
        ex(conn, "INSERT INTO rating (rating_id, entity_id, rating_code, position, is_active) VALUES (%s,1,%s,%s,%s)", (rid, code, 0, 1 if rid == 4 else 0))
        for v in range(1, 6):
            ex(conn, "INSERT INTO rating_option (option_id, rating_id, code, value, position) VALUES (%s,%s,%s,%s,%s)", ((rid - 1) * 5 + v, rid, str(v), v, v))
    ex(conn, "INSERT INTO rating_store VALUES (4,0),(4,1)")
    # sales sequence (default store: empty prefix)
    for sid in (0, 1):
        mid = ex(conn, "INSERT INTO sales_sequence_meta (entity_type, store_id, sequence_table) VALUES ('order',%s,%s)", (sid, "sequence_order_%d" % sid))
        ex(conn, "INSERT INTO sales_sequence_profile (meta_id, prefix, suffix, start_value, step, max_value, warning_value, is_active) VALUES (%s,NULL,NULL,1,1,4294967295,4294966295,1)", (mid,))
    for i, idx in enumerate(["design_config_grid", "customer_grid", "catalog_category_product", "catalog_product_category", "catalogrule_rule",
                             "catalog_product_attribute", "cataloginventory_stock", "inventory", "catalogrule_product", "catalog_product_price",
                             "catalogsearch_fulltext"], 1):
        ex(conn, "INSERT INTO indexer_state (indexer_id, status, updated, hash_config) VALUES (%s,'valid',%s,%s)", (idx, ts(0, False), "%032x" % R.getrandbits(128)))
    ex(conn, "INSERT INTO catalog_category_entity (entity_id, parent_id, path, level, position) VALUES (1,0,'1',0,0),(2,1,'1/2',1,1)")
    ex(conn, "INSERT INTO catalog_category_entity_varchar (attribute_id, store_id, entity_id, value) VALUES (45,0,1,'Root Catalog'),(45,0,2,'Default Category')")
    (seed_shopping if STORE == "shopping" else seed_admin)(conn, fixtures)
    if SCALE == "full":                              # bulk around the tiny data (which stays identical), see seed_full.py
        import seed_full
        seed_full.seed_full(STORE, SEED)
    ex(conn, "REPLACE INTO cataloginventory_stock_status (product_id, website_id, stock_id, qty, stock_status) SELECT product_id, 0, 1, qty, is_in_stock FROM cataloginventory_stock_item")
    print("seeded", STORE, "SEED=%s SCALE=%s" % (SEED, SCALE))


def add_product(conn, pid, sku, name, price, url_key, qty=100, type_id="simple", desc=None, created_days=600):
    pid = ex(conn, "INSERT INTO catalog_product_entity (entity_id, attribute_set_id, type_id, sku, created_at, updated_at) VALUES (%s,4,%s,%s,%s,%s)",
             (pid, type_id, sku, ts(created_days), ts(created_days - 10)))
    set_attr(conn, pid, "name", name)
    set_attr(conn, pid, "price", "%.2f" % price)
    set_attr(conn, pid, "status", 1)
    set_attr(conn, pid, "visibility", 4)
    set_attr(conn, pid, "url_key", url_key)
    set_attr(conn, pid, "quantity_and_stock_status", 1)
    set_attr(conn, pid, "description", desc or "<p>%s. Product description (replica seed data).</p>" % name)
    ex(conn, "INSERT INTO cataloginventory_stock_item (product_id, stock_id, qty, is_in_stock, manage_stock, website_id) VALUES (%s,1,%s,1,1,0)", (pid, qty))
    ex(conn, "INSERT INTO catalog_product_website VALUES (%s,1)", (pid,))
    ex(conn, "INSERT INTO catalog_category_product (category_id, product_id) VALUES (2,%s)", (pid,))
    ex(conn, "INSERT INTO url_rewrite (entity_type, entity_id, request_path, target_path, store_id, is_autogenerated) VALUES ('product',%s,%s,%s,1,1)",
       (pid, url_key + ".html", "catalog/product/view/id/%d" % pid))
    return pid


def add_review(conn, rid, pid, nickname, title, detail, value, cid=None, status=1, days=100):
    rid = ex(conn, "INSERT INTO review (review_id, created_at, entity_id, entity_pk_value, status_id) VALUES (%s,%s,1,%s,%s)", (rid, ts(days), pid, status))
    ex(conn, "INSERT INTO review_detail (review_id, store_id, title, detail, nickname, customer_id) VALUES (%s,1,%s,%s,%s,%s)", (rid, title, detail, nickname, cid))
    ex(conn, "INSERT INTO review_store VALUES (%s,0),(%s,1)", (rid, rid))
    ex(conn, "INSERT INTO rating_option_vote (option_id, remote_ip, remote_ip_long, customer_id, entity_pk_value, rating_id, review_id, percent, value) VALUES (%s,'127.0.0.1',%s,%s,%s,4,%s,%s,%s)",
       (15 + value, b"\x7f\x00\x00\x01", cid, pid, rid, value * 20, value))
    return rid


def add_order(conn, eid, cid, lines, status, days, comments=()):
    """lines = [(pid, qty)]; increment_id comes from sequence_order_1, so it differs from entity_id."""
    c = mage.q1(conn, "SELECT * FROM customer_entity WHERE entity_id=%s", (cid,))
    inc = mage.next_increment_id(conn, 1)
    created = ts(days)
    subtotal = sum(mage.product(conn, pid)["price"] * q for pid, q in lines)
    ship = 5.0 * sum(q for _, q in lines)
    state = {"pending": "new", "processing": "processing", "complete": "complete", "canceled": "canceled", "holded": "holded"}[status]
    eid = ex(conn, "INSERT INTO sales_order (entity_id, state, status, increment_id, store_id, customer_id, customer_email, customer_firstname, customer_lastname, customer_group_id, "
                   "grand_total, base_grand_total, subtotal, shipping_amount, tax_amount, discount_amount, total_qty_ordered, total_paid, shipping_method, shipping_description, "
                   "store_name, created_at, updated_at, total_item_count) VALUES (%s,%s,%s,%s,1,%s,%s,%s,%s,1,%s,%s,%s,%s,0,0,%s,%s,'flatrate_flatrate','Flat Rate - Fixed',%s,%s,%s,%s)",
             (eid, state, status, inc, cid, c["email"], c["firstname"], c["lastname"], subtotal + ship, subtotal + ship, subtotal, ship,
              sum(q for _, q in lines), (subtotal + ship) if status == "complete" else 0, "Main Website\nMain Website Store\nDefault Store View", created, created, len(lines)))
    for pid, qty in lines:
        p = mage.product(conn, pid)
        ex(conn, "INSERT INTO sales_order_item (order_id, store_id, created_at, updated_at, product_id, product_type, sku, name, qty_ordered, qty_canceled, price, base_price, original_price, row_total) "
                 "VALUES (%s,1,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
           (eid, created, created, pid, p["type_id"], p["sku"], p["name"], qty, qty if status == "canceled" else 0, p["price"], p["price"], p["price"], p["price"] * qty))
    a = mage.q1(conn, "SELECT * FROM customer_address_entity WHERE parent_id=%s", (cid,))
    for typ in ("billing", "shipping"):
        ex(conn, "INSERT INTO sales_order_address (parent_id, address_type, firstname, lastname, street, city, region, postcode, country_id, telephone, email) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,'US',%s,%s)",
           (eid, typ, a["firstname"], a["lastname"], a["street"], a["city"], a["region"], a["postcode"], a["telephone"], c["email"]))
    ex(conn, "INSERT INTO sales_order_payment (parent_id, method, amount_ordered) VALUES (%s,'checkmo',%s)", (eid, subtotal + ship))
    for i, text in enumerate(comments):
        ex(conn, "INSERT INTO sales_order_status_history (parent_id, is_customer_notified, is_visible_on_front, comment, status, created_at, entity_name) VALUES (%s,0,1,%s,%s,%s,'order')",
           (eid, text, status, ts(days - 1 - i)))
    mage.sync_grid(conn, eid)
    return eid


def seed_shopping(conn, fx):
    f = fx["shopping"]
    for i in range(160):                              # earlier orders of the real shop: increments start at 161
        ex(conn, "INSERT INTO sequence_order_1 () VALUES ()")
    pid, by_sku = 0, {}
    for key in f["product_url_keys"]:
        pid += 1
        sku = "B0" + "".join(R.choice("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(8))
        add_product(conn, pid, sku, title_from_key(key), round(R.uniform(5, 300), 2), key, qty=R.randint(10, 500))
    for sku, name in f["named_skus"].items():
        pid += 1
        by_sku[sku] = add_product(conn, pid, sku, name, round(R.uniform(100, 200) if "Meat" in name else R.uniform(8, 120), 2),
                                  slug(name) + "-" + sku.lower(), qty=R.randint(10, 500))
    fillers = ["Organic Green Tea 100 Bags", "Stainless Steel Water Bottle", "USB-C Charging Cable 6ft", "Cotton Crew Socks 6 Pack",
               "Dark Chocolate Sea Salt Almonds", "LED Desk Lamp with USB Port", "Yoga Mat Non Slip", "Wireless Computer Mouse"]
    for name in fillers[: 8 if SCALE == "tiny" else 8]:
        pid += 1
        add_product(conn, pid, "B0" + "".join(R.choice("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(8)), name, round(R.uniform(5, 60), 2), slug(name))
    eid = 0
    for j, sku in enumerate(f["canceled_order_skus"]):
        eid += 1
        add_order(conn, eid, 1, [(by_sku[sku], 1)], "canceled", 200 + 40 * j)
    for j, sku in enumerate(f["purchased_skus"]):
        eid += 1
        add_order(conn, eid, 1, [(by_sku[sku], 1)], "complete", 20 + 10 * j)
    eid += 1
    add_order(conn, eid, 2, [(1, 2), (2, 1)], "processing", 15)
    rid = 0
    names = ["Great value", "Works as described", "Not bad", "Love it", "Would buy again"]
    for p in range(1, pid + 1, 3):
        rid += 1
        add_review(conn, rid, p, R.choice(["Shopper", "Kim", "J. Doe", "Marco"]), R.choice(names), "Review text %d (replica seed data)." % rid, R.randint(2, 5), days=R.randint(40, 300))
    ex(conn, "INSERT INTO wishlist_item (wishlist_id, product_id, store_id, added_at, qty) VALUES (1,%s,1,%s,1)", (pid, ts(10)))
    for pg, (title, ident) in enumerate([("404 Not Found", "no-route"), ("Home Page", "home"), ("Enable Cookies", "enable-cookies"),
                                        ("Privacy and Cookie Policy", "privacy-policy-cookie-restriction-mode"), ("About us", "about-us")], 1):
        ex(conn, "INSERT INTO cms_page (page_id, title, page_layout, identifier, content, is_active) VALUES (%s,%s,'1column',%s,%s,1)", (pg, title, ident, "<p>%s (replica)</p>" % title))


LUMA_FIRST = ["Radiant", "Bella", "Antonia", "Selene", "Affirm", "Chaz", "Mach", "Hero", "Juno", "Ida", "Erika", "Gwyn", "Diva", "Ingrid",
              "Zeppelin", "Orion", "Argus", "Helios", "Hyperion", "Cassius", "Marco", "Typhon", "Aether", "Layla", "Prima", "Echo", "Nona", "Kratos"]
LUMA_KIND = [("Tee", 29), ("Tank", 24), ("Hoodie", 54), ("Jacket", 69), ("Short", 32), ("Pant", 48), ("Bra", 28), ("Capri", 35), ("Legging", 39)]
CONFIGURABLE = {110, 1130, 1492, 1732, 1854}


def seed_admin(conn, fx):
    f = fx["shopping_admin"]
    for i in range(100):                             # increments start at 101 (entity ids are sparse, never equal)
        ex(conn, "INSERT INTO sequence_order_1 () VALUES ()")
    ids = sorted(set(range(1, 21)) | set(f["product_ids"]))
    used = set()
    for pid in ids:
        while True:
            first, (kind, price) = R.choice(LUMA_FIRST), R.choice(LUMA_KIND)
            if (first, kind) not in used:
                used.add((first, kind)); break
        name = "%s %s" % (first, kind)
        sku = "%s%02d" % ("".join(R.choice("MW") + R.choice("SHTJPB")), R.randint(1, 99))
        sku = sku + "-" + str(pid) if mage.q1(conn, "SELECT 1 FROM catalog_product_entity WHERE sku=%s", (sku,)) else sku
        add_product(conn, pid, sku, name, price + R.choice([0, 0, 5, 10]), slug(name), qty=R.choice([0, 100, 100, 50]),
                    type_id="configurable" if pid in CONFIGURABLE else "simple", created_days=900)
    nxt = max(ids)
    sf = {"affirm-water-bottle": ("Affirm Water Bottle", "UG06", 7),
          "antonia-racer-tank": ("Antonia Racer Tank", "WT08", 34), "bella-tank": ("Bella Tank", "WT01", 29),
          "radiant-tee": ("Radiant Tee", "WS12", 22), "selene-yoga-hoodie": ("Selene Yoga Hoodie", "WH05", 42)}
    sf_ids = {}
    for key in f["storefront_url_keys"]:
        name, sku, price = sf[key]
        nxt += 1
        mage.ex(conn, "DELETE FROM url_rewrite WHERE request_path=%s", (key + ".html",))
        sf_ids[key] = add_product(conn, nxt, sku, name, price, key, desc="<p>%s. Product description (replica seed data).</p>" % name)
    rids = sorted(set(f["review_ids"]) | set(range(1, 11)))
    prods = ids + list(sf_ids.values())
    for rid in rids:
        add_review(conn, rid, R.choice(prods), R.choice(["Jane", "Chi", "Debbie", "Oren", "Sean"]), R.choice(["Great fit", "Runs small", "Comfortable", "Poor quality"]),
                   "Review text %d (replica seed data)." % rid, R.randint(1, 5), status=R.choice([1, 1, 2, 3]), days=R.randint(30, 600))
    for eid in sorted(set(f["order_ids"]) | set(range(1, 11))):
        status = R.choice(["pending", "processing", "complete", "canceled"])
        add_order(conn, eid, R.randint(1, 3), [(R.choice(ids), R.randint(1, 3))], status, R.randint(5, 700),
                  comments=["Order placed (replica seed data)."])
    for pg, (title, ident) in enumerate([("404 Not Found", "no-route"), ("Home Page", "home"), ("Enable Cookies", "enable-cookies"),
                                        ("Privacy and Cookie Policy", "privacy-policy-cookie-restriction-mode"), ("About us", "about-us")], 1):
        ex(conn, "INSERT INTO cms_page (page_id, title, page_layout, identifier, content, is_active) VALUES (%s,%s,'1column',%s,%s,1)", (pg, title, ident, "<p>%s (replica)</p>" % title))


if __name__ == "__main__":
    main()
