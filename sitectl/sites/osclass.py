"""Driver of VisualWebArena's Classifieds site (OSClass; task key ``classifieds``, env var
``CLASSIFIEDS``).

Logs in through OSClass's own HTML form as VisualWebArena's ``auto_login`` does and runs the
same logged-in probe. Works against the real image ``jykoh/classifieds`` and the sitectl
contract replica ``sitectl/mini-classifieds`` (same contract: docs/contracts/classifieds.md).

Sources (research/family-formats.md):
- §1.5: VWA's login visits ``{CLASSIFIEDS}/index.php?page=login``, fills ``#email`` and
  ``#password``, clicks "Log in"; its logged-in check is that
  ``{CLASSIFIEDS}/index.php?page=user&action=items`` contains "My listings".
- §4.5: the form POSTs to ``index.php`` with hidden ``page=login``, ``action=login_post`` and the
  CSRF field ``octoken``; a success redirects to the user's dashboard; the PHP session cookie is
  ``osclass`` (``oc_userId``/``oc_userSecret`` only with "remember", which VWA does not tick).
"""
from __future__ import annotations

import html
import re
from typing import ClassVar
from urllib.parse import parse_qs, urljoin, urlsplit

import requests

from sitectl.errors import LoginError, LoginNotApplied, NoLoginForm
from sitectl.sites.base import Account, ProbeResult, SiteDriver, register

_TOKEN_RE = re.compile(r'<input[^>]*name="octoken"[^>]*>', re.I)
_VALUE_RE = re.compile(r'value="([^"]*)"')
_FLASH_RE = re.compile(r'<div[^>]*id="flash[^"]*"[^>]*>(.*?)</div>', re.S | re.I)
#: Field names of the login form (§4.5) that ``login_page_renders`` insists on.
LOGIN_FIELDS = ("email", "password", "octoken")


def login_token(page: str) -> str | None:
    """The ``octoken`` value of an OSClass login page, or None."""
    m = _TOKEN_RE.search(page)
    v = _VALUE_RE.search(m.group(0)) if m else None
    return html.unescape(v.group(1)) if v else None


@register
class OsclassDriver(SiteDriver):
    """OSClass classifieds: form login with a per-session CSRF token, PHP session cookie.

    Kind ``osclass``. ``base_url`` is VisualWebArena's ``CLASSIFIEDS`` value without its
    trailing slash, e.g. ``http://host:9980``.
    """

    kind: ClassVar[str] = "osclass"
    session_cookies = ("osclass",)
    login_path: ClassVar[str] = "/index.php?page=login"
    #: VWA's probe path and keyword (``auto_login.py``).
    probe_keyword: ClassVar[str] = "My listings"

    def login(self, session: requests.Session, account: Account) -> None:
        """Log ``account`` (its e-mail) in via ``GET index.php?page=login`` + ``POST index.php``.

        Raises:
            LoginError: the form sent the browser back to the login page (a wrong e-mail or
                password); :class:`~sitectl.errors.NoLoginForm`: the login page answered 4xx or has
                no ``octoken`` field; :class:`~sitectl.errors.LoginNotApplied`: no ``osclass``
                session cookie resulted.
            SiteUnhealthy: 5xx / timeout / connection error (from ``self.get``/``self.post``).
        """
        page = self.get(session, self.login_path, allow_redirects=True)
        self.kept_session_cookie(session, page)
        if page.status_code != 200:
            raise NoLoginForm(self.kind, f"GET {self.login_path} answered HTTP {page.status_code}")
        if _logged_in_page(page):
            return  # already logged in: OSClass sends a logged-in user on to the dashboard
        token = login_token(page.text)
        if token is None:
            raise NoLoginForm(self.kind, "login page has no octoken field")
        r = self.post(session, "/index.php", data={
            "page": "login", "action": "login_post", "octoken": token,
            "email": account.username, "password": account.password}, allow_redirects=False)
        loc = urljoin(r.url, r.headers.get("Location", ""))
        if r.status_code not in (301, 302, 303) or parse_qs(urlsplit(loc).query).get("page") == ["login"]:
            detail = f"HTTP {r.status_code}"
            if r.headers.get("Location"):
                back = self.get(session, loc, allow_redirects=True)
                m = _FLASH_RE.search(back.text)
                detail = re.sub(r"<[^>]+>", " ", m.group(1)).strip() if m else f"redirected to {loc}"
            raise LoginError(self.kind, f"{account.username}: {detail}")
        if "osclass" not in session.cookies:
            raise LoginNotApplied(self.kind, f"{account.username}: no osclass session cookie after login")

    def probe_path(self, account: Account) -> str:
        return "/index.php?page=user&action=items"

    def probe_passes(self, r: requests.Response, account: Account) -> bool:
        return r.status_code == 200 and self.probe_keyword in r.text

    def probe_logged_in(self, session: requests.Session, account: Account) -> ProbeResult:
        """VWA's rule: GET ``index.php?page=user&action=items`` (redirects followed) and look for
        ``My listings`` in the page (family-formats.md §1.5)."""
        path = self.probe_path(account)
        url = self.url(path)
        r = self.get(session, path, allow_redirects=True)
        ok = self.probe_passes(r, account)
        if ok:
            detail = f"page contains {self.probe_keyword!r}"
        elif parse_qs(urlsplit(r.url).query).get("page") == ["login"]:
            detail = "redirected to the login page (not logged in)"
        else:
            detail = f"HTTP {r.status_code}, keyword {self.probe_keyword!r} absent"
        return ProbeResult(ok=ok, url=url, final_url=r.url, status=r.status_code, detail=detail)

    def login_page_renders(self, session: requests.Session) -> ProbeResult:
        """GET the login page and check the form's fields (``#email``, ``#password`` that VWA
        fills, ``octoken``) and the "Log in" button."""
        url = self.url(self.login_path)
        r = self.get(session, self.login_path, allow_redirects=True)
        text = r.text
        missing = [f for f in LOGIN_FIELDS if f'name="{f}"' not in text]
        missing += [f"#{i}" for i in ("email", "password") if f'id="{i}"' not in text]
        if not re.search(r"<button[^>]*>\s*Log in\s*</button>", text):
            missing.append('button "Log in"')
        ok = r.status_code == 200 and not missing
        detail = "login form present" if ok else (
            f"HTTP {r.status_code}" + (f"; missing {', '.join(missing)}" if missing else ""))
        return ProbeResult(ok=ok, url=url, final_url=r.url, status=r.status_code, detail=detail)


def _logged_in_page(page: requests.Response) -> bool:
    """True when ``GET page=login`` ended on the user's pages (OSClass redirects a logged-in
    user from the login page to the dashboard, §4.5)."""
    return parse_qs(urlsplit(page.url).query).get("page") == ["user"]
