"""User routes: /u/ and /user/ pages (overview, submissions, comments), user list, account and
biography editing, account deletion page."""
import bcrypt
from flask import Blueprint, abort, g, redirect, render_template, request

from .db import q
from .sessions import csrf_consume, csrf_valid, require_user
from .views import USERNAME_RE, sub_select

bp = Blueprint("users", __name__)


def get_user(name):
    if not USERNAME_RE.match(name):
        abort(404)
    u = q("SELECT * FROM users WHERE normalized_username=%s", (name.lower(),), one=True)
    if not u:
        abort(404)
    if u["username"] != name:
        abort(redirect(request.path.replace(f"/user/{name}", f"/user/{u['username']}", 1), 302))
    return u


@bp.route("/u/<name>")
def user_short(name):
    return redirect(f"/user/{name}", 302)


@bp.route("/user/<name>")
def user_page(name):
    u = get_user(name)
    subs = q(sub_select() + " WHERE s.user_id=%s AND s.visibility='visible' ORDER BY s.id DESC LIMIT 25", (u["id"],))
    comments = q("""SELECT c.*, s.title, f.name AS forum_name FROM comments c JOIN submissions s ON s.id=c.submission_id
                    JOIN forums f ON f.id=s.forum_id WHERE c.user_id=%s ORDER BY c.id DESC LIMIT 25""", (u["id"],))
    return render_template("user.html", u=u, subs=subs, comments=comments, tab="overview")


@bp.route("/user/<name>/submissions")
def user_submissions(name):
    u = get_user(name)
    subs = q(sub_select() + " WHERE s.user_id=%s AND s.visibility='visible' ORDER BY s.id DESC LIMIT 25", (u["id"],))
    return render_template("user.html", u=u, subs=subs, comments=[], tab="submissions")


@bp.route("/user/<name>/comments")
def user_comments(name):
    u = get_user(name)
    comments = q("""SELECT c.*, s.title, f.name AS forum_name FROM comments c JOIN submissions s ON s.id=c.submission_id
                    JOIN forums f ON f.id=s.forum_id WHERE c.user_id=%s ORDER BY c.id DESC LIMIT 25""", (u["id"],))
    return render_template("user.html", u=u, subs=[], comments=comments, tab="comments")


@bp.route("/users")
@bp.route("/users/<int:page>")
def user_list(page=1):
    rows = q("SELECT username, created FROM users ORDER BY id DESC LIMIT 50 OFFSET %s", ((page - 1) * 50,))
    return render_template("user_list.html", rows=rows)


@bp.route("/user/<name>/account", methods=["GET", "POST"])
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


@bp.route("/user/<name>/edit_biography", methods=["GET", "POST"])
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


@bp.route("/user/<name>/delete_account", methods=["GET"])
def delete_account(name):
    require_user(fully=True)
    u = get_user(name)
    if u["id"] != g.user["id"]:
        abort(403)
    return render_template("message.html", title="Delete account",
                           message="Account deletion is not implemented in this replica.")
