"""Postmill contract replica (WebArena "reddit") — a Flask test double, NOT Postmill.

Reproduces what sitectl and WebArena's evaluators read from the real image
(research/contract-postmill-gitlab-map.md §1): URL shapes, login form, PHPSESSID file sessions in
/var/www/html/var/sessions/sess_<id>, single-use form CSRF tokens, honeypot fields, DB-count rate
limits, vote endpoints and the DOM class names. Data lives in PostgreSQL (database `postmill`).
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import html
import ipaddress
import json
import os
import re
import secrets
import time
import uuid

import bcrypt
import psycopg2
import psycopg2.extras
from flask import Flask, Response, abort, g, jsonify, make_response, redirect, render_template, request, url_for
from markupsafe import Markup

APP_ROOT = os.environ.get("POSTMILL_ROOT", "/var/www/html")


def _load_dotenv(path):
    """Read KEY=VALUE lines of the app's .env (as Symfony does); real environment wins."""
    try:
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                os.environ.setdefault(k.strip(), v.strip().strip('"').strip("'"))
    except OSError:
        pass


_load_dotenv(os.path.join(APP_ROOT, ".env"))
SESSION_DIR = os.path.join(APP_ROOT, "var/sessions")
POOLS_DIR = os.path.join(APP_ROOT, "var/cache/prod/pools")
APP_SECRET = os.environ.get("APP_SECRET", "replica-postmill-app-secret")
SESSION_COOKIE = "PHPSESSID"
REMEMBER_COOKIE = "REMEMBERME"
RATE_MSG = "You cannot post more. Wait a while before trying again."
SORTS = ("active", "hot", "new", "top", "controversial", "most_commented")
NUM = re.compile(r"^[1-9][0-9]{0,17}$")

app = Flask(__name__, template_folder=os.path.join(os.path.dirname(__file__), "templates"))
app.url_map.strict_slashes = False


# --- database -------------------------------------------------------------------------------
def db():
    if "db" not in g:
        g.db = psycopg2.connect(host=os.environ.get("DB_HOST", "127.0.0.1"), dbname="postmill",
                                user="postmill", password="postmill", connect_timeout=5)
    return g.db


def q(sql, args=(), one=False):
    cur = db().cursor(cursor_factory=psycopg2.extras.RealDictCursor)
    cur.execute(sql, args)
    rows = cur.fetchall() if cur.description else []
    return (rows[0] if rows else None) if one else rows


def nextval(seq):
    return q("SELECT nextval(%s) AS v", (seq,), one=True)["v"]


@app.teardown_appcontext
def _close(exc):
    conn = g.pop("db", None)
    if conn is not None:
        if exc is None:
            conn.commit()
        conn.close()


# --- file sessions (PHP native handler layout: var/sessions/sess_<id>) ------------------------
SID_RE = re.compile(r"^[a-z0-9]{26,64}$")


def _sess_path(sid):
    return os.path.join(SESSION_DIR, "sess_" + sid)


@app.before_request
def _load_session():
    g.sid, g.sess, g.sess_dirty, g.cookies_to_set, g.cookies_to_del = None, {}, False, [], []
    sid = request.cookies.get(SESSION_COOKIE, "")
    if SID_RE.match(sid) and os.path.exists(_sess_path(sid)):
        try:
            with open(_sess_path(sid)) as f:
                g.sess = json.load(f)
            g.sid = sid
            os.utime(_sess_path(sid))
        except (OSError, ValueError):
            g.sess = {}
    _load_user()


def sess_set(key, value):
    g.sess[key] = value
    g.sess_dirty = True


def sess_pop(key, default=None):
    if key in g.sess:
        g.sess_dirty = True
    return g.sess.pop(key, default)


def sess_migrate():
    """New session id on login (Symfony migrates the session on authentication)."""
    if g.sid:
        try:
            os.unlink(_sess_path(g.sid))
        except OSError:
            pass
    g.sid = None
    g.sess_dirty = True


def sess_destroy():
    if g.sid:
        try:
            os.unlink(_sess_path(g.sid))
        except OSError:
            pass
    g.sid, g.sess, g.sess_dirty = None, {}, False
    g.cookies_to_del.append(SESSION_COOKIE)


@app.after_request
def _save_session(resp):
    if g.get("sess_dirty") and g.sess:
        if not g.sid:
            g.sid = secrets.token_hex(16)[:26] + secrets.token_hex(3)   # 32 chars [a-f0-9]
            resp.set_cookie(SESSION_COOKIE, g.sid, path="/", httponly=True, samesite="Lax")
        os.makedirs(SESSION_DIR, exist_ok=True)
        # A unique temporary name per write: two workers may save the same session at once.
        tmp = f"{_sess_path(g.sid)}.tmp.{os.getpid()}.{secrets.token_hex(4)}"
        with open(tmp, "w") as f:
            json.dump(g.sess, f)
        os.replace(tmp, _sess_path(g.sid))
    for name in g.get("cookies_to_del", []):
        resp.delete_cookie(name, path="/")
    for args, kw in g.get("cookies_to_set", []):
        resp.set_cookie(*args, **kw)
    return resp


# --- authentication ------------------------------------------------------------------------
def _remember_sig(username, expires):
    return hmac.new(APP_SECRET.encode(), f"{username}:{expires}".encode(), hashlib.sha256).hexdigest()


def _load_user():
    g.user, g.fully = None, False
    auth = g.sess.get("_security_main")
    if auth:
        u = q("SELECT * FROM users WHERE id=%s", (auth["user_id"],), one=True)
        if u:
            g.user, g.fully = u, bool(auth.get("full"))
            return
    raw = request.cookies.get(REMEMBER_COOKIE)
    if raw:
        try:
            username, expires, sig = base64.urlsafe_b64decode(raw.encode()).decode().rsplit(":", 2)
            if hmac.compare_digest(sig, _remember_sig(username, expires)) and int(expires) > time.time():
                u = q("SELECT * FROM users WHERE normalized_username=%s", (username.lower(),), one=True)
                if u:
                    g.user, g.fully = u, False       # "remembered", not fully authenticated
                    sess_set("_security_main", {"user_id": u["id"], "full": False})
        except Exception:
            g.cookies_to_del.append(REMEMBER_COOKIE)


