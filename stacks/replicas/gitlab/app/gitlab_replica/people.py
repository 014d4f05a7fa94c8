"""User and group routes: /users/<name>/..., follow/unfollow, /groups/<path> and its members page."""
from flask import Blueprint, g, redirect, request

from . import pages
from .core import ACCESS, q, x
from .pages import flash, not_found, parse_member_form, render, require_login, user_page
from .records import add_member, find_user, group_by_path, group_members, member_projects, visible_projects

bp = Blueprint("people", __name__)


@bp.route("/users/<username>/following")
@bp.route("/users/<username>/followers")
@bp.route("/users/<username>/starred")
@bp.route("/users/<username>/projects")
def user_sub(username):
    u = find_user(username)
    if not u:
        return not_found()
    if request.path.endswith("/following"):
        return user_page(u, people=q("SELECT u.* FROM user_follow_users f JOIN users u ON u.id=f.followee_id WHERE f.follower_id=%s ORDER BY u.username", (u["id"],)))
    if request.path.endswith("/followers"):
        return user_page(u, people=q("SELECT u.* FROM user_follow_users f JOIN users u ON u.id=f.follower_id WHERE f.followee_id=%s ORDER BY u.username", (u["id"],)))
    if request.path.endswith("/starred"):
        return user_page(u, projects=visible_projects("AND p.id IN (SELECT project_id FROM users_star_projects WHERE user_id=%s)", (u["id"],)))
    return user_page(u, projects=member_projects(u["id"]))


@bp.route("/users/<username>/<action>", methods=["POST"])
def follow(username, action):
    r = require_login()
    if r:
        return r
    u = find_user(username)
    if not u or action not in ("follow", "unfollow"):
        return not_found()
    if action == "follow" and u["id"] != g.user["id"]:
        x("INSERT INTO user_follow_users VALUES (%s,%s) ON CONFLICT DO NOTHING", (g.user["id"], u["id"]))
    else:
        x("DELETE FROM user_follow_users WHERE follower_id=%s AND followee_id=%s", (g.user["id"], u["id"]))
    return redirect(f"/{u['username']}", 302)


@bp.route("/groups/<path:gpath>/-/group_members", methods=["GET", "POST"])
def group_members_page(gpath):
    grp = group_by_path(gpath)
    if not grp:
        return not_found()
    is_owner = bool(g.user and (g.user["admin"] or any(m["user_id"] == g.user["id"] and m["access_level"] >= 50 for m in group_members(grp))))
    if request.method == "POST":
        r = require_login()
        if r:
            return r
        if not is_owner:
            return not_found()
        users, lvl, exp = parse_member_form()
        for u in users:
            add_member("Namespace", grp["id"], u, lvl, exp, grp["id"])
        flash("notice", "Users were successfully added.")
        return redirect(f"/groups/{grp['path']}/-/group_members", 302)
    return render("members.html", title="Group members", heading="Group members", source_name=grp["name"], members=group_members(grp),
                  can_admin=is_owner, form_action=f"/groups/{grp['path']}/-/group_members",
                  levels=[(k, v) for k, v in ACCESS.items() if k >= 10], source_parent=grp["name"])


@bp.route("/groups/<path:gpath>")
def group_page(gpath):
    return pages.group_page(gpath)
