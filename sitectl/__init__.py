"""sitectl: provision, snapshot, reset, log into and verify WebArena-family benchmark sites.

``from sitectl import Environment`` is the Python API (:mod:`sitectl.api`);
``sitectl.locators`` holds WebArena's evaluator helpers and direct-state reads."""

from sitectl.version import __version__


def __getattr__(name: str):
    # Lazy, so `import sitectl` (and the CLI's start) does not load Docker and HTTP clients.
    if name == "Environment":
        from sitectl.api import Environment  # noqa: PLC0415 - lazy: the API loads Docker and HTTP clients

        return Environment
    raise AttributeError(name)


__all__ = ["Environment", "__version__"]