def is_whitelisted(u):
    return bool(u and (u["trusted"] or u["admin"]))


def require_user(fully=False):
    if g.user is None or (fully and not g.fully):
        sess_set("_security.main.target_path", request.url)
        abort(redirect("/login"))


def client_ip():
    return request.headers.get("X-Real-IP") or request.remote_addr or "127.0.0.1"


def ip_whitelisted(ip):
    for net in filter(None, (x.strip() for x in os.environ.get("RATELIMIT_WHITELIST", "").split(","))):
        try:
            if ipaddress.ip_address(ip) in ipaddress.ip_network(net, strict=False):
                return True
        except ValueError:
            pass
    return False


# --- CSRF ----------------------------------------------------------------------------------
def csrf_token(token_id):
    key = "_csrf/" + token_id
    tok = g.sess.get(key)
    if not tok:
        tok = base64.urlsafe_b64encode(secrets.token_bytes(24)).decode().rstrip("=")
        sess_set(key, tok)
    return tok


def csrf_valid(token_id, value):
    tok = g.sess.get("_csrf/" + token_id)
    return bool(tok and value and hmac.compare_digest(tok, value))


def csrf_consume(token_id):
    """Single-use form tokens (Postmill PreventMultipleSubmitExtension, contract §1.5)."""
    sess_pop("_csrf/" + token_id)


# --- view helpers ---------------------------------------------------------------------------
def slugify(title, max_len=60):
    words = [w for w in re.split(r"\W+", (title or "").lower()) if w]
    out = ""
    for w in words:
        cand = w if not out else out + "-" + w
        if len(cand) > max_len:
            break
        out = cand
    return out or "-"


_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)|(https?://[^\s<]+)")


def markdown(text):
    """Tiny markdown subset: paragraphs, line breaks, [text](url) and bare URLs."""
    if not text:
        return Markup("")
    out = []
    for para in re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip()):
        parts, pos = [], 0
        for m in _LINK.finditer(para):
            parts.append(html.escape(para[pos:m.start()], quote=False))
            if m.group(2):
                parts.append(f'<a href="{html.escape(m.group(2))}" rel="nofollow">{html.escape(m.group(1))}</a>')
            else:
                parts.append(f'<a href="{html.escape(m.group(3))}" rel="nofollow">{html.escape(m.group(3))}</a>')
            pos = m.end()
        parts.append(html.escape(para[pos:], quote=False))
        out.append("<p>" + "".join(parts).replace("\n", "<br>\n") + "</p>")
    return Markup("\n".join(out))


def fmt_date(ts):
    ts = ts.astimezone(dt.timezone.utc)
    return f"{ts.strftime('%B')} {ts.day}, {ts.year} at {ts.strftime('%I:%M %p').lstrip('0')}"


def fmt_score(n):
    return f"{n:,}".replace("-", "\u2212")


def submission_url(s):
    return f"/f/{s['forum_name']}/{s['id']}/{slugify(s['title'])}"


def host_of(url):
    m = re.match(r"https?://([^/:]+)", url or "")
    return m.group(1) if m else ""


app.jinja_env.globals.update(csrf_token=csrf_token, markdown=markdown, fmt_date=fmt_date, fmt_score=fmt_score,
                             submission_url=submission_url, host_of=host_of, slugify=slugify)


@app.context_processor
def _ctx():
    subs = []
    if g.get("user"):
        subs = q("""SELECT f.name FROM forum_subscriptions fs JOIN forums f ON f.id=fs.forum_id
                    WHERE fs.user_id=%s ORDER BY f.normalized_name""", (g.user["id"],))
    return {"me": g.get("user"), "fully": g.get("fully"), "my_subscriptions": [r["name"] for r in subs],
            "site_name": "Postmill"}


SUB_SELECT = """SELECT s.*, f.name AS forum_name, u.username, i.file_name AS image_file,
    {vote} AS my_vote FROM submissions s JOIN forums f ON f.id=s.forum_id JOIN users u ON u.id=s.user_id
    LEFT JOIN images i ON i.id=s.image_id"""


def sub_select():
    if g.user:
        return SUB_SELECT.format(vote=f"""(SELECT CASE WHEN v.upvote THEN 1 ELSE -1 END FROM submission_votes v
                                 WHERE v.submission_id=s.id AND v.user_id={int(g.user['id'])})""")
    return SUB_SELECT.format(vote="NULL::int")


ORDER = {"hot": "s.sticky DESC, s.ranking DESC, s.id DESC", "new": "s.id DESC", "active": "s.last_active DESC, s.id DESC",
         "top": "s.net_score DESC, s.id DESC", "controversial": "s.net_score ASC, s.comment_count DESC, s.id DESC",
         "most_commented": "s.comment_count DESC, s.id DESC"}


def listing(where, args, sort, page=1, per=25):
    return q(f"{sub_select()} WHERE s.visibility='visible' AND {where} ORDER BY {ORDER[sort]} LIMIT %s OFFSET %s",
             (*args, per, (page - 1) * per))


def get_forum(name):
    f = q("SELECT * FROM forums WHERE normalized_name=%s", (name.lower(),), one=True)
    if not f:
        abort(404)
    return f


def canonical(forum, name):
    """Case-insensitive forum name with a 302 to the canonical spelling (contract §1.4)."""
    if forum["name"] != name:
        path = request.path.replace(f"/f/{name}", f"/f/{forum['name']}", 1)
        abort(redirect(path + (("?" + request.query_string.decode()) if request.query_string else ""), 302))


