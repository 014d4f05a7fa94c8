"""Helpers shared by the blueprints: template filters (slug, markdown, dates, scores), submission
listings, forum lookup with canonical redirects, moderator checks, error pages."""
import datetime as dt
import html
import re
from urllib.parse import urlencode

from flask import abort, g, redirect, render_template, request
from markupsafe import Markup

from .db import q


# --- view helpers ---------------------------------------------------------------------------
def slugify(title, max_len=60):
    words = [w for w in re.split(r"\W+", (title or "").lower()) if w]
    out = ""
    for w in words:
        cand = w if not out else out + "-" + w
        if len(cand) > max_len:
            break
        out = cand
    return out or "-"


_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)|(https?://[^\s<]+)")


def markdown(text):
    """Tiny markdown subset: paragraphs, line breaks, [text](url) and bare URLs."""
    if not text:
        return Markup("")
    out = []
    for para in re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip()):
        parts, pos = [], 0
        for m in _LINK.finditer(para):
            parts.append(html.escape(para[pos:m.start()], quote=False))
            if m.group(2):
                parts.append(f'<a href="{html.escape(m.group(2))}" rel="nofollow">{html.escape(m.group(1))}</a>')
            else:
                parts.append(f'<a href="{html.escape(m.group(3))}" rel="nofollow">{html.escape(m.group(3))}</a>')
            pos = m.end()
        parts.append(html.escape(para[pos:], quote=False))
        out.append("<p>" + "".join(parts).replace("\n", "<br>\n") + "</p>")
    return Markup("\n".join(out))


def fmt_date(ts):
    ts = ts.astimezone(dt.timezone.utc)
    return f"{ts.strftime('%B')} {ts.day}, {ts.year} at {ts.strftime('%I:%M %p').lstrip('0')}"


def fmt_score(n):
    return f"{n:,}".replace("-", "\u2212")


def submission_url(s):
    return f"/f/{s['forum_name']}/{s['id']}/{slugify(s['title'])}"


def host_of(url):
    m = re.match(r"https?://([^/:]+)", url or "")
    return m.group(1) if m else ""


SUB_SELECT = """SELECT s.*, f.name AS forum_name, u.username, i.file_name AS image_file,
    {vote} AS my_vote FROM submissions s JOIN forums f ON f.id=s.forum_id JOIN users u ON u.id=s.user_id
    LEFT JOIN images i ON i.id=s.image_id"""


def sub_select():
    if g.user:
        return SUB_SELECT.format(vote=f"""(SELECT CASE WHEN v.upvote THEN 1 ELSE -1 END FROM submission_votes v
                                 WHERE v.submission_id=s.id AND v.user_id={int(g.user['id'])})""")
    return SUB_SELECT.format(vote="NULL::int")


ORDER = {"hot": "s.sticky DESC, s.ranking DESC, s.id DESC", "new": "s.id DESC", "active": "s.last_active DESC, s.id DESC",
         "top": "s.net_score DESC, s.id DESC", "controversial": "s.net_score ASC, s.comment_count DESC, s.id DESC",
         "most_commented": "s.comment_count DESC, s.id DESC"}


# Postmill's pager: a page is the rows at or after a cursor, given as query parameters
# next[<field>]=..&next[id]=.. (the first row of the next page); the "More" link carries them.
# Per sort: (cursor field, column, type); the id breaks ties. An unusable cursor is ignored.
CURSOR = {"hot": ("ranking", "s.ranking", int), "new": (None, None, None),
          "active": ("lastActive", "s.last_active", str), "top": ("netScore", "s.net_score", int),
          "controversial": ("netScore", "s.net_score", int), "most_commented": ("commentCount", "s.comment_count", int)}
# Time filter ?t= of the score sorts (Postmill's TimeFilter); other values mean "all".
TIME_FILTER = {"hour": "1 hour", "day": "1 day", "week": "7 days", "month": "1 month", "year": "1 year"}


