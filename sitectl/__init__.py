"""sitectl: provision, snapshot, reset, log into and verify WebArena-family benchmark sites.

``from sitectl import Environment`` is the Python API (:mod:`sitectl.api`);
``sitectl.locators`` holds WebArena's evaluator helpers and direct-state reads."""

__version__ = "0.1.0"


def __getattr__(name: str):
    # Lazy, so `import sitectl` (and the CLI's start) does not load Docker and HTTP clients.
    if name == "Environment":
        from sitectl.api import Environment

        return Environment
    raise AttributeError(name)


__all__ = ["Environment", "__version__"]