def error_page(code, message):
    return render_template("message.html", title=str(code), message=message), code


@app.errorhandler(404)
def _404(e):
    return error_page(404, "The page you requested does not exist.")


@app.errorhandler(403)
def _403(e):
    return error_page(403, "Access denied.")


# --- site -----------------------------------------------------------------------------------
@app.route("/site/health_check")
def health_check():
    return Response("It works!", mimetype="text/plain")


@app.route("/")
@app.route("/<any(active,hot,new,top,controversial,most_commented):sort>")
def front(sort="hot"):
    if g.user:
        subs = q("SELECT forum_id FROM forum_subscriptions WHERE user_id=%s", (g.user["id"],))
        mode = g.user["front_page"]
        if mode in ("default", "subscribed") and subs:
            rows = listing("s.forum_id IN (SELECT forum_id FROM forum_subscriptions WHERE user_id=%s)",
                           (g.user["id"],), sort)
            return render_template("listing.html", subs=rows, heading="Subscribed forums", sort=sort, base="/")
        if mode == "all":
            return render_template("listing.html", subs=listing("TRUE", (), sort), heading="All forums", sort=sort, base="/")
    rows = listing("f.featured", (), sort)
    return render_template("listing.html", subs=rows, heading="Featured forums", sort=sort, base="/")


@app.route("/all")
@app.route("/all/<sort>")
def all_listing(sort="hot"):
    if sort not in SORTS:
        abort(404)
    return render_template("listing.html", subs=listing("TRUE", (), sort), heading="All forums", sort=sort, base="/all")


@app.route("/<int:sid>")
def submission_shortcut(sid):
    s = q(sub_select() + " WHERE s.id=%s", (sid,), one=True)
    if not s:
        abort(404)
    return redirect(submission_url(s), 302)


@app.route("/forums")
@app.route("/forums/<any(by_submissions,by_name,by_title,by_subscribers,by_creation_date):sort>")
@app.route("/forums/<any(by_submissions,by_name,by_title,by_subscribers,by_creation_date):sort>/<int:page>")
def forum_list(sort="by_submissions", page=1):
    order = {"by_submissions": "submission_count DESC", "by_name": "f.normalized_name", "by_title": "lower(f.title)",
             "by_subscribers": "subscriber_count DESC", "by_creation_date": "f.created DESC"}[sort]
    rows = q(f"""SELECT f.*, (SELECT count(*) FROM submissions s WHERE s.forum_id=f.id) AS submission_count,
                 (SELECT count(*) FROM forum_subscriptions x WHERE x.forum_id=f.id) AS subscriber_count
                 FROM forums f ORDER BY {order}, f.normalized_name LIMIT 50 OFFSET %s""", ((page - 1) * 50,))
    return render_template("forum_list.html", forums=rows, sort=sort)


@app.route("/forums/all")
def forum_list_all():
    groups = {}
    for r in q("SELECT name FROM forums ORDER BY normalized_name"):
        c = r["name"][0].upper()
        key = "0–9" if c.isdigit() else (c if c.isalpha() else "_")
        groups.setdefault(key, []).append(r["name"])
    return render_template("forum_list_all.html", groups=groups)


# --- login ----------------------------------------------------------------------------------
@app.route("/login", methods=["GET"])
def login():
    # Cookie check (Postmill CookieCheckingListener, contract §1.2)
    if SESSION_COOKIE not in request.cookies and "_cookie_check" not in request.cookies:
        stamp = request.args.get("_cookie_check", "")
        if stamp.isdigit() and time.time() - int(stamp) <= 10:
            return render_template("message.html", title="Cookies required",
                                   message="You must enable cookies in your browser to log in."), 403
        resp = redirect(f"/login?_cookie_check={int(time.time())}", 302)
        resp.set_cookie("_cookie_check", "1", path="/login")
        return resp
    error = sess_pop("_security.last_error")
    last_username = sess_pop("_security.last_username", "")
    remember = g.sess.get("remember_me", True)
    return render_template("login.html", error=error, last_username=last_username, remember=remember)


def _throttle_file(key):
    os.makedirs(os.path.join(POOLS_DIR, "rate_limiter"), exist_ok=True)
    return os.path.join(POOLS_DIR, "rate_limiter", hashlib.sha1(key.encode()).hexdigest())


def _throttle_hit(key, limit, window, fixed):
    path, now = _throttle_file(key), time.time()
    try:
        hits = json.load(open(path))
    except (OSError, ValueError):
        hits = []
    if fixed:
        start = hits[0] if hits and now - hits[0] < window else now
        hits = [h for h in hits if h >= start] if hits and now - hits[0] < window else []
    else:
        hits = [h for h in hits if now - h < window]
    if len(hits) >= limit:
        return False
    hits.append(now)
    json.dump(hits, open(path, "w"))
    return True


def _throttle_reset(*keys):
    for k in keys:
        try:
            os.unlink(_throttle_file(k))
        except OSError:
            pass


