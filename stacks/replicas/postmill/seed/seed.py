#!/usr/bin/env python3
"""Seed the Postmill replica database (runs once, at image build time).

Deterministic from SEED and SCALE (``random.Random(seed)``, fixed base timestamps). ``tiny``
holds every forum, submission id/slug, comment id and user that WebArena's reddit tasks name
(``fixture.json``) plus a little filler. ``full`` = the same tiny rows (same generator stream, same ids)
plus bulk rows near WebArena's real sizes, loaded with COPY by ``full_scale.py``.

Like the real image (contract-postmill-gitlab-map.md §1.5 "known data bug"), submissions carry
``net_score`` but the seed writes **no** ``submission_votes`` rows.
"""
import argparse
import datetime as dt
import json
import os
import random
import re
import uuid

import bcrypt
import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = dt.datetime(2022, 10, 1, tzinfo=dt.timezone.utc)   # id 0 ~ this instant
SECONDS_PER_ID = 120                                        # id 135,000 ~ April 2023
PUBLIC = "/var/www/html/public"
WORDS = ("time people year way day thing world life hand part child eye woman place work week "
         "case point government company number group problem fact city book movie game forum "
         "photo science space news music phone car light water history story idea question "
         "answer garden coffee train river mountain winter summer market school picture").split()

# Named extra accounts (documented in docs/contracts/postmill.md).
EXTRA = [("sitectl_user", False, False), ("sitectl_trusted", True, False), ("sitectl_admin", False, True)]
EXTRA_PASSWORD = "sitectl1234"
WEBARENA_PASSWORD = "test1234"     # MarvelsGrantMan136 (webarena-official.md §3.1); reused for every seeded user

TOP = {   # "top N ever" / "top 10" tasks: fixture ids in descending score order
    "gadgets": [19459], "history": [84338, 105990], "books": [81371, 59421, 59447, 59396, 17445],
    "movies": [86174, 86029, 86055, 42682],
    "technology": [48670, 134696, 48785, 70354, 70233],
}
ACTIVE_DIY = [118903, 118923, 118935, 118904, 118960, 118931]   # tasks 562-566 ("most active")
TITLES = {
    1: "Nvidia RTX 4090", 59421: "Friendly reminder bookshop.org exists",
    59396: "Apple Books has a free audiobook of A Christmas Carol",
    17445: "I just finished reading The Hobbit to my 6 year old daughter",
}
BODIES = {
    1: "Crazy device for ML!",
    59421: "It's a website that supports local bookstores: when you buy from bookshop.org, "
           "independent book stores get the profit.",
    59396: "A Christmas Carol by Charles Dickens, read by Levar Burton, free on Apple Books.",
    17445: "The Hobbit by J. R. R. Tolkien. She loved it.",
}



def filler_posts(rng, forums, subs, taken, fillers):
    """Four filler posts per forum in ``forums``, appended to ``subs``: ids drawn below the
    forum's lowest named post (older than it) when that is above 1000, else up to 130000, never
    one in ``taken`` (which they join)."""
    lowest = {}
    for x in subs:
        lowest[x["forum"]] = min(lowest.get(x["forum"], 10**9), x["id"])
    for forum in forums:
        low = lowest.get(forum, 0)
        hi = low - 1 if low > 1000 else 130000
        for _ in range(4):
            sid = rng.randint(2, hi)
            while sid in taken:
                sid = rng.randint(2, hi)
            taken.add(sid)
            t = words(rng, rng.randint(3, 9))
            subs.append(dict(id=sid, forum=forum, title=t[:1].upper() + t[1:], user=rng.choice(fillers),
                             body=words(rng, rng.randint(0, 30)), score=rng.randint(1, 300), image=None,
                             url=f"http://example.com/{rng.choice(WORDS)}" if rng.random() < .3 else None))


def filler_comments(rng, plan, taken_c, fillers):
    """``plan`` (a post's comments: ``(id, parent, user, body, flag)``) with 0-3 filler comments
    added, ids drawn outside ``taken_c`` (which they join), each a reply to none or one before it."""
    for _ in range(rng.randint(0, 3)):
        cid = rng.randint(1000, 1200000)
        while cid in taken_c:
            cid = rng.randint(1000, 1200000)
        taken_c.add(cid)
        parent = rng.choice([None, None] + [q[0] for q in plan])
        plan.append((cid, parent, rng.choice(fillers), words(rng, rng.randint(4, 20)), "none"))
    return plan

def slugify(title, max_len=60):
    """Postmill's Slugger rule (contract §1.4): lower-case, split on non-word chars, join '-',
    cut at a word boundary to <= 60 chars, '-' when empty."""
    words = [w for w in re.split(r"\W+", title.lower()) if w]
    out = ""
    for w in words:
        cand = w if not out else out + "-" + w
        if len(cand) > max_len:
            break
        out = cand
    return out or "-"


