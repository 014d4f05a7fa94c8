"""Seed the replica's magentodb at image build time (deterministic from SEED, SCALE, STORE).

Usage: python3 seed.py <replica-indexes.sql> <fixtures.json>   (env STORE=shopping|shopping_admin, SEED, SCALE)
"""
import json, os, random, re, sys
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


# What the install dump (../shared/data/schemas/magento-2.4.8-install.sql, loaded by build-seed.sh)
# carries besides Magento's install rows: the catalogue, quotes, admin and index rows of the
# developer store it was dumped from. Removed before the replica's seed, through the foreign keys'
# own cascades (EAV values, stock, links, media) and the indexer triggers, as a shop owner would.
CLEAR_DUMP_CONTENT = [
    "DELETE FROM catalog_product_entity",
    "DELETE FROM catalog_category_entity",
    "DELETE FROM catalog_product_entity_media_gallery",
    "DELETE FROM media_gallery_asset",
    "DELETE FROM quote",
    "DELETE FROM customer_visitor",
    "DELETE FROM admin_user",
    "DELETE FROM authorization_role WHERE role_type = 'U'",
    "DELETE FROM url_rewrite WHERE entity_type IN ('product', 'category')",
    "DELETE FROM catalog_product_index_eav", "DELETE FROM catalog_product_index_eav_replica",
    "DELETE FROM catalog_product_index_price", "DELETE FROM catalog_product_index_price_replica",
    "DELETE FROM catalog_category_product_index_store1", "DELETE FROM catalog_category_product_index_store1_replica",
    "DELETE FROM cataloginventory_stock_status", "DELETE FROM cataloginventory_stock_status_replica",
]


def catch_up_changelogs(conn):
    """What Magento's cron jobs ``indexer_update_all_views`` and ``indexer_clean_all_changelogs``
    leave after the seed: every view's ``version_id`` at its changelog's last row, rows up to it
    deleted (the changelog's AUTO_INCREMENT goes on from there)."""
    for row in mage.q(conn, "SELECT view_id FROM mview_state"):
        cl = row["view_id"] + "_cl"
        if not mage.q1(conn, "SELECT 1 FROM information_schema.tables WHERE table_schema=DATABASE() AND table_name=%s", (cl,)):
            continue
        last = mage.q1(conn, "SELECT MAX(version_id) AS v FROM `%s`" % cl)["v"]
        if last is not None:
            ex(conn, "UPDATE mview_state SET version_id=%s, updated=%s WHERE view_id=%s", (last, ts(0, False), row["view_id"]))
            ex(conn, "DELETE FROM `%s` WHERE version_id <= %%s" % cl, (last,))
            if SCALE == "full":   # the bulk load's changelog rows leave no space behind in the image
                ex(conn, "ALTER TABLE `%s` ENGINE=InnoDB" % cl)


def save_install_triggers(conn, path):
    """Magento's indexer triggers as the install dump left them, for ``bin/magento
    indexer:set-mode`` (magento_cli.TRIGGERS_FILE): it re-creates them from these."""
    rows = mage.q(conn, "SELECT trigger_name, event_object_table, event_manipulation, action_timing, action_statement "
                        "FROM information_schema.triggers WHERE trigger_schema = DATABASE()")
    out = {}
    for r in rows:
        lines = r["action_statement"].splitlines()
        if lines[0] != "BEGIN" or lines[-1] != "END" or not all("_cl`" in ln for ln in lines[1:-1]):
            raise SystemExit("trigger %s is not one of Magento's Mview subscriptions" % r["trigger_name"])
        out[r["trigger_name"]] = {"table": r["event_object_table"], "event": r["event_manipulation"],
                                  "timing": r["action_timing"], "statement": r["action_statement"]}
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


