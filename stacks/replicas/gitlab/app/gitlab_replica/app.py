"""Web UI of the GitLab contract replica (Flask, served by gunicorn as the "puma" service).

This module creates the app and registers the blueprints; the routes live in auth.py,
dashboard.py, profile.py, people.py, project_pages.py and api.py, the helpers they share in
pages.py and records.py. Contract: contract-postmill-gitlab-map.md §2.2 (sign-in), §2.4
(DOM hooks, URL shapes), webarena-official.md §1.4 and §3.2 (/-/profile probe, /explore).
A replica, not GitLab.
"""
import re, urllib.parse

from flask import Flask
from jinja2 import DictLoader
from werkzeug.middleware.proxy_fix import ProxyFix

from . import api, auth, core, dashboard, people, profile, project_pages
from .templates import T

app = Flask(__name__)


class KeepEncodedSlashes:
    """GitLab accepts URL-encoded project paths in the API (`/api/v4/projects/byteblaze%2Fdotfiles`);
    WSGI servers decode %2F before routing, so rebuild PATH_INFO from the raw URI for /api/v4."""

    def __init__(self, wsgi):
        self.wsgi = wsgi

    def __call__(self, environ, start_response):
        raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
        if raw and raw.startswith("/api/v4/") and "%2f" in raw.lower():
            path = raw.split("?", 1)[0]
            path = re.sub(r"%2[fF]", "%252F", path)
            environ["PATH_INFO"] = urllib.parse.unquote_to_bytes(path).decode("latin-1")
        return self.wsgi(environ, start_response)


app.wsgi_app = ProxyFix(KeepEncodedSlashes(app.wsgi_app), x_for=1, x_proto=1)
app.jinja_loader = DictLoader(T)
app.jinja_env.autoescape = True
app.url_map.strict_slashes = False

# App-wide hooks (every request, API included: they skip /api/v4 themselves).
app.before_request(auth.before)
app.after_request(auth.after)
app.teardown_appcontext(core.close_db)

# Registration order = rule insertion order (it breaks ties between equally specific rules):
# the web pages, then the /<path:full> catch-all of the project pages, then the API.
for bp in (auth.bp, dashboard.bp, profile.bp, people.bp, project_pages.bp, api.bp):
    app.register_blueprint(bp)