def title_from_slug(slug):
    t = slug.replace("-", " ")
    return t[:1].upper() + t[1:]


def bcrypt_hash(rng, password):
    alphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    salt = "".join(rng.choice(alphabet) for _ in range(21)) + rng.choice(".Oeu")
    h = bcrypt.hashpw(password.encode(), ("$2b$10$" + salt).encode()).decode()
    return "$2y$" + h[4:]          # PHP password_hash() prefix


def ts_of(sid):
    return BASE + dt.timedelta(seconds=sid * SECONDS_PER_ID)


def ranking(ts, score):
    # Postmill: timestamp + a capped score advantage (approximation; contract §1.7).
    return int(ts.timestamp()) + min(max(score, 0), 1500) * 1800 // 100


def png_bytes(rgb=(90, 120, 200), w=8, h=8):
    import struct, zlib
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


# The User entity's initial values (Postmill's src/Entity/User.php; its table has no defaults for
# them): what a registration writes.
USER_DEFAULTS = {"locale": "en", "timezone": "UTC", "front_page": "default", "front_page_sort_mode": "hot",
                 "allow_private_messages": "true"}
USER_DEFAULTS_COLS = ", ".join(USER_DEFAULTS)
USER_DEFAULTS_SQL = ", ".join(v if v in ("true", "false") else "'%s'" % v for v in USER_DEFAULTS.values())


def insert_subs(cur, rng, subs, comment_plan, forums, users):
    """Insert submissions (with their image file and row) and their planned comments."""
    for x in sorted(subs, key=lambda x: x["id"]):
        ts = ts_of(x["id"])
        image_id = None
        if x["image"]:
            image_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            data = png_bytes((rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)))
            cur.execute("INSERT INTO images (id, file_name, width, height, sha256) VALUES (%s,%s,8,8,decode(%s, 'hex'))",
                        (image_id, x["image"], x["image"][:64]))
            os.makedirs(f"{PUBLIC}/submission_images", exist_ok=True)
            with open(f"{PUBLIC}/submission_images/{x['image']}", "wb") as f:
                f.write(data)
        plan = comment_plan[x["id"]]
        last = ts
        if x["id"] in ACTIVE_DIY:     # "active" sort = last_active desc, in the task's order
            last = ts_of(135300) - dt.timedelta(hours=ACTIVE_DIY.index(x["id"]))
        elif plan:
            last = ts + dt.timedelta(minutes=10 * len(plan))
        cur.execute("""INSERT INTO submissions (id, forum_id, user_id, title, url, body, timestamp, ip, ranking,
                       last_active, comment_count, net_score, media_type, image_id, sticky, user_flag)
                       VALUES (%s,%s,%s,%s,%s,%s,%s,NULL,%s,%s,%s,%s,%s,%s,false,'none')""",
                    (x["id"], forums[x["forum"]], users[x["user"]], x["title"], x["url"], x["body"] or None,
                     ts, ranking(ts, x["score"]), last, len(plan), x["score"],
                     "image" if image_id else "url", image_id))
        for n, (cid, parent, user, body, flag) in enumerate(plan):
            cur.execute("""INSERT INTO comments (id, submission_id, user_id, parent_id, body, timestamp, ip,
                           user_flag, net_score) VALUES (%s,%s,%s,%s,%s,%s,NULL,%s,%s)""",
                        (cid, x["id"], users[user], parent, body, ts + dt.timedelta(minutes=10 * (n + 1)),
                         flag, rng.randint(-3, 40)))


VWA_IMAGE_POST_BASE = 130600     # posts for VWA images whose submission is not named (after pics_images')


def vwa_image_post_ids(vwa):
    return [VWA_IMAGE_POST_BASE + 7 * k for k, _ in enumerate(i for i in vwa.get("images", ()) if "forum" in i)]


