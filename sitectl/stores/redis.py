"""Redis store (GitLab's sessions and caches): the keyspace back to the snapshot's, sessions
included, so saved logins stay valid (research/fast-reset.md §4.3: restore the golden keyspace
rather than FLUSHALL).

Snapshot ``NAME`` copies every key of database ``db`` into database 15 under the prefix
``sitectl:NAME:`` with ``COPY`` (Redis 6.2+), inside one Lua script, so it is atomic. The copies
never expire: each key's time to live at the snapshot is kept in the hash ``sitectl:NAME#ttl``
(GitLab's session keys live 7 days; a copy that expired with them would make golden
unreachable). The fingerprint is a SHA-1 over the sorted keys, their ``DUMP`` values and
whether each expires (the time left is not part of it: it counts down by itself). Restore
empties database ``db``, copies the keys back and gives each expiring key the time to live it
had at the snapshot, counted from the restore.
"""
from __future__ import annotations

from sitectl.errors import StoreError
from sitectl.stores.base import Changes, DiffLimits, Store, valid_names
from sitectl.stores.files import shown
from sitectl.stores.transport import Command, ExecTransport, out_lines

SNAP_DB = 15
#: Keys that expire sooner than this after the snapshot (ms: one hour) are not kept: caches and
#: rate-limit counters, which a reset drops. GitLab's sessions live 7 days (research:
#: contract-postmill-gitlab-map.md, ``session_expire_delay``).
MIN_TTL_MS = 3_600_000

# The copies never expire (PERSIST): each key's time to live at the snapshot (ms) is kept in the
# hash sitectl:NAME#ttl, and every restore gives the key that time again, counted from the reset.
SNAPSHOT_LUA = """
local name, db, floor = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local ttls = 'sitectl:' .. name .. '#ttl'
redis.call('SELECT', 15)
local old = redis.call('KEYS', 'sitectl:' .. name .. ':*')
for i = 1, #old do redis.call('DEL', old[i]) end
redis.call('DEL', ttls)
redis.call('SELECT', db)
local all = redis.call('KEYS', '*')
local keys, left = {}, {}
for i = 1, #all do
  local t = redis.call('PTTL', all[i])
  if t < 0 or t >= floor then
    keys[#keys + 1] = all[i]
    left[#keys] = t
    redis.call('COPY', all[i], 'sitectl:' .. name .. ':' .. all[i], 'DB', 15)
  end
end
redis.call('SELECT', 15)
for i = 1, #keys do
  if left[i] > 0 then
    redis.call('PERSIST', 'sitectl:' .. name .. ':' .. keys[i])
    redis.call('HSET', ttls, keys[i], left[i])
  end
end
redis.call('SET', 'sitectl:' .. name, #keys)
redis.call('SET', 'sitectl:' .. name .. '#v', '2')
return #keys
"""

RESTORE_LUA = """
local name, db = ARGV[1], tonumber(ARGV[2])
local ttls = 'sitectl:' .. name .. '#ttl'
redis.call('SELECT', 15)
if redis.call('EXISTS', 'sitectl:' .. name) == 0 then return redis.error_reply('ERR no snapshot ' .. name) end
local keys = redis.call('KEYS', 'sitectl:' .. name .. ':*')
local prefix = string.len('sitectl:' .. name .. ':')
local left = {}
for i = 1, #keys do left[i] = redis.call('HGET', ttls, string.sub(keys[i], prefix + 1)) end
redis.call('SELECT', db)
redis.call('FLUSHDB')
redis.call('SELECT', 15)
for i = 1, #keys do
  redis.call('COPY', keys[i], string.sub(keys[i], prefix + 1), 'DB', db)
end
redis.call('SELECT', db)
for i = 1, #keys do
  if left[i] then redis.call('PEXPIRE', string.sub(keys[i], prefix + 1), tonumber(left[i])) end
end
return #keys
"""

