#!/usr/bin/env python3
"""Seed the GitLab contract replica's golden state at image build time.

Deterministic from SEED and SCALE (random.Random(seed); fixed timestamps, never now()).
Writes rows into PostgreSQL database gitlabhq_production (GitLab's own structure around the
replica's tables of schema.sql: real_structure.py) and creates real bare
git repositories under /var/opt/gitlab/git-data/repositories/@hashed/... with git fast-import.
SCALE=tiny: the rows of fixture.json (tasks' users, groups, projects, issues, MRs).
SCALE=full: the same tiny rows (same ids, drawn first from the same RNG), then the generated bulk
of bulk.py (2,399 users and 175 projects as on the real image, with fast-imported history, thousands of issues, MRs, notes).
"""
import base64, datetime as dt, hashlib, hmac, json, os, random, subprocess, sys, time

import bcrypt
import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = int(os.environ.get("SEED", "0"))
SCALE = os.environ.get("SCALE", "tiny")
REPOS = "/var/opt/gitlab/git-data/repositories"
SECRETS = "/etc/gitlab/gitlab-secrets.json"
BASE = dt.datetime(2023, 3, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
PASSWORD = "hello1234"           # WebArena's byteblaze password; every seeded user gets it
TOKENS = {"byteblaze": "glpat-byteblaze-replica-01", "root": "glpat-root-replica-token01"}
rnd = random.Random(SEED)

BCRYPT_ALPHA = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_hash_cache = {}


def bcrypt_hash(pw: str) -> str:
    """Devise-style bcrypt ($2a$, cost 10) with a salt drawn from the seeded RNG."""
    if pw not in _hash_cache:
        salt = "".join(rnd.choice(BCRYPT_ALPHA) for _ in range(21)) + rnd.choice(".Oeu")
        _hash_cache[pw] = bcrypt.hashpw(pw.encode(), ("$2a$10$" + salt).encode()).decode()
    return _hash_cache[pw]


def ts(days=0, minutes=0):
    return BASE + dt.timedelta(days=days, minutes=minutes)


def hashed_path(pid: int) -> str:
    h = hashlib.sha256(str(pid).encode()).hexdigest()
    return f"{REPOS}/@hashed/{h[0:2]}/{h[2:4]}/{h}.git"


def token_digest(secret: str, token: str) -> str:
    return base64.b64encode(hmac.new(secret[:32].encode(), token.encode(), hashlib.sha256).digest()).decode()


ISSUE_TITLES = [
    "404 for many URLs on the resources page", "Better focus styles for links", "Feature request: dark mode",
    "Update dependency eleventy to v2", "MT theme editor support", "Homepage content needs refresh",
    "Flash alerts are not announced to screen readers", "Broken link in footer", "Add contributing guide",
    "Improve color contrast of buttons", "Typo in README", "Support for keyboard navigation",
    "Add tests for the parser", "Consider adding a changelog", "Question about the license",
    "OPT model loading fails", "Linking to an accessibility statement", "Crash on startup",
]
MR_TITLES = [
    "Fix broken links", "Add semantic HTML post", "Focus edge cases", "Color utility classes",
    "Octovisuals page", "Verification functions", "WCAG 2.2 updates", "Fix 404 link", "Bump doctocat",
    "Template strings support", "Build time debug", "Update README",
]
NOTE_BODIES = ["Thanks for the report!", "I can reproduce this.", "lgtm", "Could you add a test?",
               "Working on it.", "Merged, thanks!", "Any update on this?"]
LICENSE_TEXT = ("Copyright (c) 2023 Byte Blaze\n\nPermission is hereby granted, free of charge, to any "
                "person obtaining a copy of this software, to deal in the Software without restriction.\n")


def file_content(project, fname, version):
    name = project["path"].split("/")[1]
    if fname == "README.md":
        return f"# {name}\n\n{project['desc']}\n\nRevision {version}.\n"
    if fname.startswith("LICENSE"):
        return LICENSE_TEXT
    if fname == "index.html":
        return (f"<!DOCTYPE html>\n<html>\n<head>\n<title>{name}</title>\n</head>\n<body>\n"
                f"<h1>{name}</h1>\n<p>{project['desc']}</p>\n</body>\n</html>\n")
    if fname == "package.json":
        return json.dumps({"name": name, "version": f"1.{version}.0", "private": True}, indent=2) + "\n"
    return f"# {fname} of {name}, revision {version}\n"


def fast_import_stream(project, branches):
    """Return (bytes, n_commits) of a git fast-import stream for one project."""
    authors = FIX["commit_authors"]
    out, mark = [], 0
    branch = project["branch"]
    n = rnd.randint(4, 9) if "a11yproject" not in project["path"] else 14
    tip = None
    day0 = rnd.randint(-400, -30)

    def data(s):
        b = s.encode()
        return b"data %d\n" % len(b) + b + b"\n"

    for i in range(n):
        mark += 1
        a_name, a_mail = rnd.choice(authors) if i else authors[0]
        when = int(ts(days=day0 + i * rnd.randint(1, 9), minutes=rnd.randint(0, 600)).timestamp())
        files = project["files"] if i == 0 else [rnd.choice(project["files"])]
        msg = "Initial commit" if i == 0 else f"Update {files[0]}"
        out.append(f"commit refs/heads/{branch}\nmark :{mark}\n".encode())
        out.append(f"author {a_name} <{a_mail}> {when} +0000\ncommitter {a_name} <{a_mail}> {when} +0000\n".encode())
        out.append(data(msg + "\n"))
        if tip:
            out.append(f"from :{tip}\n".encode())
        for f in files:
            out.append(f"M 100644 inline {f}\n".encode())
            out.append(data(file_content(project, f, i)))
        tip = mark
    for b in branches:
        mark += 1
        when = int(ts(days=day0 + n * 9 + 1).timestamp())
        a_name, a_mail = authors[0]
        out.append(f"commit refs/heads/{b}\nmark :{mark}\n".encode())
        out.append(f"author {a_name} <{a_mail}> {when} +0000\ncommitter {a_name} <{a_mail}> {when} +0000\n".encode())
        out.append(data(f"Work on {b}\n"))
        out.append(f"from :{tip}\n".encode())
        fn = "notes/" + b.replace("/", "-") + ".md"
        out.append(f"M 100644 inline {fn}\n".encode())
        out.append(data(f"Notes for {b}\n"))
    out.append(b"done\n")
    return b"".join(out), n


def main():
    global FIX
    t0 = time.monotonic()
    FIX = json.load(open(os.path.join(HERE, "fixture.json")))
    secrets = json.load(open(SECRETS))
    db_key = secrets["gitlab_rails"]["db_key_base"]
    con = psycopg2.connect(host="/var/opt/gitlab/postgresql", dbname="gitlabhq_production", user="gitlab")
    cur = con.cursor()
    import real_structure
    attached, skipped = real_structure.load(cur, open(os.path.join(HERE, "schema.sql")).read(), BASE)
    print(f"GitLab's structure around the replica's tables: {len(attached)} foreign keys and triggers put back; "
          f"{len(skipped)} not fitting the replica's columns: " + "; ".join(f"{n} ({why})" for n, why in skipped))
    cur.execute("INSERT INTO schema_migrations VALUES ('20230518000000')")
    cur.execute("INSERT INTO application_settings (created_at, updated_at) VALUES (%s,%s)", (ts(-500), ts(-500)))

    uid, nsid = {}, {}
    for i, (username, name, admin) in enumerate(FIX["users"]):
        cur.execute(
            "INSERT INTO users (email, encrypted_password, username, name, admin, confirmed_at, created_at, updated_at,"
            " location, website_url) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
            ("admin@example.com" if username == "root" else f"{username.lower()}@example.com",
             bcrypt_hash(PASSWORD), username, name, admin, ts(-500 + i), ts(-500 + i), ts(-500 + i),
             "Pittsburgh" if username == "byteblaze" else "", ""))
        uid[username] = cur.fetchone()[0]
        cur.execute("INSERT INTO user_details (user_id) VALUES (%s)", (uid[username],))
        cur.execute("INSERT INTO namespaces (name, path, owner_id, type, visibility_level, created_at, updated_at)"
                    " VALUES (%s,%s,%s,'User',20,%s,%s) RETURNING id",
                    (name, username, uid[username], ts(-500 + i), ts(-500 + i)))
        nsid[username] = cur.fetchone()[0]
        cur.execute("UPDATE namespaces SET traversal_ids = ARRAY[id] WHERE id=%s", (nsid[username],))
        cur.execute("INSERT INTO routes (source_id, source_type, path, name, namespace_id, created_at, updated_at)"
                    " VALUES (%s,'Namespace',%s,%s,%s,%s,%s)",
                    (nsid[username], username, name, nsid[username], ts(-500), ts(-500)))
    for username, tok in TOKENS.items():
        cur.execute("INSERT INTO personal_access_tokens (user_id, name, scopes, token_digest, created_at, updated_at)"
                    " VALUES (%s,'sitectl-replica',%s,%s,%s,%s)",
                    (uid[username], "---\n- api\n- read_user\n- read_repository\n- write_repository\n",
                     token_digest(db_key, tok), ts(-10), ts(-10)))
    group_owner = {}
    for path, name in FIX["groups"]:
        cur.execute("INSERT INTO namespaces (name, path, owner_id, type, visibility_level, created_at, updated_at)"
                    " VALUES (%s,%s,NULL,'Group',20,%s,%s) RETURNING id", (name, path, ts(-450), ts(-450)))
        nsid[path] = cur.fetchone()[0]
        cur.execute("UPDATE namespaces SET traversal_ids = ARRAY[id] WHERE id=%s", (nsid[path],))
        cur.execute("INSERT INTO routes (source_id, source_type, path, name, namespace_id, created_at, updated_at)"
                    " VALUES (%s,'Namespace',%s,%s,%s,%s,%s)", (nsid[path], path, name, nsid[path], ts(-450), ts(-450)))
        cur.execute("INSERT INTO members (access_level, source_id, source_type, user_id, type, member_namespace_id,"
                    " created_at, updated_at) VALUES (50,%s,'Namespace',%s,'GroupMember',%s,%s,%s)",
                    (nsid[path], uid["root"], nsid[path], ts(-450), ts(-450)))
        group_owner[path] = "root"
    byteblaze = uid["byteblaze"]
    users_list = list(uid.values())
    for k, p in enumerate(FIX["projects"]):
        ns, path = p["path"].split("/")
        owner = ns if ns in uid else group_owner[ns]
        created = ts(-420 + k)
        cur.execute("INSERT INTO namespaces (name, path, owner_id, type, parent_id, visibility_level, created_at, updated_at)"
                    " VALUES (%s,%s,%s,'Project',%s,%s,%s,%s) RETURNING id",
                    (path, path, None, nsid[ns], p["vis"], created, created))
        pns = cur.fetchone()[0]
        cur.execute("UPDATE namespaces SET traversal_ids = ARRAY[%s, id] WHERE id=%s", (nsid[ns], pns))
        cur.execute("INSERT INTO projects (name, path, description, namespace_id, creator_id, visibility_level, star_count,"
                    " project_namespace_id, created_at, updated_at, last_activity_at, last_repository_updated_at)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
                    (path, path, p["desc"], nsid[ns], uid[owner], p["vis"], p["stars"], pns, created, created,
                     ts(60 + k), ts(60 + k)))
        pid = cur.fetchone()[0]
        cur.execute("INSERT INTO routes (source_id, source_type, path, name, namespace_id, created_at, updated_at)"
                    " VALUES (%s,'Project',%s,%s,%s,%s,%s)", (pid, p["path"], f"{ns} / {path}", nsid[ns], created, created))
        members = p.get("members") or ([[owner, 50]] if ns in uid else [])
        for uname, lvl in members:
            cur.execute("INSERT INTO members (access_level, source_id, source_type, user_id, type, member_namespace_id,"
                        " created_by_id, created_at, updated_at) VALUES (%s,%s,'Project',%s,'ProjectMember',%s,%s,%s,%s)",
                        (lvl, pid, uid[uname], pns, uid[owner], created, created))
        # labels and milestones
        label_ids = []
        for li, title in enumerate(p.get("labels", [])):
            cur.execute("INSERT INTO labels (title, color, project_id, type, created_at, updated_at) VALUES"
                        " (%s,%s,%s,'ProjectLabel',%s,%s) RETURNING id",
                        (title, ["#dc143c", "#428bca", "#69d100", "#8e44ad"][li % 4], pid, created, created))
            label_ids.append(cur.fetchone()[0])
        for mi in range(1, p.get("milestones", 0) + 1):
            cur.execute("INSERT INTO milestones (iid, title, project_id, description, start_date, due_date, state,"
                        " created_at, updated_at) VALUES (%s,%s,%s,%s,%s,%s,'active',%s,%s)",
                        (mi, f"Milestone {mi}", pid, "", (ts(30 * mi)).date(), ts(30 * mi + 14).date(), created, created))
        if p.get("milestones"):
            cur.execute("INSERT INTO internal_ids (project_id, usage, last_value) VALUES (%s,3,%s)", (pid, p["milestones"]))
        # issues
        iss = p.get("issues", 0)
        iids = iss if isinstance(iss, list) else list(range(1, iss + 1))
        for n, iid in enumerate(iids):
            author = rnd.choice([byteblaze, byteblaze, uid[owner], rnd.choice(users_list)])
            when = ts(-300 + rnd.randint(0, 360), rnd.randint(0, 1000))
            closed = rnd.random() < 0.3
            title = ISSUE_TITLES[(n + k) % len(ISSUE_TITLES)]
            cur.execute("INSERT INTO issues (iid, project_id, title, description, author_id, state_id, closed_at,"
                        " created_at, updated_at, work_item_type_id) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,1) RETURNING id",
                        (iid, pid, title, f"Details about: {title.lower()}.", author, 2 if closed else 1,
                         when + dt.timedelta(days=3) if closed else None, when, when + dt.timedelta(days=3)))
            iid_row = cur.fetchone()[0]
            if rnd.random() < 0.4:
                cur.execute("INSERT INTO issue_assignees VALUES (%s,%s)", (rnd.choice([byteblaze, uid[owner]]), iid_row))
            if label_ids and rnd.random() < 0.6:
                cur.execute("INSERT INTO label_links (label_id, target_id, target_type, created_at, updated_at)"
                            " VALUES (%s,%s,'Issue',%s,%s)", (rnd.choice(label_ids), iid_row, when, when))
            for j in range(rnd.randint(0, 2)):
                cur.execute("INSERT INTO notes (note, noteable_type, noteable_id, author_id, project_id, discussion_id,"
                            " created_at, updated_at) VALUES (%s,'Issue',%s,%s,%s,%s,%s,%s)",
                            (rnd.choice(NOTE_BODIES), iid_row, rnd.choice(users_list), pid,
                             "%040x" % rnd.getrandbits(160), when + dt.timedelta(hours=j + 1), when + dt.timedelta(hours=j + 1)))
        if iids:
            cur.execute("INSERT INTO internal_ids (project_id, usage, last_value) VALUES (%s,0,%s)", (pid, max(iids)))
        # merge requests (source branches are created in the repository below)
        mrs = p.get("mrs", 0)
        mr_iids = mrs if isinstance(mrs, list) else list(range(1, mrs + 1))
        branches = list(p.get("branches", []))
        for n, iid in enumerate(mr_iids):
            src = f"feature-{iid}"
            branches.append(src)
            when = ts(-200 + rnd.randint(0, 300), rnd.randint(0, 1000))
            state = rnd.choice([1, 1, 2, 3])
            author = rnd.choice([byteblaze, uid[owner], rnd.choice(users_list)])
            title = MR_TITLES[(n + k) % len(MR_TITLES)]
            cur.execute("INSERT INTO merge_requests (iid, target_project_id, source_project_id, source_branch,"
                        " target_branch, title, description, author_id, state_id, merge_status, created_at, updated_at)"
                        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
                        (iid, pid, pid, src, p["branch"], title, f"This MR: {title.lower()}.", author, state,
                         "can_be_merged", when, when + dt.timedelta(days=1)))
            mr_id = cur.fetchone()[0]
            cur.execute("INSERT INTO merge_request_metrics (merge_request_id, merged_by_id, merged_at, target_project_id,"
                        " created_at, updated_at) VALUES (%s,%s,%s,%s,%s,%s)",
                        (mr_id, uid[owner] if state == 3 else None, when + dt.timedelta(days=1) if state == 3 else None,
                         pid, when, when))
            if rnd.random() < 0.5:
                cur.execute("INSERT INTO merge_request_reviewers (user_id, merge_request_id, created_at) VALUES (%s,%s,%s)",
                            (byteblaze, mr_id, when))
            if rnd.random() < 0.5:
                cur.execute("INSERT INTO merge_request_assignees (user_id, merge_request_id, created_at) VALUES (%s,%s,%s)",
                            (rnd.choice([byteblaze, author]), mr_id, when))
            cur.execute("INSERT INTO notes (note, noteable_type, noteable_id, author_id, project_id, discussion_id,"
                        " created_at, updated_at) VALUES (%s,'MergeRequest',%s,%s,%s,%s,%s,%s)",
                        (rnd.choice(NOTE_BODIES), mr_id, rnd.choice(users_list), pid, "%040x" % rnd.getrandbits(160),
                         when + dt.timedelta(hours=2), when + dt.timedelta(hours=2)))
        if mr_iids:
            cur.execute("INSERT INTO internal_ids (project_id, usage, last_value) VALUES (%s,1,%s)", (pid, max(mr_iids)))
        # repository
        repo = hashed_path(pid)
        os.makedirs(os.path.dirname(repo), exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", repo], check=True)
        stream, ncommits = fast_import_stream(p, branches)
        subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=stream, check=True)
        subprocess.run(["git", "-C", repo, "symbolic-ref", "HEAD", f"refs/heads/{p['branch']}"], check=True)
        subprocess.run(["git", "-C", repo, "config", "gitlab.fullpath", p["path"]], check=True)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(repo) for f in fs)
        cur.execute("INSERT INTO project_statistics (project_id, namespace_id, commit_count, repository_size, storage_size)"
                    " VALUES (%s,%s,%s,%s,%s)", (pid, nsid[ns], ncommits + len(branches), size, size))
    # derived table: project_authorizations = max(direct project membership, group membership)
    cur.execute("""INSERT INTO project_authorizations (user_id, project_id, access_level)
        SELECT user_id, project_id, max(lvl) FROM (
          SELECT m.user_id, m.source_id AS project_id, m.access_level AS lvl FROM members m
            WHERE m.source_type='Project' AND m.requested_at IS NULL
          UNION ALL
          SELECT m.user_id, p.id, m.access_level FROM members m JOIN projects p ON p.namespace_id = m.source_id
            WHERE m.source_type='Namespace' AND m.requested_at IS NULL
          UNION ALL
          SELECT n.owner_id, p.id, 50 FROM projects p JOIN namespaces n ON n.id = p.namespace_id
            WHERE n.type='User') s GROUP BY user_id, project_id""")
    for a, b in FIX["follows"]:
        cur.execute("INSERT INTO user_follow_users VALUES (%s,%s)", (uid[a], uid[b]))
    for path in FIX["stars_by_byteblaze"]:
        cur.execute("INSERT INTO users_star_projects (project_id, user_id, created_at, updated_at)"
                    " SELECT source_id, %s, %s, %s FROM routes WHERE source_type='Project' AND path=%s",
                    (byteblaze, ts(10), ts(10), path))
    # a to-do for byteblaze (dashboard/todos)
    cur.execute("INSERT INTO todos (user_id, project_id, target_id, target_type, author_id, action, state, created_at, updated_at)"
                " SELECT %s, project_id, id, 'Issue', author_id, 1, 'pending', %s, %s FROM issues ORDER BY id LIMIT 2",
                (byteblaze, ts(20), ts(20)))
    if SCALE == "full":
        import bulk
        counts, ncommits, size = bulk.seed_full(cur, SEED, ts, hashed_path, bcrypt_hash(PASSWORD), BASE)
        cur.execute("ANALYZE")
        print("bulk rows: " + ", ".join(f"{t}={n}" for t, n in counts.items()) +
              f"; bulk repos: {counts['projects']}, {ncommits} commits, {size / 1e6:.1f} MB")
    con.commit()
    cur.execute("SELECT count(*) FROM users"); nu = cur.fetchone()[0]
    cur.execute("SELECT count(*) FROM projects"); np_ = cur.fetchone()[0]
    cur.execute("SELECT count(*) FROM issues"); ni = cur.fetchone()[0]
    print(f"seeded SEED={SEED} SCALE={SCALE}: {nu} users, {np_} projects, {ni} issues ({time.monotonic() - t0:.1f} s)")
    con.close()


if __name__ == "__main__":
    sys.exit(main())
