#!/usr/bin/env python3
"""bin/magento of the Magento contract replica (a Python stand-in, not Magento's CLI).

Implements the commands WebArena/VWA setup runs (contract-magento.md §5):
  setup:store-config:set --base-url=URL [--base-url-secure=URL] [--use-secure=0|1]
                         [--use-secure-admin=0|1] [--use-rewrites=0|1] [--admin-use-security-key=0|1]
  config:set [--scope=default] [--scope-code=CODE] PATH VALUE
  config:show [PATH]
  cache:flush [TYPES...] / cache:clean [TYPES...]
  indexer:set-mode {schedule|realtime} [INDEXER...]
  indexer:status [INDEXER...] / indexer:show-mode [INDEXER...] / indexer:reindex [INDEXER...]
  cron:run   (what Magento's crontab runs each minute; the replica's cron service runs it)
  --version
"""
import glob, json, os, re, shutil, sys, time
from datetime import datetime
from urllib.parse import urlsplit

sys.path.insert(0, "/opt/magento-replica")
import mage
import search_index

TITLES = {"design_config_grid": "Design Config Grid", "customer_grid": "Customer Grid", "catalog_category_product": "Category Products",
          "catalog_product_category": "Product Categories", "catalogrule_rule": "Catalog Rule Product", "catalog_product_attribute": "Product EAV",
          "cataloginventory_stock": "Stock", "inventory": "Inventory", "catalogrule_product": "Catalog Product Rule",
          "catalog_product_price": "Product Price", "catalogsearch_fulltext": "Catalog Search"}
VIEW = {"customer_grid": "customer_dummy", "design_config_grid": "design_config_dummy"}
#: Magento's own indexer triggers as the install dump created them (saved by seed.py from
#: information_schema before the replica's seed): name -> {table, event, timing, statement}.
#: Each line of a statement's body writes one view's changelog (`<view>_cl`).
TRIGGERS_FILE = "/opt/magento-replica/mview-triggers.json"


def opts(args):
    o, pos = {}, []
    for a in args:
        if a.startswith("--"):
            k, _, v = a[2:].partition("=")
            o[k] = v
        else:
            pos.append(a)
    return o, pos


def flush_cache():
    """Magento's cache:flush: the Redis databases of both cache frontends (waiting up to 10 s
    for the server, which starts beside this one), and the file caches."""
    for db in (mage.CACHE_DB, mage.PAGE_CACHE_DB):
        for i in range(100):
            try:
                mage.cache(db).flushdb()
                break
            except mage.redis.RedisError:
                if i == 99:
                    raise
                time.sleep(0.1)
    root = mage.ROOT
    for d in ("var/cache", "var/page_cache"):
        for p in glob.glob(os.path.join(root, d, "*")) + glob.glob(os.path.join(root, d, ".*")):
            shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.remove(p)


def store_config_set(conn, o):
    mapping = {"base-url": "web/unsecure/base_url", "base-url-secure": "web/secure/base_url", "use-secure": "web/secure/use_in_frontend",
               "use-secure-admin": "web/secure/use_in_adminhtml", "use-rewrites": "web/seo/use_rewrites",
               "admin-use-security-key": "admin/security/use_form_key", "language": "general/locale/code",
               "timezone": "general/locale/timezone", "currency": "currency/options/base"}
    for k, v in o.items():
        if k not in mapping:
            print("The \"--%s\" option does not exist." % k, file=sys.stderr)
            return 1
        if k.startswith("base-url"):
            if urlsplit(v).scheme not in ("http", "https") or not urlsplit(v).netloc:
                print("Invalid value. Value must be a URL or one of placeholders: {{base_url}},{{unsecure_base_url}}", file=sys.stderr)
                return 1
            v = v.rstrip("/") + "/"
        mage.set_config(conn, mapping[k], v)
    flush_cache()     # the installer cleans the config cache after writing
    return 0


