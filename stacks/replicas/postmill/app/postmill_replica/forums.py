"""Forum routes: forum lists, a forum's page, subscribe/unsubscribe, create/edit forum, moderators."""
import re
import uuid

from flask import Blueprint, abort, g, jsonify, redirect, render_template, request

from .db import nextval, q
from .sessions import csrf_consume, csrf_valid, is_whitelisted, require_user
from .views import can_moderate, canonical, forum_extras, get_forum, listing

bp = Blueprint("forums", __name__)


@bp.route("/forums")
@bp.route("/forums/<any(by_submissions,by_name,by_title,by_subscribers,by_creation_date):sort>")
@bp.route("/forums/<any(by_submissions,by_name,by_title,by_subscribers,by_creation_date):sort>/<int:page>")
def forum_list(sort="by_submissions", page=1):
    order = {"by_submissions": "submission_count DESC", "by_name": "f.normalized_name", "by_title": "lower(f.title)",
             "by_subscribers": "subscriber_count DESC", "by_creation_date": "f.created DESC"}[sort]
    rows = q(f"""SELECT f.*, (SELECT count(*) FROM submissions s WHERE s.forum_id=f.id) AS submission_count,
                 (SELECT count(*) FROM forum_subscriptions x WHERE x.forum_id=f.id) AS subscriber_count
                 FROM forums f ORDER BY {order}, f.normalized_name LIMIT 50 OFFSET %s""", ((page - 1) * 50,))
    return render_template("forum_list.html", forums=rows, sort=sort)


@bp.route("/forums/all")
def forum_list_all():
    groups = {}
    for r in q("SELECT name FROM forums ORDER BY normalized_name"):
        c = r["name"][0].upper()
        key = "0–9" if c.isdigit() else (c if c.isalpha() else "_")
        groups.setdefault(key, []).append(r["name"])
    return render_template("forum_list_all.html", groups=groups)


# --- forums ---------------------------------------------------------------------------------
@bp.route("/f/<forum_name>")
@bp.route("/f/<forum_name>/<any(active,hot,new,top,controversial,most_commented):sort>")
def forum(forum_name, sort="hot"):
    f = get_forum(forum_name)
    canonical(f, forum_name)
    rows = listing("s.forum_id=%s", (f["id"],), sort)
    return render_template("forum.html", forum=f, subs=rows, sort=sort, **forum_extras(f))


@bp.route("/f/<forum_name>/<any(subscribe,unsubscribe):action>", methods=["POST"])
@bp.route("/f/<forum_name>/<any(subscribe,unsubscribe):action>.<any(html,json):fmt>", methods=["POST"])
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


@bp.route("/create_forum", methods=["GET", "POST"])
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


@bp.route("/f/<forum_name>/edit", methods=["GET", "POST"])
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


@bp.route("/f/<forum_name>/moderators")
def forum_moderators(forum_name):
    f = get_forum(forum_name)
    canonical(f, forum_name)
    return render_template("forum_moderators.html", forum=f, **forum_extras(f))
