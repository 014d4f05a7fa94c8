"""A site's state read without sitectl's code: the proofs of the checkpoint tests and of
bench/checkpoint.py.

Rows with the servers' own dump tools (``mysqldump --skip-extended-insert``, ``pg_dump
--inserts``: one line per row), counters from the servers' catalogs (AUTO_INCREMENT from
information_schema, sequences from pg_sequences), files with ``find``/``stat``/``md5sum`` inside
the container (BusyBox's too), Redis keys with ``redis-cli`` (the keys a snapshot keeps: no time
to live, or an hour or more). Each reader takes the engine and the site's container names (an
instance's: ``target.container(site)``).
"""
from __future__ import annotations

MEDIA = "/var/www/magento2/pub/media"

FILES_SH = ('for d in "$@"; do [ -d "$d" ] || continue; find "$d" | sort | while IFS= read -r f; do '
            'printf "%s %s\\n" "$(stat -c "%n %F %s %a %u %Y" "$f")" "$([ -f "$f" ] && [ ! -h "$f" ] && md5sum < "$f")"; '
            'done; done')
REDIS_SH = ('gitlab-redis-cli --scan | sort | while IFS= read -r k; do t=$(gitlab-redis-cli PTTL "$k"); '
            'if [ "$t" -lt 0 ] || [ "$t" -ge 3600000 ]; then printf "%s %s %s\\n" "$k" "$([ "$t" -lt 0 ] && echo p || echo e)" '
            '"$(gitlab-redis-cli --no-raw DUMP "$k" | md5sum)"; fi; done')


def run(engine, container: str, *argv: str) -> str:
    """``argv`` in ``container``; its output (the exit code must be 0)."""
    rc, out = engine.exec(container, list(argv))
    if rc != 0:
        raise AssertionError(f"{container}: {' '.join(argv)[:200]} exited {rc}: {out[-2000:]}")
    return out


def shop(engine, container: str = "shopping") -> dict:
    """Magento's rows (Magento's cron table left out: the site's jobs write it on their own),
    AUTO_INCREMENT counters and media and session files."""
    rows = run(engine, container, "mysqldump", "-uroot", "-p1234567890", "--skip-extended-insert", "--no-create-info",
               "--compact", "--skip-triggers", "--ignore-table=magentodb.cron_schedule", "magentodb")
    ai = run(engine, container, "mysql", "-uroot", "-p1234567890", "magentodb", "-N", "-e",
             "SELECT table_name, auto_increment FROM information_schema.tables WHERE table_schema = 'magentodb' "
             "AND table_name <> 'cron_schedule' ORDER BY table_name")
    files = run(engine, container, "sh", "-c", FILES_SH, "sh", MEDIA, "/var/www/magento2/var/session")
    return {"rows": sorted(rows.splitlines()), "auto_increment": ai, "files": files}


def forum(engine, container: str = "forum") -> dict:
    """Postmill's rows, sequences and submission images."""
    rows = run(engine, container, "pg_dump", "-U", "postgres", "--data-only", "--inserts", "-N", "sitectl", "-N",
               "sitectl_*", "postmill")
    seqs = run(engine, container, "psql", "-U", "postgres", "-d", "postmill", "-At", "-c",
               "SELECT schemaname, sequencename, last_value FROM pg_sequences WHERE schemaname NOT LIKE 'sitectl%' "
               "ORDER BY 1, 2")
    files = run(engine, container, "sh", "-c", FILES_SH, "sh", "/var/www/html/public/submission_images")
    return {"rows": sorted(ln for ln in rows.splitlines() if ln.startswith("INSERT")), "sequences": seqs, "files": files}


def gitlab(engine, container: str = "gitlab") -> dict:
    """GitLab's rows and sequences, Redis keys and uploads."""
    rows = run(engine, container, "sh", "-c", "chpst -u gitlab-psql:gitlab-psql pg_dump -h /var/opt/gitlab/postgresql "
               "--data-only --inserts -N sitectl -N 'sitectl_*' gitlabhq_production 2>/dev/null")
    seqs = run(engine, container, "gitlab-psql", "-At", "-c", "SELECT schemaname, sequencename, last_value FROM "
               "pg_sequences WHERE schemaname NOT LIKE 'sitectl%' ORDER BY 1, 2")
    files = run(engine, container, "sh", "-c", FILES_SH, "sh", "/var/opt/gitlab/gitlab-rails/uploads")
    return {"rows": sorted(ln for ln in rows.splitlines() if ln.startswith("INSERT")), "sequences": seqs,
            "keys": run(engine, container, "sh", "-c", REDIS_SH), "files": files}


def classifieds(engine, container: str = "classifieds", db: str = "classifieds_db") -> dict:
    """OSClass's rows and the uploads folder the store keeps."""
    rows = run(engine, db, "mysqldump", "-uroot", "-ppassword", "--skip-extended-insert", "--no-create-info",
               "--compact", "--skip-triggers", "osclass")
    files = run(engine, container, "sh", "-c", FILES_SH, "sh", "/usr/src/myapp/oc-content/uploads/841")
    return {"rows": sorted(rows.splitlines()), "files": files}


def of_site(engine, target, name: str) -> dict:
    """The state of site ``name`` of ``target``'s instance."""
    site = target.stack.sites[name]
    c = target.container(site)
    if name == "classifieds":
        return classifieds(engine, c, target.service_container(site, "db"))
    return {"shopping": shop, "shopping_admin": shop, "reddit": forum, "gitlab": gitlab}[name](engine, c)


def differs(a: dict, b: dict) -> list[str]:
    """Where two states (``{site: reader's dict}``) differ, a few lines each."""
    out = []
    for site in sorted(set(a) | set(b)):
        for part in sorted(set(a.get(site, {})) | set(b.get(site, {}))):
            x, y = a.get(site, {}).get(part), b.get(site, {}).get(part)
            if x == y:
                continue
            if isinstance(x, list) and isinstance(y, list):
                out.append(f"{site} {part}: -{sorted(set(x) - set(y))[:3]} +{sorted(set(y) - set(x))[:3]}")
            else:
                lx, ly = set((x or "").splitlines()), set((y or "").splitlines())
                out.append(f"{site} {part}: -{sorted(lx - ly)[:3]} +{sorted(ly - lx)[:3]}")
    return out