# The digest a checkpoint's save and apply compare: of the keys of the selected database that
# a snapshot would keep (no time to live, or at least ARGV floor ms left), sorted, each with its
# DUMP value and whether it expires.
_DURABLE_LUA = """
local function durable(floor)
  local all = redis.call('KEYS', '*')
  table.sort(all)
  local parts = {}
  for i = 1, #all do
    local t = redis.call('PTTL', all[i])
    if t < 0 or t >= floor then
      parts[#parts + 1] = redis.sha1hex(all[i] .. '\\0' .. redis.call('DUMP', all[i]) .. (t > 0 and '\\0e' or ''))
    end
  end
  return #parts .. ':' .. redis.sha1hex(table.concat(parts))
end
"""
# Checkpoint ARGV[3] of database ARGV[2] against snapshot ARGV[1]'s copies, in database 15 under
# 'sitectl#c:CKPT:' (no snapshot name holds '#'): every key a snapshot would keep (ARGV[4]: the
# floor of time to live, ms) whose DUMP value differs from the snapshot's copy or that the
# snapshot lacks, with its time to live (kept in the hash 'sitectl#c:CKPT#ttl'; the copies never
# expire), and the set 'sitectl#c:CKPT#gone' of the snapshot's keys that are gone (or would not
# be kept). Returns {kept, gone, durable digest}.
CKPT_SAVE_LUA = _DURABLE_LUA + """
local golden, db, ck, floor = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local gp, cp = 'sitectl:' .. golden .. ':', 'sitectl#c:' .. ck .. ':'
local ttls, gone = 'sitectl#c:' .. ck .. '#ttl', 'sitectl#c:' .. ck .. '#gone'
redis.call('SELECT', 15)
local old = redis.call('KEYS', cp .. '*')
for i = 1, #old do redis.call('DEL', old[i]) end
redis.call('DEL', ttls, gone, 'sitectl#c:' .. ck)
local then_, expired = {}, {}
local copies = redis.call('KEYS', gp .. '*')
for i = 1, #copies do
  local k = string.sub(copies[i], string.len(gp) + 1)
  then_[k] = redis.sha1hex(redis.call('DUMP', copies[i]))
  expired[k] = redis.call('HEXISTS', 'sitectl:' .. golden .. '#ttl', k) == 1
end
redis.call('SELECT', db)
local all = redis.call('KEYS', '*')
local kept, left, seen = {}, {}, {}
for i = 1, #all do
  local k = all[i]
  local t = redis.call('PTTL', k)
  if t < 0 or t >= floor then
    seen[k] = true
    -- its value, or whether it expires (a key made persistent keeps its value), differs from golden's
    if then_[k] ~= redis.sha1hex(redis.call('DUMP', k)) or expired[k] ~= (t > 0) then
      kept[#kept + 1] = k
      left[#kept] = t
      redis.call('COPY', k, cp .. k, 'DB', 15)
    end
  end
end
local digest = durable(floor)
redis.call('SELECT', 15)
for i = 1, #kept do
  if left[i] > 0 then
    redis.call('PERSIST', cp .. kept[i])
    redis.call('HSET', ttls, kept[i], left[i])
  end
end
local n = 0
for k, _ in pairs(then_) do
  if not seen[k] then redis.call('SADD', gone, k) n = n + 1 end
end
redis.call('SET', 'sitectl#c:' .. ck, digest)
return {#kept, n, digest}
"""
# Checkpoint ARGV[1] applied to database ARGV[2] (at the snapshot's keyspace): its gone keys
# deleted, its kept keys copied in (replacing), each with the time to live it had when saved;
# then the durable keys' digest must be the one saved (ARGV[3]: the floor), else an error.
CKPT_APPLY_LUA = _DURABLE_LUA + """
local ck, db, floor = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local cp = 'sitectl#c:' .. ck .. ':'
local ttls, gone = 'sitectl#c:' .. ck .. '#ttl', 'sitectl#c:' .. ck .. '#gone'
redis.call('SELECT', 15)
local want = redis.call('GET', 'sitectl#c:' .. ck)
if not want then return redis.error_reply('ERR no checkpoint ' .. ck .. ' in the container: delete it and save it again') end
local keys = redis.call('KEYS', cp .. '*')
local dead = redis.call('SMEMBERS', gone)
local left = {}
for i = 1, #keys do left[i] = redis.call('HGET', ttls, string.sub(keys[i], string.len(cp) + 1)) end
redis.call('SELECT', db)
for i = 1, #dead do redis.call('DEL', dead[i]) end
redis.call('SELECT', 15)
for i = 1, #keys do redis.call('COPY', keys[i], string.sub(keys[i], string.len(cp) + 1), 'DB', db, 'REPLACE') end
redis.call('SELECT', db)
for i = 1, #keys do
  if left[i] then redis.call('PEXPIRE', string.sub(keys[i], string.len(cp) + 1), tonumber(left[i])) end
end
local got = durable(floor)
if got ~= want then return redis.error_reply('ERR the keyspace after the checkpoint is not the one saved (' .. got .. ', saved ' .. want .. ')') end
return #keys
"""
# A digest of the keys, their DUMP values and whether each expires (ARGV[4]: the snapshot's TTL
# hash, or '' for the live keyspace, whose own PTTL is read). The time left is not part of it:
# it counts down by itself, and each restore sets golden's again. ARGV[5...]: key prefixes
# digested apart (one line each after the keyspace's: "PREFIX n:sha1"), so the keys a site's
# jobs write can be told from the rest.
DIGEST_LUA = """
local pattern, strip, db, ttls = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] or ''
if ttls ~= '' then  -- a snapshot of sitectl before 0.1.x's TTL hash: its copies carry their own TTL
  redis.call('SELECT', 15)
  if redis.call('EXISTS', string.sub(ttls, 1, -5) .. '#v') == 0 then ttls = '' end
end
redis.call('SELECT', db)
local keys = redis.call('KEYS', pattern)
table.sort(keys)
local groups = {[0] = {}}
for j = 5, #ARGV do groups[j] = {} end
for i = 1, #keys do
  local k = string.sub(keys[i], strip + 1)
  local expires
  if ttls == '' then expires = redis.call('PTTL', keys[i]) > 0 else expires = redis.call('HEXISTS', ttls, k) == 1 end
  local g = 0
  for j = 5, #ARGV do
    if string.sub(k, 1, string.len(ARGV[j])) == ARGV[j] then g = j break end
  end
  local part = groups[g]
  part[#part + 1] = redis.sha1hex(k .. '\\0' .. redis.call('DUMP', keys[i]) .. (expires and '\\0e' or ''))
end
local out = {#groups[0] .. ':' .. redis.sha1hex(table.concat(groups[0]))}
for j = 5, #ARGV do out[#out + 1] = ARGV[j] .. ' ' .. #groups[j] .. ':' .. redis.sha1hex(table.concat(groups[j])) end
if #out == 1 then return out[1] end
return out
"""


