"""Page helpers shared by the web blueprints: render, flash, 404 page, login gate, member form,
user and group pages."""
import re

from flask import Response, current_app, g, redirect, request

from . import core
from .core import ACCESS, VIS, q
from .records import find_user, group_by_path, user_status, visible_projects

STATE_NAME = {1: "Open", 2: "Closed", 3: "Merged", 4: "Locked"}


def vis_title(p):
    return {0: "Private - Project access must be granted explicitly to each user. If this project is part of a group, access is granted to members of the group.",
            10: "Internal - The project can be accessed by any logged in user except external users.",
            20: "Public - The project can be accessed without any authentication."}[p["visibility_level"]]


def render(name, status=200, **ctx):
    ctx.setdefault("title", "GitLab")
    flashes = g.sess.pop("_flash", []) if g.sess.get("_flash") else []
    if flashes:
        g.sess_dirty = True
    # data-page is the view's name without its blueprint prefix (as when the routes were on the app)
    html = current_app.jinja_env.get_template(name).render(
        cu=g.user, csrf=core.csrf_token(), flashes=flashes, vis=VIS, vis_title=vis_title, access=ACCESS,
        state_name=STATE_NAME, page_id=(request.endpoint or "").rpartition(".")[2], **ctx)
    return Response(html, status=status, mimetype="text/html")


def flash(kind, msg):
    core.session_set("_flash", g.sess.get("_flash", []) + [[kind, msg]])


def not_found():
    return render("error.html", 404, code="404", message="Page Not Found", title="Not Found")


def require_login():
    if not g.user:
        if request.method == "GET":
            core.session_set("user_return_to", request.full_path.rstrip("?"))
        return redirect("/users/sign_in", 302)
    return None


def parse_member_form():
    ids = [s.strip() for s in re.split(r"[,\s]+", request.form.get("user_ids", request.form.get("user_id", ""))) if s.strip()]
    users = []
    for s in ids:
        u = q("SELECT * FROM users WHERE id=%s", (int(s),), one=True) if s.isdigit() else find_user(s.lstrip("@"))
        if u:
            users.append(u)
    lvl = int(request.form.get("access_level", 10))
    return users, lvl, request.form.get("expires_at") or None


def user_page(u, people=None, projects=None):
    c = q("SELECT (SELECT count(*) FROM user_follow_users WHERE followee_id=%s) AS fr,"
          " (SELECT count(*) FROM user_follow_users WHERE follower_id=%s) AS fg", (u["id"], u["id"]), one=True)
    is_following = bool(g.user and q("SELECT 1 FROM user_follow_users WHERE follower_id=%s AND followee_id=%s",
                                     (g.user["id"], u["id"]), one=True))
    return render("user.html", title=u["name"], u=u, ustatus=user_status(u["id"]), followers=c["fr"], following=c["fg"],
                  people=people, projects=projects, is_following=is_following)


def group_page(gpath):
    """The group overview (route /groups/<path>, and /<group> through the project catch-all)."""
    grp = group_by_path(gpath)
    if not grp:
        return not_found()
    return render("group.html", title=grp["name"], grp=grp, projects=visible_projects("AND p.namespace_id=%s", (grp["id"],)))
