"""Shared helpers of the Magento contract replica (DB, config cache, hashes, JWT, sessions).

The config cache lives in Redis database 0 (127.0.0.1:6379), where the real images keep
Magento's default cache frontend (page cache: database 1; research/real-images.md §1.2).

This is a replica (test double) of the Magento 2.4 surface described in
research/contract-magento.md; it is not Magento.
"""
import base64, fcntl, hashlib, hmac, json, os, re, secrets, stat, time

import pymysql
import redis

ROOT = os.environ.get("MAGE_ROOT", "/var/www/magento2")
DB = dict(host="localhost", unix_socket="/run/mysqld/mysqld.sock", user="magentouser",
          password="MyPassword", database="magentodb", charset="utf8mb4", autocommit=True,
          cursorclass=pymysql.cursors.DictCursor)
#: Redis databases of Magento's cache frontends on the real images: default, page_cache.
CACHE_DB, PAGE_CACHE_DB = 0, 1
#: The config cache's key (Cm_Cache_Backend_Redis keeps an entry as the hash zc:k:<id>).
CONFIG_KEY = "zc:k:mage_replica_config"


def cache(db=CACHE_DB):
    return redis.Redis(host="127.0.0.1", port=6379, db=db, socket_timeout=2, socket_connect_timeout=2)


def connect():
    return pymysql.connect(**DB)


def q(conn, sql, args=None):
    with conn.cursor() as c:
        c.execute(sql, args)
        return c.fetchall()


def q1(conn, sql, args=None):
    rows = q(conn, sql, args)
    return rows[0] if rows else None


def ex(conn, sql, args=None):
    with conn.cursor() as c:
        c.execute(sql, args)
        return c.lastrowid


# --- config (default scope), cached in Redis like the real images' Magento -------------
def load_config(conn):
    """core_config_data default-scope values; cached in Redis (database 0) until cache:flush.
    Without Redis the values come from the database each time (never a stale copy)."""
    try:
        raw = cache().hget(CONFIG_KEY, "d")
        if raw:
            return json.loads(raw)
    except (redis.RedisError, ValueError):
        pass
    cfg = {r["path"]: r["value"] for r in q(conn, "SELECT path, value FROM core_config_data WHERE scope='default' AND scope_id=0")}
    try:
        cache().hset(CONFIG_KEY, "d", json.dumps(cfg))
    except redis.RedisError:
        pass
    return cfg


def set_config(conn, path, value, scope="default", scope_id=0):
    ex(conn, "INSERT INTO core_config_data (scope, scope_id, path, value) VALUES (%s,%s,%s,%s) "
             "ON DUPLICATE KEY UPDATE value=VALUES(value)", (scope, scope_id, path, value))


# --- password hashes: Magento Encryptor format "<hash>:<salt>:<version>" ----------------
def hash_password(password, salt=None):
    """Version 1 (SHA-256 of salt+password), a format Magento 2 still verifies."""
    salt = salt or secrets.token_hex(16)
    return "%s:%s:1" % (hashlib.sha256((salt + password).encode()).hexdigest(), salt)


def verify_password(password, stored):
    parts = (stored or "").split(":")
    if len(parts) < 3:
        return False
    h, salt = parts[0], parts[1]
    return hmac.compare_digest(hashlib.sha256((salt + password).encode()).hexdigest(), h)


