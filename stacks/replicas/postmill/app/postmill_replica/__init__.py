"""Postmill contract replica (WebArena "reddit") — a Flask test double, NOT Postmill.

Reproduces what sitectl and WebArena's evaluators read from the real image
(research/contract-postmill-gitlab-map.md §1): URL shapes, login form, PHPSESSID file sessions in
/var/www/html/var/sessions/sess_<id>, single-use form CSRF tokens, honeypot fields, DB-count rate
limits, vote endpoints and the DOM class names. Data lives in PostgreSQL (database `postmill`).

This module creates the app (gunicorn: `postmill_replica:app`), its app-wide hooks, template
globals and error pages, and registers the blueprints: site.py, auth.py, forums.py,
submissions.py, users.py. Shared code: settings.py, db.py, sessions.py, views.py.
"""
import os

from flask import Flask, g

from . import auth, forums, site, submissions, users
from .db import _close, q
from .sessions import _load_session, _save_session, csrf_token
from .views import error_page, fmt_date, fmt_score, host_of, markdown, slugify, submission_url

app = Flask(__name__, template_folder=os.path.join(os.path.dirname(__file__), "templates"))
app.url_map.strict_slashes = False
app.teardown_appcontext(_close)
app.before_request(_load_session)
app.after_request(_save_session)
app.jinja_env.globals.update(csrf_token=csrf_token, markdown=markdown, fmt_date=fmt_date, fmt_score=fmt_score,
                             submission_url=submission_url, host_of=host_of, slugify=slugify)


@app.context_processor
def _ctx():
    subs = []
    if g.get("user"):
        subs = q("""SELECT f.name FROM forum_subscriptions fs JOIN forums f ON f.id=fs.forum_id
                    WHERE fs.user_id=%s ORDER BY f.normalized_name""", (g.user["id"],))
    return {"me": g.get("user"), "fully": g.get("fully"), "my_subscriptions": [r["name"] for r in subs],
            "site_name": "Postmill"}


@app.errorhandler(404)
def _404(e):
    return error_page(404, "The page you requested does not exist.")


@app.errorhandler(403)
def _403(e):
    return error_page(403, "Access denied.")


for bp in (site.bp, auth.bp, forums.bp, submissions.bp, users.bp):
    app.register_blueprint(bp)
