"""Submission and comment routes: view (nested/linear), JSON, permalinks, comment form and posting,
submit/edit, and the submission/comment vote endpoints."""
import re

from flask import Blueprint, abort, g, jsonify, redirect, render_template, request

from .db import nextval, q
from .sessions import client_ip, csrf_consume, csrf_valid, ip_whitelisted, is_whitelisted, require_user
from .settings import RATE_MSG
from .views import can_moderate, canonical, forum_extras, get_forum, slugify, sub_select, submission_url

bp = Blueprint("submissions", __name__)


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


@bp.route("/f/<forum_name>/<int:sid>")
def submission_no_slug(forum_name, sid):
    """No slug: a redirect to the canonical URL /f/<forum>/<id>/<slug> (the slug is not validated
    when one is given)."""
    f, s = load_submission(forum_name, sid)
    qs = request.query_string.decode()
    return redirect(submission_url(s) + ("?" + qs if qs else ""), 302)


@bp.route("/f/<forum_name>/<int:sid>/<slug>")
@bp.route("/f/<forum_name>/<int:sid>/<slug>/<view>")
def submission(forum_name, sid, slug, view="nested"):
    if view not in ("nested", "linear"):
        abort(404)
    f, s = load_submission(forum_name, sid)
    rows = comment_rows(sid)
    tree = comment_tree(rows) if view == "nested" else [{"c": c, "level": 1, "replies": []} for c in rows]
    return render_template("submission.html", forum=f, s=s, tree=tree, permalink=None, **forum_extras(f))


@bp.route("/f/<forum_name>/<int:sid>.json")
def submission_json(forum_name, sid):
    f, s = load_submission(forum_name, sid)
    return jsonify({"id": s["id"], "title": s["title"], "url": s["url"], "body": s["body"],
                    "timestamp": s["timestamp"].isoformat(), "forum": {"id": f["id"], "name": f["name"]},
                    "user": {"id": s["user_id"], "username": s["username"]}, "netScore": s["net_score"],
                    "commentCount": s["comment_count"], "mediaType": s["media_type"], "visibility": s["visibility"]})


@bp.route("/f/<forum_name>/<int:sid>/comment/<int:cid>")
def comment_legacy(forum_name, sid, cid):
    f, s = load_submission(forum_name, sid)
    return redirect(f"{submission_url(s)}/comment/{cid}", 301)


@bp.route("/f/<forum_name>/<int:sid>/<slug>/comment", methods=["POST"])
@bp.route("/f/<forum_name>/<int:sid>/<slug>/comment/<int:cid>", methods=["GET", "POST"])
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


@bp.route("/comment_form/<forum_name>/<int:sid>")
@bp.route("/comment_form/<forum_name>/<int:sid>/<int:cid>")
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


@bp.route("/submit", methods=["GET", "POST"])
@bp.route("/submit/<forum_name>", methods=["GET", "POST"])
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
                 comment_count, net_score, media_type, user_flag, sticky) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,0,1,'url',%s,false)""",
              (sid, f["id"], g.user["id"], data["title"], data["url"] or None, data["body"] or None, now, ip,
               int(now.timestamp()) + 18, now, flag))
            q("""INSERT INTO submission_votes (id, user_id, submission_id, upvote, timestamp, ip)
                 VALUES (%s,%s,%s,true,%s,%s)""", (nextval("submission_votes_id_seq"), g.user["id"], sid, now, ip))
            return redirect(f"/f/{f['name']}/{sid}/{slugify(data['title'])}", 302)
    return render_template("submit.html", forums=forums, data=data, errors=errors, action=request.path,
                           button="Create submission", title="Create submission", editing=None)


@bp.route("/f/<forum_name>/<int:sid>/<slug>/edit", methods=["GET", "POST"])
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


@bp.route("/sv/<int:sid>.<any(html,json):fmt>", methods=["POST"])
def vote_submission(sid, fmt):
    return _vote("s", sid, fmt)


@bp.route("/cv/<int:cid>.<any(html,json):fmt>", methods=["POST"])
def vote_comment(cid, fmt):
    return _vote("c", cid, fmt)
