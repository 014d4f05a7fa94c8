"""Seed of the classifieds replica (VisualWebArena's OSClass site), deterministic from SEED and
SCALE: the three files VWA's database folder holds (``osclass_craigslist.sql``,
``classifieds_restore.sql``, ``init_db.sh``; research/family-formats.md §4.1, §4.3-§4.4) and,
with ``--images``, the item images in OSClass's layout (§4.8).

    python3 gen_seed.py SEED SCALE OUT_DIR [--tasks test_classifieds.raw.json] [--images UPLOADS_DIR]

Items: at ``full`` scale 84,149 listings, ids 1-84,154 with 5 gaps (§4.3); at ``tiny`` every
item id the task file names, Blake Sullivan's 12 (84143-84154) and 400 more. Blake's listings
carry the prices and texts VWA's edit tasks start from (tasks 4, 75-77, 159: the values their
checks exclude). Titles and descriptions are the replica's own (a test double).
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import struct
import sys
import zlib
from pathlib import Path

import bcrypt

BLAKE_FIRST, LAST_ID = 84143, 84154
CATEGORIES = {2: "Antiques", 3: "Appliances", 4: "Arts + crafts", 5: "Auto parts", 6: "Beauty + health", 7: "Bikes",
              8: "Boats", 9: "Books", 10: "Cars + trucks", 11: "Cell phones", 12: "Collectibles", 13: "Computer parts",
              14: "Computers", 15: "Electronics", 16: "Farm + garden", 17: "Furniture", 18: "Household", 19: "Jewelry",
              20: "Motorcycles", 21: "Music instruments", 22: "Photo + video", 23: "Rvs + campers", 24: "Video gaming"}
#: Regions by GeoNames id (the two VWA's start URLs name, Pennsylvania for Blake's listings, more).
REGIONS = {6254927: "Pennsylvania", 9254928: "Ohio", 7361885: "West Virginia", 5128638: "New York",
           5332921: "California", 4736286: "Texas", 4155751: "Florida", 4896861: "Illinois"}
CITIES = {6254927: ["Pittsburgh", "Monroeville", "Philadelphia", "Erie"], 9254928: ["Columbus", "Cleveland"],
          7361885: ["Morgantown", "Wheeling"], 5128638: ["New York", "Buffalo"], 5332921: ["Los Angeles", "San Diego"],
          4736286: ["Austin", "Houston"], 4155751: ["Miami", "Tampa"], 4896861: ["Chicago", "Springfield"]}
NOUNS = {2: "clock", 3: "fridge", 4: "easel", 5: "tire set", 6: "hair dryer", 7: "bike", 8: "kayak", 9: "book",
         10: "pickup truck", 11: "phone", 12: "card set", 13: "graphics card", 14: "laptop", 15: "speaker",
         16: "lawn mower", 17: "couch", 18: "lamp", 19: "necklace", 20: "motorcycle", 21: "guitar", 22: "camera",
         23: "camper", 24: "game console"}
ADJ = ["vintage", "used", "like new", "sturdy", "classic", "compact", "large", "red", "blue", "wooden", "handmade",
       "rare", "working", "barely used", "modern"]
#: Blake's listings: (title, category, price in dollars, description) — 84144-84146, 84148 and
#: 84154 as VWA's edit tasks find them before the edit.
BLAKE = [
    ("Oak bookshelf", 17, 45, "Solid oak bookshelf, five shelves. Pick up in Pittsburgh."),
    ("Used pickup truck", 10, 30000, "Reliable pickup truck, 90k miles. Asking $30000, price is firm."),
    ("Box of paperbacks", 9, 300, "Forty paperbacks, mixed genres. $300 for the lot."),
    ("Road bike", 7, 250, "Aluminium road bike, 56 cm frame. $250."),
    ("Desk lamp", 18, 15, "Adjustable desk lamp, works fine."),
    ("Coffee table", 17, 80, "Glass coffee table, small scratch. $80."),
    ("Acoustic guitar", 21, 150, "Six string acoustic guitar with case."),
    ("Digital camera", 22, 120, "Compact digital camera, 20 MP, charger included."),
    ("Game console", 24, 200, "Game console with two controllers."),
    ("Winter jacket", 18, 40, "Warm winter jacket, size M."),
    ("Mountain bike", 7, 350, "Mountain bike, front suspension, new tires."),
    ("Sofa bed", 17, 220, "Sofa bed in good condition, refunds accepted within 3 days."),
]


def q(v) -> str:
    """A SQL literal (the dump's own quoting: backslash escapes, as mysqldump writes)."""
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return str(v)
    s = str(v).replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{s}'"


def item_ids(scale: str, tasks: Path | None, rng: random.Random) -> list[int]:
    """The listing ids of the seed, ascending (Blake's last)."""
    if scale == "full":
        gaps = set(rng.sample(range(2, BLAKE_FIRST), 5))
        return [i for i in range(1, LAST_ID + 1) if i not in gaps]
    named = set()
    if tasks is not None and tasks.is_file():
        named = {int(m) for m in re.findall(r"page=item&id=(\d+)", tasks.read_text(encoding="utf-8"))}
        named |= {int(m) for m in re.findall(r"uploads/(\d+)/\1\.png", tasks.read_text(encoding="utf-8"))}
    ids = named | set(range(1, 401)) | set(range(BLAKE_FIRST, LAST_ID + 1))
    return sorted(i for i in ids if 1 <= i <= LAST_ID)


def secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(8))