@app.route("/login_check", methods=["POST"])
def login_check():
    f = request.form
    username, password = f.get("_username", ""), f.get("_password", "")
    remember = f.get("_remember_me") == "on"
    sess_set("remember_me", remember)

    def fail(msg):
        sess_set("_security.last_error", msg)
        sess_set("_security.last_username", username)
        return redirect("/login", 302)

    if not csrf_valid("authenticate", f.get("_csrf_token")):
        return fail("Invalid CSRF token.")
    ip = client_ip()
    gkey, lkey = f"login_global-{ip}", f"login_local-{username.lower()}-{ip}"
    if not ip_whitelisted(ip):
        if not (_throttle_hit(gkey, 50, 1800, True) and _throttle_hit(lkey, 20, 600, False)):
            return fail("Too many failed login attempts, please try again later.")
    u = q("SELECT * FROM users WHERE normalized_username=%s", (username.lower(),), one=True)
    ok = False
    if u and u["password"]:
        h = u["password"]
        h = "$2b$" + h[4:] if h.startswith("$2y$") else h
        try:
            ok = bcrypt.checkpw(password.encode(), h.encode())
        except ValueError:
            ok = False
    if not ok:
        return fail("Invalid credentials.")
    if q("""SELECT 1 AS x FROM user_bans WHERE user_id=%s AND banned AND (expires_at IS NULL OR expires_at > now())
            ORDER BY timestamp DESC LIMIT 1""", (u["id"],), one=True):
        return fail("You are banned.")
    _throttle_reset(gkey, lkey)
    target = sess_pop("_security.main.target_path") or f.get("_target_path") or "/"
    keep = {k: v for k, v in g.sess.items() if k.startswith("_csrf/") or k == "remember_me"}
    sess_migrate()
    g.sess = keep
    sess_set("_security_main", {"user_id": u["id"], "full": True})
    q("UPDATE users SET last_seen=now() WHERE id=%s", (u["id"],))
    resp = redirect(target, 302)
    if remember:
        expires = int(time.time()) + 365 * 86400
        val = base64.urlsafe_b64encode(f"{u['username']}:{expires}:{_remember_sig(u['username'], expires)}".encode()).decode()
        g.cookies_to_set.append(((REMEMBER_COOKIE, val), {"max_age": 365 * 86400, "path": "/", "httponly": True,
                                                          "samesite": "Lax"}))
    return resp


@app.route("/log_out")
def log_out():
    if not csrf_valid("logout", request.args.get("token")):
        abort(403)
    sess_destroy()
    g.cookies_to_del.append(REMEMBER_COOKIE)
    return redirect("/", 302)


# --- forums ---------------------------------------------------------------------------------
@app.route("/f/<forum_name>")
@app.route("/f/<forum_name>/<any(active,hot,new,top,controversial,most_commented):sort>")
def forum(forum_name, sort="hot"):
    f = get_forum(forum_name)
    canonical(f, forum_name)
    rows = listing("s.forum_id=%s", (f["id"],), sort)
    return render_template("forum.html", forum=f, subs=rows, sort=sort, **forum_extras(f))


def forum_extras(f):
    subscribed = bool(g.user and q("SELECT 1 AS x FROM forum_subscriptions WHERE user_id=%s AND forum_id=%s",
                                   (g.user["id"], f["id"]), one=True))
    mods = q("""SELECT u.username FROM moderators m JOIN users u ON u.id=m.user_id WHERE m.forum_id=%s
                ORDER BY m.timestamp""", (f["id"],))
    count = q("SELECT count(*) AS n FROM forum_subscriptions WHERE forum_id=%s", (f["id"],), one=True)["n"]
    return {"subscribed": subscribed, "moderators": [m["username"] for m in mods], "subscriber_count": count,
            "can_moderate": can_moderate(f)}


def can_moderate(f):
    if not g.user:
        return False
    if g.user["admin"]:
        return True
    return bool(q("SELECT 1 AS x FROM moderators WHERE forum_id=%s AND user_id=%s", (f["id"], g.user["id"]), one=True))


@app.route("/f/<forum_name>/<any(subscribe,unsubscribe):action>", methods=["POST"])
@app.route("/f/<forum_name>/<any(subscribe,unsubscribe):action>.<any(html,json):fmt>", methods=["POST"])
def subscribe(forum_name, action, fmt="html"):
    require_user()
    f = get_forum(forum_name)
    if not csrf_valid("subscribe", request.form.get("token")):
        abort(403)
    if action == "subscribe":
        q("""INSERT INTO forum_subscriptions (id, user_id, forum_id, subscribed_at) VALUES (%s,%s,%s,now())
             ON CONFLICT DO NOTHING""", (str(uuid.uuid4()), g.user["id"], f["id"]))
    else:
        q("DELETE FROM forum_subscriptions WHERE user_id=%s AND forum_id=%s", (g.user["id"], f["id"]))
    if fmt == "json":
        n = q("SELECT count(*) AS n FROM forum_subscriptions WHERE forum_id=%s", (f["id"],), one=True)["n"]
        return jsonify({"subscribed": action == "subscribe", "subscriberCount": n})
    return redirect(request.referrer or f"/f/{f['name']}", 302)


FORUM_NAME_RE = re.compile(r"^\w{3,25}$")


def _forum_form(existing=None):
    f = request.form
    data = {k: f.get(f"forum[{k}]", "") for k in ("name", "title", "description", "sidebar")}
    errors = []
    if f.get("forum[email]"):
        errors.append("Go away, bot.")
    token_id = "forum"
    if not csrf_valid(token_id, f.get("forum[_token]")):
        errors.append("The CSRF token is invalid. Please try to resubmit the form.")
    if not FORUM_NAME_RE.match(data["name"]):
        errors.append("The name must be 3 to 25 letters, digits or underscores.")
    else:
        clash = q("SELECT id FROM forums WHERE normalized_name=%s", (data["name"].lower(),), one=True)
        if clash and (not existing or clash["id"] != existing["id"]):
            errors.append("A forum by that name already exists.")
    if not data["title"].strip():
        errors.append("The title must not be empty.")
    if not data["description"].strip():
        errors.append("The description must not be empty.")
    return data, errors