def triggers(conn):
    """Magento's Mview subscriptions for the views on "Update by Schedule": each of the install's
    triggers with only the lines of enabled views (its exact text when all are), dropped when
    none is (Magento\\Framework\\Mview\\View\\Subscription does the same from mview.xml)."""
    sched = {r["view_id"] for r in mage.q(conn, "SELECT view_id FROM mview_state WHERE mode='enabled'")}
    for name, t in sorted(json.load(open(TRIGGERS_FILE)).items()):
        lines = t["statement"].splitlines()
        body = [ln for ln in lines[1:-1] if _view_of(ln) in sched]
        mage.ex(conn, "DROP TRIGGER IF EXISTS `%s`" % name)
        if not body:
            continue
        text = t["statement"] if len(body) == len(lines) - 2 else "\n".join([lines[0], *body, lines[-1]])
        mage.ex(conn, "CREATE TRIGGER `%s` %s %s ON `%s` FOR EACH ROW %s" % (name, t["timing"], t["event"], t["table"], text))


def _view_of(line):
    """The view whose changelog a trigger line writes (``INSERT IGNORE INTO `<view>_cl` ...``)."""
    m = re.search(r"INSERT IGNORE INTO `(\w+)_cl`", line)
    return m.group(1) if m else None


def set_mode(conn, mode, names):
    names = names or list(TITLES)
    for n in names:
        if n not in TITLES:
            print("The following requested index types are not supported: '%s'.\nSupported types: %s" % (n, ", ".join(TITLES)), file=sys.stderr)
            return 1
    for n in names:
        view = VIEW.get(n, n)
        old = mage.q1(conn, "SELECT mode FROM mview_state WHERE view_id=%s", (view,))
        was = "Update by Schedule" if old and old["mode"] == "enabled" else "Update on Save"
        if mode == "schedule":
            mage.ex(conn, "CREATE TABLE IF NOT EXISTS `%s_cl` (version_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, entity_id INT UNSIGNED NOT NULL DEFAULT 0)" % view)
            # mview_state.view_id has an index, not a unique key, in Magento's table
            if old:
                mage.ex(conn, "UPDATE mview_state SET mode='enabled' WHERE view_id=%s", (view,))
            else:
                mage.ex(conn, "INSERT INTO mview_state (view_id, mode, status, updated, version_id) VALUES (%s,'enabled','idle',%s,0)",
                        (view, datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")))
            now = "Update by Schedule"
        else:
            mage.ex(conn, "UPDATE mview_state SET mode='disabled' WHERE view_id=%s", (view,))
            now = "Update on Save"
        if was == now:
            print("Index mode for Indexer %s has not been changed" % TITLES[n])
        else:
            print("Index mode for Indexer %s was changed from '%s' to '%s'" % (TITLES[n], was, now))
    triggers(conn)
    return 0


#: Job codes the replica's cron:run schedules (a subset of Magento's crontab.xml groups).
CRON_JOBS = ["indexer_reindex_all_invalid", "indexer_update_all_views", "indexer_clean_all_changelogs",
             "sales_clean_quotes", "catalog_product_outdated_price_values_cleanup"]


def cron_run(conn):
    """The replica's ``bin/magento cron:run``, in Magento's way: due ``pending`` rows of
    cron_schedule run and become ``success``; ``indexer_update_all_views`` moves each
    scheduled view's mview_state.version_id up to its changelog's; every job code gets its next
    ``pending`` row; ``success`` rows older than an hour are removed (history_success_lifetime
    60 minutes). Writes on every run, as the real cron does."""
    now = datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")
    due = mage.q(conn, "SELECT schedule_id, job_code FROM cron_schedule WHERE status='pending' AND scheduled_at <= %s", (now,))
    for row in due:
        mage.ex(conn, "UPDATE cron_schedule SET status='running', executed_at=%s WHERE schedule_id=%s", (now, row["schedule_id"]))
        if row["job_code"] == "indexer_update_all_views":
            for v in mage.q(conn, "SELECT view_id, version_id FROM mview_state WHERE mode='enabled'"):
                top = mage.q1(conn, "SELECT COALESCE(MAX(version_id), 0) AS m FROM `%s_cl`" % v["view_id"])
                if top and int(top["m"]) > int(v["version_id"] or 0):
                    if v["view_id"] == search_index.VIEW:
                        try:   # the search index first; a failure leaves the view's version for the next run
                            search_index.update_from_changelog(conn, search_index.Http(), int(v["version_id"] or 0), int(top["m"]))
                        except OSError as e:
                            print("cron: catalogsearch_fulltext: Elasticsearch: %s" % e, file=sys.stderr)
                            continue
                    mage.ex(conn, "UPDATE mview_state SET version_id=%s, updated=%s WHERE view_id=%s", (top["m"], now, v["view_id"]))
        mage.ex(conn, "UPDATE cron_schedule SET status='success', finished_at=%s WHERE schedule_id=%s", (now, row["schedule_id"]))
    for job in CRON_JOBS:
        if not mage.q1(conn, "SELECT schedule_id FROM cron_schedule WHERE job_code=%s AND status='pending'", (job,)):
            mage.ex(conn, "INSERT INTO cron_schedule (job_code, status, created_at, scheduled_at) VALUES (%s, 'pending', %s, %s)",
                    (job, now, now))
    mage.ex(conn, "DELETE FROM cron_schedule WHERE status='success' AND finished_at < %s - INTERVAL 1 HOUR", (now,))
    return 0


def status(conn, names, show_mode=False):
    for n in names or list(TITLES):
        st = mage.q1(conn, "SELECT status FROM indexer_state WHERE indexer_id=%s", (n,))
        mv = mage.q1(conn, "SELECT mode FROM mview_state WHERE view_id=%s", (VIEW.get(n, n),))
        mode = "Update by Schedule" if mv and mv["mode"] == "enabled" else "Update on Save"
        if show_mode:
            print("%-28s %s" % (TITLES[n] + ":", mode))
        else:
            s = {"valid": "Ready", "invalid": "Reindex required", "working": "Processing"}.get(st and st["status"], "Reindex required")
            print("%-28s %-18s %s" % (TITLES[n] + ":", s, mode))
    return 0


def main(argv):
    if not argv or argv[0] in ("list", "--help", "-h"):
        print(__doc__)
        return 0
    if argv[0] in ("--version", "-V"):
        print("Magento CLI 2.4.6 (sitectl contract replica)")
        return 0
    cmd, (o, pos) = argv[0], opts(argv[1:])
    conn = mage.connect()
    if cmd == "setup:store-config:set":
        return store_config_set(conn, o)
    if cmd == "config:set":
        if len(pos) != 2:
            print('Not enough arguments (missing: "path, value").', file=sys.stderr)
            return 1
        scope = o.get("scope", "default")
        sid = 0
        if scope != "default":
            row = mage.q1(conn, "SELECT store_id AS id FROM store WHERE code=%s" if scope.startswith("store") else
                          "SELECT website_id AS id FROM store_website WHERE code=%s", (o.get("scope-code", ""),))
            if not row:
                print("The scope code is incorrect.", file=sys.stderr)
                return 1
            sid = row["id"]
        mage.set_config(conn, pos[0], pos[1], scope, sid)
        print("Value was saved.")
        return 0
    if cmd == "config:show":
        rows = mage.q(conn, "SELECT path, value FROM core_config_data WHERE scope='default'" + (" AND path LIKE %s" if pos else ""),
                      (pos[0] + "%",) if pos else None)
        for r in rows:
            print(r["value"] if pos and r["path"] == pos[0] else "%s - %s" % (r["path"], r["value"]))
        return 0
    if cmd in ("cache:flush", "cache:clean"):
        flush_cache()
        types = pos or ["config", "layout", "block_html", "collections", "reflection", "db_ddl", "compiled_config", "eav",
                        "customer_notification", "config_integration", "config_integration_api", "full_page", "config_webservice", "translate"]
        print("Flushed cache types:" if cmd == "cache:flush" else "Cleaned cache types:")
        print("\n".join(types))
        return 0
    if cmd == "indexer:set-mode":
        if not pos or pos[0] not in ("schedule", "realtime"):
            print("Please specify the indexer mode: realtime, schedule", file=sys.stderr)
            return 1
        return set_mode(conn, pos[0], pos[1:])
    if cmd in ("indexer:status", "indexer:show-mode"):
        return status(conn, pos, cmd == "indexer:show-mode")
    if cmd == "cron:run":
        return cron_run(conn)
    if cmd == "indexer:reindex":
        for n in pos or list(TITLES):
            if n == search_index.VIEW:
                search_index.reindex_all(conn, search_index.Http())
            mage.ex(conn, "UPDATE indexer_state SET status='valid' WHERE indexer_id=%s", (n,))
            print("%s index has been rebuilt successfully in 00:00:00" % TITLES.get(n, n))
        return 0
    print('Command "%s" is not defined.' % cmd, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