def main():
    additions, fixtures = sys.argv[1], json.load(open(sys.argv[2]))
    conn = mage.connect()
    save_install_triggers(conn, "/opt/magento-replica/mview-triggers.json")
    for stmt in CLEAR_DUMP_CONTENT:
        ex(conn, stmt)
    sql = "\n".join(line for line in open(additions).read().splitlines() if not line.startswith("--"))
    for stmt in sql.split(";\n"):
        if stmt.strip():
            ex(conn, stmt)
    store_name = "One Stop Market" if STORE == "shopping" else "Luma"
    # store_website, store, store_group, eav_entity_type, eav_attribute (the ids in mage.ATTR),
    # review_entity, review_status, rating_entity, ratings 1-3 and their options, the sales
    # sequences: Magento's install rows, as in the dump.
    cfg = {"web/unsecure/base_url": ORIGIN, "web/secure/base_url": ORIGIN, "web/secure/use_in_frontend": "0",
           "web/secure/use_in_adminhtml": "0", "web/seo/use_rewrites": "1", "web/url/redirect_to_base": "1",
           "web/cookie/cookie_domain": None, "admin/security/use_form_key": "0",
           "admin/security/password_is_forced": "1", "admin/security/password_lifetime": "90",
           "customer/startup/redirect_dashboard": "1", "general/store_information/name": store_name,
           "design/head/default_title": store_name, "catalog/seo/product_url_suffix": ".html",
           "wishlist/general/active": "1", "twofactorauth/general/enable": "0"}
    for k, v in cfg.items():
        mage.set_config(conn, k, v)
    for code, (aid, typ) in ATTR.items():   # the replica's attribute ids are the install's
        row = mage.q1(conn, "SELECT attribute_code, backend_type FROM eav_attribute WHERE attribute_id=%s AND entity_type_id=4", (aid,))
        if not row or (row["attribute_code"], row["backend_type"]) != (code, typ):
            raise SystemExit("eav_attribute %s is %r in the install dump, the replica expects (%r, %r)" % (aid, row, code, typ))
    # admins (WebArena account admin/admin1234 + one extra, see docs/contracts/magento.md)
    for uid, (user, pw, first, last) in enumerate([("admin", "admin1234", "Admin", "User"), ("admin2", "admin2345", "Second", "Admin")], 1):
        h = mage.hash_password(pw, "%032x" % R.getrandbits(128))
        ex(conn, "INSERT INTO admin_user (user_id, firstname, lastname, email, username, password, created, is_active) VALUES (%s,%s,%s,%s,%s,%s,%s,1)",
           (uid, first, last, "%s@example.com" % user, user, h, ts(400, False)))
        ex(conn, "INSERT INTO admin_passwords (user_id, password_hash, last_updated) VALUES (%s,%s,%s)",
           (uid, h, int((BASE_TS - timedelta(days=300)).timestamp())))   # older than 90 days: expired policy
        ex(conn, "INSERT INTO authorization_role (parent_id, tree_level, sort_order, role_type, user_id, user_type, role_name) VALUES (1,2,0,'U',%s,'2',%s)",
           (uid, user))
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
    # reviews: "Rating" = id 4 as in WebArena/divante sample data (the install has 1-3)
    ex(conn, "INSERT INTO rating (rating_id, entity_id, rating_code, position, is_active) VALUES (4,1,'Rating',0,1)")
    for v in range(1, 6):
        ex(conn, "INSERT INTO rating_option (option_id, rating_id, code, value, position) VALUES (%s,4,%s,%s,%s)", (15 + v, str(v), v, v))
    ex(conn, "INSERT INTO rating_store VALUES (4,0),(4,1)")
    # the install's indexer rows, as a store whose indexers have run (and the replica's "inventory")
    for i, idx in enumerate(["design_config_grid", "customer_grid", "catalog_category_product", "catalog_product_category", "catalogrule_rule",
                             "catalog_product_attribute", "cataloginventory_stock", "inventory", "catalogrule_product", "catalog_product_price",
                             "catalogsearch_fulltext"], 1):
        h = "%032x" % R.getrandbits(128)
        # indexer_id has an index, not a unique key, in Magento's table: update the install's row
        if mage.q1(conn, "SELECT 1 FROM indexer_state WHERE indexer_id=%s", (idx,)):
            ex(conn, "UPDATE indexer_state SET status='valid', updated=%s WHERE indexer_id=%s", (ts(0, False), idx))
        else:
            ex(conn, "INSERT INTO indexer_state (indexer_id, status, updated, hash_config) VALUES (%s,'valid',%s,%s)", (idx, ts(0, False), h))
    ex(conn, "INSERT INTO catalog_category_entity (entity_id, attribute_set_id, parent_id, path, level, position, children_count) VALUES (1,3,0,'1',0,0,1),(2,3,1,'1/2',1,1,0)")
    ex(conn, "INSERT INTO catalog_category_entity_varchar (attribute_id, store_id, entity_id, value) VALUES (45,0,1,'Root Catalog'),(45,0,2,'Default Category')")
    (seed_shopping if STORE == "shopping" else seed_admin)(conn, fixtures)
    if SCALE == "full":                              # bulk around the tiny data (which stays identical), see seed_full.py
        import seed_full
        seed_full.seed_full(STORE, SEED)
    ex(conn, "REPLACE INTO cataloginventory_stock_status (product_id, website_id, stock_id, qty, stock_status) SELECT product_id, 0, 1, qty, is_in_stock FROM cataloginventory_stock_item")
    catch_up_changelogs(conn)
    # The catalog search index in the Elasticsearch double, as indexer:reindex leaves it.
    import search_index
    print("search index:", search_index.reindex_all(conn, search_index.InProcess()))
    print("seeded", STORE, "SEED=%s SCALE=%s" % (SEED, SCALE))