EXPORT_LUA = """
local name = ARGV[1]
local ttls = 'sitectl:' .. name .. '#ttl'
redis.call('SELECT', 15)
local keys = redis.call('KEYS', 'sitectl:' .. name .. ':*')
table.sort(keys)
local out = {}
local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', string.byte(c)) end)) end
local prefix = string.len('sitectl:' .. name .. ':')
for i = 1, #keys do
  local k = string.sub(keys[i], prefix + 1)
  local ttl = tonumber(redis.call('HGET', ttls, k) or '0')
  out[#out + 1] = hex(k) .. ' ' .. hex(redis.call('DUMP', keys[i])) .. ' ' .. ttl
end
return out
"""

IMPORT_LUA = """
local name = ARGV[1]
local ttls = 'sitectl:' .. name .. '#ttl'
redis.call('SELECT', 15)
local old = redis.call('KEYS', 'sitectl:' .. name .. ':*')
for i = 1, #old do redis.call('DEL', old[i]) end
redis.call('DEL', ttls)
local function unhex(h) return (h:gsub('..', function(b) return string.char(tonumber(b, 16)) end)) end
for i = 2, #ARGV, 3 do
  local k = unhex(ARGV[i])
  redis.call('RESTORE', 'sitectl:' .. name .. ':' .. k, 0, unhex(ARGV[i + 1]), 'REPLACE')
  if tonumber(ARGV[i + 2]) > 0 then redis.call('HSET', ttls, k, ARGV[i + 2]) end
end
redis.call('SET', 'sitectl:' .. name, (#ARGV - 1) / 3)
redis.call('SET', 'sitectl:' .. name .. '#v', '2')
return (#ARGV - 1) / 3
"""