@app.route("/create_forum", methods=["GET", "POST"])
def create_forum():
    require_user()
    site = q("SELECT * FROM sites LIMIT 1", one=True)
    if site["forum_create_role"] == "ROLE_WHITELISTED" and not is_whitelisted(g.user):
        abort(403)
    if site["forum_create_role"] == "ROLE_ADMIN" and not g.user["admin"]:
        abort(403)
    data, errors = {"name": "", "title": "", "description": "", "sidebar": ""}, []
    if request.method == "POST":
        data, errors = _forum_form()
        if not errors:
            csrf_consume("forum")
            fid = nextval("forums_id_seq")
            q("""INSERT INTO forums (id, name, normalized_name, title, description, sidebar, created)
                 VALUES (%s,%s,%s,%s,%s,%s,now())""",
              (fid, data["name"], data["name"].lower(), data["title"], data["description"], data["sidebar"]))
            q("INSERT INTO moderators (id, forum_id, user_id, timestamp) VALUES (%s,%s,%s,now())",
              (str(uuid.uuid4()), fid, g.user["id"]))
            q("""INSERT INTO forum_subscriptions (id, user_id, forum_id, subscribed_at) VALUES (%s,%s,%s,now())
                 ON CONFLICT DO NOTHING""", (str(uuid.uuid4()), g.user["id"], fid))
            return redirect(f"/f/{data['name']}", 302)
    return render_template("forum_form.html", data=data, errors=errors, editing=None, action="/create_forum",
                           button="Create forum", title="Create forum")


@app.route("/f/<forum_name>/edit", methods=["GET", "POST"])
def edit_forum(forum_name):
    require_user()
    f = get_forum(forum_name)
    canonical(f, forum_name)
    if not can_moderate(f):
        abort(403)
    data, errors = {k: f[k] or "" for k in ("name", "title", "description", "sidebar")}, []
    if request.method == "POST":
        data, errors = _forum_form(existing=f)
        if not errors:
            csrf_consume("forum")
            q("""UPDATE forums SET name=%s, normalized_name=%s, title=%s, description=%s, sidebar=%s WHERE id=%s""",
              (data["name"], data["name"].lower(), data["title"], data["description"], data["sidebar"], f["id"]))
            return redirect(f"/f/{data['name']}/edit", 302)
    return render_template("forum_form.html", data=data, errors=errors, editing=f, action=f"/f/{f['name']}/edit",
                           button="Save", title=f"Editing forum /f/{f['name']}")


@app.route("/f/<forum_name>/moderators")
def forum_moderators(forum_name):
    f = get_forum(forum_name)
    canonical(f, forum_name)
    return render_template("forum_moderators.html", forum=f, **forum_extras(f))


# --- submissions ----------------------------------------------------------------------------
def load_submission(forum_name, sid):
    f = get_forum(forum_name)
    canonical(f, forum_name)
    s = q(sub_select() + " WHERE s.id=%s AND s.forum_id=%s", (sid, f["id"]), one=True)
    if not s:
        abort(404)
    return f, s


def comment_rows(sid):
    vote = "NULL::int"
    if g.user:
        vote = f"""(SELECT CASE WHEN v.upvote THEN 1 ELSE -1 END FROM comment_votes v
                   WHERE v.comment_id=c.id AND v.user_id={int(g.user['id'])})"""
    return q(f"""SELECT c.*, u.username, {vote} AS my_vote FROM comments c JOIN users u ON u.id=c.user_id
                 WHERE c.submission_id=%s ORDER BY c.timestamp, c.id""", (sid,))


def comment_tree(rows, root=None):
    kids = {}
    for c in rows:
        kids.setdefault(c["parent_id"], []).append(c)
    def build(c, level):
        return {"c": c, "level": level, "replies": [build(k, level + 1) for k in kids.get(c["id"], [])]}
    tops = kids.get(None, []) if root is None else [root]
    return [build(c, 1) for c in tops]


@app.route("/f/<forum_name>/<int:sid>")
@app.route("/f/<forum_name>/<int:sid>/<slug>")
@app.route("/f/<forum_name>/<int:sid>/<slug>/<view>")
def submission(forum_name, sid, slug=None, view="nested"):
    if view not in ("nested", "linear"):
        abort(404)
    f, s = load_submission(forum_name, sid)
    rows = comment_rows(sid)
    tree = comment_tree(rows) if view == "nested" else [{"c": c, "level": 1, "replies": []} for c in rows]
    return render_template("submission.html", forum=f, s=s, tree=tree, permalink=None, **forum_extras(f))


@app.route("/f/<forum_name>/<int:sid>.json")
def submission_json(forum_name, sid):
    f, s = load_submission(forum_name, sid)
    return jsonify({"id": s["id"], "title": s["title"], "url": s["url"], "body": s["body"],
                    "timestamp": s["timestamp"].isoformat(), "forum": {"id": f["id"], "name": f["name"]},
                    "user": {"id": s["user_id"], "username": s["username"]}, "netScore": s["net_score"],
                    "commentCount": s["comment_count"], "mediaType": s["media_type"], "visibility": s["visibility"]})


@app.route("/f/<forum_name>/<int:sid>/comment/<int:cid>")
def comment_legacy(forum_name, sid, cid):
    f, s = load_submission(forum_name, sid)
    return redirect(f"{submission_url(s)}/comment/{cid}", 301)


@app.route("/f/<forum_name>/<int:sid>/<slug>/comment", methods=["POST"])
@app.route("/f/<forum_name>/<int:sid>/<slug>/comment/<int:cid>", methods=["GET", "POST"])
def comment(forum_name, sid, slug, cid=None):
    if request.method == "POST":
        return comment_post(forum_name, sid, cid)
    f, s = load_submission(forum_name, sid)
    rows = comment_rows(sid)
    root = next((c for c in rows if c["id"] == cid), None)
    if not root:
        abort(404)
    return render_template("submission.html", forum=f, s=s, tree=comment_tree(rows, root), permalink=root,
                           **forum_extras(f))