def add_product(conn, pid, sku, name, price, url_key, qty=100, type_id="simple", desc=None, created_days=600, categories=(2,)):
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
    for cat in categories:
        ex(conn, "INSERT INTO catalog_category_product (category_id, product_id) VALUES (%s,%s)", (cat, pid))
    ex(conn, "INSERT INTO url_rewrite (entity_type, entity_id, request_path, target_path, store_id, is_autogenerated) VALUES ('product',%s,%s,%s,1,1)",
       (pid, url_key + ".html", "catalog/product/view/id/%d" % pid))
    return pid


def add_review(conn, rid, pid, nickname, title, detail, value, cid=None, status=1, days=100):
    rid = ex(conn, "INSERT INTO review (review_id, created_at, entity_id, entity_pk_value, status_id) VALUES (%s,%s,1,%s,%s)", (rid, ts(days), pid, status))
    ex(conn, "INSERT INTO review_detail (review_id, store_id, title, detail, nickname, customer_id) VALUES (%s,1,%s,%s,%s,%s)", (rid, title, detail, nickname, cid))
    ex(conn, "INSERT INTO review_store VALUES (%s,0),(%s,1)", (rid, rid))
    ex(conn, "INSERT INTO rating_option_vote (option_id, remote_ip, remote_ip_long, customer_id, entity_pk_value, rating_id, review_id, percent, value) VALUES (%s,'127.0.0.1',%s,%s,%s,4,%s,%s,%s)",
       (15 + value, 2130706433, cid, pid, rid, value * 20, value))
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


def add_about_page(conn):
    """The replica's fifth CMS page beside the install's four (404, home, cookies, privacy)."""
    ex(conn, "INSERT INTO cms_page (page_id, title, page_layout, identifier, content, is_active) VALUES (5,'About us','1column','about-us','<p>About us (replica)</p>',1)")
    ex(conn, "INSERT INTO cms_page_store (page_id, store_id) VALUES (5,0)")


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
    add_about_page(conn)
    seed_catalog(conn, f, pid)


# ------------------------------------------------------------------ shop catalogue (shopping) --
# The categories and the further products the task files name (fixtures.json: category_paths,
# category_names, catalog_product_url_keys, catalog_skus; make_fixtures.py). Written after all of
# the rows above, with their own random stream, so those keep their ids and values.
CAT_STOP = {"and", "s", "products", "product", "more", "the", "for", "with", "of", "care", "other", "supplies",
            "accessories", "home", "set", "pack", "system"}
