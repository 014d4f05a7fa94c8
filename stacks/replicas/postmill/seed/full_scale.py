"""SCALE=full: bulk rows on top of the tiny seed (called by seed.py after the tiny rows are committed).

Near WebArena's real sizes (contract docs/contracts/postmill.md, "Seeded data (SCALE=full)"):
the real image's counts (research/real-images.md §1.9: 661,782 users, 95 forums, 127,391
submissions, 2,551,513 comments, tiny's rows included), vote rows. Deterministic from SEED
(its own ``random.Random("postmill-full:<seed>")``, so the tiny rows — made before, with the tiny
generator's stream — are byte-for-byte the tiny seed's).

Invariants kept for the tasks (the tiny seed's orderings still hold at full scale):
- bulk rows never reuse an id of a tiny row (submissions, comments, users: tiny users are ids 1..45);
- bulk content is written by bulk users only (task-named users, MarvelsGrantMan136 and the sitectl_*
  accounts get no bulk submissions, comments, votes or subscriptions); bulk comments go on bulk
  submissions only, so every tiny submission keeps its comments and comment_count;
- in every task forum the newest fixture posts stay the newest: a bulk post in forum F has an id below
  the oldest id of F's newest fixture run (fixture ids with gaps < 5,000 from F's newest one);
- bulk scores stay below 5,000 (the "top" fixture posts have 16,000..20,000); a bulk DIY post is older
  than id 118,820, so its last_active (its last comment) stays far below the "most active" DIY posts';
- bulk ``net_score`` = up - down of its vote rows (the author's own upvote included), ``comment_count`` =
  its comment rows. The tiny rows keep their scores without vote rows (the real image's data bug).

Passwords: every bulk user's password is ``test1234``; 16 bcrypt hashes (cost 10, salts from the
seeded stream) are computed once and reused round-robin — hashing 660k passwords would take hours.

Rows go in with COPY from generated files (removed afterwards), with the secondary indexes dropped
and re-created, FK triggers skipped (``session_replication_role = replica``; ids are consistent by
construction) and the search triggers kept (``ENABLE ALWAYS`` during the load, then back to normal).
"""
import datetime as dt
import math
import os
import random
import shutil
import tempfile
import time

import bcrypt

# The real forum's counts (research/real-images.md §1.9, SBB's audit), tiny's rows included.
TOTAL_USERS = 661_782
TOTAL_FORUMS = 95
TOTAL_SUBMISSIONS = 127_391
TOTAL_COMMENTS = int(os.environ.get("POSTMILL_FULL_COMMENTS", "2551513"))
SUB_ID_MAX = 135_250          # submission ids 1..135,250 (the real site's range; ts = id x 120 s)
COMMENT_ID_SPAN = 1.15        # comment ids spread over 1..max(1.24M, 1.15 x count), increasing with time
MAX_SCORE = 4_999
MAX_COMMENTS_PER_POST = 400
NEWEST_RUN_GAP = 5_000

# 53 more forums (95 in all). Chosen not to compete with a task's "find the right forum" answer
# (consoles, headphones, relationship_advice, books, MachineLearning/deeplearning, ...).
BULK_FORUMS = """AskReddit worldnews todayilearned Music Art askscience food Documentaries GetMotivated
InternetIsBeautiful nottheonion OldSchoolCool personalfinance philosophy WritingPrompts listentothis
mildlyinteresting creepy Jokes Fitness travel photography gifs boston chicago seattle baseball nba
soccer hockey nfl Cooking gardening cars bicycling woodworking Economics politics Android boardgames
anime comics StarWars tifu NoStupidQuestions nosleep announcements blog oddlysatisfying cats dogs
Frugal hiking""".split()

