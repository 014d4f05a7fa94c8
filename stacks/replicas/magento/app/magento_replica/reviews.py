"""Product review posting from the storefront (new reviews are Pending)."""
from flask import g, request

import mage
from mage import ex, q1
from .routing import route
from .storefront import customer
from .web import form_key_ok, redirect


# -- reviews (Review/Controller/Product/Post: new reviews are Pending)
@route(r"/review/product/post/id/(?P<pid>\d+)/(?:.*)", ("POST",))
def review_post(pid):
    p = mage.product(g.conn, int(pid))
    if not p or not form_key_ok():
        return redirect("/")
    nick, title, detail = (request.form.get(k, "").strip() for k in ("nickname", "title", "detail"))
    votes = {k[8:-1]: v for k, v in request.form.items() if k.startswith("ratings[")}
    if not (nick and title and detail) or not votes:
        g.sess.flash("error", "We can't post your review right now.")
        return redirect("/%s.html" % p["url_key"])
    cid = customer()["entity_id"] if customer() else None
    save_review(p["entity_id"], nick, title, detail, votes, cid, 2)
    g.sess.flash("success", "You submitted your review for moderation.")
    return redirect("/%s.html" % p["url_key"])


def save_review(pid, nick, title, detail, votes, cid, status):
    rid = ex(g.conn, "INSERT INTO review (created_at, entity_id, entity_pk_value, status_id) VALUES (UTC_TIMESTAMP(),1,%s,%s)", (pid, status))
    ex(g.conn, "INSERT INTO review_detail (review_id, store_id, title, detail, nickname, customer_id) VALUES (%s,1,%s,%s,%s,%s)", (rid, title, detail, nick, cid))
    ex(g.conn, "INSERT INTO review_store VALUES (%s,0),(%s,1)", (rid, rid))
    for rating_id, option_id in votes.items():
        opt = q1(g.conn, "SELECT * FROM rating_option WHERE option_id=%s AND rating_id=%s", (option_id, rating_id))
        if opt:
            ex(g.conn, "INSERT INTO rating_option_vote (option_id, remote_ip, remote_ip_long, customer_id, entity_pk_value, rating_id, review_id, percent, value) "
                       "VALUES (%s,%s,IFNULL(INET_ATON(%s), 0),%s,%s,%s,%s,%s,%s)", (opt["option_id"], request.remote_addr, request.remote_addr, cid, pid, opt["rating_id"], rid, opt["value"] * 20, opt["value"]))
    return rid