# --- JWT tokens (Magento >= 2.4.4 shape: header kid/alg, claims uid/utypid/iat/exp) -------
def crypt_key():
    try:
        with open(os.path.join(ROOT, "app/etc/env.php")) as f:
            m = re.search(r"'key'\s*=>\s*'([^']+)'", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    return "replica-crypt-key"


def _b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _unb64(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def issue_token(uid, utypid, ttl):
    now = int(time.time())
    head = _b64(json.dumps({"kid": "1", "alg": "HS256"}, separators=(",", ":")).encode())
    body = _b64(json.dumps({"uid": uid, "utypid": utypid, "iat": now, "exp": now + ttl}, separators=(",", ":")).encode())
    sig = _b64(hmac.new(crypt_key().encode(), (head + "." + body).encode(), hashlib.sha256).digest())
    return head + "." + body + "." + sig


def read_token(conn, token):
    """Return (uid, utypid) of a valid, unrevoked token, else None."""
    try:
        head, body, sig = token.split(".")
        good = _b64(hmac.new(crypt_key().encode(), (head + "." + body).encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(good, sig):
            return None
        claims = json.loads(_unb64(body))
        if claims["exp"] < time.time():
            return None
        rev = q1(conn, "SELECT revoke_before FROM jwt_auth_revoked WHERE user_type_id=%s AND user_id=%s",
                 (claims["utypid"], claims["uid"]))
        if rev and claims["iat"] <= rev["revoke_before"]:
            return None
        return claims["uid"], claims["utypid"]
    except Exception:
        return None


# --- sessions as files in var/session (env.php session.save = files) ---------------------
# The real images keep Magento's sessions as PHP's file handler does: var/session/sess_<id>
# (research/real-images.md §1.2, env.php 'session' => ['save' => 'files']). As that handler
# (php-src ext/session/mod_files.c), a request opens its session's file in place (O_RDWR,
# O_NOFOLLOW) and holds an exclusive flock on it from the session's start to its close (a new
# session's file, O_CREAT and mode 0600, is written and closed at the end of its first request), so the requests of one session run one after another; a write
# truncates and writes through that descriptor; a request that changed nothing still updates the
# file's time (session.lazy_write's update_timestamp). The content is JSON here (PHP serialises
# its own way). A file older than Magento's cookie lifetime (3600 s, gc_maxlifetime) counts as
# expired, as PHP's garbage collector would have removed it; this replica runs no such collector.
# Anything in var/session that is not a regular file (a FIFO, a folder, a link) is no session.
SESSION_DIR = os.path.join(ROOT, "var", "session")
SESSION_LIFETIME = 3600
SID_RE = re.compile(r"[a-z0-9]{22,64}")
_OPEN = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK


def _session_path(sid):
    return os.path.join(SESSION_DIR, "sess_" + sid)


def _regular_or_close(fd):
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def session_open(sid):
    """(fd, data) of the session `sid`, its file locked exclusively until session_close(fd);
    (None, None) when the id is malformed or the file is absent, not a regular file, unreadable,
    malformed or expired."""
    if not sid or not SID_RE.fullmatch(sid):
        return None, None
    try:
        fd = _regular_or_close(os.open(_session_path(sid), _OPEN))
    except OSError:
        return None, None
    if fd is None:
        return None, None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        st = os.fstat(fd)
        if st.st_mtime + SESSION_LIFETIME < time.time():
            raise ValueError("expired")
        chunks, off = [], 0
        while True:
            b = os.pread(fd, 1 << 16, off)
            if not b:
                break
            chunks.append(b)
            off += len(b)
        data = json.loads(b"".join(chunks) or b"{}")
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return fd, data
    except (OSError, ValueError):
        os.close(fd)
        return None, None


def session_write(fd, data):
    """Replaces the content of the open, locked session file `fd` with `data` (JSON)."""
    body = json.dumps(data).encode()
    os.ftruncate(fd, 0)
    off = 0
    while off < len(body):
        off += os.pwrite(fd, body[off:], off)


def session_create(sid, data):
    """Writes a new session file for `sid` (mode 0600) under an exclusive lock and closes it."""
    if not SID_RE.fullmatch(sid):
        raise ValueError("malformed session id")
    fd = _regular_or_close(os.open(_session_path(sid), _OPEN | os.O_CREAT, 0o600))
    if fd is None:
        raise OSError("session path is not a regular file")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        session_write(fd, data)
    finally:
        os.close(fd)


def session_touch(fd):
    """The file's time moves to now (PHP's update_timestamp for an unchanged session)."""
    os.utime(fd)


def session_close(fd):
    """Releases the session's lock."""
    os.close(fd)


def session_delete(sid):
    if sid and SID_RE.fullmatch(sid):
        try:
            os.unlink(_session_path(sid))
        except OSError:
            pass


def new_id(n=26):
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(n))


def new_form_key():
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return "".join(secrets.choice(alphabet) for _ in range(16))


# --- sales sequence: increment_id = prefix + 9-digit number + suffix ---------------------
def next_increment_id(conn, store_id=1):
    meta = q1(conn, "SELECT m.sequence_table, p.prefix, p.suffix, p.start_value, p.step FROM sales_sequence_meta m "
                    "JOIN sales_sequence_profile p USING (meta_id) WHERE m.entity_type='order' AND m.store_id=%s", (store_id,))
    n = ex(conn, "INSERT INTO `%s` () VALUES ()" % meta["sequence_table"])
    num = (n - meta["start_value"]) * meta["step"] + meta["start_value"]
    return "%s%09d%s" % (meta["prefix"] or "", num, meta["suffix"] or "")


# EAV attribute ids of catalog_product (entity_type_id 4) used by the replica.
ATTR = {"name": (73, "varchar"), "description": (75, "text"), "short_description": (76, "text"),
        "price": (77, "decimal"), "status": (97, "int"), "visibility": (99, "int"),
        "url_key": (121, "varchar"), "quantity_and_stock_status": (115, "int")}


def product(conn, pid=None, sku=None, url_key=None, store_id=0):
    """Load a product as a dict (entity row + EAV values + stock), or None."""
    if pid is None and sku is not None:
        row = q1(conn, "SELECT * FROM catalog_product_entity WHERE sku=%s ORDER BY entity_id LIMIT 1", (sku,))
    elif pid is None and url_key is not None:
        r = q1(conn, "SELECT entity_id FROM catalog_product_entity_varchar WHERE attribute_id=%s AND value=%s LIMIT 1",
               (ATTR["url_key"][0], url_key))
        row = r and q1(conn, "SELECT * FROM catalog_product_entity WHERE entity_id=%s", (r["entity_id"],))
    else:
        row = q1(conn, "SELECT * FROM catalog_product_entity WHERE entity_id=%s", (pid,))
    if not row:
        return None
    p = dict(row)
    for code, (aid, typ) in ATTR.items():
        v = q1(conn, "SELECT value FROM catalog_product_entity_%s WHERE entity_id=%%s AND attribute_id=%%s "
                     "AND store_id IN (0,%%s) ORDER BY store_id DESC LIMIT 1" % typ, (p["entity_id"], aid, store_id))
        p[code] = v["value"] if v else None
    st = q1(conn, "SELECT qty, is_in_stock FROM cataloginventory_stock_item WHERE product_id=%s AND stock_id=1", (p["entity_id"],))
    p["qty"] = float(st["qty"]) if st and st["qty"] is not None else 0.0
    p["is_in_stock"] = int(st["is_in_stock"]) if st else 0
    p["price"] = float(p["price"] or 0)
    return p


def products(conn, pids, store_id=0):
    """product() for many ids with one query per table (list pages at SCALE=full); same dicts, same order."""
    pids = [int(i) for i in pids]
    if not pids:
        return []
    ids = ",".join(str(i) for i in pids)
    rows = {r["entity_id"]: dict(r) for r in q(conn, "SELECT * FROM catalog_product_entity WHERE entity_id IN (%s)" % ids)}
    for code, (aid, typ) in ATTR.items():
        vals = {}
        for v in q(conn, "SELECT entity_id, store_id, value FROM catalog_product_entity_%s WHERE entity_id IN (%s) AND attribute_id=%%s "
                         "AND store_id IN (0,%%s) ORDER BY entity_id, store_id" % (typ, ids), (aid, store_id)):
            vals[v["entity_id"]] = v["value"]                     # highest store_id wins, as in product()
        for pid, p in rows.items():
            p[code] = vals.get(pid)
    stock = {r["product_id"]: r for r in q(conn, "SELECT product_id, qty, is_in_stock FROM cataloginventory_stock_item WHERE stock_id=1 AND product_id IN (%s)" % ids)}
    out = []
    for pid in pids:
        p = rows.get(pid)
        if p is None:
            out.append(None)
            continue
        st = stock.get(pid)
        p["qty"] = float(st["qty"]) if st and st["qty"] is not None else 0.0
        p["is_in_stock"] = int(st["is_in_stock"]) if st else 0
        p["price"] = float(p["price"] or 0)
        out.append(p)
    return out


def set_attr(conn, pid, code, value, store_id=0):
    aid, typ = ATTR[code]
    ex(conn, "INSERT INTO catalog_product_entity_%s (attribute_id, store_id, entity_id, value) VALUES (%%s,%%s,%%s,%%s) "
             "ON DUPLICATE KEY UPDATE value=VALUES(value)" % typ, (aid, store_id, pid, value))


def set_stock(conn, pid, qty=None, is_in_stock=None):
    if qty is not None:
        ex(conn, "UPDATE cataloginventory_stock_item SET qty=%s WHERE product_id=%s AND stock_id=1", (qty, pid))
    if is_in_stock is not None:
        ex(conn, "UPDATE cataloginventory_stock_item SET is_in_stock=%s WHERE product_id=%s AND stock_id=1", (int(is_in_stock), pid))
    ex(conn, "REPLACE INTO cataloginventory_stock_status (product_id, website_id, stock_id, qty, stock_status) "
             "SELECT product_id, 0, 1, qty, is_in_stock FROM cataloginventory_stock_item WHERE product_id=%s AND stock_id=1", (pid,))


def sync_grid(conn, eid):
    ex(conn, GRID_SYNC_SQL + " WHERE o.entity_id=%s", (eid,))


GRID_SYNC_SQL = ("REPLACE INTO sales_order_grid (entity_id, status, store_id, store_name, customer_id, base_grand_total, grand_total, total_paid, increment_id, base_currency_code, "
                 "order_currency_code, shipping_name, billing_name, created_at, updated_at, customer_email, customer_group, subtotal, shipping_and_handling, customer_name, payment_method) "
                 "SELECT o.entity_id, o.status, o.store_id, o.store_name, o.customer_id, o.base_grand_total, o.grand_total, o.total_paid, o.increment_id, 'USD','USD', "
                 "CONCAT(o.customer_firstname,' ',o.customer_lastname), CONCAT(o.customer_firstname,' ',o.customer_lastname), o.created_at, o.updated_at, o.customer_email, 'General', "
                 "o.subtotal, o.shipping_amount, CONCAT(o.customer_firstname,' ',o.customer_lastname), 'checkmo' FROM sales_order o")
