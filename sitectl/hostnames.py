"""Host names: which names are loopback by definition, and whether this machine resolves one.
Standard library only, so ``sitectl env`` needs no HTTP client to print its variables."""
from __future__ import annotations

import socket


def is_localhost_name(host: str) -> bool:
    """True for ``localhost`` and any name under it (``shopping.localhost``), any case
    (RFC 6761 §6.3: reserved for loopback)."""
    h = host.lower().rstrip(".")
    return h == "localhost" or h.endswith(".localhost")


def system_resolves(host: str) -> bool:
    """Whether this machine's resolver (glibc's NSS, as every other client uses) knows ``host``."""
    try:
        socket.getaddrinfo(host, None)
        return True
    except (socket.gaierror, UnicodeError):
        return False
