"""Driver of WebArena's GitLab CE (task key ``gitlab``, env var ``GITLAB``).

Logs in through GitLab's own Devise sign-in form exactly as WebArena's ``auto_login`` does and
runs the same logged-in probe. Works against the real image ``gitlab-populated-final-port8023``
and the sitectl contract replica ``sitectl/mini-gitlab`` (same contract).

Sources:
- webarena-official.md §3.2: auto_login visits ``{GITLAB}/users/sign_in`` and fills the elements
  with ``data-testid`` ``username-field`` and ``password-field``, then clicks ``sign-in-button``;
  ``is_expired`` probe = ``GET {GITLAB}/-/profile`` whose final URL must equal the probe URL.
- contract-postmill-gitlab-map.md §2.2: form posts to ``/users/sign_in`` with ``user[login]``,
  ``user[password]``, ``user[remember_me]`` and the Rails ``authenticity_token``; success -> 302
  (to ``/`` or the stored return URL); failure -> the form again with "Invalid login or
  password."; session cookie ``_gitlab_session``; "protected paths" throttling answers HTTP 429
  after 10 sign-in POSTs per minute per IP; 10 failed attempts lock the account for 10 minutes.
- contract-postmill-gitlab-map.md §2.1: while Puma boots, nginx answers 502 with GitLab's static
  "GitLab is not responding (502)" page; ``self.get``/``self.post`` turn that into
  ``SiteUnhealthy`` so callers can treat it as "booting".
"""
from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import urljoin, urlsplit

import requests

from sitectl.errors import LoginError, LoginNotApplied, NoLoginForm
from sitectl.sites.base import Account, ProbeResult, SiteDriver, register

_TOKEN_RE = re.compile(
    r'<input[^>]*name="authenticity_token"[^>]*value="([^"]+)"|<input[^>]*value="([^"]+)"[^>]*name="authenticity_token"')
_ALERT_RE = re.compile(r'class="[^"]*flash-alert[^"]*"[^>]*>\s*(?:<span>)?\s*([^<]+)', re.S)
#: Form field names (contract §2.2) and data-testid hooks (WebArena auto_login) of the sign-in page.
LOGIN_FIELDS = ("user[login]", "user[password]", "authenticity_token")
LOGIN_TESTIDS = ("username-field", "password-field", "sign-in-button")
SESSION_COOKIE = "_gitlab_session"


def sign_in_token(html: str) -> str | None:
    """Return the sign-in form's ``authenticity_token`` (Rails CSRF), or None."""
    m = _TOKEN_RE.search(html)
    return (m.group(1) or m.group(2)) if m else None


@register
class GitLabDriver(SiteDriver):
    """GitLab CE (Omnibus): Devise form login with a Rails CSRF token.

    Kind ``gitlab``. ``base_url`` is WebArena's ``GITLAB`` value, e.g. ``http://host:8023``.
    """

    kind: ClassVar[str] = "gitlab"
    session_cookies = (SESSION_COOKIE,)  # research: contract-*.md (session cookie names)
    login_path: ClassVar[str] = "/users/sign_in"
    probe_url_path: ClassVar[str] = "/-/profile"

    def probe_path(self, account: Account) -> str:
        return self.probe_url_path

    def probe_passes(self, r: requests.Response, account: Account) -> bool:
        return r.status_code == 200  # no redirect: the final URL is the probe URL

    def login(self, session: requests.Session, account: Account) -> None:
        """Log ``account`` in via ``GET /users/sign_in`` + ``POST /users/sign_in``.

        Raises:
            LoginError: the form came back (e.g. "Invalid login or password.", "Your account is
                locked."); its :class:`~sitectl.errors.NoLoginForm`: the sign-in page answered
                4xx or had no ``authenticity_token``; :class:`~sitectl.errors.LoginNotApplied`:
                no ``_gitlab_session`` cookie resulted.
            SiteUnhealthy: 5xx (including the 502 "booting" page), timeout, connection error,
                or HTTP 429 from GitLab's protected-paths throttle (retry after 60 s).
        """
        page = self.get(session, self.login_path, allow_redirects=True)
        self.kept_session_cookie(session, page)
        if page.status_code != 200:
            raise NoLoginForm(self.kind, f"GET {self.login_path} answered HTTP {page.status_code}")
        if urlsplit(page.url).path != self.login_path:
            # Already signed in (GitLab redirects /users/sign_in to /): start from a clean session.
            session.cookies.clear()
            page = self.get(session, self.login_path, allow_redirects=True)
        token = sign_in_token(page.text)
        if not token:
            raise NoLoginForm(self.kind, "sign-in page has no authenticity_token field")
        r = self.post(session, self.login_path, data={
            "authenticity_token": token, "user[login]": account.username,
            "user[password]": account.password, "user[remember_me]": "0"}, allow_redirects=False)
        loc = r.headers.get("Location", "")
        if r.status_code in (301, 302, 303) and urlsplit(urljoin(r.url, loc)).path != self.login_path:
            if SESSION_COOKIE not in session.cookies:
                raise LoginNotApplied(self.kind, f"{account.username}: no {SESSION_COOKIE} cookie after sign-in")
            return
        m = _ALERT_RE.search(r.text)
        detail = m.group(1).strip() if m else f"HTTP {r.status_code}" + (f", redirected to {loc}" if loc else "")
        raise LoginError(self.kind, f"{account.username}: {detail}")

    def probe_logged_in(self, session: requests.Session, account: Account) -> ProbeResult:
        """WebArena's rule: GET ``/-/profile`` with redirects followed; logged in iff the final
        URL is exactly the probe URL (anonymous sessions end on ``/users/sign_in``)."""
        url = self.url(self.probe_url_path)
        r = self.get(session, self.probe_url_path, allow_redirects=True)
        ok = r.status_code == 200 and r.url == url
        if ok:
            detail = "stayed on /-/profile"
        elif urlsplit(r.url).path == self.login_path:
            detail = "redirected to /users/sign_in (session expired or absent)"
        else:
            detail = f"HTTP {r.status_code}, final URL {r.url}"
        return ProbeResult(ok=ok, url=url, final_url=r.url, status=r.status_code, detail=detail)

    def login_page_renders(self, session: requests.Session) -> ProbeResult:
        """GET ``/users/sign_in`` and check the form field names and the three ``data-testid``
        hooks WebArena's auto_login clicks."""
        url = self.url(self.login_path)
        r = self.get(session, self.login_path, allow_redirects=True)
        text = r.text
        missing = [f for f in LOGIN_FIELDS if f'name="{f}"' not in text]
        missing += [f"data-testid={t}" for t in LOGIN_TESTIDS if f'data-testid="{t}"' not in text]
        ok = r.status_code == 200 and not missing
        detail = "sign-in form present" if ok else (
            f"HTTP {r.status_code}" + (f"; missing {', '.join(missing)}" if missing else ""))
        return ProbeResult(ok=ok, url=url, final_url=r.url, status=r.status_code, detail=detail)
