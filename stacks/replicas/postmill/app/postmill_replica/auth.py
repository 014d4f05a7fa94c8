"""Log-in (cookie check, throttles, remember-me), log-out and registration routes."""
import base64
import hashlib
import json
import os
import time

import bcrypt
from flask import Blueprint, abort, g, redirect, render_template, request

from .db import nextval, q
from .sessions import (_remember_sig, client_ip, csrf_consume, csrf_valid, ip_whitelisted, sess_migrate,
                       sess_destroy, sess_pop, sess_set)
from .settings import POOLS_DIR, RATE_MSG, REMEMBER_COOKIE, SESSION_COOKIE
from .views import USERNAME_RE

bp = Blueprint("auth", __name__)


# --- login ----------------------------------------------------------------------------------
@bp.route("/login", methods=["GET"])
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


@bp.route("/login_check", methods=["POST"])
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


@bp.route("/log_out")
def log_out():
    if not csrf_valid("logout", request.args.get("token")):
        abort(403)
    sess_destroy()
    g.cookies_to_del.append(REMEMBER_COOKIE)
    return redirect("/", 302)


# --- registration ---------------------------------------------------------------------------
@bp.route("/registration", methods=["GET", "POST"])
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
            # the User entity's initial values (Postmill's table has no defaults for them)
            q("""INSERT INTO users (id, username, normalized_username, password, email, normalized_email, created,
                 last_seen, registration_ip, locale, timezone, front_page, front_page_sort_mode, allow_private_messages)
                 VALUES (%s,%s,%s,%s,%s,%s,now(),now(),%s,'en','UTC','default','hot',true)""",
              (uid, data["username"], data["username"].lower(), "$2y$" + h[4:], data["email"] or None,
               data["email"].lower() or None, ip))
            sess_migrate()
            g.sess = {}
            sess_set("_security_main", {"user_id": uid, "full": True})
            return redirect("/", 302)
    return render_template("registration.html", data=data, errors=errors)
