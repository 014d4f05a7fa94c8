"""Realistic Postmill ("reddit") mutations and read-backs through the site's own HTTP endpoints.

Every function drives the HTML forms the way a browser does (GET the form, take its CSRF token,
POST it), so it works against the real WebArena image and the sitectl replica alike. Form and
route names: research/contract-postmill-gitlab-map.md §1.2 (login), §1.4 (URLs), §1.5 (write
endpoints: ``submission[...]``, ``reply_to_submission_<id>[...]``, ``/sv/<id>.json`` with
``token``/``choice``), §1.6 (DOM hooks). Postmill's form CSRF tokens are single-use, so each
action re-GETs its form before posting.

Rate limits (contract §1.8): a non-trusted user (MarvelsGrantMan136 is not trusted) may create
3 submissions per hour; ``create_post`` raises ``ActionError`` with the site's message when hit.
Use a trusted account (replica: ``sitectl_trusted``/``sitectl1234``) for bulk work.
"""
from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import requests

UA = "Mozilla/5.0 (X11; Linux x86_64) sitectl-actions"
RATE_LIMIT_TEXT = "You cannot post more"


class ActionError(RuntimeError):
    """The site refused an action (form errors, missing form, unexpected status)."""


class _Forms(HTMLParser):
    """Collects input/textarea/select values by name, option lists, and element classes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.values: dict[str, str] = {}
        self.options: dict[str, list[tuple[str, str, bool]]] = {}
        self.errors: list[str] = []
        self._textarea = self._select = self._option = None
        self._buf: list[str] = []
        self._in_err = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("name"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.values.setdefault(a["name"], a.get("value") or "")
        elif tag == "textarea" and a.get("name"):
            self._textarea, self._buf = a["name"], []
        elif tag == "select" and a.get("name"):
            self._select = a["name"]
            self.options[self._select] = []
        elif tag == "option" and self._select:
            self._option, self._buf = (a.get("value", ""), "selected" in a), []
        elif tag == "ul" and "form-error-list" in (a.get("class") or ""):
            self._in_err += 1
        elif tag == "li" and self._in_err:
            self._buf = []

    def handle_endtag(self, tag):
        if tag == "textarea" and self._textarea:
            self.values[self._textarea] = "".join(self._buf)
            self._textarea = None
        elif tag == "option" and self._option is not None:
            value, sel = self._option
            self.options[self._select].append((value, "".join(self._buf).strip(), sel))
            self._option = None
        elif tag == "select":
            self._select = None
        elif tag == "li" and self._in_err:
            self.errors.append("".join(self._buf).strip())
        elif tag == "ul" and self._in_err:
            self._in_err -= 1

    def handle_data(self, data):
        self._buf.append(data)


def _forms(html: str) -> _Forms:
    p = _Forms()
    p.feed(html)
    return p


def _base(base_url: str) -> str:
    return base_url.rstrip("/")


def login(base_url: str, username: str, password: str) -> requests.Session:
    """Log in through ``/login`` -> ``/login_check``; return the logged-in ``requests.Session``.

    Raises ActionError when the site sends the browser back to ``/login``.
    """
    s = requests.Session()
    s.headers["User-Agent"] = UA
    page = s.get(_base(base_url) + "/login", timeout=30)   # follows the _cookie_check redirect
    f = _forms(page.text)
    token = f.values.get("_csrf_token")
    if not token:
        raise ActionError(f"no _csrf_token on {page.url} (HTTP {page.status_code})")
    r = s.post(_base(base_url) + "/login_check", data={"_username": username, "_password": password,
               "_csrf_token": token, "_remember_me": "on"}, allow_redirects=False, timeout=30)
    if r.status_code not in (302, 303) or urlsplit(urljoin(r.url, r.headers.get("Location", ""))).path == "/login":
        back = s.get(_base(base_url) + "/login", timeout=30)
        raise ActionError(f"login of {username} refused: {_forms(back.text).errors or r.status_code}")
    return s


def _session(base_url, username, password, session):
    return session if session is not None else login(base_url, username, password)


def _post_form(s: requests.Session, form_url: str, action_url: str, fields: dict[str, str],
               prefix: str) -> requests.Response:
    """GET ``form_url``, copy every field starting with ``prefix`` (tokens, defaults), override
    with ``fields`` and POST to ``action_url`` without following the redirect."""
    page = s.get(form_url, timeout=30)
    if page.status_code != 200:
        raise ActionError(f"GET {form_url}: HTTP {page.status_code}")
    f = _forms(page.text)
    data = {k: v for k, v in f.values.items() if k.startswith(prefix)}
    for name, opts in f.options.items():
        if name.startswith(prefix):
            sel = [o for o in opts if o[2]]
            data.setdefault(name, (sel or opts or [("", "", False)])[0][0])
    if f"{prefix}[_token]" not in data:
        raise ActionError(f"{form_url}: no {prefix}[_token] field")
    data.pop(f"{prefix}[email]", None)        # honeypot: a browser user leaves it empty
    data[f"{prefix}[email]"] = ""
    data.update(fields)
    return s.post(action_url, data=data, allow_redirects=False, timeout=30)


def _raise_form_errors(s, r, what):
    if r.status_code in (301, 302, 303):
        return urljoin(r.url, r.headers["Location"])
    errors = _forms(r.text).errors
    raise ActionError(f"{what}: HTTP {r.status_code} {errors}")


def create_post(base_url: str, username: str, password: str, forum: str, title: str, body: str = "",
                url: str | None = None, session: requests.Session | None = None) -> str:
    """Create a submission in ``forum`` via ``/submit/<forum>``.

    Returns the canonical submission URL ``{base}/f/<forum>/<id>/<slug>``. Raises ActionError
    (message includes "You cannot post more" when rate-limited).
    """
    s = _session(base_url, username, password, session)
    form_url = f"{_base(base_url)}/submit/{forum}"
    r = _post_form(s, form_url, form_url, {"submission[title]": title, "submission[body]": body,
                                           "submission[url]": url or ""}, "submission")
    return _raise_form_errors(s, r, f"create_post in {forum}")


def edit_post(base_url: str, username: str, password: str, post_url: str, title: str | None = None,
              body: str | None = None, url: str | None = None, session: requests.Session | None = None) -> str:
    """Edit a submission via ``/f/<forum>/<id>/<slug>/edit`` (form ``submission``); fields left
    ``None`` keep their current value. Returns the submission URL the site redirects to."""
    s = _session(base_url, username, password, session)
    m = re.match(r"(/f/[^/]+/\d+)(?:/([^/]+))?", urlsplit(post_url).path)
    if not m:
        raise ValueError(f"not a submission URL: {post_url}")
    form = f"{_base(base_url)}{m.group(1)}/{m.group(2) or '-'}/edit"
    fields = {k: v for k, v in (("submission[title]", title), ("submission[body]", body),
                                ("submission[url]", url)) if v is not None}
    r = _post_form(s, form, form, fields, "submission")
    return _raise_form_errors(s, r, f"edit_post {post_url}")


def submission_id(post_url: str) -> int:
    """The numeric id in ``/f/<forum>/<id>/...``."""
    m = re.search(r"/f/[^/]+/(\d+)", urlsplit(post_url).path)
    if not m:
        raise ValueError(f"not a submission URL: {post_url}")
    return int(m.group(1))


def comment(base_url: str, username: str, password: str, post_url: str, body: str,
            parent_comment_id: int | None = None, session: requests.Session | None = None) -> str:
    """Post a top-level comment (or a reply to ``parent_comment_id``) on ``post_url``.

    Returns the new comment's permalink ``.../comment/<id>``.
    """
    s = _session(base_url, username, password, session)
    m = re.match(r"(/f/[^/]+/\d+)(?:/([^/]+))?", urlsplit(post_url).path)
    if not m:
        raise ValueError(f"not a submission URL: {post_url}")
    # The slug is not validated by Postmill (contract §1.4): keep the caller's, or use "-".
    canonical = f"{m.group(1)}/{m.group(2) or '-'}"
    sid = submission_id(canonical)
    prefix = f"reply_to_comment_{parent_comment_id}" if parent_comment_id else f"reply_to_submission_{sid}"
    form_url = (f"{_base(base_url)}/comment_form/{canonical.split('/')[2]}/{sid}"
                + (f"/{parent_comment_id}" if parent_comment_id else ""))
    action = f"{_base(base_url)}{canonical}/comment" + (f"/{parent_comment_id}" if parent_comment_id else "")
    r = _post_form(s, form_url, action, {f"{prefix}[comment]": body}, prefix)
    return _raise_form_errors(s, r, f"comment on {post_url}")


def _vote_token(s, base_url, page_path):
    page = s.get(_base(base_url) + page_path, timeout=30)
    m = re.search(r'<form[^>]*class="vote[^"]*"[^>]*>.*?name="token"[^>]*value="([^"]+)"', page.text, re.S)
    if not m:
        raise ActionError(f"no vote form on {page_path} (logged in?)")
    return m.group(1)


def vote(base_url: str, username: str, password: str, post_url: str, choice: int = 1,
         session: requests.Session | None = None) -> int:
    """Vote on the submission at ``post_url`` (``1`` up, ``-1`` down, ``0`` retract) via
    ``POST /sv/<id>.json``. Returns the site's ``netScore``."""
    s = _session(base_url, username, password, session)
    path = urlsplit(post_url).path
    token = _vote_token(s, base_url, path)
    r = s.post(f"{_base(base_url)}/sv/{submission_id(path)}.json", data={"token": token, "choice": str(choice)},
               headers={"Referer": _base(base_url) + path, "X-Requested-With": "XMLHttpRequest"}, timeout=30)
    if r.status_code != 200:
        raise ActionError(f"vote on {post_url}: HTTP {r.status_code}")
    return int(r.json()["netScore"])