def blake_hash(seed: int) -> str:
    """Blake's password hash: bcrypt cost 15 as the real dump's ``$2y$15$`` (§4.4), with a salt
    drawn from the seed so the same seed builds the same database."""
    alphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    r = random.Random(f"salt-{seed}")
    salt = "$2b$15$" + "".join(r.choice(alphabet) for _ in range(21)) + "."
    return bcrypt.hashpw(b"Password.123", salt.encode()).decode().replace("$2b$", "$2y$", 1)


DDL = """\
SET NAMES utf8mb3;
SET FOREIGN_KEY_CHECKS=0;
DROP TABLE IF EXISTS oc_t_item_comment, oc_t_item_stats, oc_t_item_location, oc_t_item_resource,
  oc_t_item_description, oc_t_item, oc_t_user, oc_t_category_description, oc_t_category, oc_t_city,
  oc_t_region, oc_t_country, oc_t_currency, oc_t_locale, oc_t_log, oc_t_preference;
SET FOREIGN_KEY_CHECKS=1;
CREATE TABLE oc_t_locale (pk_c_code CHAR(5) NOT NULL, s_name VARCHAR(100) NOT NULL, s_short_name VARCHAR(40) NOT NULL,
  b_enabled TINYINT(1) NOT NULL DEFAULT 1, PRIMARY KEY (pk_c_code)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_currency (pk_c_code CHAR(3) NOT NULL, s_name VARCHAR(40) NOT NULL, s_description VARCHAR(80),
  b_enabled TINYINT(1) NOT NULL DEFAULT 1, PRIMARY KEY (pk_c_code)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_country (pk_c_code CHAR(2) NOT NULL, s_name VARCHAR(80) NOT NULL, s_slug VARCHAR(80) NOT NULL DEFAULT '',
  PRIMARY KEY (pk_c_code)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_region (pk_i_id INT UNSIGNED NOT NULL AUTO_INCREMENT, fk_c_country_code CHAR(2) NOT NULL,
  s_name VARCHAR(60) NOT NULL, s_slug VARCHAR(60) NOT NULL DEFAULT '', b_active TINYINT(1) NOT NULL DEFAULT 1,
  PRIMARY KEY (pk_i_id), KEY idx_s_name (s_name),
  FOREIGN KEY (fk_c_country_code) REFERENCES oc_t_country (pk_c_code)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_city (pk_i_id INT UNSIGNED NOT NULL AUTO_INCREMENT, fk_i_region_id INT UNSIGNED NOT NULL,
  s_name VARCHAR(60) NOT NULL, s_slug VARCHAR(60) NOT NULL DEFAULT '', fk_c_country_code CHAR(2),
  b_active TINYINT(1) NOT NULL DEFAULT 1, PRIMARY KEY (pk_i_id),
  FOREIGN KEY (fk_i_region_id) REFERENCES oc_t_region (pk_i_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_category (pk_i_id INT UNSIGNED NOT NULL AUTO_INCREMENT, fk_i_parent_id INT UNSIGNED NULL,
  i_expiration_days INT UNSIGNED NOT NULL DEFAULT 0, i_position INT UNSIGNED NOT NULL DEFAULT 0,
  b_enabled TINYINT(1) NOT NULL DEFAULT 1, b_price_enabled TINYINT(1) NOT NULL DEFAULT 1, s_icon VARCHAR(250),
  s_color VARCHAR(20), PRIMARY KEY (pk_i_id),
  FOREIGN KEY (fk_i_parent_id) REFERENCES oc_t_category (pk_i_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_category_description (fk_i_category_id INT UNSIGNED NOT NULL, fk_c_locale_code CHAR(5) NOT NULL,
  s_name VARCHAR(100), s_description TEXT, s_slug VARCHAR(255) NOT NULL,
  PRIMARY KEY (fk_i_category_id, fk_c_locale_code),
  FOREIGN KEY (fk_i_category_id) REFERENCES oc_t_category (pk_i_id),
  FOREIGN KEY (fk_c_locale_code) REFERENCES oc_t_locale (pk_c_code)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_user (pk_i_id INT UNSIGNED NOT NULL AUTO_INCREMENT, dt_reg_date DATETIME NOT NULL,
  dt_mod_date DATETIME NULL, s_name VARCHAR(100) NOT NULL, s_username VARCHAR(100) NOT NULL,
  s_password CHAR(60) NOT NULL, s_secret VARCHAR(40) NULL, s_email VARCHAR(100) NOT NULL, s_website VARCHAR(100) NULL,
  s_phone_land VARCHAR(45) NULL, s_phone_mobile VARCHAR(45) NULL, b_enabled TINYINT(1) NOT NULL DEFAULT 0,
  b_active TINYINT(1) NOT NULL DEFAULT 0, s_pass_code VARCHAR(100) NULL, s_pass_date DATETIME NULL,
  s_pass_ip VARCHAR(15) NULL, fk_c_country_code CHAR(2) NULL, s_country VARCHAR(40) NULL,
  s_country_native VARCHAR(80) NULL, s_address VARCHAR(100) NULL, s_zip VARCHAR(15) NULL,
  fk_i_region_id INT UNSIGNED NULL, s_region VARCHAR(100) NULL, s_region_native VARCHAR(100) NULL,
  fk_i_city_id INT UNSIGNED NULL, s_city VARCHAR(100) NULL, s_city_native VARCHAR(100) NULL,
  fk_i_city_area_id INT UNSIGNED NULL, s_city_area VARCHAR(200) NULL, d_coord_lat DECIMAL(10,6) NULL,
  d_coord_long DECIMAL(10,6) NULL, b_company TINYINT(1) NOT NULL DEFAULT 0, i_items INT UNSIGNED NULL DEFAULT 0,
  i_comments INT UNSIGNED NULL DEFAULT 0, dt_access_date DATETIME NOT NULL, s_access_ip VARCHAR(15) NOT NULL DEFAULT '',
  i_login_fails INT UNSIGNED NULL DEFAULT 0, dt_login_fail_date DATETIME NULL, s_profile_img VARCHAR(100) NULL,
  PRIMARY KEY (pk_i_id), UNIQUE KEY (s_email), KEY idx_s_name (s_name(6)), KEY idx_s_username (s_username))
  ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_item (pk_i_id INT UNSIGNED NOT NULL AUTO_INCREMENT, fk_i_user_id INT UNSIGNED NULL,
  fk_i_category_id INT UNSIGNED NOT NULL, dt_pub_date DATETIME NOT NULL, dt_mod_date DATETIME NULL, f_price FLOAT NULL,
  i_price BIGINT(20) NULL, fk_c_currency_code CHAR(3) NULL, s_contact_name VARCHAR(100) NULL,
  s_contact_email VARCHAR(140) NULL, s_contact_phone VARCHAR(45) NULL, s_contact_other VARCHAR(100) NULL,
  s_ip VARCHAR(64) NOT NULL DEFAULT '', b_premium TINYINT(1) NOT NULL DEFAULT 0, b_enabled TINYINT(1) NOT NULL DEFAULT 1,
  b_active TINYINT(1) NOT NULL DEFAULT 0, b_spam TINYINT(1) NOT NULL DEFAULT 0, s_secret VARCHAR(40) NULL,
  b_show_email TINYINT(1) NULL, b_show_phone TINYINT(1) NULL DEFAULT 1, i_renewed INT UNSIGNED NOT NULL DEFAULT 0,
  dt_expiration DATETIME NOT NULL DEFAULT '9999-12-31 23:59:59', PRIMARY KEY (pk_i_id),
  KEY (fk_i_user_id), KEY idx_b_premium (b_premium), KEY idx_dt_pub_date (dt_pub_date), KEY idx_i_price (i_price),
  FOREIGN KEY (fk_i_user_id) REFERENCES oc_t_user (pk_i_id),
  FOREIGN KEY (fk_i_category_id) REFERENCES oc_t_category (pk_i_id),
  FOREIGN KEY (fk_c_currency_code) REFERENCES oc_t_currency (pk_c_code)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_item_description (fk_i_item_id INT UNSIGNED NOT NULL, fk_c_locale_code CHAR(5) NOT NULL,
  s_title VARCHAR(100) NOT NULL, s_description MEDIUMTEXT NOT NULL, PRIMARY KEY (fk_i_item_id, fk_c_locale_code),
  FULLTEXT KEY s_description (s_description, s_title)) ENGINE=MyISAM DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_item_resource (pk_i_id INT UNSIGNED NOT NULL AUTO_INCREMENT, fk_i_item_id INT UNSIGNED NOT NULL,
  s_name VARCHAR(60) NULL, s_extension VARCHAR(10) NULL, s_content_type VARCHAR(40) NULL, s_path VARCHAR(250) NULL,
  PRIMARY KEY (pk_i_id), KEY (fk_i_item_id),
  FOREIGN KEY (fk_i_item_id) REFERENCES oc_t_item (pk_i_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_item_location (fk_i_item_id INT UNSIGNED NOT NULL, fk_c_country_code CHAR(2) NULL,
  s_country VARCHAR(40) NULL, s_country_native VARCHAR(80) NULL, s_address VARCHAR(100) NULL, s_zip VARCHAR(15) NULL,
  fk_i_region_id INT UNSIGNED NULL, s_region VARCHAR(100) NULL, s_region_native VARCHAR(100) NULL,
  fk_i_city_id INT UNSIGNED NULL, s_city VARCHAR(100) NULL, s_city_native VARCHAR(100) NULL,
  fk_i_city_area_id INT UNSIGNED NULL, s_city_area VARCHAR(200) NULL, d_coord_lat DECIMAL(10,6) NULL,
  d_coord_long DECIMAL(10,6) NULL, PRIMARY KEY (fk_i_item_id), KEY idx_fk_i_region_id (fk_i_region_id),
  FOREIGN KEY (fk_i_item_id) REFERENCES oc_t_item (pk_i_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_item_stats (fk_i_item_id INT UNSIGNED NOT NULL, i_num_views INT UNSIGNED NOT NULL DEFAULT 0,
  i_num_spam SMALLINT UNSIGNED NOT NULL DEFAULT 0, i_num_repeated SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  i_num_bad_classified SMALLINT UNSIGNED NOT NULL DEFAULT 0, i_num_offensive SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  i_num_expired SMALLINT UNSIGNED NOT NULL DEFAULT 0, i_num_premium_views SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  dt_date DATE NOT NULL, PRIMARY KEY (fk_i_item_id, dt_date),
  FOREIGN KEY (fk_i_item_id) REFERENCES oc_t_item (pk_i_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_item_comment (pk_i_id INT UNSIGNED NOT NULL AUTO_INCREMENT, fk_i_item_id INT UNSIGNED NOT NULL,
  dt_pub_date DATETIME NOT NULL, s_title VARCHAR(200) NOT NULL, s_author_name VARCHAR(100) NOT NULL,
  s_author_email VARCHAR(100) NOT NULL, s_body TEXT NOT NULL, i_rating INT UNSIGNED NULL DEFAULT 0,
  b_enabled TINYINT(1) NOT NULL DEFAULT 1, b_active TINYINT(1) NOT NULL DEFAULT 0, b_spam TINYINT(1) NOT NULL DEFAULT 0,
  fk_i_user_id INT UNSIGNED NULL, fk_i_reply_id INT UNSIGNED NULL, PRIMARY KEY (pk_i_id), KEY (fk_i_item_id),
  FOREIGN KEY (fk_i_item_id) REFERENCES oc_t_item (pk_i_id),
  FOREIGN KEY (fk_i_user_id) REFERENCES oc_t_user (pk_i_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_log (dt_date DATETIME NOT NULL, s_section VARCHAR(50) NOT NULL, s_action VARCHAR(50) NOT NULL,
  fk_i_id INT UNSIGNED NOT NULL, s_data VARCHAR(250) NOT NULL, s_ip VARCHAR(64) NOT NULL, s_who VARCHAR(50) NOT NULL,
  fk_i_who_id INT UNSIGNED NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE oc_t_preference (s_section VARCHAR(128) NOT NULL, s_name VARCHAR(128) NOT NULL, s_value LONGTEXT NOT NULL,
  e_type ENUM('STRING','INTEGER','BOOLEAN','JSON') NOT NULL, UNIQUE KEY (s_section, s_name)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
"""