MORE_WORDS = ("able about above across act add after again against age ago agree air all almost alone "
              "along already also always amount animal another any apple area arm army around art ask "
              "away baby back bad bag ball bank base bear beat bed before begin behind believe best "
              "better between big bill bird bit black blood blue board boat body bone border both box "
              "boy brain bread break bridge bright bring brother brown build burn business buy call "
              "camera camp can capital card care carry catch cause cell center chair chance change "
              "charge check cheese choice church circle class clean clear climb clock close cloud club "
              "coast cold color come common community computer cook cool corner cost country couple "
              "course cover cross crowd culture cup current cut dark data daughter dead deal dear "
              "deep design desk detail develop die diet dinner direction doctor dog door double down "
              "draw dream dress drink drive drop dry during early earth east easy eat edge effect egg "
              "energy engine enjoy enough evening event every exam example face family farm fast "
              "father fear feel field fight figure fill film final find fine finger fire first fish "
              "floor flower fly follow food foot force forest free fresh friend front fruit full fun "
              "future glass gold good grass great green ground grow guess gun hair half hall happy "
              "hard head health hear heart heat heavy help high hill hold home hope horse hospital "
              "hot hour house huge human hunt ice image important inside island job join journey "
              "judge jump keep key kid kind king kitchen know lake land language large late laugh "
              "law lead learn leave left leg lesson letter level library lift line list listen "
              "little live local long look lose loud love low machine main make man map mark match "
              "meal mean meet member memory metal middle mind minute miss modern moment money month "
              "moon morning mother move much name nation nature near need never new night noise "
              "north nose note notice ocean offer office old open order other outside page paint "
              "pair paper parent park party pass past path pay peace pen person piece plan plant "
              "play plenty pocket police pool poor popular power practice present price print "
              "private prize program public pull push quick quiet race radio rain raise range reach "
              "read ready real reason record red remember report rest rich ride right ring rise road "
              "rock room rule run safe salt same sand save say scene sea season seat second secret "
              "sell send sense serve set shape share ship shoe shop short show side sign simple sing "
              "sister sit size skill skin sky sleep slow small smile snow soft soil son song sound "
              "south speak special speed spend sport spring square staff stage star start state "
              "station stay step stone stop store storm street strong student study style sugar sun "
              "support sure surface sweet table talk tall taste teacher team test thank thin think "
              "ticket tiny today tonight tool top touch tour town track trade travel tree trip true "
              "trust truth try turn type under unit until upon useful usual valley value view "
              "village visit voice wait walk wall want war warm wash watch wave wear weather west "
              "wheel white whole wide wild will wind window wine wing wise wish wood word worker "
              "write wrong yard yellow young zone").split()


_DAYS = {}


def _fmt_ts(epoch):
    day, sec = divmod(int(epoch), 86400)
    d = _DAYS.get(day)
    if d is None:
        d = _DAYS[day] = dt.datetime.fromtimestamp(day * 86400, tz=dt.timezone.utc).strftime("%Y-%m-%d")
    h, sec = divmod(sec, 3600)
    m, sec = divmod(sec, 60)
    return f"{d} {h:02d}:{m:02d}:{sec:02d}+00"


def _uuid(rng):
    x = f"{rng.getrandbits(128) & ~(0xf << 76) & ~(0x3 << 62) | (0x4 << 76) | (0x2 << 62):032x}"
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


class Copier:
    """Writes tab-separated COPY files into a temp dir; load() streams them with COPY FROM STDIN."""

    def __init__(self, tmpdir):
        self.tmpdir, self.files = tmpdir, {}

    def open(self, table, cols):
        path = os.path.join(self.tmpdir, table + ".tsv")
        f = open(path, "w", encoding="utf-8", buffering=1 << 20)
        self.files[table] = (path, cols, f)
        return f

    def load(self, cur, table):
        path, cols, f = self.files[table]
        f.close()
        with open(path, "r", encoding="utf-8") as src:
            cur.copy_expert(f"COPY {table} ({', '.join(cols)}) FROM STDIN", src, size=1 << 20)
        os.unlink(path)


def _newest_run_floor(ids):
    """Oldest id of the newest run of fixture ids (gaps < NEWEST_RUN_GAP)."""
    ids = sorted(ids, reverse=True)
    floor = ids[0]
    for a, b in zip(ids, ids[1:]):
        if a - b >= NEWEST_RUN_GAP:
            break
        floor = b
    return floor