# Per key, how the live keyspace differs from snapshot ARGV[1]'s copies (with ARGV[4], from
# checkpoint ARGV[4] over them): "HEXKEY added",
# "HEXKEY removed" or "HEXKEY changed" (its DUMP value differs), sorted by key; at most ARGV[3]
# lines, then "+ N" more.
DIFF_LUA = """
local name, db, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local prefix = 'sitectl:' .. name .. ':'
local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', string.byte(c)) end)) end
redis.call('SELECT', 15)
local then_ = {}
local copies = redis.call('KEYS', prefix .. '*')
for i = 1, #copies do then_[string.sub(copies[i], string.len(prefix) + 1)] = redis.sha1hex(redis.call('DUMP', copies[i])) end
local ck = ARGV[4] or ''
if ck ~= '' then  -- against checkpoint ARGV[4]: golden's keys, its own kept keys over them, its gone keys out
  local cp = 'sitectl#c:' .. ck .. ':'
  local kept = redis.call('KEYS', cp .. '*')
  for i = 1, #kept do then_[string.sub(kept[i], string.len(cp) + 1)] = redis.sha1hex(redis.call('DUMP', kept[i])) end
  local gone = redis.call('SMEMBERS', 'sitectl#c:' .. ck .. '#gone')
  for i = 1, #gone do then_[gone[i]] = nil end
end
redis.call('SELECT', db)
local found = {}
local live = redis.call('KEYS', '*')
for i = 1, #live do
  local k = live[i]
  local was = then_[k]
  if was == nil then found[#found + 1] = {k, 'added'}
  elseif was ~= redis.sha1hex(redis.call('DUMP', k)) then found[#found + 1] = {k, 'changed'} end
  then_[k] = nil
end
for k, _ in pairs(then_) do found[#found + 1] = {k, 'removed'} end
table.sort(found, function(a, b) return a[1] < b[1] end)
local out = {}
for i = 1, math.min(#found, cap) do out[#out + 1] = hex(found[i][1]) .. ' ' .. found[i][2] end
if #found > cap then out[#out + 1] = '+ ' .. (#found - cap) end
return out
"""