# words the products of a category carry in their names, beside the category's own URL key
CAT_HINTS = {
    "grocery-gourmet-food": "tea drink ginger ale broth food syrup juice coffee matcha powder mochi",
    "grocery-gourmet-food/breads-bakery": "bread loaves loaf bagel muffin",
    "grocery-gourmet-food/breads-bakery/cookies": "cookie biscuit wafer",
    "grocery-gourmet-food/breads-bakery/cakes": "cake cupcake",
    "grocery-gourmet-food/snacks-sweets/snack-foods": "snack chip pretzel fries cracker nut raisin fruit",
    "grocery-gourmet-food/snacks-sweets/chocolate": "chocolate",
    "grocery-gourmet-food/alcoholic-beverages": "beer",
    "grocery-gourmet-food/dairy-cheese-eggs": "dairy yogurt cocowhip milk ice cream",
    "grocery-gourmet-food/deli-prepared-foods": "appetizer arancini frozen",
    "home-kitchen": "storage organizer box drawer rack",
    "home-kitchen/wall-art/posters-prints": "poster print canvas painting wall art",
    "home-kitchen/bedding/blankets-throws": "blanket throw",
    "home-kitchen/bedding/kids-bedding": "bedding duvet sheet pillowcase",
    "home-kitchen/bedding/decorative-pillows-inserts-covers": "pillow cushion pillowcase",
    "home-kitchen/furniture/living-room-furniture": "bookcase bookshelf shelf table sofa rug",
    "home-kitchen/furniture/accent-furniture": "end table nightstand",
    "home-kitchen/furniture/home-office-furniture": "office chair desk",
    "home-kitchen/home-decor-products/home-decor-accents": "sculpture statue ornament diffuser candle decor",
    "home-kitchen/home-decor-products/artificial-plants-flowers": "artificial fake faux",
    "home-kitchen/kitchen-dining": "microwave kitchen",
    "patio-lawn-garden/gardening-lawn-care/plants-seeds-bulbs": "plant succulent cactus bonsai",
    "patio-lawn-garden/patio-furniture-accessories": "patio outdoor bistro",
    "clothing-shoes-jewelry/men/shoes": "shoe sneaker sandal slipper men mens",
    "clothing-shoes-jewelry/women/shoes": "heel women womens mule",
    "clothing-shoes-jewelry/men/clothing": "shirt hoodie sweatpant jacket coat pant jogger men mens tee sock pullover",
    "clothing-shoes-jewelry/women/clothing": "raincoat coat women womens dress wig",
    "electronics": "camera lens battery speaker radio boombox film instax",
    "electronics/headphones": "headphone earbud headset earphone",
    "electronics/video-projectors": "projector",
    "electronics/television-video/televisions": "tv television",
    "electronics/computers-accessories/computer-accessories-peripherals":
        "keyboard mouse usb hub adapter dongle flash drive card wifi processor motherboard cfast",
    "office-products/office-electronics/printers-accessories": "printer laserjet deskjet",
    "office-products/office-furniture-lighting/chairs-sofas": "chair",
    "cell-phones-accessories/cases-holsters-sleeves/basic-cases": "case iphone phone",
    "cell-phones-accessories/accessories": "screen protector",
    "video-games/playstation-4/accessories": "ps4 playstation dualshock",
    "video-games/xbox-one/accessories": "xbox",
    "beauty-personal-care": "cologne fragrance lip makeup",
    "beauty-personal-care/skin-care": "scar stretch mark spa",
    "beauty-personal-care/oral-care/toothbrushes-accessories": "toothbrush",
    "beauty-personal-care/tools-accessories": "bag cosmetic scrubber",
    "health-household/diet-sports-nutrition/nutrition-bars-drinks": "protein bar",
    "tools-home-improvement": "clock spy",
}


def _stem(w):
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("es") and len(w) > 4 and w[-3] in "sxh":
        return w[:-2]
    if w.endswith("s") and len(w) > 3 and not w.endswith("ss"):
        return w[:-1]
    return w


def _words(text):
    return [_stem(w) for w in re.split(r"[^a-z0-9]+", text.lower()) if w and w not in CAT_STOP and not w.isdigit()]


