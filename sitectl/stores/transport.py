"""How a store reaches its data: commands run inside the site's container (``docker exec``)."""
from __future__ import annotations

from sitectl.engine import Engine
from sitectl.stores.base import StoreError


class ExecTransport:
    """Runs argv inside one container through the engine layer.

    Args:
        engine: the Docker engine.
        container: container name.
        site: site name, for error messages.
    """

    def __init__(self, engine: Engine, container: str, site: str):
        self.engine = engine
        self.container = container
        self.site = site

    def run(self, argv: list[str], what: str, timeout: float = 600) -> str:
        """Run ``argv``; return its output.

        Raises:
            StoreError: non-zero exit; the message names the site, ``what`` and the output tail.
        """
        rc, out = self.engine.exec(self.container, argv, timeout=timeout)
        if rc != 0:
            raise StoreError(f"{self.site}: {what} failed (exit code {rc}): {out.strip()[-1500:]}")
        return out