def rate_limited(table, period, limit, user, user_only=False):
    ip = client_ip()
    cond, args = "user_id=%s", [user["id"]]
    if not user_only and not ip_whitelisted(ip):
        cond, args = "(user_id=%s OR ip=%s)", [user["id"], ip]
    n = q(f"SELECT count(*) AS n FROM {table} WHERE timestamp >= now() - %s::interval AND {cond}",
          (period, *args), one=True)["n"]
    return n >= limit


def comment_post(forum_name, sid, parent_id):
    require_user()
    f, s = load_submission(forum_name, sid)
    form_name = f"reply_to_comment_{parent_id}" if parent_id else f"reply_to_submission_{sid}"
    fd = request.form
    body = fd.get(f"{form_name}[comment]", "")
    errors = []
    if fd.get(f"{form_name}[email]"):
        errors.append("Go away, bot.")
    if not csrf_valid(form_name, fd.get(f"{form_name}[_token]")):
        errors.append("The CSRF token is invalid. Please try to resubmit the form.")
    if not body.strip():
        errors.append("This value should not be blank.")
    if len(body) > 10000:
        errors.append("This value is too long.")
    if s["locked"] and not can_moderate(f):
        errors.append("The submission is locked.")
    parent = None
    if parent_id:
        parent = q("SELECT * FROM comments WHERE id=%s AND submission_id=%s", (parent_id, sid), one=True)
        if not parent:
            abort(404)
    if not errors and rate_limited("comments", "5 minutes", 10, g.user):
        errors.append(RATE_MSG)
    if errors:
        rows = comment_rows(sid)
        return render_template("submission.html", forum=f, s=s, tree=comment_tree(rows), permalink=None,
                               form_errors=errors, **forum_extras(f)), 200
    csrf_consume(form_name)
    cid = nextval("comments_id_seq")
    ip = None if is_whitelisted(g.user) else client_ip()
    flag = fd.get(f"{form_name}[userFlag]", "none")
    flag = flag if flag in ("moderator", "admin") and can_moderate(f) else "none"
    q("""INSERT INTO comments (id, submission_id, user_id, parent_id, body, timestamp, ip, user_flag, net_score)
         VALUES (%s,%s,%s,%s,%s,now(),%s,%s,1)""", (cid, sid, g.user["id"], parent_id, body, ip, flag))
    q("INSERT INTO comment_votes (id, user_id, comment_id, upvote, timestamp, ip) VALUES (%s,%s,%s,true,now(),%s)",
      (nextval("comment_votes_id_seq"), g.user["id"], cid, ip))
    q("""UPDATE submissions SET comment_count=(SELECT count(*) FROM comments WHERE submission_id=%s AND visibility='visible'),
         last_active=now() WHERE id=%s""", (sid, sid))
    return redirect(f"{submission_url(s)}/comment/{cid}", 302)


@app.route("/comment_form/<forum_name>/<int:sid>")
@app.route("/comment_form/<forum_name>/<int:sid>/<int:cid>")
def comment_form(forum_name, sid, cid=None):
    require_user()
    f, s = load_submission(forum_name, sid)
    return render_template("_comment_form_page.html", s=s, parent_id=cid)


def _submission_form_data():
    fd = request.form
    return {k: fd.get(f"submission[{k}]", "") for k in ("title", "url", "body", "forum", "email", "userFlag")}


def _validate_submission(data, creating):
    errors = []
    if data["email"]:
        errors.append("Go away, bot.")
    if not csrf_valid("submission", request.form.get("submission[_token]")):
        errors.append("The CSRF token is invalid. Please try to resubmit the form.")
    if not data["title"].strip():
        errors.append("This value should not be blank.")
    if len(data["title"]) > 300:
        errors.append("This value is too long. It should have 300 characters or less.")
    if len(data["url"]) > 2000 or (data["url"] and not re.match(r"^https?://\S+$", data["url"])):
        errors.append("This value is not a valid URL.")
    if len(data["body"]) > 25000:
        errors.append("This value is too long.")
    return errors


@app.route("/submit", methods=["GET", "POST"])
@app.route("/submit/<forum_name>", methods=["GET", "POST"])
def submit(forum_name=None):
    require_user()
    forums = q("SELECT id, name, featured FROM forums ORDER BY normalized_name")
    pre = get_forum(forum_name) if forum_name else None
    data = {"title": "", "url": "", "body": "", "forum": str(pre["id"]) if pre else "", "userFlag": "none"}
    errors = []
    if request.method == "POST":
        data = _submission_form_data()
        errors = _validate_submission(data, True)
        f = q("SELECT * FROM forums WHERE id=%s", (int(data["forum"]),), one=True) if data["forum"].isdigit() else None
        if not f:
            errors.append("This value is not valid.")
        if not errors:
            if rate_limited("submissions", "5 minutes", 15, g.user) or (
                    not is_whitelisted(g.user) and rate_limited("submissions", "1 hour", 3, g.user)):
                errors.append(RATE_MSG)
        if not errors:
            csrf_consume("submission")
            sid = nextval("submissions_id_seq")
            ip = None if is_whitelisted(g.user) else client_ip()
            flag = data["userFlag"] if data["userFlag"] in ("moderator", "admin") and can_moderate(f) else "none"
            now = q("SELECT now() AS t", one=True)["t"]
            q("""INSERT INTO submissions (id, forum_id, user_id, title, url, body, timestamp, ip, ranking, last_active,
                 comment_count, net_score, media_type, user_flag) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,0,1,'url',%s)""",
              (sid, f["id"], g.user["id"], data["title"], data["url"] or None, data["body"] or None, now, ip,
               int(now.timestamp()) + 18, now, flag))
            q("""INSERT INTO submission_votes (id, user_id, submission_id, upvote, timestamp, ip)
                 VALUES (%s,%s,%s,true,%s,%s)""", (nextval("submission_votes_id_seq"), g.user["id"], sid, now, ip))
            return redirect(f"/f/{f['name']}/{sid}/{slugify(data['title'])}", 302)
    return render_template("submit.html", forums=forums, data=data, errors=errors, action=request.path,
                           button="Create submission", title="Create submission", editing=None)