class RedisStore(Store):
    """A Redis server reached with its CLI inside the container.

    Args:
        client: argv prefix (``["redis-cli"]``; GitLab's omnibus wrapper ``["gitlab-redis-cli"]``).
        db: the application's database index (0).
    """

    kind = "redis"

    def __init__(self, site: str, transport: ExecTransport, client: list[str] | None = None, db: int = 0,
                 apart: list[str] | None = None):
        super().__init__(site, "redis")
        self.transport = transport
        self.client = client or ["redis-cli"]
        self.db = db
        self.apart = list(apart or [])

    def _eval(self, script: str, *args: str, what: str) -> str:
        out = self.transport.run([*self.client, "EVAL", script, "0", *args], f"redis {what}").strip()
        if out.startswith("(error)") or out.startswith("ERR"):
            raise StoreError(f"{self.site}: redis {what}: {out}")
        return out

    def exists(self, name: str) -> bool:
        return self.transport.run([*self.client, "-n", str(SNAP_DB), "EXISTS", f"sitectl:{name}"], "redis exists").strip() == "1"

    def snapshot(self, name: str) -> dict:
        n = self._eval(SNAPSHOT_LUA, name, str(self.db), str(MIN_TTL_MS), what=f"snapshot {name}")
        return {"fingerprint": self.fingerprint(name), "size": 0, "keys": int(n or 0)}

    def _digest_args(self, name: str | None) -> list[str]:
        """:data:`DIGEST_LUA`'s arguments: the live keyspace (``name`` None) or snapshot ``name``'s
        copies, with its TTL hash."""
        if name:
            prefix = f"sitectl:{name}:"
            return [prefix + "*", str(len(prefix)), str(SNAP_DB), f"sitectl:{name}#ttl", *self.apart]
        return ["*", "0", str(self.db), "", *self.apart]

    def _digest(self, name: str | None) -> str:
        return self._eval(DIGEST_LUA, *self._digest_args(name), what="digest")

    def detect_requests(self, name: str) -> list:
        return [Command([*self.client, "EVAL", DIGEST_LUA, "0", *self._digest_args(n)]) for n in (None, name)]

    def parse_changes(self, name: str, results: list[tuple[int, str]]) -> Changes:
        (rc1, live), (rc2, snap) = results
        live, snap = live.strip(), snap.strip()
        if rc1 or rc2 or "ERR" in live or "ERR" in snap:
            raise StoreError(f"{self.site}: redis digest failed: {live[-200:]} {snap[-200:]}")
        if live == snap:
            return Changes()
        now, then = self._parsed(live), self._parsed(snap)
        return Changes(sorted(f"{k} ({now.get(k, '0:').split(':')[0]} keys now, {then.get(k, '0:').split(':')[0]} in {name})"
                              for k in set(now) | set(then) if now.get(k) != then.get(k)))

    def diff(self, name: str, changes: Changes, limits: DiffLimits) -> dict:
        """The keys added, removed or changed (their ``DUMP`` value) since snapshot ``name``
        (docs/diff.md), read in one Lua script; key names as the files' paths are shown
        (:func:`sitectl.stores.files.shown`: a backslash doubled, a byte that is not UTF-8 as
        ``\\xNN``). A key's time to live alone is not compared. Keys that expire within an hour
        are never in a snapshot (:data:`MIN_TTL_MS`), so caches written since show as added."""
        if not changes:
            return {"items": [], "keys": [], "truncated": False}
        return self._key_diff(name, limits, "", list(changes.items))

    def diff_checkpoint(self, ckpt: str, entry: dict, golden: str, changes: Changes, limits: DiffLimits) -> dict:
        """The keys added, removed or changed since checkpoint ``ckpt``: the live keyspace against
        golden's copies with the checkpoint's kept keys over them and its gone keys out (as
        :meth:`diff`: time to live not compared; keys expiring within the hour were kept by
        neither)."""
        return self._key_diff(golden, limits, ckpt, list(changes.items))

    def _key_diff(self, name: str, limits: DiffLimits, ckpt: str, items: list[str]) -> dict:
        keys, more = [], 0
        for line in out_lines(self._eval(DIFF_LUA, name, str(self.db), str(limits.entries), ckpt,
                                         what=f"diff against {ckpt or name}")):
            hexkey, _, change = line.strip().partition(" ")
            if hexkey == "+":
                more = int(change or 0)
                continue
            try:
                key = shown(bytes.fromhex(hexkey).decode("utf-8", "surrogateescape"))
            except ValueError:
                continue
            if change in ("added", "removed", "changed"):
                keys.append({"key": key, "change": change})
        return {"items": items, "keys": keys, "truncated": more > 0}

    def restore(self, name: str, changes: Changes | None = None) -> list[str]:
        if changes is not None and not changes:
            return []
        self._eval(RESTORE_LUA, name, str(self.db), what=f"restore {name}")
        return ["redis keyspace"]

    def restore_requests(self, name: str, changes: Changes) -> list | None:
        if not changes:
            return []
        return [Command([*self.client, "EVAL", RESTORE_LUA, "0", name, str(self.db)])]

    def _parsed(self, out: str) -> dict[str, str]:
        """``{item: "n:sha1"}`` from :data:`DIGEST_LUA`'s output: ``redis keyspace`` (the keys
        of no ``apart`` prefix) and ``redis keys PREFIX*`` for each prefix."""
        lines = out_lines(out.strip())
        rest = dict(ln.rsplit(" ", 1) for ln in lines[1:] if " " in ln)
        return {"redis keyspace": lines[0] if lines else "", **{f"redis keys {p}*": rest.get(p, "") for p in self.apart}}

    def fingerprint(self, name: str | None = None) -> dict[str, str]:
        return self._parsed(self._digest(name))

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

    # -- checkpoints (docs/checkpoints.md) ------------------------------------------------
    def checkpoint_refusal(self, changes: Changes) -> str:
        return "" if self.diffable(changes) else "no record of golden (" + "; ".join(changes.items[:2]) + ")"

    def checkpoint_save(self, ckpt: str, golden: str, changes: Changes) -> dict:
        """Checkpoint ``ckpt`` in database 15 (:data:`CKPT_SAVE_LUA`, one atomic script): the
        keys that differ from snapshot ``golden``'s copies or that it lacks, with their time to
        live, and the names of its keys that are gone; as a snapshot, never the keys that expire
        within :data:`MIN_TTL_MS` (caches and counters, which a reset drops too)."""
        out = [ln.strip() for ln in out_lines(self._eval(CKPT_SAVE_LUA, golden, str(self.db), ckpt, str(MIN_TTL_MS),
                                                          what=f"checkpoint {ckpt}")) if ln.strip()]
        if len(out) != 3 or not out[0].isdigit() or not out[1].isdigit():
            raise StoreError(f"{self.site}: redis checkpoint {ckpt}: unexpected answer {' | '.join(out)[-200:]}")
        return {"keys": int(out[0]), "gone": int(out[1]), "digest": out[2]}

    def checkpoint_apply_requests(self, ckpt: str, golden: str, entry: dict) -> list:
        """The apply script (:data:`CKPT_APPLY_LUA`), which fails unless the keys a snapshot
        would keep then digest as they did when saved."""
        return [Command([*self.client, "EVAL", CKPT_APPLY_LUA, "0", ckpt, str(self.db), str(MIN_TTL_MS)])]

    def checkpoint_marks(self, changes: Changes) -> list[str]:
        # The apply checks the keyspace itself (its durable digest); a detection's counts include
        # the keys that expire within the hour, which neither a snapshot nor a checkpoint keeps.
        return []

    def checkpoint_drop(self, ckpt: str) -> None:
        self._eval("redis.call('SELECT', 15) local k = redis.call('KEYS', 'sitectl#c:' .. ARGV[1] .. ':*') "
                   "for i = 1, #k do redis.call('DEL', k[i]) end redis.call('DEL', 'sitectl#c:' .. ARGV[1], "
                   "'sitectl#c:' .. ARGV[1] .. '#ttl', 'sitectl#c:' .. ARGV[1] .. '#gone') return #k",
                   ckpt, what=f"drop checkpoint {ckpt}")

    def checkpoint_held(self) -> set[str]:
        out = self._eval("redis.call('SELECT', 15) local k = redis.call('KEYS', 'sitectl#c:*') local seen = {} "
                         "for i = 1, #k do local n = string.match(k[i], '^sitectl#c:([a-z][a-z0-9_]*)$') "
                         "if n then seen[n] = true end end local o = {} for n in pairs(seen) do o[#o + 1] = n end "
                         "return table.concat(o, ' ')", what="list checkpoint copies")
        return valid_names(str(out or "").split())

    def held(self) -> set[str]:
        out = self._eval("redis.call('SELECT', 15) local k = redis.call('KEYS', 'sitectl:*') local seen = {} "
                         "for i = 1, #k do local n = string.match(k[i], '^sitectl:([a-z][a-z0-9_]*)$') "
                         "or string.match(k[i], '^sitectl:([a-z][a-z0-9_]*)[:#]') "
                         "if n then seen[n] = true end end local o = {} for n in pairs(seen) do o[#o + 1] = n end "
                         "return table.concat(o, ' ')", what="list snapshot copies")
        return valid_names(str(out or "").split())

    def drop(self, name: str) -> None:
        self._eval("redis.call('SELECT', 15) local k = redis.call('KEYS', 'sitectl:' .. ARGV[1] .. ':*') "
                   "for i = 1, #k do redis.call('DEL', k[i]) end redis.call('DEL', 'sitectl:' .. ARGV[1], "
                   "'sitectl:' .. ARGV[1] .. '#ttl', 'sitectl:' .. ARGV[1] .. '#v') return #k",
                   name, what=f"drop {name}")
