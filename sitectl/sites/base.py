"""Site drivers: one per application kind.

A driver knows how one kind of site (a Magento storefront, a Postmill forum, ...) is logged
into and probed over HTTP. It never talks to Docker; container work (post-start steps,
database checks) is declared in the stack file and run by the engine layer.

Every driver works against both stacks: the real WebArena images and the mini contract
replicas, because the replicas reproduce the real login forms (see ``docs/contracts.md``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

import requests

from sitectl import http
from sitectl.errors import LoginNotApplied, SiteUnhealthy


@dataclass(frozen=True)
class Account:
    """One login of a site, declared by role in the stack file.

    Attributes:
        role: the stack file's role name, e.g. ``"default"``, ``"admin"``, ``"customer2"``.
        username: what the login form's user field takes (an e-mail for the storefront).
        password: plain text, as WebArena's ``env_config.ACCOUNTS`` lists it.
    """

    role: str
    username: str
    password: str


@dataclass
class ProbeResult:
    """Outcome of one logged-in probe (WebArena's ``auto_login.is_expired`` rule).

    Attributes:
        ok: True when the probe passed (the session is logged in).
        url: the URL requested.
        final_url: the URL after redirects were followed (or the Location of the first
            redirect when redirects are off).
        status: HTTP status of the last response.
        detail: a one-line human reason, e.g. ``"redirected to /customer/account/login/"``.
    """

    ok: bool
    url: str
    final_url: str
    status: int
    detail: str = ""


@dataclass
class SiteDriver:
    """Base class of every site driver.

    Attributes:
        base_url: the site's base URL as WebArena's environment variable holds it: scheme
            included, no trailing slash (``SHOPPING_ADMIN`` includes ``/admin``).
        timeout: seconds for one HTTP request.
    """

    base_url: str
    timeout: float = 15.0
    kind: ClassVar[str] = ""
    #: Whether the site has a login form (the read-only sites do not).
    has_login: ClassVar[bool] = True
    #: Path of the login page, relative to ``base_url`` ("" when the site has no login).
    login_path: ClassVar[str] = ""
    #: Names of the cookies that carry the login (two sites on one host name must not share one).
    session_cookies: ClassVar[tuple[str, ...]] = ()
    #: Other cookies the login form needs sent back (Postmill's ``_cookie_check``: without it
    #: the form answers 403).
    form_cookies: ClassVar[tuple[str, ...]] = ()

    def new_session(self) -> requests.Session:
        """Return a fresh ``requests.Session`` (:func:`sitectl.http.new_session`: a browser-like
        User-Agent, ``*.localhost`` names dialed on loopback)."""
        return http.new_session()

    def login(self, session: requests.Session, account: Account) -> None:
        """Log ``account`` in through the site's own HTML login form, into ``session``.

        ``account`` is anything with ``username`` and ``password`` (this module's
        :class:`Account`, or the stack file's ``sitectl.stack.Account``).

        Raises:
            LoginError: the site answered, but refused the credentials;
                :class:`~sitectl.errors.NoLoginForm`: it answered without its login form (nothing
                was sent); :class:`~sitectl.errors.LoginNotApplied`: the form accepted the
                account but no session came of it.
            SiteUnhealthy: 5xx, a timeout or a connection error.
        """
        raise NotImplementedError(f"{self.kind or type(self).__name__} has no login")

    def probe_logged_in(self, session: requests.Session, account: Account) -> ProbeResult:
        """Run WebArena's logged-in probe for this site with ``session``'s cookies.

        Source: WebArena ``browser_env/auto_login.py`` (``is_expired`` and the per-site
        probe URL and keyword), summarised in ``research/webarena-official.md`` §3.2.
        """
        raise NotImplementedError(f"{self.kind or type(self).__name__} has no login probe")

    def login_page_renders(self, session: requests.Session) -> ProbeResult:
        """GET the login page and check that its form is there (fields by their names)."""
        raise NotImplementedError(f"{self.kind or type(self).__name__} has no login page")

    def probe_path(self, account: Account) -> str:
        """Path of WebArena's logged-in probe for ``account`` (``auto_login.py``)."""
        raise NotImplementedError(f"{self.kind or type(self).__name__} has no login probe")

    def probe_passes(self, r: requests.Response, account: Account) -> bool:
        """Whether a probe response fetched with redirects off shows a logged-in page:
        WebArena's rule (the final URL is the probe URL, or the page holds the keyword) where a
        redirect means "not logged in"."""
        raise NotImplementedError(f"{self.kind or type(self).__name__} has no login probe")

    def check_session(self, session: requests.Session, account: Account, attempts: int = 4,
                      wait: float = 0.5) -> "SessionCheck":
        """Run WebArena's logged-in probe once with redirects off, retrying while the site is
        unhealthy (5xx, 429, timeout, connection error), so a slow or failing site is never
        mistaken for an expired session.

        Args:
            attempts: tries in all (the first included).
            wait: seconds before the second try; doubled before each later one (max 4 s).

        Returns:
            :class:`SessionCheck` with ``state`` ``logged_in``, ``logged_out`` or ``unhealthy``
            and one line per try in ``tries``.
        """

        tries: list[str] = []
        path = self.probe_path(account)
        for i in range(attempts):
            time.sleep(retry_wait(i, wait))
            try:
                r = self.get(session, path, allow_redirects=False)
            except SiteUnhealthy as e:
                tries.append(f"unhealthy: {e.detail}")
                continue
            if r.status_code == 429:
                tries.append("unhealthy: HTTP 429 (throttled)")
                continue
            if self.probe_passes(r, account):
                tries.append(f"logged in: HTTP {r.status_code} on {path}" if r.status_code < 300 else
                             f"logged in: {path} answers HTTP {r.status_code} and holds the logged-in page's "
                             "keyword, which WebArena's probe accepts")
                return SessionCheck("logged_in", tries)
            where = r.headers.get("Location") or path
            tries.append(f"logged out: HTTP {r.status_code}, {'redirect to ' if r.is_redirect else ''}{urlsplit(where).path}")
            return SessionCheck("logged_out", tries)
        return SessionCheck("unhealthy", tries)

    # Small helpers shared by the drivers -------------------------------------------------
    def url(self, path: str) -> str:
        """Join ``base_url`` and ``path`` (which starts with ``/``) without doubling slashes."""
        return self.base_url.rstrip("/") + path

    def kept_session_cookie(self, session: requests.Session, page: requests.Response) -> None:
        """After the login form's GET: when the site set its session cookie (one of
        :attr:`session_cookies`, or of :attr:`form_cookies`) and the client would not send it back (a ``Secure`` cookie over http, a
        ``Domain`` that does not match the host), no login can work (the form's CSRF token lives in
        that session), and the refusal that would follow is not the account's fault.

        Raises:
            LoginNotApplied: the cookie was set and not kept (the message names it).
        """
        for r in [*page.history, page]:
            # What the client would send back to the URL that set it (a Secure cookie is stored,
            # and not sent over http; a foreign Domain is not stored).
            sent = requests.cookies.get_cookie_header(session.cookies, requests.Request("GET", r.url).prepare()) or ""
            kept = {c.split("=", 1)[0].strip() for c in sent.split(";") if "=" in c}
            for c in r.raw.headers.getlist("Set-Cookie") if hasattr(r.raw, "headers") else []:
                name = c.split("=", 1)[0].strip()
                if name in (*self.session_cookies, *self.form_cookies) and name not in kept:
                    raise LoginNotApplied(self.kind, f"the site set its cookie {name} at {r.url} but the client would not send it back "
                                                     f"({c.split(';', 1)[1].strip() if ';' in c else 'no attributes'}): "
                                                     "a Secure cookie over http, or a Domain other than the host in use")

    def get(self, session: requests.Session, path_or_url: str, **kw) -> requests.Response:
        """GET with the driver's timeout; 5xx, 429, connection errors and a redirect to another
        origin become ``SiteUnhealthy``."""
        return self._send(session, "GET", path_or_url, **kw)

    def post(self, session: requests.Session, path_or_url: str, **kw) -> requests.Response:
        """POST with the driver's timeout; 5xx, 429 and connection errors become ``SiteUnhealthy``."""
        return self._send(session, "POST", path_or_url, **kw)

    def _send(self, session, method, path_or_url, **kw) -> requests.Response:
        url = path_or_url if "://" in path_or_url else self.url(path_or_url)
        kw.setdefault("timeout", self.timeout)
        try:
            r = session.request(method, url, **kw)
        except requests.RequestException as e:
            raise SiteUnhealthy(self.kind, f"{method} {url}: {type(e).__name__}: {e}") from e
        if r.status_code >= 500 or r.status_code == 429:
            # 429: a throttle (GitLab's protected paths), a passing state like a 5xx, not an answer.
            after = r.headers.get("Retry-After", "").strip()
            wait = float(after) if after.isdigit() else (60.0 if r.status_code == 429 else None)
            raise SiteUnhealthy(self.kind, f"{method} {url}: HTTP {r.status_code}"
                                + (f" (throttled; it asks to wait {wait:g} s)" if r.status_code == 429 else ""),
                                retry_after=wait if r.status_code == 429 else None)
        if _origin(r.url) != _origin(url):
            # Magento (and GitLab's external_url) send every request to the configured base
            # URL: a host that differs from it is a configuration error, not a bad password.
            raise SiteUnhealthy(
                self.kind,
                f"{method} {url} ended on another origin ({_origin(r.url)}): the site's base URL "
                f"does not match the host in use ({_origin(url)})",
            )
        return r


#: The longest wait a throttled site's Retry-After gets before the next try of a login (GitLab's
#: protected paths ask for 60 s).
THROTTLE_WAIT = 90.0


def retry_wait(attempt: int, first: float = 0.5) -> float:
    """Seconds to wait before try ``attempt`` (0-based) of an unhealthy site: none before the
    first, then ``first``, doubled each time, at most 4 s."""
    return 0.0 if attempt == 0 else min(4.0, first * 2 ** (attempt - 1))


@dataclass
class SessionCheck:
    """Outcome of :meth:`SiteDriver.check_session`.

    Attributes:
        state: ``logged_in``, ``logged_out`` (the session is gone: log in again) or
            ``unhealthy`` (the site failed every try: nothing is known about the session).
        tries: one line per try, in order (e.g. ``unhealthy: GET ...: HTTP 502``).
    """

    state: str
    tries: list[str]

    @property
    def detail(self) -> str:
        return self.tries[-1] if len(self.tries) == 1 else f"{self.tries[-1]} (after {len(self.tries) - 1} unhealthy tries)"


def _origin(url: str) -> str:
    s = urlsplit(url)
    return f"{s.scheme}://{s.netloc}"


DRIVERS: dict[str, type[SiteDriver]] = {}


def register(cls: type[SiteDriver]) -> type[SiteDriver]:
    """Class decorator: make ``cls`` the driver of ``cls.kind``."""
    DRIVERS[cls.kind] = cls
    return cls
