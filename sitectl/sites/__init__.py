"""Site drivers, one module per application kind; :func:`driver_for` picks one by kind."""
from __future__ import annotations

# Importing each driver module registers its classes in DRIVERS (eagerly: lookups happen
# from several threads at once).
from sitectl.sites import gitlab, magento, osclass, postmill, readonly  # noqa: F401
from sitectl.sites.base import DRIVERS, Account, ProbeResult, SiteDriver


def driver_for(kind: str, base_url: str) -> SiteDriver:
    """Return the driver of ``kind`` bound to ``base_url``.

    Raises:
        KeyError: no driver handles ``kind``.
    """
    try:
        return DRIVERS[kind](base_url=base_url)
    except KeyError:
        raise KeyError(f"no site driver for kind {kind!r}") from None


__all__ = ["Account", "DRIVERS", "ProbeResult", "SiteDriver", "driver_for"]