def place_product(key, paths):
    """The category path whose URL key (or hint words) shares most words with a product's URL key;
    None when none does (the product stays in the root category only)."""
    kt = _words(key)
    best, where = 0.0, None
    for c in paths:
        segs = c.split("/")
        own = set(_words(segs[-1])) | set(_words(CAT_HINTS.get(c, "")))
        score = 2 * sum(w in own for w in kt) + 0.5 * sum(w in set(_words(" ".join(segs[:-1]))) for w in kt) + 0.01 * len(segs)
        if score >= 1 and score > best:
            best, where = score, c
    return where


def category_name(path, names):
    if path in names:
        return names[path]
    small = {"and", "for", "of", "the", "in", "with"}
    words = re.sub(r"(^|-)([a-z]+)-s(?=-|$)", r"\1\2's", path.split("/")[-1]).split("-")
    return " ".join(w if (w in small and i) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def seed_catalog(conn, f, last_pid):
    rnd = random.Random("magento-replica-catalog-%s" % SEED)
    paths = sorted(f.get("category_paths", []), key=lambda c: (c.count("/"), c))
    ids, kids = {}, {}
    for c in paths:
        kids.setdefault(c.rpartition("/")[0], []).append(c)
    for cid, c in enumerate(paths, 3):             # 1 = Root Catalog, 2 = Default Category
        ids[c] = cid
        parent = c.rpartition("/")[0]
        pid = ids[parent] if parent else 2
        path = mage.q1(conn, "SELECT path FROM catalog_category_entity WHERE entity_id=%s", (pid,))["path"] + "/%d" % cid
        n_desc = sum(1 for d in paths if d.startswith(c + "/"))
        ex(conn, "INSERT INTO catalog_category_entity (entity_id, attribute_set_id, parent_id, created_at, updated_at, path, position, level, children_count) "
                 "VALUES (%s,3,%s,%s,%s,%s,%s,%s,%s)", (cid, pid, ts(900, False), ts(900, False), path, kids[parent].index(c) + 1, c.count("/") + 2, n_desc))
        for aid, val in ((45, category_name(c, f.get("category_names", {}))), (119, c.split("/")[-1]), (120, c)):
            ex(conn, "INSERT INTO catalog_category_entity_varchar (attribute_id, store_id, entity_id, value) VALUES (%s,0,%s,%s)", (aid, cid, val))
        for aid, val in ((46, 1), (54, 1), (69, 1)):    # is_active, is_anchor, include_in_menu
            ex(conn, "INSERT INTO catalog_category_entity_int (attribute_id, store_id, entity_id, value) VALUES (%s,0,%s,%s)", (aid, cid, val))
        ex(conn, "INSERT INTO url_rewrite (entity_type, entity_id, request_path, target_path, store_id, is_autogenerated) VALUES ('category',%s,%s,%s,1,1)",
           (cid, c + ".html", "catalog/category/view/id/%d" % cid))
    ex(conn, "UPDATE catalog_category_entity SET children_count=%s WHERE entity_id=2", (len(paths),))

    def cats_of(c):                                 # the category and its parents, as the real shop assigns
        if not c:
            return (2,)
        parts = c.split("/")
        return tuple(ids["/".join(parts[:i])] for i in range(1, len(parts) + 1))
    skus = {r["sku"] for r in mage.q(conn, "SELECT sku FROM catalog_product_entity")}

    def new_sku():
        while True:
            sku = "B0" + "".join(rnd.choice("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(8))
            if sku not in skus:
                skus.add(sku)
                return sku
    pid = last_pid
    for key in f.get("catalog_product_url_keys", []):
        pid += 1
        add_product(conn, pid, new_sku(), title_from_key(key), round(rnd.uniform(5, 300), 2), key, qty=rnd.randint(10, 500),
                    categories=cats_of(place_product(key, paths)))
    for sku, cat in f.get("catalog_skus", {}).items():
        pid += 1
        skus.add(sku)
        name = "%s %s" % (category_name(cat, f.get("category_names", {})) if cat else "Product", sku)
        add_product(conn, pid, sku, name, round(rnd.uniform(5, 300), 2), slug(name), qty=rnd.randint(10, 500), categories=cats_of(cat))


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
    add_about_page(conn)


if __name__ == "__main__":
    main()