def vote_comment(base_url: str, username: str, password: str, comment_url: str, choice: int = 1,
                 session: requests.Session | None = None) -> int:
    """Vote on a comment (``POST /cv/<id>.json``); ``comment_url`` is its permalink."""
    s = _session(base_url, username, password, session)
    path = urlsplit(comment_url).path
    cid = int(path.rstrip("/").rsplit("/", 1)[1])
    token = _vote_token(s, base_url, path)
    r = s.post(f"{_base(base_url)}/cv/{cid}.json", data={"token": token, "choice": str(choice)}, timeout=30)
    if r.status_code != 200:
        raise ActionError(f"comment vote {comment_url}: HTTP {r.status_code}")
    return int(r.json()["netScore"])


def create_forum(base_url: str, username: str, password: str, name: str, title: str, description: str,
                 sidebar: str = "", session: requests.Session | None = None) -> str:
    """Create forum ``name`` via ``/create_forum`` (form ``forum``). Returns ``{base}/f/<name>``."""
    s = _session(base_url, username, password, session)
    url = f"{_base(base_url)}/create_forum"
    r = _post_form(s, url, url, {"forum[name]": name, "forum[title]": title,
                                 "forum[description]": description, "forum[sidebar]": sidebar}, "forum")
    return _raise_form_errors(s, r, f"create_forum {name}")


