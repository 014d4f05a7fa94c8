#!/usr/bin/env python3
"""Derive fixtures.json (facts only, names of entities) from the task files.

Usage: python3 make_fixtures.py WEBARENA_test.raw.json VWA_FILE... > fixtures.json

VWA_FILE: VisualWebArena's test_shopping.raw.json, test_reddit.raw.json and
test_classifieds.raw.json (the forum's and the classifieds' tasks open the shop too).

Deterministic (sorted output, no randomness). Run by hand; the output is committed so that
builds do not need the task files.

WebArena (config_files/test.raw.json), as before:
* shopping.product_url_keys: the `<url_key>.html` start URLs of `shopping` tasks (no path).
* shopping.named_skus: SKU -> product name for the order/review evaluators: the "reorder a
  cancelled ..." tasks (canceled_order_skus), "Rate my recent purchase of ..." (purchased_skus)
  and "Buy the highest rated / best rating product from ... category" tasks. The name is the
  product or category the task states, title-cased, a leading article dropped; a purchase's name
  wins over a cancellation's. Order (the seed numbers products in it): SKUs both cancelled and
  purchased, then purchased, cancelled, category purchases.
* shopping_admin: product ids (`catalog/product/edit/id/N`), storefront url keys
  (`__SHOPPING_ADMIN__/../<key>.html`), review ids, order ids, CMS page ids 1-5.

Both WebArena's file and VisualWebArena's (which run the same shop image):
* shopping.category_paths: every category URL path `<a>/<b>/<c>.html` of the shop in start URLs
  and evaluator URLs, with its parents; a one-segment `<a>.html` is a category when it is the first
  segment of such a path.
* shopping.category_names: the display names the tasks state for those categories (their
  capitalised `instantiation_dict` values, "A > B" split), matched to a path segment by Magento's URL-key rule.
* shopping.catalog_product_url_keys: every other one-segment `<url_key>.html` of the shop anywhere
  in the tasks (start and evaluator URLs, intents, comments), not already in product_url_keys.
* shopping.catalog_skus: SKUs (B0 + 8 characters) the VWA tasks state (evaluator contents, product
  image names), not already named above -> the category path the same task names, or null.
"""
import json
import re
import sys
import unicodedata

SHOP_URL = re.compile(r"__SHOPPING__/([A-Za-z0-9/_.-]+?)\.html(?=[?#\"\s|]|$)")
SKU = re.compile(r"\bB0[0-9A-Z]{8}\b")