def inserts(table: str, rows: list[tuple], chunk: int = 500) -> list[str]:
    out = []
    for i in range(0, len(rows), chunk):
        vals = ",".join("(" + ",".join(q(v) for v in r) + ")" for r in rows[i:i + chunk])
        out.append(f"INSERT INTO {table} VALUES {vals};")
    return out


def build(seed: int, scale: str, tasks: Path | None) -> dict:
    """Every row of the seed, by table, plus what the restore file re-inserts."""
    rng = random.Random(f"classifieds-{seed}-{scale}")
    ids = item_ids(scale, tasks, rng)
    regions = list(REGIONS)
    cities, city_rows = {}, []
    cid = 1
    for rid in regions:
        for name in CITIES[rid]:
            cities[(rid, name)] = cid
            city_rows.append((cid, rid, name, name.lower().replace(" ", "-"), "US", 1))
            cid += 1
    blake_secret = secret(random.Random(f"user-{seed}"))
    t = {
        "oc_t_locale": [("en_US", "English (US)", "English", 1)],
        "oc_t_currency": [("USD", "United States Dollar", "Dollar US", 1)],
        "oc_t_country": [("US", "United States", "united-states")],
        "oc_t_region": [(rid, "US", REGIONS[rid], REGIONS[rid].lower().replace(" ", "-"), 1) for rid in regions],
        "oc_t_city": city_rows,
        "oc_t_category": [(c, None, 0, i, 1, 1, None, None) for i, c in enumerate(CATEGORIES)],
        "oc_t_category_description": [(c, "en_US", n, "", n.lower().replace(" + ", "-").replace(" ", "-"))
                                      for c, n in CATEGORIES.items()],
        "oc_t_preference": [("osclass", "moderate_comments", "-1", "INTEGER"), ("osclass", "reg_user_post_comments", "0", "BOOLEAN"),
                            ("osclass", "comments_per_page", "10", "INTEGER"), ("osclass", "enable_comment_reply", "1", "BOOLEAN"),
                            ("osclass", "rewriteEnabled", "0", "BOOLEAN"), ("osclass", "defaultResultsPerPage@search", "12", "INTEGER"),
                            ("osclass", "allowedExt", "png,gif,jpg,jpeg", "STRING"), ("osclass", "currency", "USD", "STRING")],
    }
    user = (1, "2023-11-20 10:00:00", "2023-11-20 10:00:00", "Blake Sullivan", "1", blake_hash(seed), blake_secret,
            "blake.sullivan@gmail.com", None, "", "", 1, 1, None, None, None, "US", "United States", None, "", "",
            6254927, "Pennsylvania", None, cities[(6254927, "Pittsburgh")], "Pittsburgh", None, None, "", None, None,
            0, 12, 0, "2023-11-20 10:00:00", "127.0.0.1", 0, None, None)
    items, descs, res, locs, stats = [], [], [], [], []
    blake = {"oc_t_item": [], "oc_t_item_description": [], "oc_t_item_resource": [], "oc_t_item_location": [],
             "oc_t_item_stats": []}
    resource_id = 0
    for n, iid in enumerate(ids):
        mine = iid >= BLAKE_FIRST
        if mine:
            title, cat, dollars, desc = BLAKE[iid - BLAKE_FIRST]
            rid, city = 6254927, ("Pittsburgh" if iid % 2 else "Monroeville")
            name, email = "Blake Sullivan", "blake.sullivan@gmail.com"
            date = f"2023-11-{20 + (iid - BLAKE_FIRST) // 6:02d} {10 + (iid - BLAKE_FIRST) % 6:02d}:00:00"
        else:
            cat = rng.choice(list(CATEGORIES))
            noun = NOUNS[cat]
            title = f"{rng.choice(ADJ).capitalize()} {noun}"
            dollars = round(rng.choice([rng.uniform(5, 200), rng.uniform(200, 2000), rng.uniform(2000, 40000)]), 2)
            desc = f"{title} for sale. {rng.choice(['Works great.', 'Minor wear.', 'Pick up only.', 'Cash only.'])} " \
                   f"Asking ${dollars:.2f}."
            rid = rng.choice(regions)
            city = rng.choice(CITIES[rid])
            name = rng.choice(["Jordan", "Casey", "Morgan", "Riley", "Taylor", "Avery"]) + " " + \
                rng.choice(["Smith", "Lee", "Garcia", "Brown", "Nguyen", "Miller"])
            email = f"seller{iid}@example.com"
            day = 1 + (iid * 7919) % 330
            date = f"2023-{1 + day // 30 if day // 30 < 12 else 11:02d}-{1 + day % 28:02d} {iid % 24:02d}:{iid % 60:02d}:00"
        price = int(round(dollars * 1_000_000))
        item = (iid, 1 if mine else None, cat, date, date, None, price, "USD", name, email, "", "", "127.0.0.1", 0, 1, 1, 0,
                secret(rng), 0, 1, 0, "9999-12-31 23:59:59")
        d = (iid, "en_US", title, desc)
        if mine:
            resource_id_b = iid  # Blake's resources: ids of their own in uploads/841/ (jpg)
            r = (resource_id_b, iid, f"{iid}", "jpg", "image/jpeg", "oc-content/uploads/841/")
        else:
            resource_id += 1
            r = (iid, iid, f"{iid}", "png", "image/png", f"oc-content/uploads/{iid}/")
        loc = (iid, "US", "United States", None, "", "", rid, REGIONS[rid], None, cities[(rid, city)], city, None, None,
               "", None, None)
        st = (iid, (iid * 31) % 500, 0, 0, 0, 0, 0, 0, date[:10])
        for tbl, row, own in (("oc_t_item", item, items), ("oc_t_item_description", d, descs),
                              ("oc_t_item_resource", r, res), ("oc_t_item_location", loc, locs), ("oc_t_item_stats", st, stats)):
            (blake[tbl] if mine else own).append(row)
    comment = (1, 10727, "2023-11-01 12:00:00", "Hello!", "Alex", "alex@example.com", "Hello!", 0, 1, 1, 0, None, None)
    t.update({"oc_t_user": [user], "oc_t_item": items + blake["oc_t_item"],
              "oc_t_item_description": descs + blake["oc_t_item_description"],
              "oc_t_item_resource": res + blake["oc_t_item_resource"],
              "oc_t_item_location": locs + blake["oc_t_item_location"],
              "oc_t_item_stats": stats + blake["oc_t_item_stats"],
              "oc_t_item_comment": [comment] if 10727 in ids else [],
              "oc_t_log": [("2023-11-20 10:00:00", "user", "register", 1, "blake.sullivan@gmail.com", "127.0.0.1", "user", 1)]})
    return {"tables": t, "blake": blake, "user": user, "ids": ids}


