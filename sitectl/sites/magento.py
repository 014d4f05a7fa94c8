"""Magento 2 drivers: the storefront (WebArena ``shopping``) and the admin (``shopping_admin``).

Sources (all summarised in the research notes, which cite upstream):
- Login probes: WebArena ``browser_env/auto_login.py`` — storefront: ``GET {SHOPPING}/wishlist/``
  must end exactly on that URL; admin: ``GET {SHOPPING_ADMIN}/dashboard`` must contain
  "Dashboard" (research/webarena-official.md §3.2).
- Storefront form: ``/customer/account/login/``, hidden ``form_key``, ``login[username]``,
  ``login[password]``, POST ``/customer/account/loginPost/``; refused credentials come back to
  the login page (research/contract-magento.md §1.1–§1.3).
- Admin form: any ``/admin`` URL renders it when logged out; it posts to the same URL with
  ``form_key``, ``login[username]``, ``login[password]``; session cookie ``admin`` (path /admin)
  (research/contract-magento.md §2).

Both work unchanged against the real WebArena images and the sitectl contract replicas.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

import requests

from sitectl.errors import LoginError, LoginNotApplied, NoLoginForm
from sitectl.sites.base import Account, ProbeResult, SiteDriver, register

_FORM_KEY = re.compile(r'name="form_key"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="form_key"')


def form_key(html: str) -> str | None:
    """Return the first hidden ``form_key`` value of a Magento page, or None."""
    m = _FORM_KEY.search(html)
    return (m.group(1) or m.group(2)) if m else None


def _same(a: str, b: str) -> bool:
    """URL equality as WebArena's probe uses it: the exact string."""
    return a == b


@register
class MagentoStorefront(SiteDriver):
    """Customer side of a Magento 2 store; ``base_url`` like ``http://host:7770``."""

    kind = "magento-storefront"
    session_cookies = ("PHPSESSID",)  # research: contract-*.md (session cookie names)
    login_path = "/customer/account/login/"
    probe_url_path = "/wishlist/"

    def probe_path(self, account: Account) -> str:
        return self.probe_url_path

    def login_page_renders(self, session: requests.Session) -> ProbeResult:
        url = self.url(self.login_path)
        r = self.get(session, url)
        ok = (r.status_code == 200 and form_key(r.text) is not None
              and 'name="login[username]"' in r.text and 'name="login[password]"' in r.text)
        return ProbeResult(ok, url, r.url, r.status_code,
                           "login form present" if ok else "no Magento customer login form at %s" % r.url)

    def login(self, session: requests.Session, account: Account) -> None:
        r = self.get(session, self.login_path)
        self.kept_session_cookie(session, r)
        fk = form_key(r.text)
        if r.status_code != 200 or fk is None:
            # Already logged in sessions are redirected to /customer/account/.
            if urlsplit(r.url).path.rstrip("/").endswith("/customer/account"):
                return
            raise NoLoginForm(self.kind, "no login form at %s (HTTP %s)" % (r.url, r.status_code))
        post_url = self.url("/customer/account/loginPost/")
        r = self.post(session, post_url, data={"form_key": fk, "login[username]": account.username,
                                                "login[password]": account.password, "send": ""},
                      allow_redirects=True)
        final = urlsplit(r.url).path
        if "/customer/account/login" in final:
            raise LoginError(self.kind, "credentials of %r refused (back on %s)" % (account.username, final))
        if not self.probe_logged_in(session, account).ok:
            raise LoginNotApplied(self.kind, "login of %r did not produce a customer session" % account.username)

    def probe_passes(self, r: requests.Response, account: Account) -> bool:
        return r.status_code == 200  # no redirect: the final URL is the probe URL

    def probe_logged_in(self, session: requests.Session, account: Account) -> ProbeResult:
        url = self.url(self.probe_url_path)
        r = self.get(session, url, allow_redirects=True)
        ok = r.status_code == 200 and _same(r.url, url)
        return ProbeResult(ok, url, r.url, r.status_code, "stayed on /wishlist/" if ok else "redirected to %s" % urlsplit(r.url).path)


@register
class MagentoAdmin(SiteDriver):
    """Magento 2 admin; ``base_url`` includes the admin front name, like ``http://host:7780/admin``."""

    kind = "magento-admin"
    session_cookies = ("admin",)  # research: contract-*.md (session cookie names)
    login_path = ""          # the login form renders at any admin URL, the base included
    probe_url_path = "/dashboard"

    def probe_path(self, account: Account) -> str:
        return self.probe_url_path
    keyword = "Dashboard"

    def login_page_renders(self, session: requests.Session) -> ProbeResult:
        url = self.base_url
        r = self.get(session, url)
        ok = (r.status_code == 200 and form_key(r.text) is not None and 'placeholder="user name"' in r.text
              and 'name="login[password]"' in r.text)
        return ProbeResult(ok, url, r.url, r.status_code, "admin login form present" if ok else "no admin login form at %s" % r.url)

    def login(self, session: requests.Session, account: Account) -> None:
        r = self.get(session, self.base_url)
        self.kept_session_cookie(session, r)
        fk = form_key(r.text)
        if fk is None or 'name="login[username]"' not in r.text:
            if self.probe_logged_in(session, account).ok:
                return
            raise NoLoginForm(self.kind, "no admin login form at %s (HTTP %s)" % (r.url, r.status_code))
        r = self.post(session, r.url, data={"form_key": fk, "login[username]": account.username,
                                            "login[password]": account.password}, allow_redirects=True)
        if 'name="login[username]"' in r.text:
            m = re.search(r'class="message-error[^"]*"[^>]*>\s*<div>(.*?)</div>', r.text, re.S)
            raise LoginError(self.kind, "credentials of %r refused%s" % (account.username, ": " + m.group(1).strip() if m else ""))
        if not self.probe_logged_in(session, account).ok:
            raise LoginNotApplied(self.kind, "login of %r did not produce an admin session" % account.username)

    def probe_passes(self, r: requests.Response, account: Account) -> bool:
        # The real /admin/dashboard is the admin no-route page (404 inside the admin layout, menu
        # "Dashboard") when logged in: WebArena looks at the keyword only (contract-magento §2).
        return not r.is_redirect and self.keyword in r.text and 'name="login[username]"' not in r.text

    def probe_logged_in(self, session: requests.Session, account: Account) -> ProbeResult:
        url = self.url(self.probe_url_path)
        r = self.get(session, url, allow_redirects=True)
        logged_out = 'name="login[username]"' in r.text
        ok = self.keyword in r.text and not logged_out
        return ProbeResult(ok, url, r.url, r.status_code,
                           "page contains %r" % self.keyword if ok else ("login form shown" if logged_out else "keyword %r absent" % self.keyword))
