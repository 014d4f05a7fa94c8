"""Profile routes: /-/profile (WebArena's login probe) and personal access tokens."""
from flask import Blueprint, g, redirect, request

from . import core
from .core import q, x
from .pages import flash, render, require_login
from .records import user_status

bp = Blueprint("profile", __name__)


@bp.route("/-/profile", methods=["GET", "POST"])
def profile():
    r = require_login()
    if r:
        return r
    if request.method == "POST":
        f = request.form
        x("UPDATE users SET name=coalesce(%s,name), website_url=coalesce(%s,website_url), location=coalesce(%s,location),"
          " bio=coalesce(%s,bio), updated_at=now() WHERE id=%s",
          (f.get("user[name]"), f.get("user[website_url]"), f.get("user[location]"), f.get("user[bio]"), g.user["id"]))
        x("UPDATE user_details SET website_url=u.website_url, location=u.location FROM users u WHERE u.id=user_details.user_id AND u.id=%s", (g.user["id"],))
        if "user[status][message]" in f or "user[status][availability]" in f:
            x("""INSERT INTO user_statuses (user_id, message, availability) VALUES (%s,%s,%s)
                 ON CONFLICT (user_id) DO UPDATE SET message=EXCLUDED.message, availability=EXCLUDED.availability""",
              (g.user["id"], f.get("user[status][message]") or None, 1 if f.get("user[status][availability]") == "busy" else 0))
        flash("notice", "Profile was successfully updated")
        return redirect("/-/profile", 302)
    return render("profile_edit.html", title="Profile", ustatus=user_status(g.user["id"]) or {})


@bp.route("/-/profile/personal_access_tokens", methods=["GET", "POST"])
def pat():
    r = require_login()
    if r:
        return r
    new = None
    if request.method == "POST":
        scopes = request.form.getlist("personal_access_token[scopes][]") or ["api"]
        new, _ = core.new_token(g.user["id"], request.form.get("personal_access_token[name]") or "token", scopes,
                                request.form.get("personal_access_token[expires_at]") or None)
    toks = q("SELECT * FROM personal_access_tokens WHERE user_id=%s AND NOT revoked ORDER BY id", (g.user["id"],))
    return render("tokens.html", title="Personal Access Tokens", tokens=toks, new_token=new)