@app.route("/f/<forum_name>/<int:sid>/<slug>/edit", methods=["GET", "POST"])
def edit_submission(forum_name, sid, slug):
    require_user()
    f, s = load_submission(forum_name, sid)
    if s["user_id"] != g.user["id"] and not can_moderate(f):
        abort(403)
    data = {"title": s["title"], "url": s["url"] or "", "body": s["body"] or "", "forum": str(f["id"]),
            "userFlag": s["user_flag"]}
    errors = []
    if request.method == "POST":
        new = _submission_form_data()
        errors = _validate_submission(new, False)
        data.update({k: new[k] for k in ("title", "url", "body")})
        if not errors:
            csrf_consume("submission")
            q("UPDATE submissions SET title=%s, url=%s, body=%s, edited_at=now() WHERE id=%s",
              (data["title"], data["url"] or None, data["body"] or None, sid))
            return redirect(f"/f/{f['name']}/{sid}/{slugify(data['title'])}", 302)
    return render_template("submit.html", forums=[f], data=data, errors=errors, action=request.path, button="Save",
                           title="Edit submission", editing=s)


# --- votes ----------------------------------------------------------------------------------
def _vote(kind, oid, fmt):
    if g.user is None:
        if fmt == "json":
            return jsonify({"error": "not logged in"}), 403
        return redirect("/login", 302)
    if not csrf_valid("vote", request.form.get("token")):
        return (jsonify({"error": "Invalid CSRF token."}), 403) if fmt == "json" else abort(403)
    choice = request.form.get("choice")
    if choice not in ("1", "0", "-1"):
        abort(400)
    table, vtable, col = (("submissions", "submission_votes", "submission_id") if kind == "s"
                          else ("comments", "comment_votes", "comment_id"))
    if not q(f"SELECT 1 AS x FROM {table} WHERE id=%s", (oid,), one=True):
        abort(404)
    ip = None if is_whitelisted(g.user) else client_ip()
    q(f"DELETE FROM {vtable} WHERE {col}=%s AND user_id=%s", (oid, g.user["id"]))
    if choice != "0":
        q(f"INSERT INTO {vtable} (id, user_id, {col}, upvote, timestamp, ip) VALUES (%s,%s,%s,%s,now(),%s)",
          (nextval(f"{vtable}_id_seq"), g.user["id"], oid, choice == "1", ip))
    # Postmill recomputes the score from the vote rows (reproduces the image's data bug, contract §1.5)
    q(f"""UPDATE {table} SET net_score=(SELECT count(*) FILTER (WHERE upvote) - count(*) FILTER (WHERE NOT upvote)
          FROM {vtable} WHERE {col}=%s) WHERE id=%s""", (oid, oid))
    score = q(f"SELECT net_score FROM {table} WHERE id=%s", (oid,), one=True)["net_score"]
    if fmt == "json":
        return jsonify({"netScore": score})
    return redirect(request.referrer or "/", 302)


@app.route("/sv/<int:sid>.<any(html,json):fmt>", methods=["POST"])
def vote_submission(sid, fmt):
    return _vote("s", sid, fmt)


@app.route("/cv/<int:cid>.<any(html,json):fmt>", methods=["POST"])
def vote_comment(cid, fmt):
    return _vote("c", cid, fmt)


# --- users ----------------------------------------------------------------------------------
USERNAME_RE = re.compile(r"^([\w\-\[\]]{3,25}|!deleted\d+|!test)$")


def get_user(name):
    if not USERNAME_RE.match(name):
        abort(404)
    u = q("SELECT * FROM users WHERE normalized_username=%s", (name.lower(),), one=True)
    if not u:
        abort(404)
    if u["username"] != name:
        abort(redirect(request.path.replace(f"/user/{name}", f"/user/{u['username']}", 1), 302))
    return u


@app.route("/u/<name>")
def user_short(name):
    return redirect(f"/user/{name}", 302)


@app.route("/user/<name>")
def user_page(name):
    u = get_user(name)
    subs = q(sub_select() + " WHERE s.user_id=%s AND s.visibility='visible' ORDER BY s.id DESC LIMIT 25", (u["id"],))
    comments = q("""SELECT c.*, s.title, f.name AS forum_name FROM comments c JOIN submissions s ON s.id=c.submission_id
                    JOIN forums f ON f.id=s.forum_id WHERE c.user_id=%s ORDER BY c.id DESC LIMIT 25""", (u["id"],))
    return render_template("user.html", u=u, subs=subs, comments=comments, tab="overview")


@app.route("/user/<name>/submissions")
def user_submissions(name):
    u = get_user(name)
    subs = q(sub_select() + " WHERE s.user_id=%s AND s.visibility='visible' ORDER BY s.id DESC LIMIT 25", (u["id"],))
    return render_template("user.html", u=u, subs=subs, comments=[], tab="submissions")


@app.route("/user/<name>/comments")
def user_comments(name):
    u = get_user(name)
    comments = q("""SELECT c.*, s.title, f.name AS forum_name FROM comments c JOIN submissions s ON s.id=c.submission_id
                    JOIN forums f ON f.id=s.forum_id WHERE c.user_id=%s ORDER BY c.id DESC LIMIT 25""", (u["id"],))
    return render_template("user.html", u=u, subs=[], comments=comments, tab="comments")


@app.route("/users")
@app.route("/users/<int:page>")
def user_list(page=1):
    rows = q("SELECT username, created FROM users ORDER BY id DESC LIMIT 50 OFFSET %s", ((page - 1) * 50,))
    return render_template("user_list.html", rows=rows)