def dump_sql(data: dict) -> str:
    order = ["oc_t_locale", "oc_t_currency", "oc_t_country", "oc_t_region", "oc_t_city", "oc_t_category",
             "oc_t_category_description", "oc_t_preference", "oc_t_user", "oc_t_item", "oc_t_item_description",
             "oc_t_item_resource", "oc_t_item_location", "oc_t_item_stats", "oc_t_item_comment", "oc_t_log"]
    lines = ["-- sitectl classifieds replica seed (stacks/replicas/classifieds/seed/gen_seed.py)", DDL]
    for tbl in order:
        lines += inserts(tbl, data["tables"][tbl])
    return "\n".join(lines) + "\n"


def restore_sql(data: dict) -> str:
    """VWA's partial reset (§4.4): items >= 84143 out of five tables, every comment and user out;
    Blake and his 12 listings back; the counters are left as they are."""
    lines = ["-- sitectl classifieds replica: the partial reset of VisualWebArena's page=reset", "SET FOREIGN_KEY_CHECKS=0;"]
    for tbl, col in (("oc_t_item_location", "fk_i_item_id"), ("oc_t_item_resource", "fk_i_item_id"),
                     ("oc_t_item_stats", "fk_i_item_id"), ("oc_t_item_description", "fk_i_item_id"), ("oc_t_item", "pk_i_id")):
        lines.append(f"DELETE FROM {tbl} WHERE {col} >= {BLAKE_FIRST};")
    lines += ["DELETE FROM oc_t_item_comment;", "DELETE FROM oc_t_user;"]
    lines += inserts("oc_t_user", [data["user"]])
    for tbl in ("oc_t_item", "oc_t_item_description", "oc_t_item_resource", "oc_t_item_location", "oc_t_item_stats"):
        lines += inserts(tbl, data["blake"][tbl])
    lines += inserts("oc_t_log", data["tables"]["oc_t_log"])
    lines.append("SET FOREIGN_KEY_CHECKS=1;")
    return "\n".join(lines) + "\n"


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A plain PNG of one colour (RFC 2083)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    raw = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_images(data: dict, uploads: Path) -> int:
    """Each listing's picture in OSClass's layout (§4.8): ``<id>/<id>.png`` and its
    ``_preview``, ``_thumbnail`` and ``_original`` variants (four files, as OSClass writes them;
    the replica's pictures are one colour each); Blake's as ``841/<id>.jpg`` (a PNG body under
    his dump's name)."""
    n = 0
    for r in data["tables"]["oc_t_item_resource"]:
        rid, iid, name, ext, _, path = r
        folder = uploads / path.split("uploads/", 1)[1]
        folder.mkdir(parents=True, exist_ok=True)
        h = hashlib.sha256(f"{iid}".encode()).digest()
        body = png(48, 36, (h[0], h[1], h[2]))
        for v in ("", "_preview", "_thumbnail", "_original"):
            (folder / f"{rid}{v}.{ext}").write_bytes(body)
        n += 4
    (uploads / "temp").mkdir(exist_ok=True)
    return n


def main(argv: list[str]) -> int:
    seed, scale, out = int(argv[0]), argv[1], Path(argv[2])
    opts = dict(zip(argv[3::2], argv[4::2]))
    data = build(seed, scale, Path(opts["--tasks"]) if "--tasks" in opts else None)
    out.mkdir(parents=True, exist_ok=True)
    (out / "osclass_craigslist.sql").write_text(dump_sql(data), encoding="utf-8")
    (out / "classifieds_restore.sql").write_text(restore_sql(data), encoding="utf-8")
    # The [3P] copy of VWA's init_db.sh: a full reload (family-formats.md §4.3).
    (out / "init_db.sh").write_text(
        'mysql -u root -p"$MYSQL_ROOT_PASSWORD" -e "DROP DATABASE IF EXISTS osclass; CREATE DATABASE osclass; '
        'USE osclass; source /docker-entrypoint-initdb.d/osclass_craigslist.sql;"\n', encoding="utf-8")
    if "--images" in opts:
        print(f"{write_images(data, Path(opts['--images']))} images", file=sys.stderr)
    print(json.dumps({"items": len(data["ids"]), "first": data["ids"][0], "last": data["ids"][-1]}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