def _cursor_value(raw, typ):
    if raw is None:
        return None
    if typ is int:
        return int(raw) if re.fullmatch(r"-?\d{1,18}", raw) else None
    try:
        return dt.datetime.fromisoformat(raw.replace(" ", "+")).isoformat()
    except ValueError:
        return None


class Page(list):
    """A listing page: its rows, and the query string of the next page ('' if none)."""
    next_query = ""


def listing(where, args, sort, page=1, per=25):
    field, col, typ = CURSOR[sort]
    cond, cargs = [], []
    t = request.args.get("t")
    if sort in ("top", "controversial", "most_commented") and t in TIME_FILTER:
        cond.append("s.timestamp >= now() - %s::interval")
        cargs.append(TIME_FILTER[t])
    nid = _cursor_value(request.args.get("next[id]"), int)
    nval = _cursor_value(request.args.get(f"next[{field}]"), typ) if field else None
    if nid is not None and (field is None or nval is not None):
        if field is None:
            cond.append("s.id <= %s")
            cargs.append(nid)
        elif sort == "controversial":      # ascending score
            cond.append(f"({col} > %s OR ({col} = %s AND s.id <= %s))")
            cargs += [nval, nval, nid]
        else:
            cond.append(f"({col} < %s OR ({col} = %s AND s.id <= %s))")
            cargs += [nval, nval, nid]
    extra = "".join(f" AND {c}" for c in cond)
    rows = Page(q(f"{sub_select()} WHERE s.visibility='visible' AND {where}{extra} ORDER BY {ORDER[sort]} "
                  "LIMIT %s OFFSET %s", (*args, *cargs, per + 1, (page - 1) * per)))
    if len(rows) > per:
        nxt = rows.pop()
        params = [("t", t)] if t and sort in ("top", "controversial", "most_commented") else []
        if field:
            v = nxt[{"ranking": "ranking", "lastActive": "last_active", "netScore": "net_score",
                     "commentCount": "comment_count"}[field]]
            params.append((f"next[{field}]", v.isoformat() if hasattr(v, "isoformat") else v))
        params.append(("next[id]", nxt["id"]))
        rows.next_query = urlencode(params)
    return rows


def get_forum(name):
    f = q("SELECT * FROM forums WHERE normalized_name=%s", (name.lower(),), one=True)
    if not f:
        abort(404)
    return f


def canonical(forum, name):
    """Case-insensitive forum name with a 302 to the canonical spelling (contract §1.4)."""
    if forum["name"] != name:
        path = request.path.replace(f"/f/{name}", f"/f/{forum['name']}", 1)
        abort(redirect(path + (("?" + request.query_string.decode()) if request.query_string else ""), 302))


def error_page(code, message):
    return render_template("message.html", title=str(code), message=message), code


def forum_extras(f):
    subscribed = bool(g.user and q("SELECT 1 AS x FROM forum_subscriptions WHERE user_id=%s AND forum_id=%s",
                                   (g.user["id"], f["id"]), one=True))
    mods = q("""SELECT u.username FROM moderators m JOIN users u ON u.id=m.user_id WHERE m.forum_id=%s
                ORDER BY m.timestamp""", (f["id"],))
    count = q("SELECT count(*) AS n FROM forum_subscriptions WHERE forum_id=%s", (f["id"],), one=True)["n"]
    return {"subscribed": subscribed, "moderators": [m["username"] for m in mods], "subscriber_count": count,
            "can_moderate": can_moderate(f)}


def can_moderate(f):
    if not g.user:
        return False
    if g.user["admin"]:
        return True
    return bool(q("SELECT 1 AS x FROM moderators WHERE forum_id=%s AND user_id=%s", (f["id"], g.user["id"]), one=True))


USERNAME_RE = re.compile(r"^([\w\-\[\]]{3,25}|!deleted\d+|!test)$")