def load(conn, seed, base, seconds_per_id, ranking):
    t0 = time.time()
    rng = random.Random(f"postmill-full:{seed}")
    words = MORE_WORDS
    cur = conn.cursor()
    cur.execute("SET session_replication_role = replica")       # skip FK triggers (superuser)
    cur.execute("SET maintenance_work_mem = '256MB'")
    epoch0 = base.timestamp()
    ts_of = lambda sid: epoch0 + sid * seconds_per_id
    uuid4 = lambda: _uuid(rng)

    # what the tiny seed made --------------------------------------------------------------
    cur.execute("SELECT id, normalized_username FROM users")
    tiny_users = dict(cur.fetchall())
    cur.execute("SELECT id, name FROM forums ORDER BY id")
    tiny_forums = cur.fetchall()
    cur.execute("SELECT id, forum_id FROM submissions")
    tiny_subs = cur.fetchall()
    cur.execute("SELECT id FROM comments")
    tiny_comment_ids = {r[0] for r in cur.fetchall()}

    # drop secondary indexes of the big tables (re-created identically after the load)
    big = ("users", "submissions", "comments", "submission_votes", "comment_votes", "forum_subscriptions")
    cur.execute("""SELECT indexname, indexdef FROM pg_indexes WHERE schemaname='public' AND tablename = ANY(%s)
                   AND indexname NOT IN (SELECT conname FROM pg_constraint)""", (list(big),))
    indexdefs = cur.fetchall()
    for name, _ in indexdefs:
        cur.execute(f"DROP INDEX {name}")
    cur.execute("ALTER TABLE submissions ENABLE ALWAYS TRIGGER submissions_search_update")
    # comments.search_doc is written directly (= to_tsvector('english', body), as the trigger would;
    # the bodies use a fixed vocabulary whose lexemes come from the server); checked on a sample below
    cur.execute("SELECT w, to_tsvector('english', w)::text FROM unnest(%s::text[]) w", (words,))
    lexeme = {w: (v.split("'")[1] if v else None) for w, v in cur.fetchall()}

    tmpdir = tempfile.mkdtemp(prefix="postmill-full-", dir="/tmp")
    cp = Copier(tmpdir)
    try:
        # users ------------------------------------------------------------------------------
        salts = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        hashes = []
        for _ in range(16):
            salt = "".join(rng.choice(salts) for _ in range(21)) + rng.choice(".Oeu")
            h = bcrypt.hashpw(b"test1234", ("$2b$10$" + salt).encode()).decode()
            hashes.append("$2y$" + h[4:])
        first_uid = max(tiny_users) + 1
        n_bulk_users = TOTAL_USERS - len(tiny_users)
        taken_names = set(tiny_users.values())
        # + the User entity's initial values (Postmill's table has no defaults for them; seed.USER_DEFAULTS)
        f = cp.open("users", ["id", "username", "normalized_username", "password", "created", "last_seen",
                              "locale", "timezone", "front_page", "front_page_sort_mode", "allow_private_messages"])
        created_lo, created_span = epoch0 - 1500 * 86400, 1490 * 86400
        content_span = ts_of(SUB_ID_MAX) - epoch0
        for k in range(n_bulk_users):
            while True:
                style = rng.random()
                a, b = rng.choice(words), rng.choice(words)
                if style < 0.45:
                    name = f"{a.capitalize()}{b.capitalize()}{rng.randint(1, 9999)}"
                elif style < 0.65:
                    name = f"{a}_{b}{rng.randint(1, 999)}"
                elif style < 0.8:
                    name = f"{a.capitalize()}_{b.capitalize()}"
                elif style < 0.92:
                    name = f"{a}{b}{rng.randint(10, 99)}"
                else:
                    name = f"{rng.choice(('The', 'Mr', 'Ms', 'Not', 'Just', 'Real'))}{a.capitalize()}{rng.randint(1, 99999)}"
                low = name.lower()
                if 3 <= len(name) <= 25 and low not in taken_names:
                    break
            taken_names.add(low)
            created = created_lo + created_span * k / n_bulk_users + rng.randint(0, 3600)
            seen = epoch0 + rng.random() * content_span if rng.random() < 0.7 else created
            f.write(f"{first_uid + k}\t{name}\t{low}\t{hashes[k % 16]}\t{_fmt_ts(created)}\t{_fmt_ts(seen)}"
                    "\ten\tUTC\tdefault\thot\tt\n")
        cp.load(cur, "users")
        bulk_uids = range(first_uid, first_uid + n_bulk_users)
        print(f"full: users {n_bulk_users} in {time.time() - t0:.1f}s", flush=True)

        # forums, moderators, subscriptions ---------------------------------------------------
        existing = {n.lower() for _, n in tiny_forums}
        new_forums = [n for n in BULK_FORUMS if n.lower() not in existing][:TOTAL_FORUMS - len(tiny_forums)]
        f = cp.open("forums", ["id", "name", "normalized_name", "title", "description", "sidebar", "created", "featured"])
        fm = cp.open("moderators", ["id", "forum_id", "user_id", "timestamp"])
        forum_ids = [i for i, _ in tiny_forums]
        next_fid = max(forum_ids) + 1
        for name in new_forums:
            created = epoch0 - rng.randint(100, 400) * 86400
            f.write(f"{next_fid}\t{name}\t{name.lower()}\t{name}\tThe {name} forum (replica seed).\t"
                    f"Welcome to /f/{name}. Be nice.\t{_fmt_ts(created)}\tf\n")
            for u in rng.sample(bulk_uids, rng.randint(1, 3)):
                fm.write(f"{uuid4()}\t{next_fid}\t{u}\t{_fmt_ts(created)}\n")
            forum_ids.append(next_fid)
            next_fid += 1
        cp.load(cur, "forums")
        cp.load(cur, "moderators")
        # popularity: Zipf-like over a shuffled forum order
        order = forum_ids[:]
        rng.shuffle(order)
        weight = {fid: 1.0 / (rank + 3) ** 0.9 for rank, fid in enumerate(order)}
        fw_ids = list(weight)
        fw_cum = list(_cumsum(weight[i] for i in fw_ids))
        f = cp.open("forum_subscriptions", ["id", "user_id", "forum_id", "subscribed_at"])
        n_subs = 0
        for u in bulk_uids:
            if rng.random() < 0.15:
                for fid in set(rng.choices(fw_ids, cum_weights=fw_cum, k=rng.randint(1, 4))):
                    f.write(f"{uuid4()}\t{u}\t{fid}\t{_fmt_ts(epoch0 + rng.random() * content_span)}\n")
                    n_subs += 1
        cp.load(cur, "forum_subscriptions")
        print(f"full: forums +{len(new_forums)}, subscriptions {n_subs} in {time.time() - t0:.1f}s", flush=True)

        # submissions ------------------------------------------------------------------------
        fixture_ids = {}
        for sid, fid in tiny_subs:
            fixture_ids.setdefault(fid, []).append(sid)
        ceiling = {}   # forum id -> bulk ids must be below
        for fid, ids in fixture_ids.items():
            floor = _newest_run_floor(ids)
            if floor > 1000:
                ceiling[fid] = floor
        taken = {sid for sid, _ in tiny_subs}
        free = [i for i in range(2, SUB_ID_MAX + 1) if i not in taken]
        n_bulk_subs = TOTAL_SUBMISSIONS - len(tiny_subs)
        chosen = sorted(rng.sample(free, n_bulk_subs))
        # per-id eligible forums: segments between ceilings
        cuts = sorted({c for c in ceiling.values() if c <= SUB_ID_MAX})   # a ceiling above every bulk id binds nothing
        segs = []   # (upper bound exclusive, ids, cum weights)
        for c in cuts + [SUB_ID_MAX + 1]:
            elig = [fid for fid in fw_ids if ceiling.get(fid, SUB_ID_MAX + 1) >= c]
            segs.append((c, elig, list(_cumsum(weight[x] for x in elig))))
        posters = rng.sample(bulk_uids, 60_000)
        p_cum = list(_cumsum(1.0 / (k + 10) ** 0.8 for k in range(len(posters))))
        commenters = rng.sample(bulk_uids, 250_000)
        c_cum = list(_cumsum(1.0 / (k + 10) ** 0.7 for k in range(len(commenters))))
        # comments per bulk post: a log-normal draw, then evened out one comment at a time on posts
        # picked at random (none above MAX_COMMENTS_PER_POST), so that the table holds exactly
        # TOTAL_COMMENTS rows.
        n_bulk_comments = TOTAL_COMMENTS - len(tiny_comment_ids)
        assert 0 < n_bulk_comments <= MAX_COMMENTS_PER_POST * n_bulk_subs, n_bulk_comments
        mu_c = math.log(n_bulk_comments / n_bulk_subs) - 0.5 * 1.1 ** 2
        per_post = [min(MAX_COMMENTS_PER_POST, int(math.exp(rng.gauss(mu_c, 1.1)))) for _ in chosen]
        gap = n_bulk_comments - sum(per_post)
        while gap:
            i = rng.randrange(len(per_post))
            if gap > 0 and per_post[i] < MAX_COMMENTS_PER_POST:
                per_post[i] += 1
                gap -= 1
            elif gap < 0 and per_post[i] > 0:
                per_post[i] -= 1
                gap += 1

        fs = cp.open("submissions", ["id", "forum_id", "user_id", "title", "url", "body", "timestamp", "ranking",
                                     "last_active", "comment_count", "net_score", "media_type", "sticky", "user_flag"])
        fsv = cp.open("submission_votes", ["id", "user_id", "submission_id", "upvote", "timestamp"])
        comments = []   # (ts, sid, user, parent_index or -1, nwords, score)
        sv_id = 0
        seg_i = 0
        n_users_total = len(bulk_uids)
        for sid, n in zip(chosen, per_post):
            while sid >= segs[seg_i][0]:
                seg_i += 1
            _, elig, cum = segs[seg_i]
            fid = rng.choices(elig, cum_weights=cum)[0]
            author = rng.choices(posters, cum_weights=p_cum)[0]
            ts = ts_of(sid)
            title = " ".join(rng.choices(words, k=rng.randint(3, 12)))
            title = title[:1].upper() + title[1:]
            url = f"http://example.com/{rng.choice(words)}/{sid}" if rng.random() < 0.35 else "\\N"
            body = " ".join(rng.choices(words, k=rng.randint(5, 60))) if rng.random() < 0.6 else "\\N"
            if rng.random() < 0.06:
                score = -rng.randint(1, 8)
            else:
                score = min(MAX_SCORE, max(1, int(math.exp(rng.gauss(1.2, 1.25)))))
            # vote rows: the author's upvote + distinct bulk users
            if score > 0:
                down = int(score * rng.random() * 0.15)
                up = score + down
            else:
                up = 1 + rng.randint(0, 2)
                down = up - score
            voters = _distinct_voters(rng, first_uid, n_users_total, author, up + down - 1)
            vts = _fmt_ts(ts + 60)
            sv_id += 1
            fsv.write(f"{sv_id}\t{author}\t{sid}\tt\t{_fmt_ts(ts)}\n")
            for j, v in enumerate(voters):
                sv_id += 1
                fsv.write(f"{sv_id}\t{v}\t{sid}\t{'t' if j < up - 1 else 'f'}\t{vts}\n")
            # comments
            last = ts
            first_c = len(comments)
            t = ts
            for k in range(n):
                t += rng.expovariate(1 / 1500.0) + 1
                if k and rng.random() < 0.55:
                    parent = first_c + rng.randrange(max(0, k - 20), k)
                else:
                    parent = -1
                if rng.random() < 0.08:
                    cscore = -rng.randint(0, 4)
                else:
                    cscore = max(1, int(math.exp(rng.gauss(0.0, 0.9))))
                comments.append((int(t), sid, rng.choices(commenters, cum_weights=c_cum)[0], parent, cscore))
                last = t
            fs.write(f"{sid}\t{fid}\t{author}\t{title}\t{url}\t{body}\t{_fmt_ts(ts)}\t"
                     f"{ranking(dt.datetime.fromtimestamp(ts, tz=dt.timezone.utc), score)}\t{_fmt_ts(max(ts, last))}\t"
                     f"{n}\t{score}\turl\tf\tnone\n")
        cp.load(cur, "submissions")
        print(f"full: submissions {n_bulk_subs} in {time.time() - t0:.1f}s", flush=True)
        cp.load(cur, "submission_votes")
        print(f"full: submission votes {sv_id} in {time.time() - t0:.1f}s", flush=True)

        # comments: ids increase with time ----------------------------------------------------
        n_c = len(comments)
        span = max(1_240_000, int(n_c * COMMENT_ID_SPAN))
        ids = [i for i in rng.sample(range(1, span + 1), n_c + len(tiny_comment_ids) + 16)
               if i not in tiny_comment_ids][:n_c]
        ids.sort()
        order = sorted(range(n_c), key=lambda i, c=comments: (c[i][0], i))
        cid_of = [0] * n_c
        for rank, i in enumerate(order):
            cid_of[i] = ids[rank]
        fc = cp.open("comments", ["id", "submission_id", "user_id", "parent_id", "body", "timestamp", "net_score",
                                  "search_doc", "user_flag"])
        fcv = cp.open("comment_votes", ["id", "user_id", "comment_id", "upvote", "timestamp"])
        cv_id = 0
        for i in order:
            t, sid, user, parent, score = comments[i]
            cid = cid_of[i]
            ws = rng.choices(words, k=rng.randint(3, 30))
            pos = {}
            for p, w in enumerate(ws, 1):
                lx = lexeme[w]
                if lx:
                    pos.setdefault(lx, []).append(str(p))
            doc = " ".join(f"'{lx}':{','.join(ps)}" for lx, ps in pos.items())
            body = " ".join(ws)
            fc.write(f"{cid}\t{sid}\t{user}\t{cid_of[parent] if parent >= 0 else chr(92) + 'N'}\t"
                     f"{body[:1].upper() + body[1:]}\t{_fmt_ts(t)}\t{score}\t{doc}\tnone\n")
            if score > 0:
                down = int(score * rng.random() * 0.2)
                up = score + down
            else:
                up = 1
                down = up - score
            vts = _fmt_ts(t + 60)
            cv_id += 1
            fcv.write(f"{cv_id}\t{user}\t{cid}\tt\t{_fmt_ts(t)}\n")
            for j, v in enumerate(_distinct_voters(rng, first_uid, n_users_total, user, up + down - 1)):
                cv_id += 1
                fcv.write(f"{cv_id}\t{v}\t{cid}\t{'t' if j < up - 1 else 'f'}\t{vts}\n")
        del comments, order, cid_of, ids
        print(f"full: comment files in {time.time() - t0:.1f}s", flush=True)
        cp.load(cur, "comments")
        print(f"full: comments {n_c} in {time.time() - t0:.1f}s", flush=True)
        cp.load(cur, "comment_votes")
        print(f"full: comment votes {cv_id} in {time.time() - t0:.1f}s", flush=True)
    finally:
        for _, _, fh in cp.files.values():
            fh.close()
        shutil.rmtree(tmpdir, ignore_errors=True)

    cur.execute("ALTER TABLE submissions ENABLE TRIGGER submissions_search_update")
    cur.execute("""SELECT count(*), count(*) FILTER (WHERE search_doc IS DISTINCT FROM to_tsvector('english', body))
                   FROM comments TABLESAMPLE SYSTEM (1) REPEATABLE (0)""")
    n, bad = cur.fetchone()
    print(f"full: comments search_doc check: {bad} of {n} sampled rows differ from the trigger's value", flush=True)
    if bad:
        raise SystemExit("comments.search_doc differs from to_tsvector('english', body)")
    cur.execute("RESET session_replication_role")
    for _, sql in indexdefs:
        cur.execute(sql)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "full-indexes.sql")) as fh:
        cur.execute(fh.read())
    print(f"full: indexes in {time.time() - t0:.1f}s", flush=True)
    for seq, table in (("users_id_seq", "users"), ("forums_id_seq", "forums"), ("submissions_id_seq", "submissions"),
                       ("comments_id_seq", "comments"), ("submission_votes_id_seq", "submission_votes"),
                       ("comment_votes_id_seq", "comment_votes")):
        cur.execute(f"SELECT setval('{seq}', (SELECT max(id) FROM {table}))")
    # runtime settings for a database of this size (postgresql.auto.conf; tiny keeps the defaults)
    conn.commit()
    conn.autocommit = True
    cur.execute("ALTER SYSTEM SET shared_buffers = '256MB'")
    cur.execute("ALTER SYSTEM SET effective_cache_size = '2GB'")
    conn.autocommit = False
    print(f"full: bulk load done in {time.time() - t0:.1f}s", flush=True)


def _cumsum(xs):
    s = 0.0
    for x in xs:
        s += x
        yield s


def _distinct_voters(rng, first_uid, n_users, exclude, k):
    if k <= 0:
        return []
    out = set()
    while len(out) < k:
        v = first_uid + rng.randrange(n_users)
        if v != exclude:
            out.add(v)
    return sorted(out)
