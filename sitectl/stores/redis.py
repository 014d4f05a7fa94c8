"""Redis store (GitLab's sessions and caches): the keyspace back to the snapshot's, sessions
included, so saved logins stay valid (research/fast-reset.md §4.3: restore the golden keyspace
rather than FLUSHALL).

Snapshot ``NAME`` copies every key of database ``db`` into database 15 under the prefix
``sitectl:NAME:`` with ``COPY`` (Redis 6.2+), inside one Lua script, so it is atomic. The
fingerprint is a SHA-1 over the sorted keys and their ``DUMP`` values (TTLs are not part of it:
they count down by themselves). Restore empties database ``db`` and copies the keys back.
"""
from __future__ import annotations

from sitectl.errors import StoreError
from sitectl.stores.base import Changes, Store
from sitectl.stores.transport import Command, ExecTransport, out_lines

SNAP_DB = 15

SNAPSHOT_LUA = """
local name, db = ARGV[1], tonumber(ARGV[2])
redis.call('SELECT', 15)
local old = redis.call('KEYS', 'sitectl:' .. name .. ':*')
for i = 1, #old do redis.call('DEL', old[i]) end
redis.call('SELECT', db)
local keys = redis.call('KEYS', '*')
for i = 1, #keys do redis.call('COPY', keys[i], 'sitectl:' .. name .. ':' .. keys[i], 'DB', 15) end
redis.call('SELECT', 15)
redis.call('SET', 'sitectl:' .. name, #keys)
return #keys
"""

RESTORE_LUA = """
local name, db = ARGV[1], tonumber(ARGV[2])
redis.call('SELECT', 15)
if redis.call('EXISTS', 'sitectl:' .. name) == 0 then return redis.error_reply('no snapshot ' .. name) end
local keys = redis.call('KEYS', 'sitectl:' .. name .. ':*')
redis.call('SELECT', db)
redis.call('FLUSHDB')
redis.call('SELECT', 15)
local prefix = string.len('sitectl:' .. name .. ':')
for i = 1, #keys do
  redis.call('COPY', keys[i], string.sub(keys[i], prefix + 1), 'DB', db)
end
return #keys
"""

DIGEST_LUA = """
local pattern, strip, db = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('SELECT', db)
local keys = redis.call('KEYS', pattern)
table.sort(keys)
local parts = {}
for i = 1, #keys do
  parts[#parts + 1] = redis.sha1hex(string.sub(keys[i], strip + 1) .. '\\0' .. redis.call('DUMP', keys[i]))
end
return #keys .. ':' .. redis.sha1hex(table.concat(parts))
"""


EXPORT_LUA = """
local name = ARGV[1]
redis.call('SELECT', 15)
local keys = redis.call('KEYS', 'sitectl:' .. name .. ':*')
table.sort(keys)
local out = {}
local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', string.byte(c)) end)) end
local prefix = string.len('sitectl:' .. name .. ':')
for i = 1, #keys do
  local ttl = redis.call('PTTL', keys[i])
  if ttl < 0 then ttl = 0 end
  out[#out + 1] = hex(string.sub(keys[i], prefix + 1)) .. ' ' .. hex(redis.call('DUMP', keys[i])) .. ' ' .. ttl
end
return out
"""

IMPORT_LUA = """
local name = ARGV[1]
redis.call('SELECT', 15)
local old = redis.call('KEYS', 'sitectl:' .. name .. ':*')
for i = 1, #old do redis.call('DEL', old[i]) end
local function unhex(h) return (h:gsub('..', function(b) return string.char(tonumber(b, 16)) end)) end
for i = 2, #ARGV, 3 do
  redis.call('RESTORE', 'sitectl:' .. name .. ':' .. unhex(ARGV[i]), tonumber(ARGV[i + 2]), unhex(ARGV[i + 1]), 'REPLACE')
end
redis.call('SET', 'sitectl:' .. name, (#ARGV - 1) / 3)
return (#ARGV - 1) / 3
"""


