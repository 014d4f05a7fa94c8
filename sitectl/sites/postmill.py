"""Driver of WebArena's Postmill forum (task key ``reddit``, env var ``REDDIT``).

Logs in through Postmill's own HTML form exactly as WebArena's ``auto_login`` does and runs the
same logged-in probe. Works against the real image ``postmill-populated-exposed-withimg`` and the
sitectl contract replica ``sitectl/mini-postmill`` (same contract).

Sources:
- webarena-official.md §3.2: auto_login visits ``{REDDIT}/login``, fills ``get_by_label("Username")``
  / ``get_by_label("Password")``, clicks button "Log in"; ``is_expired`` probe =
  ``{REDDIT}/user/<username>/account`` must contain ``Delete``.
- contract-postmill-gitlab-map.md §1.2: ``GET /login`` first answers a 302 to
  ``/login?_cookie_check=<ts>`` that sets cookie ``_cookie_check`` (a ``requests.Session``
  passes it transparently); form ``action="/login_check"`` with ``_username``, ``_password``,
  ``_csrf_token`` (token id ``authenticate``), ``_remember_me`` (checked by default); failure ->
  302 back to ``/login`` with "Invalid credentials." in ``ul.form-error-list``; session cookie
  ``PHPSESSID`` (+ ``REMEMBERME``).
- contract-postmill-gitlab-map.md §1.3: ``/user/<name>/account`` requires a *fully*
  authenticated owner; otherwise 302 to ``/login``; usernames are case-insensitive with a 302
  to the canonical spelling.
"""
from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import urljoin, urlsplit

import requests

from sitectl.errors import LoginError, LoginNotApplied, NoLoginForm
from sitectl.sites.base import Account, ProbeResult, SiteDriver, register

_CSRF_RE = re.compile(r'name="_csrf_token"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="_csrf_token"')
_ERR_RE = re.compile(r'<ul class="form-error-list">\s*<li>(.*?)</li>', re.S)
#: Field names of the login form (contract §1.2) that ``login_page_renders`` insists on.
LOGIN_FIELDS = ("_username", "_password", "_csrf_token")


def login_csrf(html: str) -> str | None:
    """Return the ``_csrf_token`` value of a Postmill login page, or None."""
    m = _CSRF_RE.search(html)
    return (m.group(1) or m.group(2)) if m else None


@register
class PostmillDriver(SiteDriver):
    """Postmill (Symfony 5.4) forum: form login with a per-session CSRF token.

    Kind ``postmill``. ``base_url`` is WebArena's ``REDDIT`` value, e.g. ``http://host:9999``.
    """

    kind: ClassVar[str] = "postmill"
    session_cookies = ("PHPSESSID", "REMEMBERME")  # research: contract-*.md (session cookie names)
    form_cookies = ("_cookie_check",)  # GET /login sets it and redirects; the form needs it back
    login_path: ClassVar[str] = "/login"
    #: WebArena's probe path (``{REDDIT}/user/<username>/account``) and keyword.
    probe_keyword: ClassVar[str] = "Delete"

    def _login_page(self, session: requests.Session) -> requests.Response:
        # Follow the _cookie_check redirect (at most a couple of hops), as a browser does.
        return self.get(session, self.login_path, allow_redirects=True)

    def login(self, session: requests.Session, account: Account) -> None:
        """Log ``account`` in via ``GET /login`` + ``POST /login_check``.

        Raises:
            LoginError: the form came back with an error (e.g. "Invalid credentials."); its
                :class:`~sitectl.errors.NoLoginForm`: the login page answered 4xx or had no CSRF
                token; :class:`~sitectl.errors.LoginNotApplied`: no ``PHPSESSID`` session resulted.
            SiteUnhealthy: 5xx / timeout / connection error (from ``self.get``/``self.post``).
        """
        page = self._login_page(session)
        self.kept_session_cookie(session, page)
        if page.status_code != 200:
            raise NoLoginForm(self.kind, f"GET {self.login_path} answered HTTP {page.status_code}")
        token = login_csrf(page.text)
        if not token:
            raise NoLoginForm(self.kind, "login page has no _csrf_token field")
        r = self.post(session, "/login_check", data={
            "_csrf_token": token, "_username": account.username, "_password": account.password,
            "_remember_me": "on"}, allow_redirects=False)
        loc = r.headers.get("Location", "")
        if r.status_code not in (301, 302, 303) or urlsplit(urljoin(r.url, loc)).path == "/login":
            detail = f"HTTP {r.status_code}"
            if loc:
                back = self.get(session, urljoin(r.url, loc), allow_redirects=True)
                m = _ERR_RE.search(back.text)
                detail = m.group(1).strip() if m else f"redirected to {loc}"
            raise LoginError(self.kind, f"{account.username}: {detail}")
        if "PHPSESSID" not in session.cookies:
            raise LoginNotApplied(self.kind, f"{account.username}: no PHPSESSID cookie after login")

    def probe_path(self, account: Account) -> str:
        return f"/user/{account.username}/account"

    def probe_passes(self, r: requests.Response, account: Account) -> bool:
        return r.status_code == 200 and self.probe_keyword in r.text

    def probe_logged_in(self, session: requests.Session, account: Account) -> ProbeResult:
        """WebArena's rule: GET ``/user/<username>/account`` (redirects followed) and look for
        ``Delete`` in the page (webarena-official.md §3.2)."""
        path = f"/user/{account.username}/account"
        url = self.url(path)
        r = self.get(session, path, allow_redirects=True)
        ok = r.status_code == 200 and self.probe_keyword in r.text
        if ok:
            detail = f"page contains {self.probe_keyword!r}"
        elif urlsplit(r.url).path == "/login":
            detail = "redirected to /login (not fully authenticated)"
        else:
            detail = f"HTTP {r.status_code}, keyword {self.probe_keyword!r} absent"
        return ProbeResult(ok=ok, url=url, final_url=r.url, status=r.status_code, detail=detail)

    def login_page_renders(self, session: requests.Session) -> ProbeResult:
        """GET ``/login`` (through the cookie-check redirect) and check the form's fields, the
        ``login-username``/``login-password`` ids WebArena's labels point at, and the button."""
        url = self.url(self.login_path)
        r = self._login_page(session)
        text = r.text
        missing = [f for f in LOGIN_FIELDS if f'name="{f}"' not in text]
        missing += [i for i in ("login-username", "login-password") if f'for="{i}"' not in text]
        if "Log in</button>" not in text:
            missing.append('button "Log in"')
        ok = r.status_code == 200 and not missing and 'action="/login_check"' in text
        detail = "login form present" if ok else (
            f"HTTP {r.status_code}" + (f"; missing {', '.join(missing)}" if missing else ""))
        return ProbeResult(ok=ok, url=url, final_url=r.url, status=r.status_code, detail=detail)
