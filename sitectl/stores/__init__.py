"""State stores (mysql, postgres, files, redis, cache, elasticsearch) and :func:`stores_for`, which builds a
site's stores from its ``stores`` entries in the stack file."""
from __future__ import annotations

from sitectl.engine import Engine
from sitectl.errors import StoreError
from sitectl.stack import Site
from sitectl.stores.base import Changes, Store, check_snapshot_name
from sitectl.stores.cache import CacheStore
from sitectl.stores.elasticsearch import ElasticsearchStore
from sitectl.stores.files import FilesStore
from sitectl.stores.mysql import MysqlStore
from sitectl.stores.postgres import PostgresStore
from sitectl.stores.redis import RedisStore
from sitectl.stores.sql import Endpoint, MysqlExec, MysqlNetwork, PostgresExec, PostgresNetwork, SqlResult, SqlSession
from sitectl.stores.transport import ExecTransport


def session_for(site: Site, store, transport: ExecTransport) -> SqlSession:
    """The SQL session of one ``mysql`` or ``postgres`` store entry: over the network when the
    entry has ``connect``, else the server's client inside the container."""
    if store.connect is not None:
        c = store.connect
        ep = Endpoint(c.host, c.port, c.user, c.password_env)
        return (MysqlNetwork if store.kind == "mysql" else PostgresNetwork)(site.name, store.database, ep)
    return (MysqlExec if store.kind == "mysql" else PostgresExec)(site.name, store.database, transport, store.client)


def sql_session_of(site: Site, container: str, engine: Engine) -> tuple[SqlSession, str] | None:
    """The SQL session of ``site``'s first ``mysql`` or ``postgres`` store and that store's
    database name (for readers outside the stores, such as the direct-state locators), or None
    when the site has no SQL store."""
    store = next((x for x in site.stores if x.kind in ("mysql", "postgres")), None)
    if store is None:
        return None
    return session_for(site, store, ExecTransport(engine, container, site.name)), store.database


def stores_for(site: Site, container: str, engine: Engine) -> list[Store]:
    """The stores of ``site``, in the order the stack file lists them (cache stores flush after
    the others restore): files, Redis and caches through ``docker exec`` into ``container``,
    SQL stores through :func:`session_for`."""
    tr = ExecTransport(engine, container, site.name)
    out: list[Store] = []
    for s in site.stores:
        if s.kind == "mysql":
            out.append(MysqlStore(site.name, session_for(site, s, tr)))
        elif s.kind == "postgres":
            out.append(PostgresStore(site.name, session_for(site, s, tr)))
        elif s.kind == "files":
            out.append(FilesStore(site.name, tr, s.paths))
        elif s.kind == "redis":
            out.append(RedisStore(site.name, tr, s.client, s.db, s.apart))
        elif s.kind == "elasticsearch":
            out.append(ElasticsearchStore(site.name, tr, s.url or "http://127.0.0.1:9200", s.indices))
        else:
            out.append(CacheStore(site.name, tr, s.flush))
    return out


__all__ = ["Changes", "ElasticsearchStore", "Endpoint", "MysqlExec", "MysqlNetwork", "MysqlStore", "PostgresExec", "PostgresNetwork",
           "PostgresStore", "SqlResult", "SqlSession", "Store", "StoreError", "check_snapshot_name", "session_for",
           "sql_session_of", "stores_for"]
