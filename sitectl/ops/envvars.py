"""``sitectl env``: the environment variables WebArena and BrowserGym read; ``sitectl hosts``:
whether this machine resolves the sites' host names, and the ``/etc/hosts`` lines if not."""
from __future__ import annotations

import shlex

from sitectl.hostnames import is_localhost_name, system_resolves
from sitectl.stack.target import Target

#: BrowserGym's names (browsergym-webarena ``instance.py``; research/peers.md §1.3).
BROWSERGYM_PREFIX = "WA_"
FORMATS = ("webarena", "browsergym", "dotenv")


def env_vars(target: Target, fmt: str = "webarena") -> dict[str, str]:
    """Variables for ``fmt``.

    ``webarena``: SHOPPING, SHOPPING_ADMIN (with ``/admin``), REDDIT, GITLAB, MAP, WIKIPEDIA
    (the landing page's full path), HOMEPAGE, as WebArena's ``browser_env/env_config.py``
    reads them (research/webarena-official.md §2). ``browsergym``: the same with the ``WA_``
    prefix. ``dotenv``: both sets. Scheme included, no trailing slash.
    """
    base = {s.env_var: target.url(s) for s in target.stack.sites.values()}
    if fmt == "webarena":
        return base
    bg = {BROWSERGYM_PREFIX + k: v for k, v in base.items()}
    if fmt == "browsergym":
        return bg
    return {**base, **bg}


def env_text(values: dict[str, str], fmt: str) -> str:
    """Render variables: ``export K=V`` lines for webarena/browsergym, ``K=V`` for dotenv."""
    prefix = "" if fmt == "dotenv" else "export "
    return "\n".join(f"{prefix}{k}={shlex.quote(v)}" for k, v in values.items())


def host_names(target: Target) -> dict:
    """The sites' host names and whether this machine's resolver knows each.

    Browsers resolve ``localhost`` and every name under it to loopback themselves (RFC 6761
    §6.3), and so does sitectl (:mod:`sitectl.http`); other clients, such as the
    ``requests`` calls of WebArena's evaluators, ask the system, which on Debian knows them only
    with ``libnss-myhostname`` installed or with ``/etc/hosts`` lines.

    Returns:
        ``{"hosts": {site: name}, "unresolved": [name], "lines": ["127.0.0.1 name ..."]}``;
        ``lines`` are the ``/etc/hosts`` lines for the unresolved ``*.localhost`` names (other
        names belong in DNS and get no line).
    """
    names = {n: target.site_host(s) for n, s in target.stack.sites.items()}
    unresolved = sorted({h for h in names.values() if not system_resolves(h)})
    local = [h for h in unresolved if is_localhost_name(h)]
    return {"hosts": names, "unresolved": unresolved, "lines": [f"127.0.0.1 {' '.join(local)}"] if local else []}