def subscribe(base_url: str, username: str, password: str, forum: str, subscribe: bool = True,
              session: requests.Session | None = None) -> None:
    """Press the forum page's Subscribe (or Unsubscribe) button."""
    s = _session(base_url, username, password, session)
    page = s.get(f"{_base(base_url)}/f/{forum}", timeout=30)
    action = "subscribe" if subscribe else "unsubscribe"
    m = re.search(r'<form[^>]*action="([^"]*/' + action + r'[^"]*)"[^>]*>.*?name="token"[^>]*value="([^"]+)"',
                  page.text, re.S)
    if not m:
        raise ActionError(f"no {action} form on /f/{forum}")
    r = s.post(urljoin(page.url, unescape(m.group(1))), data={"token": m.group(2)}, allow_redirects=False,
               headers={"Referer": page.url}, timeout=30)
    if r.status_code not in (200, 302, 303):
        raise ActionError(f"{action} {forum}: HTTP {r.status_code}")


def edit_biography(base_url: str, username: str, password: str, biography: str,
                   session: requests.Session | None = None) -> None:
    """Set the user's biography via ``/user/<name>/edit_biography``."""
    s = _session(base_url, username, password, session)
    url = f"{_base(base_url)}/user/{username}/edit_biography"
    r = _post_form(s, url, url, {"user_biography[biography]": biography}, "user_biography")
    _raise_form_errors(s, r, "edit_biography")


