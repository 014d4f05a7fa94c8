"""Site drivers, one module per application kind; :func:`driver_for` picks one by kind."""
from __future__ import annotations

import importlib

from sitectl.sites.base import DRIVERS, Account, ProbeResult, SiteDriver

# Importing a driver module registers its classes in DRIVERS.
_MODULES = ("magento", "postmill", "gitlab", "readonly")


def _load_all() -> None:
    for m in _MODULES:
        try:
            importlib.import_module(f"sitectl.sites.{m}")
        except ModuleNotFoundError as e:
            if e.name != f"sitectl.sites.{m}":
                raise


def driver_for(kind: str, base_url: str) -> SiteDriver:
    """Return the driver of ``kind`` bound to ``base_url``.

    Raises:
        KeyError: no driver handles ``kind``.
    """
    if not DRIVERS:
        _load_all()
    try:
        return DRIVERS[kind](base_url=base_url)
    except KeyError:
        raise KeyError(f"no site driver for kind {kind!r}") from None


__all__ = ["Account", "DRIVERS", "ProbeResult", "SiteDriver", "driver_for"]