class RedisStore(Store):
    """A Redis server reached with its CLI inside the container.

    Args:
        client: argv prefix (``["redis-cli"]``; GitLab's omnibus wrapper ``["gitlab-redis-cli"]``).
        db: the application's database index (0).
    """

    kind = "redis"

    def __init__(self, site: str, transport: ExecTransport, client: list[str] | None = None, db: int = 0):
        super().__init__(site, "redis")
        self.transport = transport
        self.client = client or ["redis-cli"]
        self.db = db

    def _eval(self, script: str, *args: str, what: str) -> str:
        out = self.transport.run([*self.client, "EVAL", script, "0", *args], f"redis {what}").strip()
        if out.startswith("(error)") or out.startswith("ERR"):
            raise StoreError(f"{self.site}: redis {what}: {out}")
        return out

    def exists(self, name: str) -> bool:
        return self.transport.run([*self.client, "-n", str(SNAP_DB), "EXISTS", f"sitectl:{name}"], "redis exists").strip() == "1"

    def snapshot(self, name: str) -> dict:
        n = self._eval(SNAPSHOT_LUA, name, str(self.db), what=f"snapshot {name}")
        return {"fingerprint": self.fingerprint(name), "size": 0, "keys": int(n or 0)}

    def _digest(self, name: str | None) -> str:
        if name:
            prefix = f"sitectl:{name}:"
            return self._eval(DIGEST_LUA, prefix + "*", str(len(prefix)), str(SNAP_DB), what="digest")
        return self._eval(DIGEST_LUA, "*", "0", str(self.db), what="digest")

    def detect_requests(self, name: str) -> list:
        prefix = f"sitectl:{name}:"
        return [Command([*self.client, "EVAL", DIGEST_LUA, "0", "*", "0", str(self.db)]),
                Command([*self.client, "EVAL", DIGEST_LUA, "0", prefix + "*", str(len(prefix)), str(SNAP_DB)])]

    def parse_changes(self, name: str, results: list[tuple[int, str]]) -> Changes:
        (rc1, live), (rc2, snap) = results
        live, snap = live.strip(), snap.strip()
        if rc1 or rc2 or "ERR" in live or "ERR" in snap:
            raise StoreError(f"{self.site}: redis digest failed: {live[-200:]} {snap[-200:]}")
        if live == snap:
            return Changes()
        return Changes([f"redis keyspace ({live.split(':')[0]} keys now, {snap.split(':')[0]} in {name})"])

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        if changes is not None and not changes:
            return []
        self._eval(RESTORE_LUA, name, str(self.db), what=f"restore {name}")
        return ["redis keyspace"]

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if not changes:
            return []
        return [Command([*self.client, "EVAL", RESTORE_LUA, "0", name, str(self.db)])]

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        return {"redis keyspace": self._digest(name)}

    def export_payload(self, name: str, stage: str) -> str | None:
        out = f"{stage}/redis.txt"
        self.transport.run(["sh", "-c", 'out=$1; shift; "$@" > "$out"', "sh", out, *self.client, "EVAL", EXPORT_LUA, "0", name],
                   "redis export")
        return out

    def import_payload(self, name: str, path: str, original: str) -> None:
        text = self.transport.run(["cat", path], "redis read payload")
        args = []
        for line in out_lines(text):
            parts = line.split(" ")
            if len(parts) != 3 or not all(parts):
                raise StoreError(f"{self.site}: redis payload line is malformed: {line[:80]!r}")
            args += parts
        self._eval(IMPORT_LUA, name, *args, what=f"import {name}")

    def drop(self, name: str) -> None:
        self._eval("redis.call('SELECT', 15) local k = redis.call('KEYS', 'sitectl:' .. ARGV[1] .. ':*') "
                   "for i = 1, #k do redis.call('DEL', k[i]) end redis.call('DEL', 'sitectl:' .. ARGV[1]) return #k",
                   name, what=f"drop {name}")