@app.route("/user/<name>/account", methods=["GET", "POST"])
def edit_user(name):
    """Route edit_user: ROLE_USER + IS_AUTHENTICATED_FULLY + owner (contract §1.3)."""
    require_user(fully=True)
    u = get_user(name)
    if u["id"] != g.user["id"] and not g.user["admin"]:
        abort(403)
    errors, saved = [], False
    if request.method == "POST":
        fd = request.form
        if not csrf_valid("user", fd.get("user[_token]")):
            errors.append("The CSRF token is invalid. Please try to resubmit the form.")
        p1, p2 = fd.get("user[password][first]", ""), fd.get("user[password][second]", "")
        if p1 != p2:
            errors.append("The passwords do not match.")
        if not errors:
            csrf_consume("user")
            email = fd.get("user[email]", "").strip() or None
            q("UPDATE users SET email=%s, normalized_email=%s WHERE id=%s",
              (email, email.lower() if email else None, u["id"]))
            if p1:
                h = bcrypt.hashpw(p1.encode(), bcrypt.gensalt(13)).decode()
                q("UPDATE users SET password=%s WHERE id=%s", ("$2y$" + h[4:], u["id"]))
            saved = True
            u = q("SELECT * FROM users WHERE id=%s", (u["id"],), one=True)
    return render_template("account.html", u=u, errors=errors, saved=saved)


@app.route("/user/<name>/edit_biography", methods=["GET", "POST"])
def edit_biography(name):
    require_user()
    u = get_user(name)
    if u["id"] != g.user["id"] and not g.user["admin"]:
        abort(403)
    errors = []
    if request.method == "POST":
        fd = request.form
        if not csrf_valid("user_biography", fd.get("user_biography[_token]")):
            errors.append("The CSRF token is invalid. Please try to resubmit the form.")
        bio = fd.get("user_biography[biography]", "")
        if len(bio) > 300:
            errors.append("This value is too long. It should have 300 characters or less.")
        if not errors:
            csrf_consume("user_biography")
            q("UPDATE users SET biography=%s WHERE id=%s", (bio or None, u["id"]))
            return redirect(f"/user/{u['username']}", 302)
    return render_template("edit_biography.html", u=u, errors=errors)


@app.route("/user/<name>/delete_account", methods=["GET"])
def delete_account(name):
    require_user(fully=True)
    u = get_user(name)
    if u["id"] != g.user["id"]:
        abort(403)
    return render_template("message.html", title="Delete account",
                           message="Account deletion is not implemented in this replica.")


# --- search ---------------------------------------------------------------------------------
@app.route("/search")
def search():
    term = request.args.get("q", "").strip()
    subs, comments = [], []
    if term:
        subs = q(sub_select() + """ WHERE s.visibility='visible' AND s.search_doc @@ plainto_tsquery('english', %s)
                 ORDER BY ts_rank(s.search_doc, plainto_tsquery('english', %s)) DESC, s.id DESC LIMIT 25""",
                 (term, term))
        comments = q("""SELECT c.*, s.title, f.name AS forum_name, u.username FROM comments c
                        JOIN submissions s ON s.id=c.submission_id JOIN forums f ON f.id=s.forum_id
                        JOIN users u ON u.id=c.user_id
                        WHERE c.search_doc @@ plainto_tsquery('english', %s) ORDER BY c.id DESC LIMIT 25""", (term,))
    return render_template("search.html", term=term, subs=subs, comments=comments)


# --- registration ---------------------------------------------------------------------------
@app.route("/registration", methods=["GET", "POST"])
def registration():
    """Sign-up form ``user`` (UserType): 3 registrations per hour per registration_ip (contract §1.8)."""
    site = q("SELECT registration_open FROM sites LIMIT 1", one=True)
    if not site["registration_open"]:
        abort(403)
    if g.user:
        return redirect("/", 302)
    data, errors = {"username": "", "email": ""}, []
    if request.method == "POST":
        fd = request.form
        data = {"username": fd.get("user[username]", "").strip(), "email": fd.get("user[email]", "").strip()}
        p1, p2 = fd.get("user[password][first]", ""), fd.get("user[password][second]", "")
        if fd.get("user[phone]"):
            errors.append("Go away, bot.")
        if not csrf_valid("user", fd.get("user[_token]")):
            errors.append("The CSRF token is invalid. Please try to resubmit the form.")
        if not USERNAME_RE.match(data["username"]) or data["username"].startswith("!"):
            errors.append("The username must be 3 to 25 characters (letters, digits, _, -, [ or ]).")
        elif q("SELECT 1 AS x FROM users WHERE normalized_username=%s", (data["username"].lower(),), one=True):
            errors.append("That username is taken.")
        if len(p1) < 8 or p1 != p2:
            errors.append("The password must be at least 8 characters and both fields must match.")
        ip = client_ip()
        if not errors and not ip_whitelisted(ip) and q(
                "SELECT count(*) AS n FROM users WHERE created >= now() - interval '1 hour' AND registration_ip=%s",
                (ip,), one=True)["n"] >= 3:
            errors.append(RATE_MSG)
        if not errors:
            csrf_consume("user")
            uid = nextval("users_id_seq")
            h = bcrypt.hashpw(p1.encode(), bcrypt.gensalt(13)).decode()
            q("""INSERT INTO users (id, username, normalized_username, password, email, normalized_email, created,
                 last_seen, registration_ip) VALUES (%s,%s,%s,%s,%s,%s,now(),now(),%s)""",
              (uid, data["username"], data["username"].lower(), "$2y$" + h[4:], data["email"] or None,
               data["email"].lower() or None, ip))
            sess_migrate()
            g.sess = {}
            sess_set("_security_main", {"user_id": uid, "full": True})
            return redirect("/", 302)
    return render_template("registration.html", data=data, errors=errors)
