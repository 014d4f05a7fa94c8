"""``sitectl env``: the environment variables WebArena and BrowserGym read."""
from __future__ import annotations

import shlex

from sitectl.target import Target

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
