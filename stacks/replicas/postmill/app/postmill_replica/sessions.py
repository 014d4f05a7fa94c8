"""Sessions, users and CSRF: PHP-layout session files (var/sessions/sess_<id>), the remember-me
cookie, require_user, client IP / rate-limit whitelist and single-use form tokens."""
import base64
import hashlib
import hmac
import ipaddress
import json
import os
import re
import secrets
import time

from flask import abort, g, redirect, request

from .db import q
from .settings import APP_SECRET, REMEMBER_COOKIE, SESSION_COOKIE, SESSION_DIR


# --- file sessions (PHP native handler layout: var/sessions/sess_<id>) ------------------------
SID_RE = re.compile(r"^[a-z0-9]{26,64}$")


def _sess_path(sid):
    return os.path.join(SESSION_DIR, "sess_" + sid)


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