# --- read-backs ---------------------------------------------------------------------------------
def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def _div(html: str, cls: str) -> str | None:
    """Inner HTML of the first element whose class list contains ``cls`` (balanced on its tag)."""
    m = re.search(r'<(\w+)[^>]*class="(?:[^"]*\s)?' + re.escape(cls) + r'(?:\s[^"]*)?"[^>]*>', html)
    if not m:
        return None
    tag, pos, depth = m.group(1), m.end(), 1
    for t in re.finditer(rf"<(/?){tag}\b[^>]*>", html[pos:]):
        depth += -1 if t.group(1) else 1
        if depth == 0:
            return html[pos:pos + t.start()]
    return html[pos:]


def get_post(base_url: str, post_url: str, session: requests.Session | None = None) -> dict:
    """Read a submission page. Returns ``{"status", "url", "title", "body", "inner_text",
    "vote_class", "net_score"}`` (texts whitespace-normalised; ``vote_class`` is the
    ``div.submission__vote form`` class attribute WebArena's evaluators read)."""
    s = session or requests.Session()
    r = s.get(post_url if "://" in post_url else _base(base_url) + post_url, timeout=30)
    out = {"status": r.status_code, "url": r.url}
    if r.status_code != 200:
        return out
    vote_div = _div(r.text, "submission__vote") or ""
    m = re.search(r'<form[^>]*class="([^"]*)"', vote_div)
    score = _div(vote_div, "vote__net-score")
    out.update(title=_text(_div(r.text, "submission__title") or ""), body=_text(_div(r.text, "submission__body") or ""),
               inner_text=_text(_div(r.text, "submission__inner") or ""), vote_class=m.group(1) if m else None,
               net_score=int(_text(score).replace(",", "").replace("\u2212", "-")) if score else None)
    return out


def post_exists(base_url: str, post_url: str) -> bool:
    """True when the submission page answers 200 to an anonymous client."""
    return get_post(base_url, post_url)["status"] == 200


def get_comment(base_url: str, comment_url: str) -> dict:
    """Read a comment permalink: ``{"status", "body", "author"}`` of the first comment shown."""
    r = requests.get(comment_url if "://" in comment_url else _base(base_url) + comment_url, timeout=30)
    if r.status_code != 200:
        return {"status": r.status_code}
    author = re.search(r'class="fg-inherit"[^>]*>([^<]+)<', r.text)
    return {"status": 200, "body": _text(_div(r.text, "comment__body") or ""),
            "author": author.group(1).strip() if author else None}


def get_forum_settings(base_url: str, username: str, password: str, forum: str,
                       session: requests.Session | None = None) -> dict:
    """As a moderator, read ``/f/<forum>/edit``: ``{"status", "description", "sidebar", "title"}``
    (the ``#forum_description`` / ``#forum_sidebar`` values WebArena checks)."""
    s = _session(base_url, username, password, session)
    r = s.get(f"{_base(base_url)}/f/{forum}/edit", timeout=30)
    if r.status_code != 200:
        return {"status": r.status_code}
    v = _forms(r.text).values
    return {"status": 200, "description": v.get("forum[description]"), "sidebar": v.get("forum[sidebar]"),
            "title": v.get("forum[title]")}


def get_biography(base_url: str, username: str) -> str | None:
    """Text of ``.user-bio__biography`` on ``/user/<name>`` (None when unset)."""
    r = requests.get(f"{_base(base_url)}/user/{username}", timeout=30)
    d = _div(r.text, "user-bio__biography")
    return _text(d) if d is not None else None


def subscribed_forums(base_url: str, username: str, password: str,
                      session: requests.Session | None = None) -> str:
    """outerText-like text of the front page's first ``#sidebar > section`` (tasks 595-599)."""
    s = _session(base_url, username, password, session)
    r = s.get(_base(base_url) + "/", timeout=30)
    side = _div(r.text, "sidebar__section") or ""
    return _text(side)


def db_query(sql: str, container: str = "forum") -> list[list[str]]:
    """Run ``sql`` with psql inside the container (``psql -U postmill -d postmill``); rows as lists.

    Uses python-on-whales (``pip install python-on-whales``)."""
    from python_on_whales import docker
    out = docker.execute(container, ["psql", "-U", "postmill", "-d", "postmill", "-tA", "-F", "\t", "-c", sql])
    return [line.split("\t") for line in out.splitlines() if line]