def url_key(text):
    """Magento's URL-key rule: transliterate, lower-case, non-alphanumerics to single '-'."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def title(text):
    text = re.sub(r"^(a|an|some)\s+", "", text.strip())
    return re.sub(r"(^|[\s-])([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def shop_tasks(tasks):
    return [t for t in tasks if "shopping" in t["sites"]]


def start_urls(t):
    return t["start_url"].split(" |AND| ")


# ------------------------------------------------------------------ WebArena (unchanged) ---
def webarena_shopping(tasks):
    keys = set()
    for t in shop_tasks(tasks):
        for u in start_urls(t):
            m = re.fullmatch(r"__SHOPPING__/([a-z0-9-]+)\.html", u)
            if m:
                keys.add(m.group(1))
    canceled, purchased, category, names = [], [], [], {}
    for t in tasks:
        if t["sites"] != ["shopping"]:
            continue
        skus = list(dict.fromkeys(SKU.findall(json.dumps(t["eval"]))))
        d = t.get("instantiation_dict") or {}
        if "and later cancelled" in t["intent"]:
            canceled += skus
            for s in skus:
                names.setdefault(s, title(d["product"]))
        elif t["intent"].startswith("Rate my recent purchase of"):
            purchased += skus
            for s in skus:
                names[s] = title(d["product"])
        elif re.match(r"Buy the (highest rated|best rating) product from", t["intent"]):
            category += skus
            for s in skus:
                names.setdefault(s, title(d.get("product_category") or d["category"]))
    order = [s for s in canceled if s in purchased] + purchased + canceled + category
    return {"product_url_keys": sorted(keys),
            "named_skus": {s: names[s] for s in dict.fromkeys(order)},
            "canceled_order_skus": canceled, "purchased_skus": purchased}


def webarena_admin(tasks):
    out = {"product_ids": set(), "storefront_url_keys": set(), "review_ids": set(), "order_ids": set()}
    for t in tasks:
        if "shopping_admin" not in t["sites"]:
            continue
        s = json.dumps(t)
        out["product_ids"] |= {int(x) for x in re.findall(r"catalog/product/edit/id/(\d+)", s)}
        out["storefront_url_keys"] |= set(re.findall(r"__SHOPPING_ADMIN__/\.\./([a-z0-9-]+)\.html", s))
        out["review_ids"] |= {int(x) for x in re.findall(r"review/product/edit/id/(\d+)", s)}
        out["order_ids"] |= {int(x) for x in re.findall(r"order_id/(\d+)", s)}
    res = {k: sorted(v) for k, v in out.items()}
    res["cms_page_ids"] = [1, 2, 3, 4, 5]
    return res


# ------------------------------------------------------------------ both files: catalog ---
def catalog(wa_tasks, vwa_tasks, known_keys, known_skus):
    # VWA's tasks that open the shop, whatever their `sites` say (some classifieds tasks list only
    # classifieds and start on a product page too).
    vwa_shop = [t for t in vwa_tasks if "shopping" in t.get("sites", []) or "__SHOPPING__" in json.dumps(t)]
    tasks = shop_tasks(wa_tasks) + vwa_shop
    paths, anywhere = set(), set()
    for t in tasks:
        paths |= set(SHOP_URL.findall(json.dumps([t["start_url"], t["eval"]])))
        anywhere |= {p for p in SHOP_URL.findall(json.dumps(t)) if "/" not in p}
    multi = {p for p in paths if "/" in p}
    tops = {p.split("/")[0] for p in multi}
    cats = set()
    for p in multi | (paths & tops):
        parts = p.split("/")
        cats |= {"/".join(parts[:i]) for i in range(1, len(parts) + 1)}
    products = sorted(p for p in anywhere if p not in cats and p not in known_keys)
    # names the tasks state, by the URL key of their last segment
    stated = {}
    for t in tasks:
        for v in (t.get("instantiation_dict") or {}).values():
            if isinstance(v, str):
                for part in v.strip('"').split(" > "):
                    if part.strip()[:1].isupper():          # a stated name, not a description
                        stated.setdefault(url_key(part), part.strip())
    names = {c: stated[c.split("/")[-1]] for c in sorted(cats) if c.split("/")[-1] in stated}
    skus = {}
    for t in vwa_shop:
        cat = None
        for v in (t.get("instantiation_dict") or {}).values():
            if isinstance(v, str):
                key = url_key(v.strip('"').split(" > ")[-1])
                hits = sorted(c for c in cats if c.split("/")[-1] == key)
                cat = cat or (hits[0] if hits else None)
        for s in SKU.findall(json.dumps(t)):
            if s not in known_skus and (s not in skus or skus[s] is None):
                skus[s] = cat
    return {"category_paths": sorted(cats), "category_names": names,
            "catalog_product_url_keys": products, "catalog_skus": dict(sorted(skus.items()))}


def main(wa_path, *vwa_paths):
    wa = json.load(open(wa_path))
    vwa = [t for p in vwa_paths for t in json.load(open(p))]
    shop = webarena_shopping(wa)
    shop.update(catalog(wa, vwa, set(shop["product_url_keys"]), set(shop["named_skus"])))
    out = {"_source": "facts derived by make_fixtures.py from /work/shared/data/webarena/test.raw.json (start_url and "
                      "eval.program_html urls/locators) and /work/shared/data/visualwebarena/test_shopping.raw.json "
                      "and test_reddit.raw.json and test_classifieds.raw.json (category and product URLs, stated category names, "
                      "SKUs); names of entities only",
           "shopping": shop, "shopping_admin": webarena_admin(wa)}
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
