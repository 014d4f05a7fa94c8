"""HTTP sessions for talking to sites: ``requests`` with ``*.localhost`` names reaching loopback.

Per-site host names (``--site-hosts``, e.g. ``shopping.localhost``) only work if the client
resolves them. RFC 6761 §6.3 reserves ``localhost`` and every name under it for loopback, and
browsers (Chromium, Firefox) resolve them so without asking the system; glibc only does with
``libnss-myhostname`` or ``/etc/hosts`` lines. Sessions made here resolve such names to
127.0.0.1 themselves, like a browser, so sitectl's probes and logins work either way; the URL,
the ``Host`` header and cookie domains stay the site's own name. Other names go through the
system resolver as usual.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from sitectl.hostnames import is_localhost_name

USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) sitectl"


class _LoopbackMixin:
    def _new_conn(self):
        # urllib3 2.x dials ``_dns_host`` (set by its ``host`` setter) and also builds the Host
        # header of later requests on this connection from it, so it is swapped only to dial.
        name = self._dns_host
        if not is_localhost_name(name):
            return super()._new_conn()
        self._dns_host = "127.0.0.1"
        try:
            return super()._new_conn()
        finally:
            self._dns_host = name


class _Conn(_LoopbackMixin, HTTPConnection):
    pass


class _SConn(_LoopbackMixin, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Conn


class _SPool(HTTPSConnectionPool):
    ConnectionCls = _SConn


class LocalhostAdapter(HTTPAdapter):
    """A ``requests`` transport adapter dialing 127.0.0.1 for ``*.localhost`` names."""

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _SPool}

    def send(self, request, **kwargs):
        # Loopback names never go through a proxy (a browser does not send them to one either).
        if is_localhost_name(urlsplit(request.url).hostname or ""):
            kwargs["proxies"] = {}
        return super().send(request, **kwargs)


def new_session() -> requests.Session:
    """A ``requests.Session`` with a browser-like User-Agent that reaches ``*.localhost``
    names on loopback (module docstring). Cookies, redirects and errors are requests' own."""
    s = requests.Session()
    s.headers["User-Agent"] = USER_AGENT
    adapter = LocalhostAdapter()
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s
