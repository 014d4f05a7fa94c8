"""State stores (mysql, postgres, files, redis, cache) and :func:`stores_for`, which builds a
site's stores from its ``stores`` entries in the stack file."""
from __future__ import annotations

from sitectl.engine import Engine
from sitectl.stack import Site
from sitectl.stores.base import Changes, Store, StoreError, check_snapshot_name
from sitectl.stores.cache import CacheStore
from sitectl.stores.files import FilesStore
from sitectl.stores.mysql import MysqlStore
from sitectl.stores.postgres import PostgresStore
from sitectl.stores.redis import RedisStore
from sitectl.stores.transport import ExecTransport


def stores_for(site: Site, container: str, engine: Engine) -> list[Store]:
    """The stores of ``site`` reached through ``docker exec`` into ``container``, in the order
    the stack file lists them (cache stores flush after the others restore)."""
    tr = ExecTransport(engine, container, site.name)
    out: list[Store] = []
    for s in site.stores:
        if s.kind == "mysql":
            out.append(MysqlStore(site.name, tr, s.database, s.client))
        elif s.kind == "postgres":
            out.append(PostgresStore(site.name, tr, s.database, s.client))
        elif s.kind == "files":
            out.append(FilesStore(site.name, tr, s.paths))
        elif s.kind == "redis":
            out.append(RedisStore(site.name, tr, s.client, s.db))
        else:
            out.append(CacheStore(site.name, tr, s.flush))
    return out


__all__ = ["Changes", "Store", "StoreError", "check_snapshot_name", "stores_for"]
