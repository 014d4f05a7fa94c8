"""Site-wide routes: health check, front page and /all listings, /<id> shortcut, search."""
from flask import Blueprint, Response, abort, g, redirect, render_template, request

from .db import q
from .settings import SORTS
from .views import listing, sub_select, submission_url

bp = Blueprint("site", __name__)


@bp.route("/site/health_check")
def health_check():
    return Response("It works!", mimetype="text/plain")


@bp.route("/")
@bp.route("/<any(active,hot,new,top,controversial,most_commented):sort>")
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


@bp.route("/all")
@bp.route("/all/<sort>")
def all_listing(sort="hot"):
    if sort not in SORTS:
        abort(404)
    return render_template("listing.html", subs=listing("TRUE", (), sort), heading="All forums", sort=sort, base="/all")


@bp.route("/<int:sid>")
def submission_shortcut(sid):
    s = q(sub_select() + " WHERE s.id=%s", (sid,), one=True)
    if not s:
        abort(404)
    return redirect(submission_url(s), 302)


# --- search ---------------------------------------------------------------------------------
@bp.route("/search")
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