def seed_vwa(cur, seed, fx, forums, users, fillers, taken, taken_c):
    """VisualWebArena's forums, submissions (ids, forums, slugs), comment ids and images
    (fixture key "vwa"), with a little filler in its new forums. Own stream
    ``Random("postmill-vwa:<seed>")``: the WebArena rows before it are unchanged."""
    vwa = fx.get("vwa")
    if not vwa:
        return
    rng = random.Random(f"postmill-vwa:{seed}")
    uid = lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))
    for name in vwa["forums"]:
        cur.execute("SELECT nextval('forums_id_seq')")
        i = cur.fetchone()[0]
        created = BASE - dt.timedelta(days=rng.randint(100, 400))
        cur.execute("""INSERT INTO forums (id, name, normalized_name, title, description, sidebar, created, featured)
                       VALUES (%s,%s,%s,%s,%s,%s,%s,false)""",
                    (i, name, name.lower(), name, f"The {name} forum (replica seed).",
                     f"Welcome to /f/{name}. Be nice.", created))
        forums[name] = i
        cur.execute("INSERT INTO moderators VALUES (%s,%s,%s,%s)", (uid(), i, users[rng.choice(fillers)], created))
        for u in rng.sample(fillers, 3):
            cur.execute("INSERT INTO forum_subscriptions VALUES (%s,%s,%s,%s)", (uid(), users[u], i, created))
    image_of = {i["submission_id"]: i["file"] for i in vwa["images"] if "submission_id" in i}
    subs = []
    for s in vwa["submissions"]:
        title = title_from_slug(s["slug"])
        assert slugify(title) == s["slug"], (s["id"], title, s["slug"])
        subs.append(dict(id=s["id"], forum=s["forum"], title=title, user=rng.choice(fillers),
                         body=words(rng, 12), url=None, score=rng.randint(5, 400), image=image_of.get(s["id"])))
    loose = [i for i in vwa["images"] if "forum" in i]
    for sid, img in zip(vwa_image_post_ids(vwa), loose):
        subs.append(dict(id=sid, forum=img["forum"], title=f"Image {img['file'][:8]}", user=rng.choice(fillers),
                         body="", url=None, score=rng.randint(50, 900), image=img["file"]))
    filler_posts(rng, vwa["forums"], subs, taken, fillers)
    named = {}
    for c in vwa["comments"]:
        named.setdefault(c["submission_id"], []).append(c["id"])
    plan = {}
    for x in subs:
        p = [(cid, None, rng.choice(fillers), words(rng, rng.randint(4, 20)), "none") for cid in named.get(x["id"], ())]
        plan[x["id"]] = filler_comments(rng, p, taken_c, fillers)
    insert_subs(cur, rng, subs, plan, forums, users)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SEED", "0")))
    ap.add_argument("--scale", default=os.environ.get("SCALE", "tiny"))
    args = ap.parse_args()
    if args.scale not in ("tiny", "full"):
        raise SystemExit(f"SCALE={args.scale}: expected 'tiny' or 'full'")
    rng = random.Random(args.seed)
    fx = json.load(open(os.path.join(HERE, "fixture.json")))
    conn = psycopg2.connect(host="/var/run/postgresql", dbname="postmill", user="postmill")
    cur = conn.cursor()
    nextval = lambda seq: (cur.execute("SELECT nextval(%s)", (seq,)), cur.fetchone()[0])[1]
    uid5 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)

    # Postmill's own structure (its 112 migrations, doctrine_migration_versions filled) is loaded
    # by build-db.sh; the site row as Postmill's SiteRepository creates it (wiki defaults of
    # Version20200423134549's columns).
    cur.execute("""INSERT INTO sites (id, site_name, registration_open, default_sort_mode,
                   forum_create_role, image_upload_role, wiki_edit_role, wiki_enabled)
                   VALUES (%s,'Postmill',true,'hot','ROLE_USER','ROLE_WHITELISTED','ROLE_USER',true)""",
                (str(uid5()),))

    # users --------------------------------------------------------------------------------
    users = {}
    web_hash = bcrypt_hash(rng, WEBARENA_PASSWORD)

    def add_user(name, pw_hash, trusted=False, admin=False, created=None):
        i = nextval("users_id_seq")
        created = created or BASE - dt.timedelta(days=rng.randint(30, 900))
        cur.execute(f"""INSERT INTO users (id, username, normalized_username, password, email, normalized_email,
                       created, admin, trusted, last_seen, registration_ip, {USER_DEFAULTS_COLS})
                       VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,NULL, {USER_DEFAULTS_SQL})""",
                    (i, name, name.lower(), pw_hash, None, None, created, admin, trusted, created))
        users[name] = i
        return i

    for name in fx["users"]:
        add_user(name, web_hash)
    extra_hash = bcrypt_hash(rng, EXTRA_PASSWORD)
    for name, trusted, admin in EXTRA:
        add_user(name, extra_hash, trusted=trusted, admin=admin)
    fillers = []
    for k in range(30):
        name = f"{rng.choice(WORDS).capitalize()}{rng.choice(WORDS).capitalize()}{rng.randint(1, 999)}"
        if name not in users:
            fillers.append(name)
            add_user(name, web_hash)

    # forums -------------------------------------------------------------------------------
    forums = {}
    for name in fx["forums"]:
        i = nextval("forums_id_seq")
        created = BASE - dt.timedelta(days=rng.randint(100, 400))
        cur.execute("""INSERT INTO forums (id, name, normalized_name, title, description, sidebar, created, featured)
                       VALUES (%s,%s,%s,%s,%s,%s,%s,%s)""",
                    (i, name, name.lower(), name, f"The {name} forum (replica seed).",
                     f"Welcome to /f/{name}. Be nice.", created, name in ("books", "pics", "technology", "news")))
        forums[name] = i
        mod = rng.choice(fillers)
        cur.execute("INSERT INTO moderators VALUES (%s,%s,%s,%s)", (str(uid5()), i, users[mod], created))
        for u in rng.sample(fillers, 3):
            cur.execute("INSERT INTO forum_subscriptions VALUES (%s,%s,%s,%s)", (str(uid5()), users[u], i, created))

    # submissions --------------------------------------------------------------------------
    subs = []   # dicts
    taken = set()
    for s in fx["submissions"]:
        sid, forum = s["id"], s["forum"]
        title = TITLES.get(sid) or title_from_slug(s["slug"])
        assert slugify(title) == s["slug"], (sid, title, s["slug"])
        subs.append(dict(id=sid, forum=forum, title=title, user=s.get("user") or rng.choice(fillers),
                         body=BODIES.get(sid, "" if s.get("user") == "MarvelsGrantMan136" else words(rng, 12)),
                         url=None, score=rng.randint(5, 400), image=None))
        taken.add(sid)
    for k, img in enumerate(fx["pics_images"]):
        sid = 130500 + k * 7
        subs.append(dict(id=sid, forum="pics", title=img["title"], user=rng.choice(fillers), body="",
                         url=None, score=rng.randint(50, 900), image=img["file"]))
        taken.add(sid)
    # VisualWebArena's rows come later (seed_vwa, own generator stream); their ids are reserved here
    # so that this stream — the WebArena rows — stays what it was before they were added.
    vwa = fx.get("vwa", {})
    taken.update(x["id"] for x in vwa.get("submissions", ()))
    taken.update(vwa_image_post_ids(vwa))
    for rank, ids in TOP.items():
        for pos, sid in enumerate(ids):
            next(x for x in subs if x["id"] == sid)["score"] = 20000 - 1000 * pos
    filler_posts(rng, fx["forums"], subs, taken, fillers)

    comment_plan = {}   # sid -> list of (cid, parent, user, body, flag)
    fixed = {1235250: 59421, 1042264: 69404}
    taken_c = set(fixed) | {c["id"] for c in vwa.get("comments", ())}
    for x in subs:
        comment_plan[x["id"]] = filler_comments(rng, [], taken_c, fillers)
    comment_plan[59421].insert(0, (1235250, None, "sitectl_admin",
                                   "Hi all, I manage this website. Bookshop.org is great, support your local stores!", "admin"))
    comment_plan[69404].insert(0, (1042264, None, rng.choice(fillers), "Honestly this is a bit scary.", "none"))
    for sid, pos in zip(ACTIVE_DIY, range(len(ACTIVE_DIY))):
        extra = 8 - pos
        for _ in range(extra):
            cid = rng.randint(1000, 1200000)
            while cid in taken_c:
                cid = rng.randint(1000, 1200000)
            taken_c.add(cid)
            comment_plan[sid].append((cid, None, rng.choice(fillers), words(rng, 8), "none"))

    insert_subs(cur, rng, subs, comment_plan, forums, users)
    seed_vwa(cur, args.seed, fx, forums, users, fillers, taken, taken_c)

    for seq, table in (("users_id_seq", "users"), ("forums_id_seq", "forums"), ("submissions_id_seq", "submissions"),
                       ("comments_id_seq", "comments")):
        cur.execute(f"SELECT setval('{seq}', (SELECT max(id) FROM {table}))")
    conn.commit()
    cur.execute("SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM forums), "
                "(SELECT count(*) FROM submissions), (SELECT count(*) FROM comments)")
    print("seeded users/forums/submissions/comments:", cur.fetchone())
    if args.scale == "full":
        import time
        import full_scale
        conn.close()      # its read transaction would block the bulk load's DROP INDEX
        t0 = time.time()
        su = psycopg2.connect(host="/var/run/postgresql", dbname="postmill", user="postgres")
        full_scale.load(su, args.seed, BASE, SECONDS_PER_ID, ranking)
        cur = su.cursor()
        cur.execute("SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM forums), "
                    "(SELECT count(*) FROM submissions), (SELECT count(*) FROM comments), "
                    "(SELECT count(*) FROM submission_votes), (SELECT count(*) FROM comment_votes)")
        print("full: users/forums/submissions/comments/submission_votes/comment_votes:", cur.fetchone(),
              f"(bulk {time.time() - t0:.0f}s)")
        su.close()


if __name__ == "__main__":
    main()
