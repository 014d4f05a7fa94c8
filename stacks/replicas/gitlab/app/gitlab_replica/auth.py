"""Sign-in/out routes and the app-wide request hooks (session, Rack::Attack throttle, CSRF)."""
import datetime as dt, time

from flask import Blueprint, Response, g, redirect, request

from . import core
from .core import q, x
from .pages import render

bp = Blueprint("auth", __name__)
PROTECTED_PATHS = ("/users/sign_in", "/users", "/users/password", "/users/confirmation", "/users/unlock")


def before():
    g.user = None
    if request.path.startswith("/api/v4"):
        return None      # the API authenticates on its own (api.py)
    core.load_session()
    g.user = core.session_user()
    if request.method == "POST" and request.path in PROTECTED_PATHS and throttled():
        # Rack::Attack runs before Rails' CSRF check (protected paths throttle, §2.2)
        return Response("Retry later\n", 429, {"Retry-After": "60", "Content-Type": "text/plain"})
    if request.method == "POST" and not request.path.endswith((".git/git-upload-pack", ".git/git-receive-pack")):
        if not core.csrf_ok():
            return Response("Can't verify CSRF token authenticity.", 422)
    return None


def after(resp):
    if not request.path.startswith("/api/v4"):
        core.save_session(resp)
    resp.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
    return resp


# ------------------------------------------------------------------ sign in / out
def throttled():
    """Rack::Attack "protected paths" throttle: N POST/period per IP on /users/sign_in (§2.2)."""
    s = q("SELECT * FROM application_settings ORDER BY id LIMIT 1", one=True)
    if not s or not s["throttle_protected_paths_enabled"]:
        return False
    period = s["throttle_protected_paths_period_in_seconds"]
    key = f"cache:gitlab:rack::attack:{int(time.time()) // period}:throttle_unauthenticated_protected_paths:{request.remote_addr}"
    r = core.rds()
    n = r.incr(key)
    r.expire(key, period + 1)
    return n > s["throttle_protected_paths_requests_per_period"]


@bp.route("/users/sign_in", methods=["GET", "POST"])
def sign_in():
    if request.method == "GET":
        if g.user:
            return redirect("/", 302)
        return render("sign_in.html", title="Sign in", login="", error=None)
    login = request.form.get("user[login]", "").strip()
    password = request.form.get("user[password]", "")
    u = q("SELECT * FROM users WHERE lower(username)=lower(%s) OR lower(email)=lower(%s)", (login, login), one=True)
    err = "Invalid login or password."
    if u and u["locked_at"] and u["locked_at"] > core.now() - dt.timedelta(minutes=10):
        err = "Your account is locked."
    elif u and u["state"] == "active" and core.check_password(u, password):
        x("UPDATE users SET failed_attempts=0, locked_at=NULL, sign_in_count=sign_in_count+1,"
          " last_sign_in_at=current_sign_in_at, current_sign_in_at=now() WHERE id=%s", (u["id"],))
        back = g.sess.get("user_return_to") or "/"
        core.start_user_session(u)
        return redirect(back if back.startswith("/") and not back.startswith("//") else "/", 302)
    elif u:
        row = x("UPDATE users SET failed_attempts=failed_attempts+1 WHERE id=%s RETURNING failed_attempts", (u["id"],))
        if row["failed_attempts"] >= 10:
            x("UPDATE users SET locked_at=now(), failed_attempts=0 WHERE id=%s", (u["id"],))
    return render("sign_in.html", title="Sign in", login=login, error=err)


@bp.route("/users/sign_out", methods=["POST", "GET"])
def sign_out():
    core.end_session()
    return redirect("/users/sign_in", 302)
