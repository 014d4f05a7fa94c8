"""Cache store: an application cache that is flushed after any restore of the site (Magento's
Redis databases 0 and 1; the forum's cache pools, rate-limit counters included). It holds
no golden state: stale cache entries would describe rows the restore just put back."""
from __future__ import annotations

from sitectl.stores.base import Changes, Store
from sitectl.stores.transport import Command, ExecTransport


class CacheStore(Store):
    """Args:
        flush: argv run in the container to flush the cache.
    """

    kind = "cache"

    def __init__(self, site: str, transport: ExecTransport, flush: list[str]):
        super().__init__(site, "cache")
        self.transport = transport
        self.flush = flush

    def snapshot(self, name: str) -> dict:
        return {"fingerprint": {}, "size": 0}

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        return []

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        return []

    def after_restore_requests(self) -> list:
        return [Command(self.flush)]

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        return {}

    def drop(self, name: str) -> None:
        return None
